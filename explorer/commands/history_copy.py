"""`interview-explorer history copy --to URL` (or `--from URL`): move a whole history between stores.

The history this command would otherwise use (`--history`, INTERVIEW_EXPLORER_HISTORY, the
config's, else the home's file) is the source of `--to URL` and the target of `--from URL`;
with both, it is not used. Runs are copied in batches under their own ids
(`explorer.store.copy`); an interrupted copy is resumed by running the same command again. The
copy ends by proving itself: the run count and every run's digests equal on both sides.

Progress goes to stderr, the result to stdout. Exit status: 0 copied and proved, 1 the proof
found a difference (said on stderr), 2 usage error, 6 a history that cannot be used (or a target
holding other runs).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    UsageError,
    choose_history_of,
    error,
    say,
)

if TYPE_CHECKING:
    from explorer.config.history_choice import HistoryChoice

COMMAND = "history copy"


def _choice(url: str, option: str) -> HistoryChoice:
    from explorer.config.history_choice import HistoryChoiceError, choose_history

    try:
        return choose_history(url)
    except HistoryChoiceError as exc:
        raise UsageError(str(exc).replace("--history", option, 1)) from None


def run_copy(args: argparse.Namespace, extra: list[str]) -> int:
    from explorer.store.base import HistoryError
    from explorer.store.copy import copy_history

    if extra:
        return error("history copy takes --to URL and/or --from URL, nothing else", EXIT_USAGE, COMMAND)
    if not args.copy_to and not args.copy_from:
        return error("history copy needs --to URL (or --from URL)", EXIT_USAGE, COMMAND)
    try:
        source = _choice(args.copy_from, "--from") if args.copy_from else choose_history_of(args)
        target = _choice(args.copy_to, "--to") if args.copy_to else choose_history_of(args)
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE, COMMAND)
    home = getattr(args, "home", None)
    if _same(source, target, home):
        return error(f"the source and the target are the same history ({source.shown})", EXIT_USAGE, COMMAND)
    began = time.monotonic()
    shown = [0.0]

    def progress(done: int, upto: int) -> None:
        now = time.monotonic()
        if now - shown[0] >= 1.0 or done == upto:
            shown[0] = now
            say(f"copied up to run {done} of {upto}", COMMAND)

    try:
        with source.open(home) as src, target.open(home) as dst:
            say(f"copying {src.location} into {dst.location}", COMMAND)
            result = copy_history(src, dst, progress=progress)
            where = (src.location, dst.location)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN, COMMAND)
    seconds = time.monotonic() - began
    if not result.proved:
        message = f"the copy is not proved: {result.difference}; run the command again"
        return error(message, EXIT_DIFFERENT, COMMAND)
    sys.stdout.write(
        f"copied {result.copied} runs ({result.runs - result.copied} were there already) from {where[0]} to "
        f"{where[1]} in {seconds:.1f} s; proved: {result.runs} runs on both sides, every run's report, "
        "exchanges, keys and signature digests equal\n"
    )
    return EXIT_OK


def _same(source: HistoryChoice, target: HistoryChoice, home: str | Path | None) -> bool:
    if source.location is None and target.location is None:
        return True
    paths: list[str | None] = []
    for choice in (source, target):
        if choice.location is None:
            from explorer.home import home_dir
            from explorer.store.sqlite_schema import HISTORY_FILE

            paths.append(str((home_dir(home) / HISTORY_FILE).resolve()))
        elif choice.location.path is not None:
            paths.append(str(choice.location.path.resolve()))
        else:
            paths.append(choice.location.conninfo)
    return paths[0] == paths[1]
