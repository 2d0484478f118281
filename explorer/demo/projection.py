"""The reference projection: interview answers built mechanically from the declared documents.

This is the part of the extension an agent builder actually has to write, and it is small on
purpose. An answer is never composed: for each question there is a fixed list of members
(RFC 6901 pointers) to copy out of the card or out of a committed proposal, and each projection
is `{"source": {"document", "member", ...}, "value": <the value at that pointer>}`. Because the
value is read back through the same pointer the verifier will resolve, it is equal under JCS by
construction; the only way to get it wrong is to project something other than the bytes you
publish (see `explorer.demo.faults` for the ways the misbehaving demo agents do exactly that).

Which members each question projects (the interview extension, section 4; docs/PROTOCOL.md section 4):

- identity: `/name`, `/provider`, `/version`, the interface members (`/supportedInterfaces` on a
  v1.0 card; `/url`, `/preferredTransport`, `/protocolVersion` on a v0.3 card) and `/signatures`
  when the card carries any.
- capabilities: `/skills/N/id` and `/skills/N/description` for every skill.
- usage: the interface members, `/defaultInputModes`, `/defaultOutputModes`, every skill's
  `/skills/N/inputModes` and `/skills/N/outputModes`, `/securitySchemes` and the security
  requirements (`/securityRequirements` or `/security`). A `skill` selector narrows the per-skill
  members to that skill.
- terms: every clause of every committed proposal (each top-level member that holds a graded
  clause, found with `explorer.core.sow.clauses`), cited by the terms entry's `url` and `digest`.
  No terms entry: `declared: false` and no projections (the interview extension, section 4 rule
  4). A selector keeps the proposals
  whose `offering` is that skill.
- refusals: `/skills/N/id` for every skill: the boundary.

Selectors are looked up exactly (`skill_index`); anything that matches no declared id gets
`standard_refusal`, which is assembled from the declared ids alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from explorer.core import pointer
from explorer.core.sow import clause_members

QUESTIONS: tuple[str, ...] = ("identity", "capabilities", "usage", "terms", "refusals")
SELECTABLE: frozenset[str] = frozenset({"usage", "terms"})

_V03_INTERFACE = ("url", "preferredTransport", "protocolVersion", "additionalInterfaces")
_SECURITY = ("securitySchemes", "securityRequirements", "security")


@dataclass(frozen=True)
class Committed:
    """One proposal the card's terms entry commits to, with the document the agent serves."""

    url: str
    digest: str
    offering: str | None
    document: Mapping[str, Any]


def project(
    document: str, doc: Any, member: str, *, url: str | None = None, digest: str | None = None
) -> dict[str, Any]:
    """One projection: the value at `member` in `doc`, with its source. The member must exist."""
    found = pointer.resolve(doc, member)
    if not found.found:
        raise KeyError(f"{member} names nothing in the {document}")
    source: dict[str, Any] = {"document": document}
    if url is not None:
        source["url"] = url
    if digest is not None:
        source["digest"] = digest
    source["member"] = member
    return {"source": source, "value": found.value}


def skill_ids(card: Mapping[str, Any]) -> list[str]:
    """The declared skill ids, in card order."""
    skills = card.get("skills", [])
    return [s["id"] for s in skills if isinstance(s, Mapping) and isinstance(s.get("id"), str)]


def skill_index(card: Mapping[str, Any], selector: str) -> int | None:
    """The index of the skill whose id is exactly `selector`, byte for byte; None if none is."""
    for index, skill_id in enumerate(skill_ids(card)):
        if skill_id == selector:
            return index
    return None


def standard_refusal(card: Mapping[str, Any]) -> dict[str, Any]:
    """The interview extension's section 6 refusal, produced from the declaration alone."""
    return {
        "refused": True,
        "reason": "out_of_scope",
        "detail": "no declared skill matches",
        "declared_skills": skill_ids(card),
    }


def _present(card: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    return [pointer.join(name) for name in names if name in card]


def interface_members(card: Mapping[str, Any]) -> list[str]:
    if "supportedInterfaces" in card:
        return ["/supportedInterfaces"]
    return _present(card, _V03_INTERFACE)


def _card_answer(question: str, card: Mapping[str, Any], members: list[str]) -> dict[str, Any]:
    return {
        "question": question,
        "declared": True,
        "projections": [project("card", card, m) for m in members],
    }


def identity(card: Mapping[str, Any]) -> dict[str, Any]:
    members = _present(card, ("name", "provider", "version")) + interface_members(card)
    if card.get("signatures"):
        members.append("/signatures")
    return _card_answer("identity", card, members)


def capabilities(card: Mapping[str, Any]) -> dict[str, Any]:
    members: list[str] = []
    for index in range(len(skill_ids(card))):
        members += [pointer.join("skills", index, "id"), pointer.join("skills", index, "description")]
    return _card_answer("capabilities", card, [m for m in members if pointer.resolve(card, m).found])


def usage(card: Mapping[str, Any], skill: int | None = None) -> dict[str, Any]:
    members = interface_members(card) + _present(card, ("defaultInputModes", "defaultOutputModes"))
    indexes = range(len(skill_ids(card))) if skill is None else [skill]
    for index in indexes:
        for name in ("inputModes", "outputModes"):
            member = pointer.join("skills", index, name)
            if pointer.resolve(card, member).found:
                members.append(member)
    members += _present(card, _SECURITY)
    return _card_answer("usage", card, members)


def terms(committed: Sequence[Committed] | None, offering: str | None = None) -> dict[str, Any]:
    """The terms answer; `committed` None means the card has no terms entry at all."""
    if committed is None:
        return {"question": "terms", "declared": False, "projections": []}
    projections = []
    for entry in committed:
        if offering is not None and entry.offering != offering:
            continue
        for member in clause_members(entry.document):
            projections.append(
                project("proposal", entry.document, member, url=entry.url, digest=entry.digest)
            )
    return {"question": "terms", "declared": True, "projections": projections}


def refusals(card: Mapping[str, Any]) -> dict[str, Any]:
    members = [pointer.join("skills", index, "id") for index in range(len(skill_ids(card)))]
    return _card_answer("refusals", card, members)


def answer(
    question: str, card: Mapping[str, Any], committed: Sequence[Committed] | None, skill: int | None = None
) -> dict[str, Any]:
    """The honest answer to one question; `skill` is an index already matched by `skill_index`."""
    if question == "identity":
        return identity(card)
    if question == "capabilities":
        return capabilities(card)
    if question == "usage":
        return usage(card, skill)
    if question == "terms":
        offering = None if skill is None else skill_ids(card)[skill]
        return terms(committed, offering)
    if question == "refusals":
        return refusals(card)
    raise KeyError(f"not an interview question: {question!r}")
