"""The payload forms a card signature is tried under, in order, and what each leaves unsigned.

`FORMS` is the order `signatures.verify_card` tries them: the spec-literal `served` first, then
the official SDKs' forms, newest Python SDK first. `payload_bytes` is the bytes a signer of a form
signed, built by that form's module from its tracked tree; `payload_bytes_fast` (and
`payload_bytes_cached`, `payload_value`) the same bytes from the modules' untracked builders,
which a verifier uses: the trees are only needed for `unsigned_members`, the served members a
form's payload does not carry, which is asked of the one form that matched.

"Unsigned" means the member's value is not in the signed bytes, so another value of the same fate
(`""` for `[]`, `false` for `null`) would verify just as well; the member's mere presence may still
matter (an empty `supportedInterfaces` keeps the v0.3 `url` out of the payload). A projection
copying an unsigned member is answered from unsigned bytes, and the report says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from explorer.core.card_forms import a2a_js, python_sdk, python_sdk_legacy, sdk_v03, spec
from explorer.core.card_forms.tracked import FormError, canonical_payload, plain, sorted_payload, sources
from explorer.core.pointer import escape, resolve

__all__ = [
    "FORMS",
    "dropped_empties",
    "member_is_signed",
    "payload_bytes",
    "payload_bytes_cached",
    "payload_bytes_fast",
    "payload_value",
    "unsigned_members",
]

FORMS: tuple[str, ...] = ("served", "sdk-normalized", "sdk-legacy-sorted", "sdk-0.3", "a2a-js")

_PAYLOADS: dict[str, Callable[[Mapping[str, Any]], bytes]] = {
    "served": spec.payload_bytes,
    "sdk-normalized": python_sdk.payload_bytes,
    "sdk-legacy-sorted": python_sdk_legacy.payload_bytes,
    "sdk-0.3": sdk_v03.payload_bytes,
    "a2a-js": a2a_js.payload_bytes,
}
# The tracked tree each non-served form signs; the legacy form signs python_sdk's, written otherwise.
_TREES: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "sdk-normalized": python_sdk.payload_tree,
    "sdk-legacy-sorted": python_sdk.payload_tree,
    "sdk-0.3": sdk_v03.payload_tree,
    "a2a-js": a2a_js.payload_tree,
}


def payload_bytes(card_doc: Mapping[str, Any], form: str) -> bytes:
    """The bytes a signer of this form signed. Raises FormError when the form cannot apply
    (the SDK in question could not have read this card) and ValueError for an unknown form."""
    if form not in FORMS:
        raise ValueError(f"unknown payload form {form!r}; expected one of {', '.join(FORMS)}")
    return _PAYLOADS[form](card_doc)


# The untracked builders of the forms' JSON values (bytes only); sdk-0.3, a last resort no client
# stack verifies, keeps its tracked one.
_VALUES: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "sdk-normalized": python_sdk.payload_value,
    "sdk-legacy-sorted": python_sdk.payload_value,
    "a2a-js": a2a_js.payload_value,
}


def _value(card_doc: Mapping[str, Any], form: str) -> Any:
    """The form's payload value, untracked where it can be; a card the untracked builder does not
    read is asked of the tracked tree, whose FormError names the member (or which reads it)."""
    build = _VALUES.get(form)
    if build is not None:
        try:
            return build(card_doc)
        except (FormError, RecursionError):
            pass
    return plain(_TREES[form](card_doc))


def _serialize(value: Any, form: str) -> bytes:
    if form == "a2a-js" and value is None:
        return b"{}"  # canonicalizeAgentCard's own answer for a card with nothing left
    if form in ("sdk-legacy-sorted", "sdk-0.3"):
        return sorted_payload(value)
    return canonical_payload(value)  # an empty card signs "null"


def payload_bytes_fast(card_doc: Mapping[str, Any], form: str) -> bytes:
    """`payload_bytes` built without tracked trees: the same bytes, several times faster on a
    large card (tests/core/test_payload_fast_path.py holds them equal)."""
    if form not in FORMS:
        raise ValueError(f"unknown payload form {form!r}; expected one of {', '.join(FORMS)}")
    if form == "served":
        return spec.payload_bytes(card_doc)
    return _serialize(_value(card_doc, form), form)


def payload_bytes_cached(card_doc: Mapping[str, Any], form: str, values: dict[Any, Any]) -> bytes:
    """`payload_bytes_fast`, sharing in `values` the payload value of the two Python SDK 1.x forms
    (one message written two ways)."""
    if form not in _VALUES or _VALUES[form] is not python_sdk.payload_value:
        return payload_bytes_fast(card_doc, form)
    if "python-sdk" in values:
        value = values.pop("python-sdk")  # its second and last user
    else:
        value = _value(card_doc, form)
        values["python-sdk"] = value
    return _serialize(value, form)


def payload_value(card_doc: Mapping[str, Any], form: str) -> Any:
    """The JSON value a form's payload serializes (None for a card with nothing left). Raises like
    `payload_bytes`."""
    if form not in FORMS:
        raise ValueError(f"unknown payload form {form!r}; expected one of {', '.join(FORMS)}")
    if form == "served":
        spec.payload_bytes(card_doc)  # raises FormError where JCS refuses the card
        return {k: v for k, v in card_doc.items() if k != "signatures"}
    return _value(card_doc, form)


def unsigned_members(card_doc: Mapping[str, Any], form: str) -> tuple[str, ...]:
    """Sorted pointers of the outermost served members that form's payload does not carry.

    `/signatures` is never listed: no form signs it, it is the signature. Raises like
    `payload_bytes`."""
    if form not in FORMS:
        raise ValueError(f"unknown payload form {form!r}; expected one of {', '.join(FORMS)}")
    if form == "served":
        return ()
    tree = _TREES[form](card_doc)
    covered: set[str] = set()
    present: set[str] = set()
    if tree is not None:
        sources(tree, covered, present)
    reached = {""}
    for ptr in covered | present:
        while ptr:
            if ptr in reached:
                break
            reached.add(ptr)
            ptr = ptr.rsplit("/", 1)[0]
    out: list[str] = []
    stack: list[tuple[str, Any]] = [
        (f"/{escape(str(k))}", v) for k, v in card_doc.items() if k != "signatures"
    ]
    while stack:
        ptr, value = stack.pop()
        if ptr not in reached:
            out.append(ptr)
        elif ptr not in covered:
            if isinstance(value, Mapping):
                stack.extend((f"{ptr}/{escape(str(k))}", v) for k, v in value.items())
            elif isinstance(value, list):
                stack.extend((f"{ptr}/{i}", v) for i, v in enumerate(value))
    return tuple(sorted(out))


def dropped_as_empty(value: Any) -> bool:
    """What the SDKs' `_clean_empty` drops: "", null, and objects and arrays of nothing else."""
    if value is None or value == "":
        return True
    if isinstance(value, Mapping):
        return all(dropped_as_empty(v) for v in value.values())
    if isinstance(value, list):
        return all(dropped_as_empty(v) for v in value)
    return False


def dropped_empties(pointer: str, unsigned: Iterable[str], card_doc: Any) -> tuple[str, ...]:
    """The unsigned members inside `pointer` when they are all empty members the signer's
    canonical form drops (`"tenant": ""` in an interface): the member's content is signed except
    for them. Empty when `pointer` itself is (inside) an unsigned member, or any unsigned member
    inside it holds content."""
    inside: list[str] = []
    for member in unsigned:
        if pointer == "" or pointer == member or pointer.startswith(member + "/"):
            return ()
        if member.startswith(pointer + "/"):
            found = resolve(card_doc, member)
            if not found.found or not dropped_as_empty(found.value):
                return ()
            inside.append(member)
    return tuple(sorted(inside))


def member_is_signed(pointer: str, unsigned: Iterable[str]) -> bool:
    """False if `pointer` is an unsigned member, lies inside one, or contains one."""
    for member in unsigned:
        if pointer == member or pointer.startswith(member + "/") or member.startswith(pointer + "/"):
            return False
        if pointer == "":
            return False
    return True
