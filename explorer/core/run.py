"""The Run record: one interview, every byte sent and received, and the report built from them.

A Run is immutable and self-contained. The history stores it, the exports print it, the TUI
draws it, and `verify --offline` rebuilds its report from `exchanges` and `keys` alone, which is
why the raw bodies are kept exactly as received (up to the size cap) instead of only parsed.
Request headers are stored with secrets already replaced; nothing here ever sees a secret.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TRANSCRIPT_VERSION = 1
REDACTED = "<redacted>"
# How an exchange's `error` begins when the run's deadline cut the request or kept it from being sent.
DEADLINE = "deadline"

Headers = tuple[tuple[str, str], ...]


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
    def from_json(cls, data: Mapping[str, Any]) -> Exchange:
        body = _unb64(data.get("response_body_b64"))
        return cls(
            purpose=str(data["purpose"]),
            attempt=int(data.get("attempt", 1)),
            method=str(data.get("method", "GET")),
            url=str(data.get("url", "")),
            request_headers=tuple((str(k), str(v)) for k, v in data.get("request_headers", [])),
            request_body=_unb64(data.get("request_body_b64")),
            status=data.get("status"),
            response_headers=tuple((str(k), str(v)) for k, v in data.get("response_headers", [])),
            response_body=body or b"",
            truncated=bool(data.get("truncated", False)),
            error=data.get("error"),
            started_at=str(data.get("started_at", "")),
            elapsed_ms=float(data.get("elapsed_ms", 0.0)),
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
    def from_transcript(cls, data: Mapping[str, Any]) -> Run:
        if not isinstance(data, Mapping) or data.get("transcript_version") != TRANSCRIPT_VERSION:
            raise ValueError("not an Interview Explorer transcript (transcript_version 1 expected)")
        exchanges = data.get("exchanges") or []
        if not isinstance(exchanges, list) or not all(isinstance(e, Mapping) for e in exchanges):
            raise ValueError("exchanges must be a list of objects")
        return cls(
            report=dict(data.get("report") or {}),
            exchanges=tuple(Exchange.from_json(e) for e in exchanges),
            keys=dict(data.get("keys") or {}),
            attestation=_mapping_or_none(data.get("run_attestation")),
        )


def _mapping_or_none(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) else None


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)
