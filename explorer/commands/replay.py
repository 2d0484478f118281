"""`interview-explorer replay RUN`: run a recorded interview again now and report what changed.

The new run asks the target run RUN asked (as its recorded bytes show it:
`explorer.interview.planning.plan_for_run`; `explorer.interview.replay` runs and compares it).
Everything else is yours, exactly as for `verify`: the keys you trust (`--keys`, `--allow-jku`,
the config), who runs it (`--as`, `--runner`, the config's `role` and `runner`, else `self`), the
config's `sign_key` for an independent or platform run, headers and credentials. A recorded or
imported run never lends its keys, its `jku` choice, its runner's name or role, so a replay of
someone else's run is signed, if at all, as yours. The new run is recorded (unless `--no-history`)
and compared with RUN as read under the same keys: per question and pointer, then digests and
verdict.

Exit status: like verify for the new run (0 conformant, 1 nonconformant, 3 unreachable,
4 not_offered, 5 churn), 2 usage error, 6 no such run, or a history that cannot be used: one
that cannot be read, or written (a SQLite file is proven writable before anything is asked), or
that refused the new run after its interview (the comparison is printed, then that).
"""

from __future__ import annotations

import argparse
import sys

from explorer.commands.common import (
    EXIT_UNKNOWN,
    EXIT_USAGE,
    UsageError,
    add_home_argument,
    add_quiet_argument,
    add_setting_arguments,
    config_of,
    error,
    open_history,
    print_json,
    print_lines,
    recording_history,
    run_id_argument,
    say,
    typed_settings,
    verdict_exit,
)
from explorer.commands.evidence_options import assessed, signed_run_fn, signing_key


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", type=run_id_argument, metavar="RUN", help="a run id from `history`")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object: the new report, its run id and the comparison",
    )
    add_quiet_argument(parser)
    add_setting_arguments(parser, "replay")
    parser.add_argument("--no-history", action="store_true", help="do not record the new run")
    add_home_argument(parser)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from explorer.core.report import summary_lines
    from explorer.core.text import safe_text
    from explorer.interview.planning import PlanError, plan_for_run
    from explorer.interview.replay import interview
    from explorer.net.keys import KeysError
    from explorer.store.base import HistoryError

    try:
        config = config_of(args)
        given = typed_settings(args)
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    unrecorded: HistoryError | None = None
    try:
        opening = open_history if args.no_history else recording_history
        with opening(args, existing=True) as history:
            before = history.summary(args.run_id)
            old = history.load(args.run_id)
            try:
                target, options = plan_for_run(old, given, config)
                [old] = assessed([old], args, "replay")
            except PlanError as exc:
                return error(str(exc), EXIT_USAGE)
            except UsageError as exc:
                return error(str(exc), EXIT_USAGE)
            if not args.quiet:
                verdict, shown = safe_text(before.verdict, limit=20), safe_text(target, limit=300)
                print(
                    f"replaying run {before.id} ({before.recorded_at}, {verdict}): {shown}",
                    file=sys.stderr,
                )
            try:
                key = signing_key(None, config, options.role, options.runner, "replay")  # config's sign_key
                step = interview(
                    target,
                    options,
                    history=None,  # recorded below: a run the history refuses is still shown
                    previous=(before.id, old.report),
                    run_fn=signed_run_fn(key, target, "replay"),
                )
            except UsageError as exc:
                return error(str(exc), EXIT_USAGE)
            except (KeysError, ValueError) as exc:
                return error(str(exc), EXIT_USAGE)
            if not args.no_history:
                try:
                    step = replace(step, run_id=history.record(step.run))
                except HistoryError as exc:
                    unrecorded = exc
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN)
    assert step.comparison is not None
    if args.json:
        out = {
            "replayed": before.to_json(),
            "run_id": step.run_id,
            "report": dict(step.run.report),
            "comparison": step.comparison.to_json(),
        }
        print_json(out)
    else:
        print_lines(
            [
                *summary_lines(step.run.report),
                f"since run {before.id} ({before.recorded_at}):",
                *(f"  {line}" for line in step.comparison.lines()),
            ]
        )
    if step.run_id is not None and not args.quiet:
        say(f"recorded as run {step.run_id}")
    if unrecorded is not None:
        message = f"the new run was not recorded in the history: {unrecorded} (exit status {EXIT_UNKNOWN})"
        return error(message, EXIT_UNKNOWN)
    return verdict_exit(step.verdict)
