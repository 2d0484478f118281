"""A JSON transcript read from its bytes: the strict parser the cards get, under caps, and typed.

A transcript is a file anyone can write. It is read exactly as an agent's card is read
(`explorer.core.strict_json`: duplicate keys, NaN, numbers that overflow a double, invalid UTF-8
and lone surrogates refused), so no reader can be shown a decoy member another parser would
keep; its depth is capped (a card's own cap plus the few levels a transcript wraps around the
values it quotes) and so is its size. Then `Run.from_transcript` checks the type of every member
it reads. Everything refused is a `TranscriptError` whose text is one sentence a person can act
on; nothing else escapes `read_transcript`.

What the stated report is worth is not decided here: `explorer.core.rederive` derives the report
the exchanges give and names the first difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from explorer.core.rederive import stated
from explorer.core.run import Run, TranscriptError
from explorer.core.strict_json import DEFAULT_MAX_DEPTH, StrictJsonError, parse

__all__ = ["MAX_TRANSCRIPT_BYTES", "MAX_TRANSCRIPT_DEPTH", "Transcript", "TranscriptError", "read_transcript"]

MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
# A transcript quotes parsed answers and card members a few levels down (report > questions >
# question > projections > projection > value); those values were parsed under the card cap.
MAX_TRANSCRIPT_DEPTH = DEFAULT_MAX_DEPTH + 32
# An integer beyond +-(2^53-1) has at least 16 digits: text without such a run holds none (found
# as a run of marks in the bytes' digit mask, a plain substring search in C).
_DIGIT_MASK = bytes.maketrans(b"0123456789", b"1111111111")
_SIXTEEN_DIGITS = b"1" * 16


@dataclass(frozen=True)
class Transcript:
    """A transcript as read: the parsed JSON (what a signature's digest is taken over) and the run
    it records, its report as the file states it."""

    data: Mapping[str, Any]
    run: Run
    may_hold_lossy_integers: bool  # False: no integer JCS would round is anywhere in it

    @property
    def signed(self) -> bool:
        return self.run.attestation is not None


def read_transcript(raw: bytes) -> Transcript:
    """Parse and type-check a transcript's bytes; TranscriptError (one sentence) when refused."""
    if len(raw) > MAX_TRANSCRIPT_BYTES:
        raise TranscriptError(f"it is larger than {MAX_TRANSCRIPT_BYTES // (1024 * 1024)} MiB")
    try:
        data = parse(raw, max_bytes=MAX_TRANSCRIPT_BYTES, max_depth=MAX_TRANSCRIPT_DEPTH)
    except StrictJsonError as exc:
        raise TranscriptError(f"it is not strict JSON: {exc}") from None
    run = Run.from_transcript(data)
    stated(run.report)  # its labels (target, ran_by, times) have the types a report gives them
    return Transcript(data, run, _SIXTEEN_DIGITS in raw.translate(_DIGIT_MASK))
