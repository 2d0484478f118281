"""`interview-explorer watch TARGET --every SECONDS [--count N]`: replay on a schedule, one line per run.

With `--from FILE` the whole list is re-swept instead, one line per sweep naming the agents that
changed (`explorer.commands.watch_many`).

TARGET is a run id (the target it asked is asked again; keys, `--allow-jku`, role and runner are
yours, from the command line and the config, never the recorded run's) or anything `verify`
accepts. Each run is recorded (unless `--no-history`) and compared with the one
before it (for the first, the latest recorded run of that agent, if any, read as `compare` reads
it); the line shows the time, the run id, the verdict, the card and answers digests, what changed
(in the kinds of CONTRACT "Signatures are proofs": `declarations changed`, `key changed`, `answers
changed`, `verdict changed`), and the findings that mark an unstable or inconsistent agent. A
card only signed again (a restart, another replica: the same declarations under the same key)
raises no alarm: the line says `no change ...: signed again`. Runs start every SECONDS (a slow
run delays the next one, it never piles them up); the watch stops after `--count N` runs or on
Ctrl+C.

Exit status: like verify for the last run (0 conformant, 1 nonconformant, 3 unreachable,
4 not_offered, 5 churn); 2 usage error; 6 no such run, or a history that cannot be used (refused
before anything is asked, or a run it could not record: that run's line is printed, then the
watch stops); 130 when interrupted before any run finished.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from typing import Any

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
    plan_of,
    recording_history,
    say,
    typed_settings,
    verdict_exit,
)
from explorer.commands.evidence_options import assessed, signed_async_run_fn, signing_key
from explorer.commands.verify_many import add_list_arguments
from explorer.config.file import MAX_WATCH_EVERY
from explorer.config.settings import seconds_type


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("--count must be at least 1")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="TARGET",
        nargs="?",
        help="a run id, or a URL, card file or configured agent name (or a list with --from)",
    )
    parser.add_argument(
        "--every",
        type=seconds_type(MAX_WATCH_EVERY),
        required=True,
        metavar="SECONDS",
        help="start a run every SECONDS",
    )
    parser.add_argument("--count", type=_count, default=None, metavar="N", help="stop after N runs")
    add_quiet_argument(parser)
    add_setting_arguments(
        parser, "watch", helps={"role": "who runs the interview (for a run id too: never the run's own)"}
    )
    parser.add_argument("--no-history", action="store_true", help="do not record the new runs")
    add_home_argument(parser)
    add_list_arguments(parser)


def _start(args: argparse.Namespace, history: Any, config: Any) -> tuple[str, Any, tuple[int, Any] | None]:
    """The target, the options and the run to compare the first tick with."""
    from explorer.interview.planning import PlanError, plan_for_run

    target = args.target.strip()
    if target.isdigit():
        if history is None:
            raise LookupError("a run id needs the history, which cannot be opened")
        old = history.load(int(target))
        try:
            url, options = plan_for_run(old, typed_settings(args), config)
        except PlanError as exc:
            raise UsageError(str(exc)) from None
        [old] = assessed([old], args, "watch")  # compared as read under your keys, as the new runs are
        return url, options, (int(target), old.report)
    url, options = plan_of(args, config, "watch", target=target, check=True)
    previous = None
    if history is not None:
        agents = history.match_agents(url)
        if len(agents) == 1:
            latest = history.runs(agents[0], limit=1)
            if latest:
                stored = history.load(latest[0].id)
                try:  # read under your keys, as the new runs are: a run recorded before this
                    [stored] = assessed([stored], args, "watch")  # version states its declarations
                except UsageError:
                    pass  # compared as recorded
                previous = (latest[0].id, stored.report)
    return url, options, previous


@dataclass
class _Tally:
    """What the loop has done so far, readable after an interrupt."""

    done: int = 0
    last: str | None = None
    status: int | None = None  # set when the loop stops on an error


async def _loop(
    args: argparse.Namespace,
    target: str,
    options: Any,
    previous: Any,
    history: Any,
    tally: _Tally,
    run_fn: Any = None,
) -> None:
    """Ask every `--every` seconds; one coroutine, so Ctrl+C cancels it cleanly wherever it is. A run
    the history refuses is shown as not recorded, and the watch stops there with status 6."""
    from dataclasses import replace

    from explorer.interview.replay import interview_async, tick_line
    from explorer.net.keys import KeysError
    from explorer.store.base import HistoryError

    next_at = time.monotonic()
    while args.count is None or tally.done < args.count:
        pause = next_at - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)
        next_at = max(next_at + args.every, time.monotonic())
        try:
            step = await interview_async(target, options, history=None, previous=previous, run_fn=run_fn)
        except (KeysError, ValueError) as exc:
            tally.status = error(str(exc), EXIT_USAGE)
            return
        unrecorded = None
        if not args.no_history and history is not None:
            try:
                step = replace(step, run_id=history.record(step.run))
            except HistoryError as exc:
                unrecorded = exc
        previous = (step.run_id, step.run.report)
        tally.last = step.verdict
        tally.done += 1
        print(tick_line(step), flush=True)
        if unrecorded is not None:
            say(
                f"the run was not recorded in the history: {unrecorded}; the watch stops "
                f"(exit status {EXIT_UNKNOWN})"
            )
            tally.status = EXIT_UNKNOWN
            return


def run(args: argparse.Namespace) -> int:
    if args.from_ is not None:
        from explorer.commands.watch_many import run_watch_many

        return run_watch_many(args)
    if not args.target:
        return error("a TARGET is required (or a list of them with --from FILE)", EXIT_USAGE)
    from explorer.core.text import safe_text
    from explorer.store.base import HistoryError

    try:
        config = config_of(args)
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    try:
        # Opened (and a SQLite file proven writable) before anything is asked: a history that cannot
        # be used is refused now, not found out after the first interview.
        history = open_history(args) if args.no_history else recording_history(args)
    except HistoryError as exc:
        if not args.no_history or args.target.strip().isdigit():
            return error(f"the history cannot be used, so nothing was asked: {exc}", EXIT_UNKNOWN)
        history = None
    tally = _Tally()
    try:
        try:
            target, options, previous = _start(args, history, config)
            key = signing_key(None, config, options.role, options.runner, "watch")  # the config's sign_key
        except (UsageError, ValueError) as exc:
            return error(str(exc), EXIT_USAGE)
        except (HistoryError, LookupError) as exc:
            return error(str(exc), EXIT_UNKNOWN)
        if not args.quiet:
            print(
                f"watching {safe_text(target, limit=300)} every {args.every:g} s"
                + (f", {args.count} run{'s' if args.count != 1 else ''}" if args.count else ", until Ctrl+C"),
                file=sys.stderr,
            )
        run_fn = signed_async_run_fn(key, target, "watch")
        asyncio.run(_loop(args, target, options, previous, history, tally, run_fn))
    except KeyboardInterrupt:
        print(f"\nstopped after {tally.done} run{'s' if tally.done != 1 else ''}", file=sys.stderr)
        if tally.last is None:
            return 130
    finally:
        if history is not None:
            history.close()
    if tally.status is not None:
        return tally.status
    return verdict_exit(tally.last or "unreachable")
