"""A recorded or received run as its reader sees it: derived from its bytes under the reader's trust.

Every surface that shows a run it did not just make (`verify --offline`, `show`, `compare`,
`export`, `history import`, the baseline of `replay` and `watch RUN`, the TUI opening a stored
run or a transcript file) goes through `read_run`, so they all show the same thing:

- the report is derived again from the recorded exchanges (`explorer.core.rederive`) under the
  reader's own trust roots, `ReaderTrust`: the card keys of their `--keys` and config, whether
  they allow the card's own `jku`, and the runner keys they trust. Keys a run carries are data:
  they decide nothing here. So a run recorded with `--keys K` reads `verified` wherever K is in
  the reader's keys (the config's `keys`, say), and elsewhere `unverifiable`, with a note of
  what the keys it carries would say (`card.signature.with_recorded_keys`) and what would make
  it checkable;
- the standing is assessed by the one rule (`explorer.evidence.assess_transcript`);
- the report as recorded is kept beside it (`Run.signed_report`), so a signed run is still
  written, exported and re-imported exactly as it was signed.

The same applies to the history's own runs: a history is a file too (and may be shared), so a
run recorded here is shown by what its bytes give under the keys you trust now, not by what was
written down then. With the keys it was verified with in your config nothing changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from explorer.core.jsonshape import mapping_of
from explorer.core.rederive import rederive, stated_report_difference, target_problem
from explorer.core.run import Run, TranscriptError
from explorer.core.transcript import MAX_TRANSCRIPT_BYTES, Transcript, read_transcript
from explorer.core.view import ReportView
from explorer.evidence.standing import assess_transcript


@dataclass(frozen=True)
class ReaderTrust:
    """The reader's trust roots: what a re-derivation may rely on, and nothing a run brings."""

    keys: Mapping[str, Any] = field(default_factory=lambda: {"keys": []})  # one public JWKS
    allow_jku: bool = False
    runners: Mapping[str, bytes] = field(default_factory=dict)  # runner key thumbprint -> raw key


def read_transcript_file(path: Path) -> Transcript:
    """A transcript file read strictly (`explorer.core.transcript`); TranscriptError, one sentence,
    for a file that is missing, unreadable, too large or not a well-formed transcript."""
    from explorer.net.files import read_capped

    try:
        raw, too_large = read_capped(path, MAX_TRANSCRIPT_BYTES)
    except FileNotFoundError:
        raise TranscriptError("there is no such file") from None
    except IsADirectoryError:
        raise TranscriptError("it is a folder, not a file") from None
    except OSError as exc:
        raise TranscriptError(f"it cannot be read ({exc.strerror or exc})") from None
    if too_large:
        raise TranscriptError(f"it is larger than {MAX_TRANSCRIPT_BYTES // (1024 * 1024)} MiB")
    return read_transcript(raw)


def stated_problem(run: Run) -> str | None:
    """Why the report a transcript states is not the one its bytes give under the keys it
    carries (what its maker's trust gave them), in one sentence naming the first difference;
    None when it is. Raises TranscriptError when a stated label has the wrong type."""
    problem = target_problem(_stated_target(run.report), run.exchanges)
    if problem is not None:
        return problem
    difference = stated_report_difference(run.report, rederive(run, run.keys, allow_jku=True))
    return None if difference is None else difference.sentence()


def _stated_target(report: Mapping[str, Any]) -> str | None:
    target = report.get("target")
    return target if isinstance(target, str) and target else None


def read_run(run: Run, trust: ReaderTrust, transcript: Transcript | None = None) -> Run:
    """`run` (as recorded in a history, or as a transcript file states it) with the report its
    bytes give under `trust` and the standing it earns there; its recorded report kept as
    `signed_report`. `transcript` is the file it was read from, when it was (its digest is taken
    over the bytes received). Raises TranscriptError when a stated label has the wrong type."""
    recorded = replace(run, report=run.recorded_report, signed_report=None)
    derived = rederive(recorded, trust.keys, allow_jku=trust.allow_jku)
    derived = _with_recorded_keys(derived, recorded)
    data = transcript.data if transcript is not None else recorded.to_transcript()
    lossy = transcript.may_hold_lossy_integers if transcript is not None else True
    report = assess_transcript(data, derived, trust.runners, run=recorded, may_hold_lossy_integers=lossy)
    return replace(recorded, report=report, signed_report=recorded.report)


def _with_recorded_keys(derived: dict[str, Any], recorded: Run) -> dict[str, Any]:
    """The derived report with `card.signature.with_recorded_keys` (status, kid, key source) when
    the keys the run carries (and any key set it fetched from the card's `jku`) would give its
    card signature another status than the reader's trust does: said, never used."""
    now = _signature(derived)
    if not now or now.get("status") in ("verified", "unsigned"):
        return derived
    if not (recorded.keys.get("keys") or any(e.purpose == "jwks" for e in recorded.exchanges)):
        return derived
    then = _signature(rederive(recorded, recorded.keys, allow_jku=True))
    if not then or then.get("status") == now.get("status"):
        return derived
    card = dict(derived["card"])
    recorded_keys = {key: then.get(key) for key in ("status", "kid", "key_source")}
    card["signature"] = {**now, "with_recorded_keys": recorded_keys}
    return {**derived, "card": card}


def _signature(report: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping_of(ReportView.of(report).member("card", "signature"))
