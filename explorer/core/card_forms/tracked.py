"""What every SDK payload form shares: a tree that remembers where each value was served.

Non-`served` forms leave some served members out of the signed bytes. Every scalar travels
through the normalizers as a `Leaf` that remembers the served member it came from, through every
move (v0.3 `url` into `supportedInterfaces`) and drop, so `sources` of the finished tree names
exactly the served members a form carried, and `forms.unsigned_members` the rest. An `Obj` can
also carry served members whose information lives in its key (a v0.3 security scheme's `type`
chose the key it is now under), and served members only whose presence it carries (each v0.3
`additionalInterfaces` entry becomes an interface, even one whose values are all dropped): those
are signed as being there, while their own members may still be unsigned.

Here too: the SDKs' `_clean_empty` (`clean`, and `clean_plain` for the untracked builders some
form modules keep beside their tracked one, for the payload bytes alone), the two ways a finished
tree becomes bytes (JCS and `json.dumps(sort_keys=True)`), and `FormError`, raised wherever an SDK
could not have read a card at all (a `skills` that is not an array, say), so the form does not
apply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from explorer.core.canonical import CanonicalError, canonicalize
from explorer.core.pointer import escape
from explorer.core.strict_json import describe_type


class FormError(ValueError):
    """The card cannot be read the way this form's signer reads it, so the form cannot apply."""


@dataclass(frozen=True, slots=True)  # one per served scalar: a large card has hundreds of thousands
class Leaf:
    value: Any
    src: str | None  # None for values a normalizer made up (defaults)


class Obj(dict[str, Any]):
    """A tracked object; `also` lists served members whose information lives in its key,
    `presence_of` served members whose being there it carries, but not their values."""

    also: tuple[str, ...] = ()
    presence_of: tuple[str, ...] = ()

    def keep_origin(self, other: Obj) -> Obj:
        """This object, carrying the served members `other` carried beside its values."""
        self.also, self.presence_of = other.also, other.presence_of
        return self


NULL = Leaf(None, None)


def track(value: Any, ptr: str) -> Any:
    """The served JSON `value` at pointer `ptr` as a tracked tree."""
    if isinstance(value, Mapping):
        return Obj({str(k): track(v, f"{ptr}/{escape(str(k))}") for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return [track(v, f"{ptr}/{i}") for i, v in enumerate(value)]
    return Leaf(value, ptr)


def is_null(node: Any) -> bool:
    return isinstance(node, Leaf) and node.value is None


def truthy(node: Any) -> bool:
    return bool(node.value) if isinstance(node, Leaf) else bool(node)


def clean(node: Any) -> Any:
    """The SDKs' `_clean_empty`: drop "", null and (cascading) empty objects and arrays."""
    if isinstance(node, Obj):
        out = Obj((k, c) for k, v in node.items() if (c := clean(v)) is not None).keep_origin(node)
        return out or None
    if isinstance(node, list):
        items = [c for v in node if (c := clean(v)) is not None]
        return items or None
    if node is None or node.value is None or node.value == "":
        return None
    return node


def clean_plain(value: Any) -> Any:
    """`clean` on plain JSON values (the untracked payload paths): new containers, never the
    served ones."""
    if isinstance(value, Mapping):
        out = {k: c for k, v in value.items() if (c := clean_plain(v)) is not None}
        return out or None
    if isinstance(value, (list, tuple)):
        items = [c for v in value if (c := clean_plain(v)) is not None]
        return items or None
    if value is None or value == "":
        return None
    return value


def plain(node: Any) -> Any:
    """The JSON value of a tracked tree; None for None (a card with nothing left)."""
    if node is None:
        return None
    if isinstance(node, Obj):
        return {k: plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    return node.value


def sources(node: Any, into: set[str], present: set[str]) -> None:
    """Add to `into` every served member whose value the tree carries, and to `present` every
    served member whose presence alone it carries."""
    if isinstance(node, Obj):
        into.update(node.also)
        present.update(node.presence_of)
        for v in node.values():
            sources(v, into, present)
    elif isinstance(node, list):
        for v in node:
            sources(v, into, present)
    elif node.src is not None:
        into.add(node.src)


def describe_node(node: Any) -> str:
    if isinstance(node, Obj):
        return "object"
    if isinstance(node, list):
        return "array"
    return describe_type(node.value)


def where(node: Any) -> str:
    """The end of an error message about `node`: `at <pointer>` for a served leaf, else nothing."""
    if isinstance(node, Leaf) and node.src:
        return f" at {node.src}"
    return ""


def require_card_object(card_doc: Any) -> None:
    if not isinstance(card_doc, Mapping):
        raise FormError(f"a card is a JSON object, not {describe_type(card_doc)}")


def read_card(card_doc: Mapping[str, Any], normalize: Callable[[Mapping[str, Any]], Any]) -> Any:
    """The tracked payload tree `normalize` makes of the card (None when everything was dropped)."""
    require_card_object(card_doc)
    try:
        return normalize(card_doc)
    except RecursionError:
        raise FormError("the card is nested too deeply for this form") from None


def canonical_payload(value: Any) -> bytes:
    """RFC 8785 (JCS) bytes of a payload value."""
    try:
        return canonicalize(value)
    except CanonicalError as exc:
        raise FormError(str(exc)) from None


def sorted_payload(value: Any) -> bytes:
    """`json.dumps(sort_keys=True)` bytes: non-ASCII `\\u`-escaped, doubles printed as `1.0`."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("ascii")
    except (TypeError, ValueError) as exc:
        raise FormError(f"cannot serialize: {exc}") from None
