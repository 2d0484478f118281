"""The `sdk-0.3` form: what a2a-sdk 0.3.x signed, the card through its pydantic v0.3 models.

The 0.3 SDK validates the served card with pydantic `model_validate`, then signs
`model_dump(exclude_defaults, exclude_none, by_alias)` of it: members the v0.3 model does not know
are dropped, and so are the defaults `protocolVersion: "0.3.0"`, `preferredTransport: "JSONRPC"`
and each security scheme's `type`; then empties are dropped and the rest written with
`json.dumps(sort_keys=True)`. pydantic's lax mode also turns `1` or `"yes"` into `true`, so such a
member's value is not signed as served. Required members are not enforced here: leniency can only
try more bytes against a signature, it can never make a wrong signature match.

Reproduced from a2a-sdk 0.3.26 `utils/helpers.py` and its pydantic models (`schemas.V03`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from explorer.core.card_forms.schemas import LEGACY_SCHEME_TYPES, V03, V03_DEFAULTS, V03_NAMES, Kind
from explorer.core.card_forms.tracked import (
    FormError,
    Leaf,
    Obj,
    clean,
    describe_node,
    is_null,
    plain,
    read_card,
    sorted_payload,
    track,
    where,
)

_SCHEME_MARKERS = (
    ("apiKey", "in"),
    ("http", "scheme"),
    ("oauth2", "flows"),
    ("openIdConnect", "openIdConnectUrl"),
)


def _scheme_model(node: Obj) -> str:
    """Which v0.3 scheme model pydantic's union picks: the one `type` names, else by required member."""
    kind = node.get("type")
    if kind is not None:
        if isinstance(kind, Leaf) and kind.value in LEGACY_SCHEME_TYPES:
            return str(kind.value)
        raise FormError(f"unknown security scheme type{where(kind)}")
    for model, marker in _SCHEME_MARKERS:
        if marker in node:
            return model
    return "mutualTLS"


_TRUE_WORDS = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE_WORDS = frozenset({"0", "off", "f", "false", "n", "no"})


def _lax_bool(node: Any) -> Leaf:
    """pydantic's lax bool: also 0/1 and words like "yes"; dumped as a JSON boolean."""
    value = node.value if isinstance(node, Leaf) else None
    if isinstance(value, bool):
        return node
    if isinstance(value, (int, float)) and value in (0, 1):
        return Leaf(value == 1, node.src)
    if isinstance(value, str) and value.lower() in _TRUE_WORDS | _FALSE_WORDS:
        return Leaf(value.lower() in _TRUE_WORDS, node.src)
    raise FormError(f"expected true or false, found {describe_node(node)}{where(node)}")


def _v03_value(node: Any, kind: Kind) -> Any:
    if is_null(node):
        return None
    if kind == "any":
        if not isinstance(node, Obj):
            raise FormError(f"expected an object, found {describe_node(node)}{where(node)}")
        return node
    if isinstance(kind, str) and kind.startswith("enum:"):
        if isinstance(node, Leaf) and node.value in kind[5:].split("|"):
            return node
        raise FormError(f"expected one of {kind[5:]}{where(node)}")
    if kind == "str":
        if isinstance(node, Leaf) and isinstance(node.value, str):
            return node
        raise FormError(f"expected a string, found {describe_node(node)}{where(node)}")
    if kind == "bool":
        return _lax_bool(node)
    tag, inner = kind
    if tag == "msg":
        if inner == "SecurityScheme":
            if not isinstance(node, Obj):
                raise FormError(f"a security scheme is not an object{where(node)}")
            scheme = _v03_message(node, _scheme_model(node))
            kind = node.get("type")
            # `type` is dropped as a default, but it chose the model: its information is signed.
            scheme.also = (kind.src,) if isinstance(kind, Leaf) and kind.src else ()
            return scheme
        return _v03_message(node, inner)
    if tag == "rep":
        if not isinstance(node, list):
            raise FormError(f"expected an array, found {describe_node(node)}{where(node)}")
        if any(is_null(item) for item in node):
            raise FormError("null is not allowed inside an array of the v0.3 model")
        return [_v03_value(item, inner) for item in node]
    if not isinstance(node, Obj):
        raise FormError(f"expected an object, found {describe_node(node)}{where(node)}")
    if any(is_null(v) for v in node.values()):
        raise FormError("null is not allowed as a map value of the v0.3 model")
    return Obj((k, _v03_value(v, inner)) for k, v in node.items())


def _v03_message(node: Any, name: str) -> Obj:
    if not isinstance(node, Obj):
        raise FormError(f"{name} should be an object, not {describe_node(node)}{where(node)}")
    fields, names = V03[name], V03_NAMES[name]
    out = Obj()
    for key, value in node.items():
        field = names.get(key)
        if field is None:
            continue  # pydantic ignores extra members
        if field in out:
            raise FormError(f"{name} sets {field} twice (camelCase and snake_case)")
        converted = _v03_value(value, fields[field])
        default = V03_DEFAULTS.get((name, field))
        if default is not None and isinstance(converted, Leaf) and converted.value == default:
            continue
        if converted is not None:
            out[field] = converted
    return out


def _normalize(card: Mapping[str, Any]) -> Any:
    data = track({k: v for k, v in card.items() if k != "signatures"}, "")
    return clean(_v03_message(data, "AgentCard"))


def payload_tree(card_doc: Mapping[str, Any]) -> Any:
    """The tracked model dump the SDK signs (None when nothing is left).

    Raises FormError when pydantic would have refused the card."""
    return read_card(card_doc, _normalize)


def payload_bytes(card_doc: Mapping[str, Any]) -> bytes:
    return sorted_payload(plain(payload_tree(card_doc)))  # an empty card signs "null"
