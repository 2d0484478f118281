"""What a recorded run's bytes say, under keys someone chose, and where a stated report differs.

A transcript carries a report, but the report is only what its maker says. The exchanges are
the bytes that were sent and received; everything a reader is shown or acted on is derived from
them (`rederive`, the same pure `evaluate` a live run uses) under the trust roots of whoever
derives it:

- `keys` is the public JWKS the card signature is checked with. A reader passes their own (their
  `--keys` and config); the keys a transcript carries are data, never trust, and are passed only
  to check that a stated report is what its maker's keys gave
  (`explorer.interview.procedure.reverify_offline`).
- `allow_jku` decides whether a key set the run fetched from the card's own `jku` counts: a
  reader who did not allow the card to name its own key gets `unverifiable`, as live.
- The target is what the person typed and cannot be derived; a stated one is used only when it
  leads to the first card request the run recorded (`target_problem`), else that request's URL.
- `ran_by` and the times are labels the report carries; who ran a run is decided by its signature
  (`explorer.core.attestation`), never by the label.

`stated_report_difference` compares a stated report with the derived one and names the first
member that differs, both values printed safely. The members a reader's trust decides (`standing`,
`standing_signed`, `run_attestation`, the `evidence_unverified` finding) are not compared: they are
re-assessed wherever a run is shown. A report made by another explorer version is held to the facts a run is
listed and shown by (`FIXED_FACTS`), since a newer verifier may judge the same bytes in more
detail; the report shown is always the derived one.

Pure: no I/O. Both rules that mirror discovery (`target_leads_to`) are checked against
`explorer.net.discovery` by the tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from explorer.core.card import WELL_KNOWN
from explorer.core.evaluate import evaluate
from explorer.core.openclasp import RESOLVE_PATH, classify_reference
from explorer.core.pointer import escape
from explorer.core.run import Exchange, Run, TranscriptError
from explorer.core.strict_json import lossy_integers
from explorer.core.text import safe_text
from explorer.core.verdict import ROLES

# Re-assessed by every reader, never compared.
READER_MEMBERS = ("standing", "standing_signed", "run_attestation")
READER_FINDINGS = ("evidence_unverified",)
# What a report made by another explorer version is held to (pointers into the report). Not the
# answers digest: since 0.2.0 it hashes the card's signatures as one stand-in (signatures are proofs,
# not declarations: explorer.core.declarations), so an older report's digest of the same answers
# differs; the answers themselves are the exchanges' bytes, from which it is derived.
FIXED_FACTS = (
    "/target",
    "/verdict",
    "/attempts",
    "/card/url",
    "/card/name",
    "/card/sha256",
    "/card/layout",
    "/card/jsonrpc_url",
    "/card/signature/status",
)
_CARD_REQUESTS = ("card-discovery", "card", "openclasp:resolve")
_BARE_HOST = re.compile(r"^[A-Za-z0-9.-]+\.[A-Za-z]{2,}(:\d+)?(/.*)?$")


@dataclass(frozen=True)
class Stated:
    """What a report states that the bytes cannot give: labels, type-checked."""

    target: str | None
    ran_by: dict[str, Any]
    started_at: str
    finished_at: str
    explorer_version: str | None


def stated(report: Mapping[str, Any]) -> Stated:
    """The labels of a stated report; TranscriptError when one has the wrong type."""
    ran_by = report.get("ran_by", {})
    if not isinstance(ran_by, Mapping):
        raise TranscriptError("/report/ran_by must be an object")
    name, role = ran_by.get("name"), ran_by.get("role", "self")
    if name is not None and not isinstance(name, str):
        raise TranscriptError("/report/ran_by/name must be a string or null")
    if role not in ROLES:
        raise TranscriptError(f"/report/ran_by/role must be one of {', '.join(ROLES)}")
    texts: dict[str, str | None] = {}
    for key in ("target", "started_at", "finished_at", "explorer_version"):
        value = report.get(key)
        if value is not None and not isinstance(value, str):
            raise TranscriptError(f"/report/{key} must be a string")
        texts[key] = value
    return Stated(
        texts["target"] or None,
        {"name": name, "role": role},
        texts["started_at"] or "",
        texts["finished_at"] or "",
        texts["explorer_version"],
    )


# --- the target -----------------------------------------------------------------------------------


def first_card_request(exchanges: Sequence[Exchange]) -> Exchange | None:
    """The first request the run made for a card (its first attempt), or None."""
    requests = [e for e in exchanges if e.purpose in _CARD_REQUESTS]
    if not requests:
        return None
    first_attempt = min(e.attempt for e in requests)
    return next(e for e in requests if e.attempt == first_attempt)


def _is_url(text: str) -> bool:
    try:
        return urlsplit(text).scheme.lower() in ("http", "https")
    except ValueError:
        return False


def _path_base(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def _same_file(target: str, recorded: str) -> bool:
    """A card file's recorded path is the target as typed, `~` expanded (by the machine that ran)."""
    if target.startswith("~"):
        tail = str(PurePath(target[1:].lstrip("/\\") or "."))
        return recorded.endswith("/" + tail) or recorded.endswith("\\" + tail)
    return str(PurePath(target)) == recorded


def target_leads_to(target: str, first: Exchange) -> bool:
    """Whether discovery, given `target`, makes `first` its first card request (the rules of
    `explorer.net.discovery.discover_card`: a card file, an OpenClasp reference, a card URL, a
    base URL's first well-known path, a bare host name taken as https)."""
    text = target.strip()
    if first.url == text:
        return True  # a card URL, or a target that named nothing (its failed request)
    if first.method == "FILE":
        return _same_file(text, first.url)
    reference = classify_reference(text)
    if first.purpose == "openclasp:resolve":
        suffix = f"{RESOLVE_PATH}?reference={quote(reference.reference, safe='')}"
        return reference.kind in ("profile", "slug_or_id") and first.url.endswith(suffix)
    if reference.kind == "public_card" and reference.base_url and reference.agent_id:
        agent = quote(reference.agent_id, safe="")
        return first.url == f"{reference.base_url}/agents/{agent}/a2a-agent-card.json"
    url = text if _is_url(text) or not _BARE_HOST.match(text) else "https://" + text
    try:
        path = urlsplit(url).path
    except ValueError:
        return False
    if path.endswith(".json"):
        return first.url == url
    return first.url == _path_base(url) + WELL_KNOWN[0]


def target_problem(target: str | None, exchanges: Sequence[Exchange]) -> str | None:
    """Why a stated target cannot be the one the run asked, or None."""
    first = first_card_request(exchanges)
    if first is None:
        return "the transcript records no request for a card"
    if target is None:
        return None
    if target_leads_to(target, first):
        return None
    return (
        f"it states the target {safe_text(target, limit=200)!r}, but its first card request went "
        f"to {safe_text(first.url, limit=200)!r}"
    )


def derived_target(target: str | None, exchanges: Sequence[Exchange]) -> str:
    """The stated target when it leads to the run's first card request, else that request's URL."""
    first = first_card_request(exchanges)
    if first is None:
        return target or ""
    return target if target is not None and target_leads_to(target, first) else first.url


# --- the report -----------------------------------------------------------------------------------


def rederive(run: Run, keys: Mapping[str, Any] | None, *, allow_jku: bool) -> dict[str, Any]:
    """The report this run's exchanges give under `keys` (a public JWKS) and `allow_jku`, with the
    stated labels (target when it fits, `ran_by`, times); its standing is left to the caller.
    TranscriptError when a stated label has the wrong type."""
    labels = stated(run.report)
    exchanges = run.exchanges if allow_jku else tuple(e for e in run.exchanges if e.purpose != "jwks")
    return evaluate(
        list(exchanges),
        dict(keys or {}),
        target=derived_target(labels.target, run.exchanges),
        ran_by=labels.ran_by,
        started_at=labels.started_at,
        finished_at=labels.finished_at,
        **({"explorer_version": labels.explorer_version} if labels.explorer_version else {}),
    )


@dataclass(frozen=True)
class Difference:
    """Where a stated report first differs from the derived one."""

    pointer: str  # into the report
    stated: Any
    derived: Any
    stated_present: bool = True
    derived_present: bool = True

    def sentence(self) -> str:
        """`/report/card/name: its bytes give "Steady" but it states "Impostor"`, printed safely."""
        given = _shown(self.derived) if self.derived_present else "nothing there"
        says = _shown(self.stated) if self.stated_present else "nothing there"
        return f"/report{safe_text(self.pointer, limit=200)}: its bytes give {given} but it states {says}"


def _shown(value: Any) -> str:
    """RFC 8785 text, but integers exactly: two integers beyond 2^53 that differ share their
    RFC 8785 text, and a sentence naming the difference must not print the same number twice."""
    from explorer.core.view import canonical_or_json

    if lossy_integers(value):
        return safe_text(json.dumps(value, sort_keys=True, ensure_ascii=False), limit=120)
    return safe_text(canonical_or_json(value), limit=120)


def _without_reader_members(report: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in report.items() if k not in READER_MEMBERS}
    findings = out.get("findings")
    if isinstance(findings, list):
        out["findings"] = [
            f for f in findings if not (isinstance(f, Mapping) and f.get("code") in READER_FINDINGS)
        ]
    return out


def stated_report_difference(
    stated_report: Mapping[str, Any], derived: Mapping[str, Any]
) -> Difference | None:
    """The first member where the stated report and the derived one differ (reader members aside),
    or None. A report of another explorer version is held to `FIXED_FACTS` only."""
    a, b = _without_reader_members(stated_report), _without_reader_members(derived)
    if _identical(a, b):
        return None
    if stated_report.get("explorer_version") != derived.get("explorer_version") or not isinstance(
        stated_report.get("explorer_version"), str
    ):
        for pointer in FIXED_FACTS:
            found = _diff(_at(a, pointer), _at(b, pointer), pointer)
            if found is not None:
                return found
        return None
    return _diff(a, b, "")


_MISSING = object()
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=True, check_circular=False).encode


def _identical(a: Any, b: Any) -> bool:
    """Equal, and written the same (so `true` is not `1`): both in C, which is what nearly every
    report, equal to what its bytes give, costs; only a difference is looked for member by member."""
    try:
        return bool(a == b) and _ENCODE(a) == _ENCODE(b)
    except (TypeError, ValueError, RecursionError):
        return False


def _at(doc: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        if not isinstance(doc, Mapping) or token not in doc:
            return _MISSING
        doc = doc[token]
    return doc


def _same_leaf(x: Any, y: Any) -> bool:
    if isinstance(x, bool) or isinstance(y, bool):
        return type(x) is type(y) and x == y
    if isinstance(x, int | float) and isinstance(y, int | float):
        return x == y  # exact, also for integers beyond 2^53 (never through doubles)
    return type(x) is type(y) and x == y


def _diff(x: Any, y: Any, pointer: str) -> Difference | None:
    """Iterative, in document order: any depth and size, and the first difference ends the walk."""
    stack: list[tuple[Any, Any, str]] = [(x, y, pointer)]
    while stack:
        u, v, at = stack.pop()
        if u is _MISSING or v is _MISSING:
            if u is not v:
                return Difference(
                    at,
                    None if u is _MISSING else u,
                    None if v is _MISSING else v,
                    u is not _MISSING,
                    v is not _MISSING,
                )
            continue
        if isinstance(u, Mapping) and isinstance(v, Mapping):
            keys = list(u) + [k for k in v if k not in u]
            stack.extend(
                (u.get(k, _MISSING), v.get(k, _MISSING), f"{at}/{escape(str(k))}") for k in reversed(keys)
            )
        elif isinstance(u, list) and isinstance(v, list):
            if len(u) != len(v):
                shorter = min(len(u), len(v))
                stack.append(
                    (
                        u[shorter] if shorter < len(u) else _MISSING,
                        v[shorter] if shorter < len(v) else _MISSING,
                        f"{at}/{shorter}",
                    )
                )
            stack.extend((u[i], v[i], f"{at}/{i}") for i in range(min(len(u), len(v)) - 1, -1, -1))
        elif not _same_leaf(u, v):
            return Difference(at, u, v)
    return None
