"""`interview-explorer compare RUN_A RUN_B [--json]`: what changed from one recorded run to another.

First what changed, in kinds (CONTRACT "Signatures are proofs"): `declarations changed` (the card
without its signatures, or a committed proposal), `key changed` (the keys whose signatures verify
the card), `answers changed`, `verdict changed`; or `signed again`, when the card's bytes differ
only by signatures of the same key over the same declarations (a restart, another replica),
which is not a change. Then, per question, projections are aligned by source (document, url and
pointer), and the added, removed and changed ones are listed with both values (a signature
answered from a card signed again is listed as such); then the card and proposal digests, the
signature, the verdict and the findings. Both runs are read as `show` reads them: each report
derived again from its bytes under your keys (`--keys`, `--allow-jku`, the config), its standing
under the runner keys you trust (`--trust-runner`, the config's `trusted_runners`). Offline: only
the stored runs are read.

Either RUN may be `latest`, the newest run in the history (`compare 3 latest`).

Exit status: 0 identical, or different only as the card was signed again; 1 changed; 2 usage
error; 6 no such run, or an unreadable history.
"""

from __future__ import annotations

import argparse

from explorer.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    LATEST,
    UsageError,
    add_home_argument,
    error,
    print_json,
    print_lines,
    read_runs,
    run_selector_argument,
)
from explorer.commands.evidence_options import add_reader_arguments, assessed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", type=run_selector_argument, metavar="RUN_A", help="the earlier run id")
    parser.add_argument(
        "run_b", type=run_selector_argument, metavar="RUN_B", help=f"the later run id, or `{LATEST}`"
    )
    parser.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    add_reader_arguments(parser)
    add_home_argument(parser)


def run(args: argparse.Namespace) -> int:
    from explorer.core.compare import compare_reports
    from explorer.core.text import safe_text
    from explorer.core.view import ReportView
    from explorer.store.base import HistoryError

    try:
        (a, run_a), (b, run_b) = read_runs(args, args.run_a, args.run_b)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN)
    try:
        run_a, run_b = assessed([run_a, run_b], args, "compare")
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    comparison = compare_reports(run_a.report, run_b.report)
    if args.json:
        heads_json = {
            key: {
                **r.to_json(),
                "verdict": run.report.get("verdict"),
                "standing": run.report.get("standing"),
                "run_attestation": run.report.get("run_attestation"),
            }
            for key, r, run in (("run_a", a, run_a), ("run_b", b, run_b))
        }
        print_json({**heads_json, **comparison.to_json()}, indent=2)
    else:
        views = {label: ReportView.of(run.report) for label, run in (("a", run_a), ("b", run_b))}
        heads = [
            f"run {label}: {r.id}, {r.recorded_at}, {safe_text(views[label].verdict, limit=20)}, "
            f"{safe_text(r.agent, limit=200)}; {views[label].standing_words()}"
            for label, r in (("a", a), ("b", b))
        ]
        print_lines([*heads, *comparison.lines()])
    return EXIT_DIFFERENT if comparison.changed else EXIT_OK
