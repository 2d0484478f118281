"""The history's document codec: a Run split into content-addressed documents, and joined back.

Why it is shaped this way: a run of an unchanged agent differs from the previous one only in
timestamps, elapsed times and `Date`-like headers. `encode_run` nulls those volatile values in
place (so key order survives) and carries them separately in one small compressed blob; everything
else becomes documents keyed by the SHA-256 of their bytes, which the history stores once however
many runs share them (a thousand replays cost a thousand small rows, not a thousand copies).
Exchange bodies become documents of their own, referenced from the exchange list by digest.

`decode_run` is the exact inverse: a loaded run's bodies are byte for byte the recorded ones.
`put_document` / `get_document` are the documents table's two operations; `get_document` checks
every body against its digest, so a damaged row is an error, never a wrong answer.

Secrets never reach disk: request and response headers are redacted again here, by the rule of
`redact_headers` (`explorer.core.scrub.is_secret_header`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from explorer.core.run import REDACTED, Exchange, Run
from explorer.core.scrub import is_secret_header

# Top-level report members that differ between runs of an unchanged agent.
VOLATILE_REPORT_MEMBERS: tuple[str, ...] = ("started_at", "finished_at", "elapsed_ms", "duration_ms")
# Response/request headers whose values change per request without the content changing.
VOLATILE_HEADERS = frozenset(
    {
        "date",
        "age",
        "expires",
        "x-request-id",
        "request-id",
        "traceparent",
        "server-timing",
        "x-response-time",
        "x-runtime",
        "cf-ray",
    }
)

_RAW, _ZLIB = 0, 1


@dataclass(frozen=True)
class Doc:
    """Bytes and their SHA-256: one row of the documents table."""

    digest: bytes
    raw: bytes


def _doc(raw: bytes) -> Doc:
    return Doc(hashlib.sha256(raw).digest(), raw)


# `json.dumps(value, ensure_ascii=False, separators=(",", ":"))`, without building an encoder per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dumps(value: Any) -> bytes:
    return _ENCODER.encode(value).encode("utf-8")


@dataclass(frozen=True)
class EncodedRun:
    """A run as the history stores it: four documents, the exchange bodies, and the volatile blob."""

    report: Doc  # the report with volatile members nulled
    exchanges: Doc  # the exchange list with bodies as digests and volatile values nulled
    bodies: list[Doc]  # every distinct request and response body
    keys: Doc  # the public JWKS used
    volatile: bytes  # zlib JSON: the nulled values, put back by decode_run
    attestation: bytes | None = None  # zlib JSON: the runner's DSSE envelope of a signed run


def encode_run(run: Run) -> EncodedRun:
    """Split a run; TypeError or ValueError when it holds a value that is not JSON."""
    report_doc, report_volatile = _split_report(run.recorded_report)
    skeleton, bodies, ex_volatile = _split_exchanges(run.exchanges)
    return EncodedRun(
        report=report_doc,
        exchanges=skeleton,
        bodies=bodies,
        keys=_doc(_dumps(dict(run.keys))),
        volatile=zlib.compress(_dumps({"report": report_volatile, "exchanges": ex_volatile}), 9),
        attestation=None if run.attestation is None else zlib.compress(_dumps(dict(run.attestation)), 9),
    )


def decode_run(
    report: bytes,
    exchanges: bytes,
    keys: bytes,
    volatile: bytes,
    bodies: Mapping[str, bytes],
    attestation: bytes | None = None,
) -> Run:
    """Join the stored parts back into the run as recorded; `bodies` maps hex digest to bytes.

    Raises ValueError, whatever went wrong inside, when the parts do not fit together (a damaged
    database), so the caller has one thing to catch.
    """
    try:
        report_value = json.loads(report)
        skeleton = json.loads(exchanges)
        keys_value = json.loads(keys)
        volatile_value = json.loads(zlib.decompress(volatile))
        report_value.update(volatile_value["report"])
        joined = _join_exchanges(skeleton, bodies, volatile_value["exchanges"])
        envelope = None if attestation is None else json.loads(zlib.decompress(attestation))
        if envelope is not None and not isinstance(envelope, dict):
            raise ValueError("the stored attestation is not an object")
    except (ValueError, KeyError, TypeError, AttributeError, RuntimeError, StopIteration, zlib.error) as exc:
        raise ValueError(str(exc)) from None
    return Run(report=report_value, exchanges=joined, keys=keys_value, attestation=envelope)


@functools.lru_cache(maxsize=1024)  # header names repeat on every exchange of every run
def _header_kind(name: str) -> tuple[bool, bool]:
    """(a credential's, so its value is recorded as REDACTED; volatile, so it goes to the blob)."""
    return is_secret_header(name), name.lower() in VOLATILE_HEADERS


def _split_headers(headers: Sequence[tuple[str, str]], volatile: list[str]) -> list[list[str | None]]:
    """Headers redacted as `explorer.store.redact.redact_headers` does, volatile values moved out;
    one pass, the two decisions about a name made once per process."""
    out: list[list[str | None]] = []
    for name, value in headers:
        secret, moving = _header_kind(name)
        kept = REDACTED if secret else value
        if moving:
            volatile.append(kept)
            out.append([name, None])
        else:
            out.append([name, kept])
    return out


def _join_headers(headers: Sequence[Sequence[Any]], volatile: Iterator[str]) -> tuple[tuple[str, str], ...]:
    return tuple((str(name), next(volatile) if value is None else str(value)) for name, value in headers)


def _split_exchanges(exchanges: Sequence[Exchange]) -> tuple[Doc, list[Doc], list[Any]]:
    """The exchange list as one document (bodies by digest), its body documents, and the volatile values."""
    skeleton: list[dict[str, Any]] = []
    bodies: dict[bytes, Doc] = {}
    volatile: list[Any] = []

    def body_ref(data: bytes | None) -> str | None:
        if data is None:
            return None
        doc = _doc(bytes(data))
        bodies.setdefault(doc.digest, doc)
        return doc.digest.hex()

    for ex in exchanges:
        header_values: list[str] = []
        skeleton.append(
            {
                "purpose": ex.purpose,
                "attempt": ex.attempt,
                "method": ex.method,
                "url": ex.url,
                "request_headers": _split_headers(ex.request_headers, header_values),
                "request_body": body_ref(ex.request_body),
                "status": ex.status,
                "response_headers": _split_headers(ex.response_headers, header_values),
                "response_body": body_ref(ex.response_body),
                "truncated": ex.truncated,
                "error": ex.error,
            }
        )
        volatile.append([ex.started_at, ex.elapsed_ms, header_values])
    return _doc(_dumps(skeleton)), list(bodies.values()), volatile


def _join_exchanges(
    skeleton: list[Any], bodies: Mapping[str, bytes], volatile: list[Any]
) -> tuple[Exchange, ...]:
    out = []
    for item, (started_at, elapsed_ms, header_values) in zip(skeleton, volatile, strict=True):
        values = iter(header_values)
        req_ref, resp_ref = item["request_body"], item["response_body"]
        out.append(
            Exchange(
                purpose=item["purpose"],
                attempt=item["attempt"],
                method=item["method"],
                url=item["url"],
                request_headers=_join_headers(item["request_headers"], values),
                request_body=None if req_ref is None else bodies[req_ref],
                status=item["status"],
                response_headers=_join_headers(item["response_headers"], values),
                response_body=b"" if resp_ref is None else bodies[resp_ref],
                truncated=item["truncated"],
                error=item["error"],
                started_at=started_at,
                elapsed_ms=elapsed_ms,
            )
        )
    return tuple(out)


def _split_report(report: Mapping[str, Any]) -> tuple[Doc, dict[str, Any]]:
    """The report with volatile members nulled in place (so key order survives), and their values."""
    stable = dict(report)
    volatile = {}
    for key in VOLATILE_REPORT_MEMBERS:
        if key in stable:
            volatile[key] = stable[key]
            stable[key] = None
    return _doc(_dumps(stable)), volatile


# --- the documents table ---------------------------------------------------------------------------


def pack_document(doc: Doc) -> tuple[bytes, int]:
    """The bytes a document is stored as and their encoding: zlib where it saves a tenth or more."""
    if len(doc.raw) > 64:
        packed = zlib.compress(doc.raw, 6)
        if len(packed) < len(doc.raw) * 0.9:
            return packed, _ZLIB
    return doc.raw, _RAW


class Statements(Protocol):
    """A DB-API connection's `execute` with `?` placeholders: SQLite's, whose cursor tells the
    `lastrowid` of an insert (the SQL history's own connection type is one of these)."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...


def put_document(conn: Statements, doc: Doc) -> tuple[int, bool]:
    """The id of the document with these bytes, inserting it when new; (id, inserted)."""
    row = conn.execute("SELECT id FROM documents WHERE sha256 = ?", (doc.digest,)).fetchone()
    if row is not None:
        return int(row[0]), False
    body, encoding = pack_document(doc)
    cur = conn.execute(
        "INSERT INTO documents(sha256, size, encoding, body) VALUES (?, ?, ?, ?)",
        (doc.digest, len(doc.raw), encoding, body),
    )
    return int(cur.lastrowid or 0), True


def decode_document(digest: bytes, size: int, encoding: int, body: bytes) -> bytes:
    try:
        raw = zlib.decompress(body) if encoding == _ZLIB else bytes(body)
    except zlib.error as exc:
        raise ValueError(f"document sha256:{digest.hex()} does not decompress ({exc})") from None
    if len(raw) != size or hashlib.sha256(raw).digest() != digest:
        raise ValueError(f"document sha256:{digest.hex()} does not match its digest")
    return raw


def get_document(conn: sqlite3.Connection, doc_id: int) -> bytes:
    row = conn.execute(
        "SELECT sha256, size, encoding, body FROM documents WHERE id = ?", (doc_id,)
    ).fetchone()
    if row is None:
        raise KeyError(f"document {doc_id} is missing")
    return decode_document(*row)
