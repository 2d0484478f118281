"""`interview-explorer export RUN [--format json|md|html|intoto] [-o FILE]`: a recorded run as a transcript.

RUN is a run id from `history`, or `latest` for the newest run in the history (the run a `verify`
just recorded, on a history nobody else records into).

JSON is complete and self-contained (`verify --offline FILE` re-checks it); Markdown and HTML are
for people. The format defaults to the suffix of FILE, else JSON. With `-o` the file is written
atomically (a temporary file renamed into place) and an existing FILE is never replaced without
`--force`; without `-o` the transcript goes to stdout.
Secrets never appear in any format. `intoto` writes a signed run's attestation alone (a DSSE
envelope). Every format states the standing the run earns here: Markdown and HTML show the run as
read here (its report derived again from its bytes under `--keys`/`--allow-jku` and the config,
its standing under `--trust-runner` and the config's `trusted_runners`); JSON is the transcript
as recorded, exactly as signed for a signed run, and for an unsigned one with the standing any
reader gives it (a claim, `evidence_unverified` for a stated independent or platform role).
Markdown, HTML and an unsigned run's JSON also say what the run changed against its agent's run
before it, in the history's kinds (`explorer.store.export.Change`).

Exit status: 0 exported, 1 the file could not be written (or exists, without `--force`), 2 usage
error (also a format the run has nothing for, such as `intoto` of an unsigned run, to a file or
to stdout alike), 6 no such run, or an unreadable history.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from explorer.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    LATEST,
    UsageError,
    add_home_argument,
    error,
    open_history,
    resolved_run_id,
    run_selector_argument,
    say,
)
from explorer.commands.evidence_options import add_reader_arguments, assessed

if TYPE_CHECKING:
    from explorer.core.run import Run
    from explorer.store.export import Change


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from explorer.store.export import ALL_FORMATS

    parser.add_argument(
        "run_id",
        type=run_selector_argument,
        metavar="RUN",
        help=f"a run id from `history`, or `{LATEST}` (the newest run in the history)",
    )
    parser.add_argument(
        "--format",
        choices=list(ALL_FORMATS),
        default=None,
        help="; ".join(f"{f.name}: {f.description}" for f in ALL_FORMATS.values())
        + " (default: the suffix of FILE, else json)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default=None,
        help="write to FILE instead of stdout (an existing FILE is kept unless --force)",
    )
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")
    add_reader_arguments(parser)
    add_home_argument(parser)


def run(args: argparse.Namespace) -> int:
    from explorer.core.text import safe_text
    from explorer.store.base import HistoryError
    from explorer.store.export import ExportError, ExportUnavailable, export, format_for_path, write_export

    fmt = args.format
    if fmt is None:
        implied = format_for_path(args.output) if args.output else None
        fmt = implied or "json"
        if args.output and implied is None:
            shown = safe_text(args.output, limit=200)
            say(f"{shown} has no known suffix; writing JSON (use --format to choose)")
    try:
        run_id, stored, change = _run_and_change(args)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN)
    try:  # as read here; a signed run's JSON and intoto are still written exactly as signed
        [stored] = assessed([stored], args, "export")
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    try:
        if args.output is None:
            sys.stdout.write(export(stored, fmt, change=change))
            return EXIT_OK
        path = write_export(stored, fmt, args.output, replace=args.force, change=change)
    except ExportUnavailable as exc:
        return error(str(exc), EXIT_USAGE)
    except ExportError as exc:  # only writing FILE raises anything else
        return error(str(exc), EXIT_DIFFERENT)
    where = safe_text(str(path), limit=300)
    print(f"wrote the {WROTE[fmt]} of run {run_id} to {where}", file=sys.stderr)
    return EXIT_OK


def _run_and_change(args: argparse.Namespace) -> tuple[int, Run, Change]:
    """The run's id (`latest` resolved), the stored run, and what it changed against its agent's
    run before it; HistoryError for an unknown id or an unreadable history."""
    from explorer.store.export import Change

    with open_history(args, existing=True) as history:
        run_id = resolved_run_id(history, args.run_id)
        summary, stored = history.summary(run_id), history.load(run_id)
        before = history.previous([run_id]).get(run_id)
    return run_id, stored, Change(None if before is None else before.id, summary.kinds)


# What each format's file is, in the sentence that says where it went (an intoto export is not a
# transcript: it is the runner's signed envelope alone).
WROTE = {
    "json": "JSON transcript",
    "md": "Markdown report",
    "html": "HTML report",
    "intoto": "signed attestation (a DSSE envelope)",
}
