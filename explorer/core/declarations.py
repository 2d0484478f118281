"""What a card declares, apart from the signatures that prove it (CONTRACT "Signatures are proofs").

An agent's declarations are its card without `signatures`; a signature is a proof of them, not a
declaration of its own. ECDSA signatures are randomized, and every replica or restart of an agent
that signs at start-up signs the same card again, so two cards whose `signatures` differ byte for
byte can declare exactly the same thing under the same key. Comparing signature bytes would call
every such agent dishonest and every restart a change; this module says when two differ only so.

Two card signatures are *equivalent* when each verifies over the same signed payload (the same
payload form of the same declarations) under the same key (the same RFC 7638 thumbprint) with the
same `alg`. A card's *proofs* are that triple for each of its signatures, and exist only when every
signature verified: a signature that does not verify, or cannot be checked, proves nothing and so
is never equivalent to anything.

`Equivalence` is the judge one attempt builds from the card fetched for its signatures, with the
keys the run trusts (the user's and any fetched `jku` sets), exactly as the card's own signature
check does. The diff asks it about an answered value that differs from the card's
(`value_equivalent`, `difference`), the determinism check and the answers digest read the card's
own signatures, or equivalent ones, as one stand-in that signing again does not change
(`settled`), and the run compares the cards of its attempts by it. Everything here is pure; a
signature is verified only when bytes already differ, so an agent that serves one card costs
nothing more.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from explorer.core import pointer as jp
from explorer.core.canonical import CanonicalError, canonicalize
from explorer.core.signatures import SignatureReport, verify_card
from explorer.core.text import safe_text

SIGNATURES = "signatures"
_MEMBER = "/" + SIGNATURES
# Distinct signature lists one judge verifies at most. Honest replicas give one each, and an
# attempt reads a few answers; an agent answering more cannot make the verifier check its card's
# signatures without end (each check builds the card's payload forms again).
MAX_JUDGED = 16
# What the card's own signatures (or signatures equivalent to them) are read as where answers are
# compared across asks and runs (`Equivalence.settled`).
STAND_IN = {"signatures": "the card's own, or equivalent to them"}


def declarations_of(card: Mapping[str, Any]) -> dict[str, Any]:
    """The card without its `signatures` member: what it declares."""
    return {name: value for name, value in card.items() if name != SIGNATURES}


def declarations_sha256(card: Any) -> str | None:
    """SHA-256 (hex) of the RFC 8785 bytes of the card without `signatures`; None for a non-object
    or a card with no canonical form."""
    return card_digests(card)[1] if isinstance(card, Mapping) else None


def card_digests(card: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The SHA-256 (hex) of the card's RFC 8785 bytes and of its declarations' (`card.sha256` and
    `card.declarations_sha256`), each None when it has no canonical form.

    Both from one serialization of each member: the canonical bytes of an object are its members'
    (name, colon, value) joined in the order of their names' UTF-16 code units, so a catalogue of
    a card is serialized once, not once per digest, and hashed piece by piece."""
    members: list[tuple[bytes, str, bytes | None]] = []
    for name, value in card.items():
        try:
            members.append((name.encode("utf-16-be"), name, canonicalize(name) + b":" + canonicalize(value)))
        except (CanonicalError, UnicodeEncodeError, AttributeError):
            members.append((b"", name if isinstance(name, str) else "", None))  # no canonical form
    members.sort(key=lambda member: member[0])

    def digest(leave_out: str | None) -> str | None:
        whole = hashlib.sha256(b"{")
        for index, (_, _name, serialized) in enumerate(m for m in members if m[1] != leave_out):
            if serialized is None:
                return None
            whole.update(b"," + serialized if index else serialized)
        whole.update(b"}")
        return whole.hexdigest()

    return digest(None), digest(SIGNATURES)


@dataclass(frozen=True, order=True)
class Proof:
    """One verified signature, as far as equivalence cares: who signed, how, over which form."""

    thumbprint: str
    alg: str
    form: str


def proofs_of(report: SignatureReport) -> frozenset[Proof] | None:
    """The proofs of a checked card: one per signature, or None unless every signature verified."""
    proofs = set()
    for check in report.checks:
        if check.status != "verified" or not check.thumbprint or not check.alg or not check.form:
            return None
        proofs.add(Proof(check.thumbprint, check.alg, check.form))
    return frozenset(proofs) or None


def signers_of(report: SignatureReport) -> list[str]:
    """The thumbprints of the keys whose signatures verified, sorted, once each (`card.signers`)."""
    return sorted({c.thumbprint for c in report.checks if c.status == "verified" and c.thumbprint})


def holds_signatures(member: Any) -> bool:
    """Whether a card member is, or holds, a signature: the whole card, `/signatures` or inside it.

    Read off the string: no escape can spell the token `signatures`, which holds neither `~` nor
    `/`, so the first token is `signatures` exactly when the pointer is `/signatures` or starts
    with `/signatures/` (this runs on every card projection of an answer)."""
    return isinstance(member, str) and (member == "" or member == _MEMBER or member.startswith(_MEMBER + "/"))


def projects_signatures(answer: Any) -> bool:
    """Whether an answer projects a card member that holds signatures (see `holds_signatures`)."""
    projections = answer.get("projections") if isinstance(answer, Mapping) else None
    if not isinstance(projections, list):
        return False
    for proj in projections:
        source = proj.get("source") if isinstance(proj, Mapping) else None
        if (
            isinstance(source, Mapping)
            and source.get("document") == "card"
            and holds_signatures(source.get("member"))
        ):
            return True
    return False


def _index(token: str, node: list[Any]) -> int | None:
    """An RFC 6901 array index of `node`, or None (leading zeros and "-" name no element)."""
    if token.isascii() and token.isdigit() and (token[0] != "0" or token == "0") and int(token) < len(node):
        return int(token)
    return None


def _placed(card: Mapping[str, Any], member: str, value: Any) -> Any:
    """A copy of `card` with `value` at `member` (copying only the path to it), or None when the
    pointer does not name a place in the card. Raises PointerError for a malformed pointer."""
    tokens = jp.parse(member)
    if not tokens:
        return value

    def put(node: Any, rest: tuple[str, ...]) -> Any:
        head, tail = rest[0], rest[1:]
        if isinstance(node, Mapping):
            if head not in node:
                return None
            inner = value if not tail else put(node[head], tail)
            return None if inner is None else {**node, head: inner}
        if isinstance(node, list) and (index := _index(head, node)) is not None:
            inner = value if not tail else put(node[index], tail)
            return None if inner is None else [*node[:index], inner, *node[index + 1 :]]
        return None

    return put(card, tokens)


def _equal(a: Any, b: Any) -> bool:
    try:
        return canonicalize(a) == canonicalize(b)
    except CanonicalError:
        return False


_ABSENT = object()


def _parts(entry: Any) -> dict[str, Any]:
    """A signature entry's members (a value that is not an object is one nameless member)."""
    return dict(entry) if isinstance(entry, Mapping) else {"": entry}


class Equivalence:
    """Judges values against one card's signatures under the run's trusted keys.

    `card` is the card whose signatures were checked (`report`, with the same keys); a value
    answered for a member that holds signatures, or another fetch of the card, is equivalent when
    putting it in place leaves the declarations as they are and its signatures prove them exactly
    as the card's do (`Proof`s equal). Each distinct list of signatures is verified once, and at
    most `MAX_JUDGED` are (any further one is judged not equivalent).
    """

    def __init__(
        self,
        card: Mapping[str, Any],
        report: SignatureReport,
        keys: Mapping[str, Any] | None,
        jku_keys: Mapping[str, Mapping[str, Any]] | None,
    ) -> None:
        self.card = card
        self.keys = keys or {}
        self.jku_keys = jku_keys
        self.proofs = proofs_of(report)
        self._judged: dict[bytes, bool] = {}  # canonical signatures -> whether they prove the card

    @functools.cached_property
    def declarations(self) -> str | None:
        """The card's declarations digest, computed when first needed (a card served whole and
        the same every time never needs it)."""
        return declarations_sha256(self.card)

    def same_declaration(self, other: Any) -> bool:
        """Whether `other` (another fetch of the card) declares the same under equivalent signatures."""
        if self.proofs is None or not isinstance(other, Mapping):
            return False
        if declarations_sha256(other) != self.declarations:
            return False
        return self._proves(other)

    def _proves(self, other: Mapping[str, Any]) -> bool:
        """Whether the signatures of `other`, which declares what the card declares, prove it as
        the card's do."""
        try:
            signatures = canonicalize(other.get(SIGNATURES))
        except CanonicalError:
            return False
        judged = self._judged.get(signatures)
        if judged is None:
            if len(self._judged) >= MAX_JUDGED:
                return False
            judged = proofs_of(verify_card(other, self.keys, jku_keys=self.jku_keys)) == self.proofs
            self._judged[signatures] = judged
        return judged

    def value_equivalent(self, member: str, value: Any) -> bool:
        """Whether `value`, answered for card `member` (one that holds signatures), differs from
        the card's own member only by signatures equivalent to the card's."""
        if self.proofs is None or not holds_signatures(member):
            return False
        if member == "":
            return self.same_declaration(value)
        try:
            other = _placed(self.card, member, value)
        except jp.PointerError:
            return False
        # Inside `signatures` a value leaves the declarations as they are: only the proofs are judged.
        return isinstance(other, Mapping) and self._proves(other)

    def proven(self, member: str, value: Any) -> bool:
        """Whether `value` at `member` stands for the card's own signatures: the card holds it
        there, or it is `value_equivalent` (which takes verified signatures; holding the same
        bytes does not, so an answer read without the signer's key settles the same way)."""
        if not holds_signatures(member):
            return False
        try:
            held = jp.resolve(self.card, member)
        except jp.PointerError:
            return False
        return (held.found and _equal(held.value, value)) or self.value_equivalent(member, value)

    def settled(self, answer: Any) -> Any:
        """`answer` with the signatures in each card projection that stands for the card's own
        (`proven`) replaced by `STAND_IN`; the answer itself (not a copy) when there is none.

        What is compared or hashed across asks and runs (`nondeterministic_answer`,
        `answers_sha256`): signing again changes no answer. Which key signs, and what the card
        declares, are the card's own digests (`card.signers`, `card.declarations_sha256`)."""
        projections = answer.get("projections") if isinstance(answer, Mapping) else None
        if not isinstance(projections, list):
            return answer
        settled: list[Any] | None = None
        for index, proj in enumerate(projections):
            source = proj.get("source") if isinstance(proj, Mapping) else None
            if not isinstance(source, Mapping) or source.get("document") != "card" or "value" not in proj:
                continue
            member, value = source.get("member"), proj["value"]
            if isinstance(member, str) and self.proven(member, value):
                settled = list(projections) if settled is None else settled
                # The whole card keeps its declarations, so that a change of them still shows.
                stood_in = (
                    {**value, SIGNATURES: STAND_IN}
                    if member == "" and isinstance(value, Mapping)
                    else STAND_IN
                )
                settled[index] = {**proj, "value": stood_in}
        return answer if settled is None else {**answer, "projections": settled}

    def difference(self, member: str, value: Any) -> str:
        """What an equivalent `value` at `member` changes in the card, and why it is the same
        declaration: the words of the `signature_equivalent` finding."""
        other = _placed(self.card, member, value)
        theirs = other.get(SIGNATURES) if isinstance(other, Mapping) else None
        mine = self.card.get(SIGNATURES)
        changed: list[str] = []
        if isinstance(theirs, list) and isinstance(mine, list):
            for index, (answered, held) in enumerate(zip(theirs, mine, strict=False)):
                a, b = _parts(answered), _parts(held)
                names = sorted(
                    safe_text(name, limit=40) or "the entry"
                    for name in a.keys() | b.keys()
                    if a.get(name, _ABSENT) != b.get(name, _ABSENT)
                )
                if names:
                    changed.append(f"signatures[{index}] {', '.join(names)}")
            if len(theirs) != len(mine):
                changed.append(f"{len(theirs)} signature(s) answered where the card holds {len(mine)}")
        what = "; ".join(changed) or "the signature bytes"
        proofs = ", ".join(
            f"{p.alg} over the {p.form} payload under the key with thumbprint {p.thumbprint}"
            for p in sorted(self.proofs or ())
        )
        return (
            f"differs from the card's only in its signatures: {what}. Every answered signature "
            f"verifies over the card's own declarations ({proofs}), as the card's do: the same "
            "declarations, signed again (ECDSA signs differently every time, so replicas and "
            "restarts that sign at start-up serve different bytes)"
        )
