"""The Run record: one interview, every byte sent and received, and the report built from them.

A Run is immutable and self-contained. The history stores it, the exports print it, the TUI
draws it, and `verify --offline` rebuilds its report from `exchanges` and `keys` alone, which is
why the raw bodies are kept exactly as received (up to the size cap) instead of only parsed.
Request headers are stored with secrets already replaced; nothing here ever sees a secret.

A transcript read back (`Run.from_transcript`) may come from anyone, so every member this
module reads is checked for its type before it is used: a status that is a string, an error
that is a number, a header that is not a pair of strings or a body that is not base64 is a
`TranscriptError` naming the member, never a wrong Run or a traceback further on. Members this
module does not read (an export's digests and canonical forms) are left alone.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from explorer.core.pointer import printable

TRANSCRIPT_VERSION = 1
REDACTED = "<redacted>"
# How an exchange's `error` begins when the run's deadline cut the request or kept it from being sent.
DEADLINE = "deadline"
MAX_ATTEMPT = 1000  # the procedure runs a handful of attempts; more is not a transcript of ours

Headers = tuple[tuple[str, str], ...]


class TranscriptError(ValueError):
    """A transcript that cannot be read as one; str() is one sentence naming the member."""


_JSON_TYPES = (
    (bool, "a boolean"),
    (int, "a number"),
    (float, "a number"),
    (str, "a string"),
    (list, "an array"),
    (dict, "an object"),
)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)


def _bad(where: str, expected: str, value: Any) -> TranscriptError:
    return TranscriptError(f"{printable(where)} must be {expected}, not {_kind(value)}")


def _text(data: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise _bad(f"{where}/{key}", "a string", value)
    return value


def _optional_text(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _bad(f"{where}/{key}", "a string or null", value)
    return value


def _whole(data: Mapping[str, Any], key: str, where: str, low: int, high: int, default: Any) -> Any:
    value = data.get(key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _bad(f"{where}/{key}", f"a whole number from {low} to {high}", value)
    return value


def _headers(data: Mapping[str, Any], key: str, where: str) -> Headers:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise _bad(f"{where}/{key}", "an array of [name, value] pairs", value)
    for index, pair in enumerate(value):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise _bad(f"{where}/{key}/{index}", "a [name, value] pair of strings", pair)
    return tuple((name, text) for name, text in value)


def _body(data: Mapping[str, Any], key: str, where: str) -> bytes | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _bad(f"{where}/{key}", "base64 text or null", value)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise TranscriptError(f"{printable(where)}/{key} is not base64") from None


@dataclass(frozen=True)
class Exchange:
    """One HTTP request and its response, as sent and received."""

    purpose: str
    attempt: int
    method: str
    url: str
    request_headers: Headers = ()
    request_body: bytes | None = None
    status: int | None = None
    response_headers: Headers = ()
    response_body: bytes = b""
    truncated: bool = False
    error: str | None = None
    started_at: str = ""
    elapsed_ms: float = 0.0

    def header(self, name: str) -> str | None:
        """The first response header with this name (case-insensitive), or None."""
        lname = name.lower()
        for key, value in self.response_headers:
            if key.lower() == lname:
                return value
        return None

    def problem(self) -> str | None:
        """Why this exchange gave no usable response, or None when it did: the one rule every
        reader applies (discovery, key loading, the procedure, the evaluation, the card command).

        In order: a transport error (its code: `timeout`, `body_too_large`, `transport: ...`), a
        body cut at the size cap, then the status. An HTTP response is usable only with a 2xx
        status; a card read from a file (method FILE) has no status, and one that claims a status
        was not read from a file by this explorer, so it is not usable either.
        """
        if self.error is not None:
            return self.error
        if self.truncated:
            return "body_too_large"
        if self.method == "FILE":
            return None if self.status is None else f"HTTP {self.status} on a file read"
        if self.status is None or not 200 <= self.status < 300:
            return f"HTTP {self.status}"
        return None

    @property
    def usable(self) -> bool:
        """True when `problem()` finds nothing: the body is what the server meant to send."""
        return self.problem() is None

    def to_json(self) -> dict[str, Any]:
        return {
            "purpose": self.purpose,
            "attempt": self.attempt,
            "method": self.method,
            "url": self.url,
            "request_headers": [list(h) for h in self.request_headers],
            "request_body_b64": _b64(self.request_body),
            "status": self.status,
            "response_headers": [list(h) for h in self.response_headers],
            "response_body_b64": _b64(self.response_body),
            "truncated": self.truncated,
            "error": self.error,
            "started_at": self.started_at,
            "elapsed_ms": self.elapsed_ms,
        }

    @classmethod
    def from_json(cls, data: Any, where: str = "/exchanges/0") -> Exchange:
        """The exchange a transcript records; TranscriptError naming the member (under `where`)
        whose type is wrong."""
        if not isinstance(data, Mapping):
            raise _bad(where, "an object", data)
        truncated = data.get("truncated", False)
        if not isinstance(truncated, bool):
            raise _bad(f"{where}/truncated", "true or false", truncated)
        elapsed = data.get("elapsed_ms", 0.0)
        if isinstance(elapsed, bool) or not isinstance(elapsed, int | float) or not math.isfinite(elapsed):
            raise _bad(f"{where}/elapsed_ms", "a number", elapsed)
        return cls(
            purpose=_text(data, "purpose", where),
            attempt=_whole(data, "attempt", where, 1, MAX_ATTEMPT, 1),
            method=_text(data, "method", where, "GET"),
            url=_text(data, "url", where, ""),
            request_headers=_headers(data, "request_headers", where),
            request_body=_body(data, "request_body_b64", where),
            status=_whole(data, "status", where, 100, 999, None),
            response_headers=_headers(data, "response_headers", where),
            response_body=_body(data, "response_body_b64", where) or b"",
            truncated=truncated,
            error=_optional_text(data, "error", where),
            started_at=_text(data, "started_at", where, ""),
            elapsed_ms=float(elapsed),
        )


@dataclass(frozen=True)
class Run:
    """One complete interview: the report plus the evidence it was built from."""

    report: Mapping[str, Any]
    exchanges: tuple[Exchange, ...] = ()
    keys: Mapping[str, Any] = field(default_factory=dict)
    # The runner's signed attestation (a DSSE envelope, explorer.core.attestation), or None.
    attestation: Mapping[str, Any] | None = None
    # The report exactly as signed, when `report` was re-derived for display (the standing a
    # reader's trusted keys give it, a verdict recomputed from the bytes): what a signed run's
    # transcript and the history keep, so the signature still covers it.
    signed_report: Mapping[str, Any] | None = None

    @property
    def verdict(self) -> str:
        return str(self.report.get("verdict", ""))

    @property
    def recorded_report(self) -> Mapping[str, Any]:
        """The report to write down: the signed one for a signed run, else `report`."""
        if self.attestation is not None and self.signed_report is not None:
            return self.signed_report
        return self.report

    def __repr__(self) -> str:
        # Short on purpose: asyncio.run() formats the main task's result when it restores the
        # SIGINT handler (signal.signal builds a ValueError message from the old handler's repr),
        # and the generated repr of every body received took seconds and tens of MB on a large agent.
        signed = "signed" if self.attestation is not None else "unsigned"
        return f"<Run {self.verdict or '?'}, {len(self.exchanges)} exchanges, {signed}>"

    def to_transcript(self) -> dict[str, Any]:
        """The JSON transcript; a signed run's envelope is its `run_attestation` member, and the
        signature covers every other member (explorer.core.intoto.transcript_sha256)."""
        report = self.recorded_report
        data = {
            "transcript_version": TRANSCRIPT_VERSION,
            "explorer_version": report.get("explorer_version"),
            "report": dict(report),
            "exchanges": [e.to_json() for e in self.exchanges],
            "keys": dict(self.keys),
        }
        if self.attestation is not None:
            data["run_attestation"] = dict(self.attestation)
        return data

    @classmethod
    def from_transcript(cls, data: Any) -> Run:
        """The run a JSON transcript records, its report as the file states it; TranscriptError
        (a ValueError) for anything that is not a version 1 transcript with members of the right
        types. Whether the stated report is what the exchanges give is not decided here
        (`explorer.core.rederive`)."""
        if not isinstance(data, Mapping) or data.get("transcript_version") != TRANSCRIPT_VERSION:
            raise TranscriptError("not an Interview Explorer transcript (transcript_version 1 expected)")
        report, keys = data.get("report", {}), data.get("keys", {})
        if not isinstance(report, Mapping):
            raise _bad("/report", "an object", report)
        if not isinstance(keys, Mapping):
            raise _bad("/keys", "an object (a JWKS)", keys)
        if "keys" in keys and not (
            isinstance(keys["keys"], list) and all(isinstance(k, Mapping) for k in keys["keys"])
        ):
            raise _bad("/keys/keys", "an array of keys (objects)", keys["keys"])
        exchanges = data.get("exchanges", [])
        if not isinstance(exchanges, list):
            raise _bad("/exchanges", "an array", exchanges)
        attestation = data.get("run_attestation")
        if attestation is not None and not isinstance(attestation, Mapping):
            raise _bad("/run_attestation", "an object (a DSSE envelope)", attestation)
        for key in ("explorer_version",):
            _optional_text(data, key, "")
        return cls(
            report=dict(report),
            exchanges=tuple(Exchange.from_json(e, f"/exchanges/{i}") for i, e in enumerate(exchanges)),
            keys=dict(keys),
            attestation=None if attestation is None else dict(attestation),
        )


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")
