"""`interview-explorer show RUN [--json]`: a recorded run's report, offline.

Without `--json`, the same human summary `verify` prints, headed by the run's id, time and
agent; with `--json`, exactly the stored report (one JSON object, as `verify --json` printed it).
Nothing goes to the network.

Exit status: 0 shown, 2 usage error, 3 unknown run id or unreadable history.
"""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from explorer.store.access import add_home_argument, run_id_argument

    parser.add_argument("run_id", type=run_id_argument, metavar="RUN", help="a run id from `history`")
    parser.add_argument("--json", action="store_true", help="print the stored report as JSON")
    add_home_argument(parser)


def run(args: argparse.Namespace) -> int:
    from explorer.core.report import summary_lines
    from explorer.core.text import safe_text
    from explorer.store.access import EXIT_OK, EXIT_UNKNOWN, error, open_history
    from explorer.store.history import HistoryError

    try:
        with open_history(args) as history:
            summary = history.summary(args.run_id)
            stored = history.load(args.run_id)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN)
    if args.json:
        print(json.dumps(dict(stored.report), indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"run {summary.id}, recorded {summary.recorded_at}: {safe_text(summary.agent, limit=300)}")
    for line in summary_lines(stored.report):
        print(line)
    return EXIT_OK
