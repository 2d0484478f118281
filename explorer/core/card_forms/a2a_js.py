"""The `a2a-js` form: what @a2a-js/sdk 1.x signs, its `canonicalizeAgentCard`.

The JS SDK signs ts-proto's `AgentCard.toJSON(AgentCard.fromJSON(card))` with `signatures`
dropped, the same recursive empty-dropping as the Python SDK, then JCS (`{}` for a card with
nothing left). It shares the v1.0 message shapes (`schemas.V1`) with `python_sdk`, but reads a
card very differently. ts-proto's fromJSON never refuses a shape, it coerces: a scalar field
takes `String(value)` or `Boolean(value)` of whatever is there, a field that should be an array or
an object and is not is left at its default, and a message given a scalar reads nothing from it.
Only null where a message is expected (inside an array or a map) throws. camelCase wins over
snake_case, the first set alternative of a oneof wins, `params` is passed through as served (no
doubles), and v0.3 members are not folded in: they are unknown, so unsigned.

Reproduced from @a2a-js/sdk 1.3.0 `dist/index.js`; `tests/test_js_interop.py` holds it to the
SDK's own function byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from explorer.core.canonical import CanonicalError, canonical_text
from explorer.core.card_forms.schemas import V1, V1_ONEOF, Kind, snake
from explorer.core.card_forms.tracked import (
    FormError,
    Leaf,
    Obj,
    canonical_payload,
    clean,
    clean_plain,
    is_null,
    plain,
    read_card,
    require_card_object,
    track,
)


def _js_text(value: Any) -> str:
    """JavaScript's String(value) for a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        try:
            return canonical_text(value)  # JCS numbers are ECMAScript's Number::toString
        except CanonicalError as exc:
            raise FormError(str(exc)) from None
    return "[object Object]"


def _js_string(node: Any) -> Leaf:
    """String(node); a coerced value keeps no source: another value coerces to the same text."""
    if isinstance(node, Leaf) and isinstance(node.value, str):
        return node
    if isinstance(node, list):  # Array.prototype.toString: join(","), null and undefined as ""
        return Leaf(",".join("" if is_null(v) else _js_string(v).value for v in node), None)
    if isinstance(node, Obj):
        return Leaf("[object Object]", None)
    return Leaf(_js_text(node.value), None)


def _js_boolean(node: Any) -> Leaf:
    if isinstance(node, Leaf):
        if isinstance(node.value, bool):
            return node
        return Leaf(bool(node.value) and node.value == node.value, None)  # NaN is falsy
    return Leaf(True, None)  # objects and arrays are truthy


def _js_set(node: Any) -> bool:
    return node is not None and not is_null(node)


def _js_field(node: Any, field: str, test: Any) -> Any:
    """`test(object.camel) ? camel : test(object.snake) ? snake : undefined` (None)."""
    if not isinstance(node, Obj):
        return None  # a string's or an array's properties name no field
    for name in (field, snake(field)):
        value = node.get(name)
        if test(value):
            return value
    return None


def _js_is_object(node: Any) -> bool:
    return isinstance(node, (Obj, list))


# `acc["__proto__"] = value` sets a prototype instead of a member, so a JS object built member by
# member (a map in fromJSON, every object in cleanEmpty) silently loses a "__proto__" key.
_PROTO = "__proto__"


def _js_entries(node: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(node, Obj):
        return ((k, v) for k, v in node.items() if k != _PROTO)
    return ((str(i), v) for i, v in enumerate(node))


def _js_struct(node: Any) -> Any:
    """A `params` or `header` value as cleanEmpty rebuilds it: without "__proto__" members."""
    if isinstance(node, Obj):
        return Obj((k, _js_struct(v)) for k, v in node.items() if k != _PROTO)
    if isinstance(node, list):
        return [_js_struct(v) for v in node]
    return node


def _js_element(node: Any, kind: Kind) -> Any:
    """One element of a repeated field or one map value."""
    if kind == "str":
        return _js_string(node)
    _, name = kind
    if is_null(node) and name != "StringList":  # StringList.fromJSON reads `object?.list`
        raise FormError(f"null where the JS SDK expects a {name} (it throws a TypeError)")
    return _js_message(node, name)


def _js_message(node: Any, name: str) -> Obj:
    out = Obj()
    for field, kind in V1[name].items():
        if kind in ("str", "bool", "bool?") or (isinstance(kind, tuple) and kind[0] == "msg"):
            value = _js_field(node, field, _js_set)
            if value is None:
                continue
            if kind == "str":
                out[field] = _js_string(value)
            elif kind == "bool?":
                out[field] = _js_boolean(value)
            elif kind == "bool":
                if (flag := _js_boolean(value)).value:
                    out[field] = flag
            else:
                out[field] = _js_message(value, kind[1])
            if name in V1_ONEOF:
                break  # the first set alternative wins
        elif kind == "struct":  # passed through as it is when it is an object (or an array)
            if _js_is_object(value := _js_field(node, field, _js_is_object)):
                out[field] = _js_struct(value)
        elif kind[0] == "rep":
            value = _js_field(node, field, lambda v: isinstance(v, list))
            if value is not None:
                out[field] = [_js_element(v, kind[1]) for v in value]
        else:  # map
            value = _js_field(node, field, _js_is_object)
            if value is not None:
                out[field] = Obj((k, _js_element(v, kind[1])) for k, v in _js_entries(value))
    return out


def _normalize(card: Mapping[str, Any]) -> Any:
    message = _js_message(track(card, ""), "AgentCard")
    message.pop("signatures", None)
    return clean(message)


def payload_tree(card_doc: Mapping[str, Any]) -> Any:
    """The tracked message the SDK signs (None when nothing is left).

    Raises FormError where the SDK would throw."""
    return read_card(card_doc, _normalize)


def payload_bytes(card_doc: Mapping[str, Any]) -> bytes:
    value = plain(payload_tree(card_doc))
    if value is None:
        return b"{}"  # canonicalizeAgentCard's own answer for a card with nothing left
    return canonical_payload(value)


# --------------------------------------------------------------------------------------------
# The same message on plain JSON values, for the bytes alone: no tracked tree (a catalogue of
# thousands of skills builds its payload several times faster). It mirrors the tracked code
# above step for step; `tests/core/test_payload_fast_path.py` holds the two equal. fromJSON never
# copies a served container into the message, so the card is only read.

_SNAKE = {field: snake(field) for fields in V1.values() for field in fields}


def _plain_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None else _plain_string(v) for v in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return _js_text(value)


def _plain_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (Mapping, list, tuple)):
        return True
    return bool(value) and value == value  # NaN is falsy


def _plain_is_object(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple))


def _plain_field(value: Any, field: str, test: Any) -> Any:
    if not isinstance(value, Mapping):
        return None
    for name in (field, _SNAKE[field]):
        member = value.get(name)
        if test(member):
            return member
    return None


def _plain_struct(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain_struct(v) for k, v in value.items() if k != _PROTO}
    if isinstance(value, (list, tuple)):
        return [_plain_struct(v) for v in value]
    return value


def _plain_entries(value: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(value, Mapping):
        return ((str(k), v) for k, v in value.items() if k != _PROTO)
    return ((str(i), v) for i, v in enumerate(value))


def _plain_element(value: Any, kind: Kind) -> Any:
    if kind == "str":
        return _plain_string(value)
    _, name = kind
    if value is None and name != "StringList":
        raise FormError(name)
    return _plain_message(value, name)


def _plain_message(value: Any, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, kind in V1[name].items():
        if kind in ("str", "bool", "bool?") or (isinstance(kind, tuple) and kind[0] == "msg"):
            member = _plain_field(value, field, _is_set)
            if member is None:
                continue
            if kind == "str":
                out[field] = _plain_string(member)
            elif kind == "bool?":
                out[field] = _plain_boolean(member)
            elif kind == "bool":
                if flag := _plain_boolean(member):
                    out[field] = flag
            else:
                out[field] = _plain_message(member, kind[1])
            if name in V1_ONEOF:
                break
        elif kind == "struct":
            if _plain_is_object(member := _plain_field(value, field, _plain_is_object)):
                out[field] = _plain_struct(member)
        elif kind[0] == "rep":
            member = _plain_field(value, field, lambda v: isinstance(v, (list, tuple)))
            if member is not None:
                out[field] = [_plain_element(v, kind[1]) for v in member]
        else:  # map
            member = _plain_field(value, field, _plain_is_object)
            if member is not None:
                out[field] = {k: _plain_element(v, kind[1]) for k, v in _plain_entries(member)}
    return out


def _is_set(value: Any) -> bool:
    return value is not None


def payload_value(card_doc: Mapping[str, Any]) -> Any:
    """The JSON value of `payload_tree`, built without tracking (None when nothing is left).

    Raises FormError (or RecursionError) where the SDK would throw; the tracked path says why."""
    require_card_object(card_doc)
    message = _plain_message(card_doc, "AgentCard")
    message.pop("signatures", None)
    return clean_plain(message)
