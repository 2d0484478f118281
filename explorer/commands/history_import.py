"""`interview-explorer history import FILE...`: merge JSON transcripts made elsewhere into the history.

This is how sweeps on several machines become one history without a coordinator: each shard
writes `verify --transcripts DIR`, and one `history import DIR...` merges them (a directory
means every `*.json` in it). A transcript is a file anyone can write, so each one is read as
strictly as a card (`explorer.core.transcript`: duplicate keys, wrong types, too deep or too
large are refused) and the report it states must be the one its bytes give: derived again from
its exchanges under the keys it carries (what its maker's trust gave them; `explorer.evidence.reading`),
target included, it is refused with a message naming the first member that differs. What is
recorded is the transcript's own run (for an unsigned one, with the standing any reader gives
it), so a transcript imported twice, or one of a run this history already recorded, is recorded
once (`History.record_once`); a signed copy is kept even when an unsigned copy of the same run
was recorded first. A signed transcript whose signature does not hold for these bytes (altered
after signing, or a bad signature) is recorded, as the claim it is, with a warning.

One line per file on stdout: imported (with the new run id), already recorded, or refused (the
reason on stderr too); every file is tried, whatever happened to the ones before. Exit status:
0 when every file was imported or already recorded, 1 when one was refused because its bytes do
not give what it states, 2 when one is not a readable transcript at all (or a usage error), 6 an
unusable history.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.commands.common import (
    EXIT_DIFFERENT,
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    UsageError,
    config_of,
    error,
    open_history,
    say,
)

if TYPE_CHECKING:
    from explorer.core.run import Run
    from explorer.store.base import HistoryStore

COMMAND = "history import"


class Refused(Exception):
    """This file is not recorded; str() says why."""


class Malformed(Refused):
    """This file is not a readable transcript at all."""


def _files(names: list[str]) -> Iterator[Path]:
    for name in names:
        path = Path(name).expanduser()
        if path.is_dir():
            yield from sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
        else:
            yield path


def import_file(history: HistoryStore, path: Path, trusted: Mapping[str, bytes]) -> tuple[Run, int, bool]:
    """Read, check and record one transcript file: (the run with the standing it earns here, its
    id, True when recorded now). Raises Malformed for a file that is not a transcript, Refused for
    one whose stated report its bytes do not give."""
    from dataclasses import replace

    from explorer.core.run import TranscriptError
    from explorer.evidence.reading import read_transcript_file, stated_problem
    from explorer.evidence.standing import assess_transcript

    try:
        transcript = read_transcript_file(path)
    except TranscriptError as exc:
        raise Malformed(str(exc)) from None
    run = transcript.run
    if not run.exchanges:
        raise Refused("the transcript holds no exchanges, so there is nothing to re-verify")
    try:
        problem = stated_problem(run)
    except TranscriptError as exc:
        raise Malformed(str(exc)) from None
    if problem is not None:
        raise Refused(problem)
    lossy = transcript.may_hold_lossy_integers
    report = assess_transcript(transcript.data, run.report, trusted, run=run, may_hold_lossy_integers=lossy)
    if run.attestation is None:  # what any reader gives an unsigned transcript: its role is a label
        run = replace(run, report=report)
    return (replace(run, report=report), *history.record_once(run))


def _warning(run: Run) -> str | None:
    """What to say about a signed transcript whose signature does not hold for its bytes."""
    attestation = run.report.get("run_attestation")
    if run.attestation is None or not isinstance(attestation, Mapping):
        return None
    if attestation.get("status") != "invalid":
        return None
    reason = attestation.get("reason") or "bad signature"
    detail = attestation.get("detail") or ""
    return f"its signature does not hold for these bytes ({reason}: {detail}); recorded as a claim"


def run_import(args: argparse.Namespace, names: list[str]) -> int:
    from explorer.commands.evidence_options import trusted_runners
    from explorer.core.text import safe_text
    from explorer.store.base import HistoryError, agent_of

    if not names:
        return error("history import needs one or more transcript files or directories", EXIT_USAGE, COMMAND)
    try:
        trusted = trusted_runners(args.trust_runner, config_of(args), 10.0, COMMAND)
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE, COMMAND)
    refused = malformed = 0
    try:
        with open_history(args) as history:
            for path in _files(names):
                shown = safe_text(str(path), limit=300)
                try:
                    run, run_id, new = import_file(history, path, trusted)
                except Refused as exc:
                    malformed += isinstance(exc, Malformed)
                    refused += not isinstance(exc, Malformed)
                    print(f"refused  {shown}", flush=True)
                    say(f"{shown} refused: {safe_text(str(exc), limit=500)}", COMMAND)
                    continue
                word = "imported as run" if new else "already recorded as run"
                verdict = safe_text(run.verdict, limit=20)
                agent = safe_text(agent_of(run.report), limit=200)
                print(f"{word} {run_id}  {verdict}  {agent}  ({shown})", flush=True)
                warning = _warning(run)
                if warning is not None:
                    say(f"warning: {shown}: {safe_text(warning, limit=600)}", COMMAND)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN, COMMAND)
    if malformed:
        return EXIT_USAGE
    return EXIT_DIFFERENT if refused else EXIT_OK
