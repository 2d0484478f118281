"""What the declared documents say for each of the five questions, whether or not the agent answers.

An interview answer is a lookup: for each question there is a fixed list of members (RFC 6901
pointers) to copy out of the card or out of a committed proposal (the interview extension,
section 4; docs/PROTOCOL.md section 4). The explorer can make that lookup itself from the bytes it
fetched, so an agent that does not offer the interview (most do not), is down, or refuses to be
asked without a credential can still be read question by question: the report's
`questions.<q>.declared` (docs/CONTRACT.md "Card checks and declared answers").

The members are the ones the reference projection answers with (`explorer.demo.projection`,
which the tests hold this module to), chosen so that a conformant answer projects exactly these:

- identity: `/name`, `/provider`, `/version`, the interface members (`/supportedInterfaces` on a
  v1.0 card; `/url`, `/preferredTransport`, `/protocolVersion`, `/additionalInterfaces` on a v0.3
  card) and `/signatures` when the card carries any;
- capabilities: `/skills/N/id` and `/skills/N/description` of every skill;
- usage: the interface members, `/defaultInputModes`, `/defaultOutputModes`, every skill's
  `/skills/N/inputModes` and `/skills/N/outputModes`, `/securitySchemes` and the security
  requirements (`/securityRequirements` or `/security`);
- terms: every top-level member of a committed proposal that holds a graded clause
  (`explorer.core.sow.clauses`), in the order of the proposal's canonical (RFC 8785) bytes, for
  each committed proposal whose fetched bytes hash to the digest the card commits to (what the
  card commits to is those bytes, whatever their own signature says: the terms checks beside
  them say that), cited by `url` and `digest`;
- refusals: `/skills/N/id` of every skill, the boundary.

Each entry is `{"member", "document", "value", "signed"}` (a proposal's also `url` and `digest`),
`signed` as a projection's: whether a verified signature covers the member (None when the card's
signature could not be checked). It is derived from the card the report already digests, so it
changes nothing of `answers_sha256` or of what the history calls a change. Values are the
documents' own objects, never copies: a 5,000-skill card is not held twice.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from explorer.core import pointer as jp
from explorer.core.findings import QUESTIONS
from explorer.core.signatures import member_is_signed
from explorer.core.sow import ProposalCheck, clause_members

V03_INTERFACE_MEMBERS = ("url", "preferredTransport", "protocolVersion", "additionalInterfaces")
SECURITY_MEMBERS = ("securitySchemes", "securityRequirements", "security")
SKILL_MODES = ("inputModes", "outputModes")


def _skills(card: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The card's skills that have a string id, in card order (the ones a conformant answer
    counts, as the refusal's `declared_skills` does)."""
    skills = card.get("skills")
    if not isinstance(skills, list):
        return []
    return [s for s in skills if isinstance(s, Mapping) and isinstance(s.get("id"), str)]


def _present(card: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    return [name for name in names if name in card]


def interface_members(card: Mapping[str, Any]) -> list[str]:
    """The top-level members that say where and how the agent is spoken to."""
    if "supportedInterfaces" in card:
        return ["supportedInterfaces"]
    return _present(card, V03_INTERFACE_MEMBERS)


def card_members(question: str, card: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(pointer, value) of every card member a conformant answer to `question` projects, in the
    order it projects them; [] for terms, which projects proposals only."""
    top = [(jp.join(name), card[name]) for name in _top_members(question, card)]
    if question == "identity":
        return top
    skills = card.get("skills")
    listed = skills if isinstance(skills, list) else []
    per_skill: list[tuple[str, Any]] = []
    # A skill's index is its position among all the card's skills, as the pointer resolves it;
    # the skills counted are those with a string id, as the reference projection counts them.
    counted = len(_skills(card))
    for index, skill in enumerate(listed[:counted]):
        if not isinstance(skill, Mapping):
            continue
        if question == "capabilities":
            names: tuple[str, ...] = ("id", "description")
        elif question == "usage":
            names = SKILL_MODES
        elif question == "refusals":
            names = ("id",)
        else:
            names = ()
        per_skill += [(jp.join("skills", index, name), skill[name]) for name in names if name in skill]
    if question == "usage":
        interfaces = [(p, v) for p, v in top if p[1:] in interface_members(card)]
        defaults = [(p, v) for p, v in top if p[1:] in ("defaultInputModes", "defaultOutputModes")]
        security = [(p, v) for p, v in top if p[1:] in SECURITY_MEMBERS]
        return interfaces + defaults + per_skill + security
    return per_skill


def _top_members(question: str, card: Mapping[str, Any]) -> list[str]:
    if question == "identity":
        signatures = ["signatures"] if card.get("signatures") else []  # an empty list proves nothing
        return _present(card, ("name", "provider", "version")) + interface_members(card) + signatures
    if question == "usage":
        modes = _present(card, ("defaultInputModes", "defaultOutputModes"))
        return interface_members(card) + modes + _present(card, SECURITY_MEMBERS)
    return []


def digest_checked(check: ProposalCheck) -> bool:
    """Whether a committed proposal was fetched and its bytes hash to the digest the card commits to."""
    return (
        isinstance(check.document, Mapping)
        and check.computed_digest is not None
        and check.computed_digest == check.committed_digest
    )


def declared_projections(
    card: Mapping[str, Any],
    proposals: Iterable[ProposalCheck] = (),
    *,
    card_signed: bool | None = None,
    unsigned_members: Collection[str] = (),
    signed_card: Mapping[str, Any] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Every question's declared projections: `{question: [{"member", "document", "value",
    "signed"}, ...]}` (a proposal's also carry `url` and `digest`).

    `card` is the card the answers are compared with; `proposals` the committed proposals as
    checked (`explorer.core.sow.check_proposal`), in card order; `card_signed` True when a card
    signature verified (then `unsigned_members` lists the members its payload form leaves out),
    False when the card is unsigned or its signature failed, None when it could not be checked.
    `signed_card`, when the compared card is not the one fetched for its signatures: a member is
    signed only when that one holds the same value there.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    for question in QUESTIONS:
        if question == "terms":
            out[question] = _terms(proposals)
            continue
        out[question] = [
            {
                "member": member,
                "document": "card",
                "value": value,
                "signed": _signed(member, value, card_signed, unsigned_members, signed_card),
            }
            for member, value in card_members(question, card)
        ]
    return out


def _signed(
    member: str,
    value: Any,
    card_signed: bool | None,
    unsigned_members: Collection[str],
    signed_card: Mapping[str, Any] | None,
) -> bool | None:
    if not card_signed:
        return card_signed
    if not member_is_signed(member, unsigned_members):
        return False
    if signed_card is None:
        return True
    kept = jp.resolve(signed_card, member)
    return kept.found and kept.value == value


def _jcs_order(member: str) -> bytes:
    """A proposal's members in the order of its canonical bytes (RFC 8785 section 3.2.3: by UTF-16
    code units), the bytes the card's digest commits to: the same proposal served with its members
    in another order declares the same list."""
    return jp.unescape(member[1:]).encode("utf-16-be")


def _terms(proposals: Iterable[ProposalCheck]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, Any]] = set()
    for check in proposals:
        key = (check.url, check.committed_digest)
        if key in seen or not digest_checked(check):
            continue
        seen.add(key)
        doc = check.document
        for member in sorted(clause_members(doc), key=_jcs_order):
            found = jp.resolve(doc, member)
            out.append(
                {
                    "member": member,
                    "document": "proposal",
                    "url": check.url,
                    "digest": check.committed_digest,
                    "value": found.value,
                    "signed": check.verified,
                }
            )
    return out
