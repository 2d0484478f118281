"""The interview extension's section 7 diff: every projection of one answer against the declared bytes.

A pure function over plain data. The caller has already fetched and verified the card and the
committed proposals; `diff_question` resolves each projection's `source.member` in the document
it names and compares the two values as RFC 8785 canonical bytes. Equality is defined on those
bytes and nothing else, so values that differ only in key order, `1.0` vs `1` or a `\\u00e9`
escape are equal, while NFC vs NFD spellings of the same text are different (JCS does not
normalise Unicode, and neither does this).

One deliberate exception to "bytes decide": JCS writes numbers as IEEE doubles, so two different
integers beyond +-(2^53-1) can canonicalize to the same bytes. Such a comparison is flagged
`lossy_number`, and when the exact values differ it is a `projection_mismatch` even though the
bytes agree: a verifier must never call two different numbers equal.

Projection results carry both canonical strings as text and the first differing span, so the
report and the TUI can show exactly where an answer departs from its source. Spans are
`[start, end)` indices into the answer's canonical text (`diff`) and the source's
(`source_diff`); both start at the first differing character, and an empty span marks a pure
insertion point.

Findings about projections carry the question and the *source* member pointer (the member the
agent claimed to copy), which is what a user looks up in the card or proposal. Malformed sources
are reported by `explorer.core.answers.check_answer`; here they are only marked not comparable.

A second exception: a signature is a proof, not a declaration (CONTRACT.md "Signatures are
proofs, not declarations"). A card projection of a member that holds signatures, whose bytes
differ from the card's only by signatures equivalent to the card's (each verifies over the same
payload under the same key), matches with an info `signature_equivalent` finding when the
caller passes the attempt's judge (`explorer.core.declarations.Equivalence`). An answered
signature that does not verify so stays a `projection_mismatch`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from explorer.core import pointer as jp
from explorer.core.answers import source_problems
from explorer.core.canonical import CanonicalError, canonical_text
from explorer.core.card_forms.forms import dropped_empties
from explorer.core.declarations import Equivalence
from explorer.core.findings import Finding, finding
from explorer.core.jsonshape import mapping_of
from explorer.core.signatures import member_is_signed
from explorer.core.sow import ProposalCheck
from explorer.core.strict_json import lossy_integers
from explorer.core.text import safe_text

ProjectionStatus = Literal["match", "mismatch", "unresolved", "unverifiable"]

_SHOWN = 120  # characters of canonical text quoted around a difference in a finding's detail


@dataclass(slots=True)
class ProjectionResult:
    """One projection of one answer, compared with its source (the report's Projection shape)."""

    index: int
    question: str
    document: Any
    member: Any
    url: Any
    digest: Any
    status: ProjectionStatus
    value: Any = None
    source_value: Any = None
    value_canonical: str | None = None
    source_canonical: str | None = None
    signed: bool | None = None
    lossy: bool = False
    diff: tuple[int, int] | None = None
    source_diff: tuple[int, int] | None = None
    # Unsigned members inside this one that are all empty ("", null, {}, []) and dropped by the
    # signer's canonical form: the member is signed except for them (member_unsigned_empty).
    unsigned_empty: tuple[str, ...] = ()
    # When two cards were kept (the one fetched for its signatures and another served to the
    # protocol version the calls speak), the `A2A-Version` the card this member was resolved in
    # was served to; None when there was one card.
    served_to: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = self._json()
        if self.unsigned_empty:
            out["unsigned_empty"] = list(self.unsigned_empty)
        if self.served_to is not None:
            out["served_to"] = self.served_to
        return out

    def _json(self) -> dict[str, Any]:
        """The report's projection entry. A match carries its value once: the source member holds
        the same (`source_value` left out) and no canonical strings are needed to show a
        difference (`value_canonical`, `source_canonical`, `diff`, `source_diff` left out)."""
        if self.status == "match":
            return {
                "index": self.index,
                "question": self.question,
                "document": self.document,
                "member": self.member,
                "url": self.url,
                "digest": self.digest,
                "status": self.status,
                "value": self.value,
                "signed": self.signed,
                "lossy": self.lossy,
            }
        return {
            "index": self.index,
            "question": self.question,
            "document": self.document,
            "member": self.member,
            "url": self.url,
            "digest": self.digest,
            "status": self.status,
            "value": self.value,
            "source_value": self.source_value,
            "value_canonical": self.value_canonical,
            "source_canonical": self.source_canonical,
            "signed": self.signed,
            "lossy": self.lossy,
            "diff": None if self.diff is None else list(self.diff),
            "source_diff": None if self.source_diff is None else list(self.source_diff),
        }


def first_differing_span(a: str, b: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The first differing span of two strings: ([start, end_a), [start, end_b)).

    `start` is the length of the common prefix; each end trims the common suffix without
    crossing `start`. Equal strings give two empty spans at their length.
    """
    limit = min(len(a), len(b))
    start = 0
    while start < limit and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return (start, end_a), (start, end_b)


def _exactly_equal(a: Any, b: Any) -> bool:
    """Python equality, which compares ints and floats exactly (2**53 + 1 != 2.0**53)."""
    try:
        return bool(a == b)
    except RecursionError:
        return False


def _excerpt(text: str, start: int, end: int) -> str:
    lo = max(0, start - _SHOWN // 3)
    hi = min(len(text), max(end, start) + _SHOWN // 3, lo + _SHOWN)
    shown = safe_text(text[lo:hi], limit=_SHOWN * 2)  # details are printed; the exact bytes are in the result
    return ("..." if lo else "") + shown + ("..." if hi < len(text) else "")


def marked_excerpt(text: str, span: tuple[int, int], width: int = 100) -> tuple[str, str]:
    """`text` cut to about `width` characters around `span`, the span wrapped in « », and a line
    of ^ carets under it: where a changed value changes, for a terminal without colour. Control
    and bidi characters are made visible first, so the carets sit under what is printed."""
    start, end = max(0, min(span[0], len(text))), max(0, min(span[1], len(text)))
    end = max(start, end)
    room = max(8, width - 2)
    before_room = max(4, (room - min(end - start, room)) // 3)
    lo = max(0, start - before_room)
    hi = min(len(text), max(end, lo + room))
    mid_end = min(end, hi)
    head = ("..." if lo else "") + safe_text(text[lo:start], limit=width * 4)
    middle = safe_text(text[start:mid_end], limit=width * 4) + ("..." if mid_end < end else "")
    tail = safe_text(text[mid_end:hi], limit=width * 4) + ("..." if hi < len(text) else "")
    line = f"{head}«{middle}»{tail}"
    carets = " " * len(head) + "^" * (len(middle) + 2)
    return line, carets


def skill_ids_of(card_doc: Any) -> tuple[str, ...]:
    """The card's skill ids in card order (string ids only)."""
    skills = mapping_of(card_doc).get("skills")
    if not isinstance(skills, list):
        return ()
    return tuple(s["id"] for s in skills if isinstance(s, Mapping) and isinstance(s.get("id"), str))


def _skill_id_index(member: Any) -> bool:
    """True for pointers of the form /skills/<index>/id."""
    if not isinstance(member, str):
        return False
    try:
        tokens = jp.parse(member)
    except jp.PointerError:
        return False
    if len(tokens) != 3:
        return False
    return tokens[0] == "skills" and tokens[2] == "id" and tokens[1].isascii() and tokens[1].isdigit()


@dataclass(frozen=True)
class CardPair:
    """The card fetched for its signatures, when the card the answers are compared with differs.

    An SDK's compatibility layer can serve a v0.3 translation of a v1.0 card to v0.3 clients
    (docs/PROTOCOL.md section 3): the answers are compared with the card served to the version
    the interview calls speak (`served_to`), and a member that resolves only in the signed card,
    or holds the answered value only there, is compared with that one (`signed_to`), so an honest
    agent passes whichever of its two cards it answers from. What the signature covers is the
    signed card's: a value taken from the other card is signed only when the signed card holds
    the same value at the same member.
    """

    signed_doc: Any
    served_to: str  # the A2A-Version the compared card was served to ("0.3")
    signed_to: str = "1.0"  # the A2A-Version the signed card was fetched with


@dataclass(frozen=True)
class _Context:
    question: str
    card_doc: Any
    unsigned_members: Collection[str]
    card_signed: bool | None
    proposals: Mapping[tuple[str, str], ProposalCheck]
    committed: Collection[tuple[str, str]]
    pair: CardPair | None = None
    equivalence: Equivalence | None = None


def diff_question(
    question: str,
    answer: Any,
    *,
    card_doc: Any,
    unsigned_members: Collection[str] = (),
    card_signed: bool | None,
    proposals: Mapping[tuple[str, str], ProposalCheck],
    committed: Collection[tuple[str, str]],
    terms_declared: bool | None = None,
    skill_ids: Sequence[str] | None = None,
    pair: CardPair | None = None,
    equivalence: Equivalence | None = None,
) -> tuple[list[ProjectionResult], list[Finding]]:
    """Diff every projection of one answer (a `result` already read from JSON-RPC).

    `card_signed` is True when a card signature verified (then members outside the matched
    payload form are `member_unsigned`), False when the card is unsigned or its signature
    failed, None when it could not be checked (no key). `proposals` holds the verification of
    each committed proposal by (url, digest); `committed` is the set of (url, digest) pairs the
    card's terms entries commit to. `terms_declared` says whether the card carries terms entries
    (default: whether anything is committed); `skill_ids` defaults to the card's own. `pair`:
    `card_doc` is the card served to the calls' protocol version and differs from the card
    fetched for its signatures, which `pair` holds (see `CardPair`). `equivalence` judges a
    value of a member that holds signatures against the card fetched for its signatures (see the
    module docstring); without it signature bytes are compared like any other.

    Never raises on a malformed answer: whatever cannot be compared is marked and skipped.
    """
    ctx = _Context(question, card_doc, unsigned_members, card_signed, proposals, committed, pair, equivalence)
    results: list[ProjectionResult] = []
    findings: list[Finding] = []
    if not isinstance(answer, Mapping):
        return results, findings
    projections = answer.get("projections")
    if isinstance(projections, list):
        signed = _card_member_signed(ctx)
        for index, proj in enumerate(projections):
            quick = _plain_card_match(ctx, index, proj, signed)
            if quick is not None:
                results.append(quick)
            elif isinstance(proj, Mapping):
                result, found = _diff_projection(ctx, index, proj)
                results.append(result)
                findings.extend(found)
    if question == "terms":
        declared = bool(committed) if terms_declared is None else terms_declared
        findings.extend(_terms_rules(answer, declared))
    elif question == "refusals" and isinstance(projections, list):
        ids = skill_ids_of(card_doc) if skill_ids is None else tuple(skill_ids)
        findings.extend(_boundary_rule(results, ids))
    return results, findings


_CARD_SOURCE = frozenset({"document", "member"})
_PROJECTION = frozenset({"source", "value"})


def _card_member_signed(ctx: _Context) -> Any:
    """What `signed` is for a card member, as a function of its pointer."""
    if ctx.card_signed:
        return lambda member: member_is_signed(member, ctx.unsigned_members)
    signed = None if ctx.card_signed is None else False
    return lambda _member: signed


def _plain_card_match(ctx: _Context, index: int, proj: Any, signed_for: Any) -> ProjectionResult | None:
    """The common case, decided without any finding: exactly `{source: {document: "card", member},
    value}`, a pointer with nothing escaped that resolves through objects and arrays, to the same
    string (or array of strings) as the value, and a member the card's signature covers when it
    verified. Anything else returns None and takes the full path (`_diff_projection`)."""
    if ctx.question == "terms" or type(proj) is not dict or proj.keys() != _PROJECTION:
        return None  # a terms answer may not project the card (source_invalid, on the full path)
    if ctx.pair is not None:
        return None  # two cards: which one a member is compared with is the full path's choice
    source = proj["source"]
    if type(source) is not dict or source.keys() != _CARD_SOURCE or source["document"] != "card":
        return None
    member = source["member"]
    if type(member) is not str or not member.startswith("/") or "~" in member:
        return None
    node = ctx.card_doc
    for token in member[1:].split("/"):
        if type(node) is dict:
            if token not in node:
                return None
            node = node[token]
        elif type(node) is list and token.isdigit() and token.isascii() and (token[0] != "0" or token == "0"):
            position = int(token)
            if position >= len(node):
                return None
            node = node[position]
        else:
            return None
    value = proj["value"]
    if not _same_strings(value, node):
        return None
    signed = signed_for(member)
    if signed is False and ctx.card_signed:
        return None  # member_unsigned is reported by the full path
    return ProjectionResult(
        index,
        ctx.question,
        "card",
        member,
        None,
        None,
        "match",
        value=value,
        source_value=node,
        signed=signed,
    )


def _diff_projection(
    ctx: _Context, index: int, proj: Mapping[str, Any]
) -> tuple[ProjectionResult, list[Finding]]:
    source = proj.get("source")
    source = source if type(source) is dict or isinstance(source, Mapping) else {}
    document, member = source.get("document"), source.get("member")
    url, digest = source.get("url"), source.get("digest")
    value = proj.get("value")
    findings: list[Finding] = []

    noted: dict[str, Any] = {}  # facts found on the way that every later result carries

    def result(status: ProjectionStatus, **compared: Any) -> tuple[ProjectionResult, list[Finding]]:
        return ProjectionResult(
            index, ctx.question, document, member, url, digest, status, value=value, **compared, **noted
        ), findings

    def add(code: str, detail: str) -> None:
        findings.append(
            finding(
                code,
                f"projection {index}: {detail}",
                question=ctx.question,
                member=member if isinstance(member, str) else None,
            )
        )

    problems = source_problems(source if isinstance(source, dict) else dict(source))
    if problems or "value" not in proj:
        # Not comparable; check_answer reports why. A bad pointer names nothing: unresolved.
        bad_pointer = any(field == "member" for _, field in problems)
        named = bad_pointer and document in ("card", "proposal")
        return result("unresolved" if named else "unverifiable")
    # Without problems the member is a pointer string, and so are a proposal's url and digest.
    assert isinstance(member, str)

    if ctx.question == "terms" and document != "proposal":
        add(
            "source_invalid",
            f"a terms answer projects only committed proposals (interview extension 4.4), not the {document}",
        )

    signed: bool | None
    differs = ""  # what the signed card holds where the compared card's value was taken, if not that
    if document == "card":
        doc = ctx.card_doc
        if ctx.card_signed:
            signed = member_is_signed(member, ctx.unsigned_members)
        else:
            signed = None if ctx.card_signed is None else False
        if ctx.pair is not None:
            doc, signed, noted["served_to"], differs = _one_of_two(ctx, member, value, signed)
    else:
        assert isinstance(url, str) and isinstance(digest, str)
        key = (url, digest)
        if key not in ctx.committed:
            add(
                "proposal_not_committed",
                f"{url} with {digest} appears in no terms extension entry of "
                "the card: the agent is answering from terms its card never committed to",
            )
            return result("unverifiable")
        check = ctx.proposals.get(key)
        if check is None or check.status != "verified":
            # The proposal's own findings are reported once, at card level.
            return result("unverifiable")
        doc, signed = check.document, True

    resolution = jp.resolve(doc, member)
    if not resolution.found:
        where = f"the {document}"
        if document == "card" and ctx.pair is not None:
            where = (
                f"the card served to A2A-Version {ctx.pair.served_to} nor in the card fetched for its "
                f"signatures (A2A-Version {ctx.pair.signed_to})"
            )
        add("pointer_unresolved", f"{safe_text(repr(member), limit=120)} names nothing in {where}")
        return result("unresolved", signed=signed)
    source_value = resolution.value
    if differs and ctx.card_signed:
        add(
            "member_unsigned",
            f"{safe_text(repr(member), limit=120)} is compared with the card served to "
            f"A2A-Version {ctx.pair.served_to if ctx.pair else '?'}, and the card fetched for its "
            f"signatures holds {differs} there: the answer is compared with unsigned bytes",
        )
    elif signed is False and ctx.card_signed:
        empties = dropped_empties(member, ctx.unsigned_members, doc)
        noted["unsigned_empty"] = empties
        if empties:
            add(
                "member_unsigned_empty",
                f"{safe_text(repr(member), limit=120)} is covered by the card's "
                "matched signature form except empty members its canonical form drops ("
                f"{safe_text(', '.join(empties), limit=300)}): every value in it is signed",
            )
        else:
            add(
                "member_unsigned",
                f"{safe_text(repr(member), limit=120)} is not covered by the card's "
                "matched signature form: the answer is compared with unsigned bytes",
            )
    if _same_strings(value, source_value):
        # Equal strings (or arrays of strings) have equal canonical bytes, and hold no number.
        return result("match", source_value=source_value, signed=signed)
    lossy = bool(lossy_integers(value) or lossy_integers(source_value))
    if lossy:
        add(
            "lossy_number",
            "an integer outside +-(2^53-1) is compared; JCS rounds it to a double, "
            "so the exact values are compared too",
        )
    try:
        value_text = canonical_text(value)
    except CanonicalError as exc:
        add("projection_mismatch", f"the answered value has no canonical form ({exc})")
        return result("mismatch", source_value=source_value, signed=signed, lossy=lossy)
    source_text = canonical_text(source_value)
    compared = {
        "source_value": source_value,
        "value_canonical": value_text,
        "source_canonical": source_text,
        "signed": signed,
        "lossy": lossy,
    }
    if value_text == source_text:
        if lossy and not _exactly_equal(value, source_value):
            add(
                "projection_mismatch",
                "the canonical bytes agree only because JCS rounds big integers to "
                f"doubles; the exact numbers differ: {_excerpt(value_text, 0, 0)}",
            )
            return result("mismatch", **compared)
        return result("match", **compared)
    if document == "card" and ctx.equivalence is not None and ctx.equivalence.value_equivalent(member, value):
        add(
            "signature_equivalent",
            f"{safe_text(repr(member), limit=120)} {ctx.equivalence.difference(member, value)}",
        )
        return result("match", **compared)
    span, source_span = first_differing_span(value_text, source_text)
    add(
        "projection_mismatch",
        f"answered {_excerpt(value_text, *span)} but the {document} holds "
        f"{_excerpt(source_text, *source_span)} (first difference at character {span[0]})",
    )
    return result("mismatch", diff=span, source_diff=source_span, **compared)


def _canonically_equal(a: Any, b: Any) -> bool:
    if _same_strings(a, b):
        return True
    try:
        return canonical_text(a) == canonical_text(b) and (
            not (lossy_integers(a) or lossy_integers(b)) or _exactly_equal(a, b)
        )
    except CanonicalError:
        return False


def _one_of_two(
    ctx: _Context, member: Any, value: Any, signed: bool | None
) -> tuple[Any, bool | None, str, str]:
    """Which of two cards a card projection is compared with: (document, signed, served_to,
    differs). The card served to the calls' version first; the signed card when the member
    resolves only there, or holds the answered value only there. `differs` says what the signed
    card holds at that member ("another value", "nothing") when the first card's value is not
    there too (so no signature covers it); "" when it is."""
    assert ctx.pair is not None
    pair = ctx.pair
    served = jp.resolve(ctx.card_doc, member)
    kept = jp.resolve(pair.signed_doc, member)
    matches_served = served.found and _canonically_equal(value, served.value)
    if served.found and (matches_served or not (kept.found and _canonically_equal(value, kept.value))):
        same = kept.found and _canonically_equal(served.value, kept.value)
        differs = "" if same else "another value" if kept.found else "nothing"
        return ctx.card_doc, (signed and same) if signed else signed, pair.served_to, differs
    if kept.found:
        return pair.signed_doc, signed, pair.signed_to, ""
    return ctx.card_doc, signed, pair.served_to, ""


def _same_strings(a: Any, b: Any) -> bool:
    """True when both are the same string, or equal arrays of strings: a match without JCS."""
    if type(a) is str:
        return type(b) is str and a == b
    return type(a) is list and type(b) is list and a == b and all(type(item) is str for item in a)


def _terms_rules(answer: Mapping[str, Any], declared: bool) -> list[Finding]:
    """No terms entry means `declared: false` and no projections, and vice versa.

    The interview extension, section 4 rule 4.
    """
    said = answer.get("declared")
    projections = answer.get("projections")
    count = len(projections) if isinstance(projections, list) else 0
    if not declared:
        if said is True or count:
            what = []
            if said is True:
                what.append("declared true")
            if count:
                what.append(f"{count} projection(s)")
            return [
                finding(
                    "terms_fabricated",
                    "the card carries no terms extension entry, yet the terms "
                    f"answer has {' and '.join(what)} (interview extension 4.4: declared false, "
                    "no projections)",
                    question="terms",
                )
            ]
        return []
    if said is False:
        return [
            finding(
                "terms_declared_wrong",
                "the terms answer says declared false, but the card "
                "commits to standing proposals in its terms extension",
                question="terms",
            )
        ]
    return []


def _listed(ids: list[str], shown: int = 10) -> str:
    text = ", ".join(safe_text(repr(i), limit=80) for i in ids[:shown])
    return text + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _boundary_rule(results: list[ProjectionResult], skill_ids: Sequence[str]) -> list[Finding]:
    """The refusals answer states the declared skill ids, exactly, as the boundary.

    The interview extension, section 4 rule 5.
    """
    stated = {
        r.value
        for r in results
        if r.document == "card" and _skill_id_index(r.member) and isinstance(r.value, str)
    }
    declared = set(skill_ids)
    if stated == declared:
        return []
    parts = []
    missing = sorted(declared - stated)
    extra = sorted(stated - declared)
    if missing:
        parts.append("missing " + _listed(missing))
    if extra:
        parts.append("not declared " + _listed(extra))
    return [
        finding(
            "refusals_boundary_mismatch",
            "the skill ids in the refusals answer differ from the card's: " + "; ".join(parts),
            question="refusals",
        )
    ]
