"""`interview-explorer show RUN|AGENT [--json]`: a recorded run's report (an agent's newest), offline.

RUN is a run id from `history`, or `latest` for the newest run in the history.

Without `--json`, the same human summary `verify` prints, headed by the run's id, time and
agent; with `--json`, the report as one JSON object. Either way the run is shown as read here
(`explorer.evidence.reading`): its report derived again from its recorded bytes under your keys (`--keys`,
`--allow-jku`, the config's `keys`), never under the keys it carries, and its standing under the
runner keys you trust. Nothing goes to the network (unless a key source you name is a URL).

Exit status: 0 shown, 2 usage error, 6 no such run, or an unreadable history.
"""

from __future__ import annotations

import argparse

from explorer.commands.common import (
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    LATEST,
    UsageError,
    add_home_argument,
    error,
    newest_run_of,
    print_json,
    print_lines,
    read_runs,
    run_selector_argument,
)
from explorer.commands.evidence_options import add_reader_arguments, assessed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_id",
        type=_run_or_agent,
        metavar="RUN|AGENT",
        help=f"a run id from `history`, `{LATEST}` (the newest run), or an agent (its newest run): card "
        "URL, base URL, card name, configured or reference agent name",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_reader_arguments(parser)
    add_home_argument(parser)


def _run_or_agent(text: str) -> int | str:
    """A run id (digits) or `latest`, else the agent whose newest run to show."""
    return run_selector_argument(text) if text.strip().isdigit() or text.strip() == LATEST else text.strip()


def run(args: argparse.Namespace) -> int:
    from explorer.core.report import summary_lines
    from explorer.core.text import safe_text
    from explorer.store.base import HistoryError

    try:
        if isinstance(args.run_id, str) and args.run_id != LATEST:
            args.run_id = newest_run_of(args, args.run_id)
        [(summary, stored)] = read_runs(args, args.run_id)
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN)
    try:
        [stored] = assessed([stored], args, "show")
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    if args.json:
        print_json(dict(stored.report), indent=2)
        return EXIT_OK
    head = f"run {summary.id}, recorded {summary.recorded_at}: {safe_text(summary.agent, limit=300)}"
    print_lines([head, *summary_lines(stored.report)])
    return EXIT_OK
