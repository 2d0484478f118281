"""Which client stacks accept a card signature, and why the others do not (`card.signature.accepted_by`).

A client does not verify "the card": it verifies the bytes its own stack rebuilds from the card.
A client following A2A section 8.4 verifies the `served` form; the official Python SDK (a2a-sdk
1.3, `create_signature_verifier`) the `sdk-normalized` form; the official JavaScript SDK
(@a2a-js/sdk 1.3, `verifyAgentCardSignature`) the `a2a-js` form. A stack accepts a card when one
of its signatures verifies under that stack's form with a trusted key and the stack's verifier
takes its protected header: the JS verifier throws on a header without `kid`, `typ` or `alg`, and
on an unprotected `header` that is not an object or repeats a protected name (jose's rule); PyJWT,
under the Python SDK, knows no `Ed25519` algorithm and refuses a payload that is not an object.

When some stacks accept and others do not, `explain` names the served members that set their
payloads apart (RFC 6901 pointers: a default `false` the SDKs drop, an empty value, a member the
v1.0 message does not have, a value an SDK coerces) and the change that makes every stack accept:
serving the card without those members (when the signed bytes then stay the same, no new
signature is needed, which `explain` checks by verifying again), or one more signature over the
rejecting stack's form. The explanation is computed, never a table of known cases, so it holds for
cards from stacks the project has not seen. `tests/core/test_signature_stacks.py` holds it to the
SDKs' own verifiers.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from explorer.core.card_forms.forms import (
    dropped_as_empty,
    payload_bytes_fast,
    payload_value,
    unsigned_members,
)
from explorer.core.card_forms.schemas import V1, V1_NAMES
from explorer.core.card_forms.tracked import FormError
from explorer.core.pointer import PointerError, escape, parse, resolve

__all__ = [
    "STACKS",
    "STACK_FORM",
    "STACK_LABEL",
    "Disagreement",
    "explain",
    "header_refusal",
]

STACKS: tuple[str, ...] = ("a2a-spec", "a2a-python", "a2a-js")
STACK_FORM: dict[str, str] = {"a2a-spec": "served", "a2a-python": "sdk-normalized", "a2a-js": "a2a-js"}
STACK_LABEL: dict[str, str] = {
    "a2a-spec": "a client following A2A section 8.4",
    "a2a-python": "the official Python SDK (a2a-sdk)",
    "a2a-js": "the official JavaScript SDK (@a2a-js/sdk)",
}
MAX_MEMBERS = 40  # per rejecting stack; a card of thousands of unknown members says the rest in one line

_PYJWT_UNKNOWN_ALGS = frozenset({"Ed25519"})  # PyJWT 2.x registers EdDSA only


@dataclass(frozen=True)
class Disagreement:
    """One member (or signature entry) that makes `stack` reject a card other stacks accept."""

    stack: str
    member: str
    detail: str
    fix: str

    def to_json(self) -> dict[str, str]:
        return {"stack": self.stack, "member": self.member, "detail": self.detail, "fix": self.fix}


def header_refusal(stack: str, header: Mapping[str, Any], entry: Mapping[str, Any]) -> str | None:
    """Why `stack`'s verifier refuses this signature entry before looking at any payload, or None."""
    if stack == "a2a-js":
        missing = [name for name in ("kid", "typ", "alg") if not header.get(name)]
        if missing:
            return (
                f"the protected header has no {' or '.join(missing)}; the JS SDK's verifier requires "
                "kid, typ and alg"
            )
        if "header" in entry:
            unprotected = entry["header"]
            if not isinstance(unprotected, Mapping):
                return "the entry's unprotected header is not an object, which jose refuses"
            shared = sorted(set(unprotected) & set(header))
            if shared:
                named = ", ".join(shared)
                return f"the unprotected header repeats {named} from the protected one (jose refuses)"
    if stack == "a2a-python" and header.get("alg") in _PYJWT_UNKNOWN_ALGS:
        return f"alg {header['alg']} is unknown to PyJWT, under the Python SDK's verifier (it knows EdDSA)"
    return None


def _schema_kind(pointer: str) -> str:
    """'unknown' when the pointer leaves the v1.0 AgentCard message (a member the SDKs ignore),
    'free' inside an extension's `params`, else 'known'."""
    try:
        tokens = parse(pointer)
    except PointerError:
        return "known"
    kind: Any = ("msg", "AgentCard")
    for token in tokens:
        if kind == "struct":
            return "free"
        if isinstance(kind, str):
            return "known"
        tag, inner = kind
        if tag == "msg":
            field = V1_NAMES[inner].get(token)
            if field is None:
                return "unknown"
            kind = V1[inner][field]
        else:  # rep or map: any index or key
            kind = inner
    return "free" if kind == "struct" else "known"


def _why_left_out(card_doc: Mapping[str, Any], member: str, stack: str) -> str:
    """Why `stack`'s normalisation does not carry this served member as served."""
    found = resolve(card_doc, member)
    value = found.value if found.found else None
    who = "the Python SDK" if stack == "a2a-python" else "the JS SDK"
    if value is False:
        return f"holds false, a default {who} drops when it rebuilds the card"
    if dropped_as_empty(value):
        return f'is empty ("", null, [] or {{}}), which {who} drops'
    kind = _schema_kind(member)
    if kind == "unknown":
        return f"is not a member of the v1.0 AgentCard message, so {who} ignores it"
    return f"is read by {who} as another value or in another place than served"


def _remove(card_doc: Mapping[str, Any], members: Iterable[str]) -> dict[str, Any] | None:
    """A copy of the card without these members (array elements last index first); None if one
    cannot be removed (it names nothing)."""
    out = copy.deepcopy(dict(card_doc))

    def order(pointer: str) -> tuple[Any, ...]:
        return tuple((0, int(t)) if t.isdigit() else (1, t) for t in parse(pointer))

    try:
        ordered = sorted(members, key=order, reverse=True)
    except (PointerError, TypeError):
        return None
    for member in ordered:
        tokens = parse(member)
        if not tokens:
            return None
        parent: Any = out
        try:
            for token in tokens[:-1]:
                parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        except (ValueError, IndexError, KeyError, TypeError):
            return None
        last = tokens[-1]
        if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
            del parent[int(last)]
        elif isinstance(parent, dict) and last in parent:
            del parent[last]
        else:
            return None
    return out


def _form_members(card_doc: Mapping[str, Any], form: str, memo: dict[Any, Any]) -> set[str] | None:
    """`unsigned_members` of a form, once per `explain` (`memo`): each costs a tracked tree."""
    if form not in memo:
        try:
            memo[form] = set(unsigned_members(card_doc, form))
        except FormError:
            memo[form] = None
    return memo[form]


def _differing(left: Any, right: Any, at: str = "", limit: int = MAX_MEMBERS) -> list[str]:
    """Pointers where two JSON values differ (outermost), at most `limit`."""
    out: list[str] = []
    stack = [(at, left, right)]
    while stack and len(out) < limit:
        ptr, a, b = stack.pop()
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for key in sorted(set(a) | set(b), reverse=True):
                stack.append((f"{ptr}/{escape(str(key))}", a.get(key), b.get(key)))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            stack.extend(
                (f"{ptr}/{i}", x, y) for i, (x, y) in reversed(list(enumerate(zip(a, b, strict=True))))
            )
        elif a != b or type(a) is not type(b):
            out.append(ptr)
    return out


def explain(
    card_doc: Mapping[str, Any],
    accepted_by: tuple[str, ...],
    header_refused: Mapping[str, tuple[int, str]],
    why_not: Mapping[str, str],
    accepted_after: Callable[[Mapping[str, Any]], tuple[str, ...]],
) -> tuple[Disagreement, ...]:
    """What makes each stack outside `accepted_by` reject a card the stacks in it accept.

    `header_refused[stack]` is (signature index, why) when a signature verified under the stack's
    form but its verifier refuses the header; `why_not[form]` why a form cannot be built (the SDK
    cannot read the card); `accepted_after(card)` the stacks accepting another card under the same
    signatures and keys."""
    if not accepted_by or len(accepted_by) == len(STACKS):
        return ()
    out: list[Disagreement] = []
    reference = STACK_FORM[accepted_by[0]]
    # Shared by the rejecting stacks: each form's unsigned members and the checked removal (a
    # re-verification of a trimmed card), so a huge card pays for each once, not once per stack.
    memo: dict[Any, Any] = {}
    for stack in STACKS:
        if stack in accepted_by:
            continue
        form = STACK_FORM[stack]
        if stack in header_refused:
            index, why = header_refused[stack]
            fix = "sign the card again with a protected header this verifier takes (alg, kid and typ: JOSE)"
            out.append(Disagreement(stack, f"/signatures/{index}", why, fix))
            continue
        if form in why_not:
            where = why_not[form].rsplit(" at /", 1)
            member = "/" + where[1] if len(where) == 2 else ""
            out.append(
                Disagreement(
                    stack,
                    member,
                    f"{STACK_LABEL[stack]} cannot read this card: {why_not[form]}",
                    "give the member a value of the type the v1.0 AgentCard message declares",
                )
            )
            continue
        out.extend(_payload_disagreements(card_doc, stack, reference, accepted_after, memo))
    return tuple(out)


def _payload_disagreements(
    card_doc: Mapping[str, Any],
    stack: str,
    reference: str,
    accepted_after: Callable[[Mapping[str, Any]], tuple[str, ...]],
    memo: dict[Any, Any],
) -> list[Disagreement]:
    """The members that set `stack`'s payload apart from the accepted `reference` form."""
    form = STACK_FORM[stack]
    mine = _form_members(card_doc, form, memo) or set()
    theirs = _form_members(card_doc, reference, memo) or set()
    dropped = sorted(mine ^ theirs)
    # Who leaves each member out: the rejecting stack, or the signer whose form was accepted.
    signer = next(s for s, f in STACK_FORM.items() if f == reference)
    by = {m: stack if m in mine else signer for m in dropped}
    every_member = sorted(unsigned_members_of_all(card_doc, memo))
    fix = _fix(card_doc, stack, every_member, accepted_after, memo)
    if not dropped:
        try:
            dropped = _differing(payload_value(card_doc, reference), payload_value(card_doc, form))
        except FormError:
            dropped = []
        reason = f"the {form} payload {STACK_LABEL[stack]} verifies differs from the {reference} one here"
        return [Disagreement(stack, m, reason, fix) for m in dropped] or [
            Disagreement(stack, "", f"the {form} payload differs from the {reference} one", fix)
        ]
    out = [
        Disagreement(stack, m, f"{m} {_why_left_out(card_doc, m, by[m])}", fix) for m in dropped[:MAX_MEMBERS]
    ]
    if len(dropped) > MAX_MEMBERS:
        out.append(Disagreement(stack, "", f"and {len(dropped) - MAX_MEMBERS} more members like these", fix))
    return out


def unsigned_members_of_all(card_doc: Mapping[str, Any], memo: dict[Any, Any] | None = None) -> set[str]:
    """The served members some stack's form leaves out (the union over the SDK stacks)."""
    memo = {} if memo is None else memo
    found: set[str] = set()
    for stack in STACKS:
        found |= _form_members(card_doc, STACK_FORM[stack], memo) or set()
    return found


# v0.3 members: unknown to the v1.0 message, but they carry the card's interface and security.
_V03_MEMBERS = frozenset(
    {
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "security",
        "supportsAuthenticatedExtendedCard",
    }
)


def _removable(card_doc: Mapping[str, Any], member: str) -> bool:
    """Whether serving the card without this member loses nothing a client reads: a default
    `false`, an empty value, or a member the v1.0 message does not have (not a v0.3 one)."""
    found = resolve(card_doc, member)
    # An empty that still names something (`{"schemes": {"apiKey": {}}}`, an API key with no
    # scopes) means something even though the SDKs drop it: only a bare empty carries nothing.
    if not found.found:
        return True
    value = found.value
    if value is False or value is None or value == "" or (isinstance(value, (list, dict)) and not value):
        return True
    tokens = parse(member)
    if (len(tokens) == 1 or (len(tokens) == 3 and tokens[0] == "skills")) and tokens[-1] in _V03_MEMBERS:
        return False
    return _schema_kind(member) == "unknown"


def _fix(
    card_doc: Mapping[str, Any],
    stack: str,
    members: list[str],
    accepted_after: Callable[[Mapping[str, Any]], tuple[str, ...]],
    memo: dict[Any, Any],
) -> str:
    """The change that makes every stack accept: checked, not guessed (once per `explain`: the
    removal does not depend on the stack, only the fallback's wording does)."""
    form = STACK_FORM[stack]
    another = (
        f"add a second signature over the {form} payload (what {STACK_LABEL[stack]}'s own signer "
        "signs): each verifier accepts a card when any one of its signatures verifies"
    )
    if "fix" not in memo:
        memo["fix"] = _removal(card_doc, members, accepted_after)
    return memo["fix"] or another


def _removal(
    card_doc: Mapping[str, Any],
    members: list[str],
    accepted_after: Callable[[Mapping[str, Any]], tuple[str, ...]],
) -> str | None:
    """Serving the card without `members`, when that makes every stack accept; else None."""
    if not members or not all(_removable(card_doc, m) for m in members):
        return None
    trimmed = _remove(card_doc, members)
    if trimmed is None:
        return None
    shown = ", ".join(members[:6]) + (f" and {len(members) - 6} more" if len(members) > 6 else "")
    if len(accepted_after(trimmed)) == len(STACKS):
        return (
            f"serve the card without {shown}: the signature already covers the rest, and every stack takes it"
        )
    try:
        same = len({payload_bytes_fast(trimmed, STACK_FORM[s]) for s in STACKS}) == 1
    except FormError:
        same = False
    if same:
        return f"serve the card without {shown} and sign it again: every stack then verifies the same bytes"
    return None
