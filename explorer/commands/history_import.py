"""`interview-explorer history import FILE...`: merge JSON transcripts made elsewhere into the history.

This is how sweeps on several machines become one history without a coordinator: each shard
writes `verify --transcripts DIR`, and one `history import DIR...` merges them (a directory
means every `*.json` in it). A transcript is evidence only if its bytes say what it says, so
each one is re-verified offline first (`procedure.reverify_offline`: the recorded exchanges and
keys alone, no network) and refused with a message when the bytes do not reproduce its stated
verdict, card digest and answers digest. What is recorded is the transcript's own run, so a
transcript imported twice, or one of a run this history already recorded, is recorded once
(`History.record_once`).

One line per file on stdout: imported (with the new run id), already recorded, or refused
(the reason on stderr too). Exit status: 0 when every file was imported or already recorded,
1 when any was refused, 2 usage error, 6 an unusable history.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    error,
    open_history,
    say,
)

if TYPE_CHECKING:
    from explorer.core.run import Run
    from explorer.store.base import HistoryStore

COMMAND = "history import"
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
# What the bytes must reproduce: (label, path in the report).
_CHECKED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("verdict", ("verdict",)),
    ("card digest", ("card", "sha256")),
    ("answers digest", ("answers_sha256",)),
)


class Refused(Exception):
    """This file is not recorded; str() says why."""


def _files(names: list[str]) -> Iterator[Path]:
    for name in names:
        path = Path(name).expanduser()
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
        else:
            yield path


def _lookup(report: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = report
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _read(path: Path) -> Run:
    from explorer.core.run import Run

    try:
        if path.stat().st_size > MAX_TRANSCRIPT_BYTES:
            raise Refused(f"larger than {MAX_TRANSCRIPT_BYTES // (1024 * 1024)} MiB")
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise Refused("no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise Refused(f"not readable as JSON ({exc})") from None
    try:
        run = Run.from_transcript(data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise Refused(f"not a transcript: {exc}") from None
    if not run.exchanges:
        raise Refused("the transcript holds no exchanges, so there is nothing to re-verify")
    return run


def check(run: Run) -> None:
    """Raise Refused unless the transcript's bytes reproduce its stated verdict and digests."""
    from explorer.procedure import reverify_offline

    try:
        again = reverify_offline(run).report
    except Exception as exc:  # noqa: BLE001 - a hostile transcript is refused, never a traceback
        raise Refused(f"it cannot be re-verified ({type(exc).__name__}: {exc})") from None
    for label, path in _CHECKED:
        stated, found = _lookup(run.report, path), _lookup(again, path)
        if stated != found:
            raise Refused(f"its bytes give {label} {found!r}, but it states {stated!r}")


def import_file(history: HistoryStore, path: Path) -> tuple[Run, int, bool]:
    """Check and record one transcript file: (the run, its id, True when recorded now).

    Raises Refused."""
    run = _read(path)
    check(run)
    return (run, *history.record_once(run))


def run_import(args: argparse.Namespace, names: list[str]) -> int:
    from explorer.core.text import safe_text
    from explorer.store.history import HistoryError, agent_of

    if not names:
        return error("history import needs one or more transcript files or directories", EXIT_USAGE, COMMAND)
    refused = 0
    try:
        with open_history(args) as history:
            for path in _files(names):
                shown = safe_text(str(path), limit=300)
                try:
                    run, run_id, new = import_file(history, path)
                except Refused as exc:
                    refused += 1
                    print(f"refused  {shown}")
                    say(f"{shown} refused: {safe_text(str(exc), limit=500)}", COMMAND)
                    continue
                word = "imported as run" if new else "already recorded as run"
                verdict = safe_text(run.verdict, limit=20)
                agent = safe_text(agent_of(run.report), limit=200)
                print(f"{word} {run_id}  {verdict}  {agent}  ({shown})", flush=True)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN, COMMAND)
    return EXIT_DIFFERENT if refused else EXIT_OK
