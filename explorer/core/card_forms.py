"""Which bytes a card signature covers, under each payload form signers use (docs/PROTOCOL.md section 2).

The A2A spec says a card signature covers "the card minus `signatures`, canonicalized", but the
signers in real use disagree on what "the card" is before canonicalization, so a verifier that
only knows the spec-literal reading calls every card signed by the official Python SDK tampered.
This module rebuilds the payload the way each signer builds it:

- `served`: RFC 8785 (JCS) of the served JSON minus `signatures` (spec-literal signers).
- `sdk-normalized`: a2a-sdk >= 1.1.4. The SDK reads the served card with `parse_agent_card`
  (v0.3 members folded into v1.0 ones, then protobuf `ParseDict` ignoring unknown members),
  writes it back with `MessageToDict` (so `false` in a bool without presence vanishes, and every
  number inside a `google.protobuf.Struct`, i.e. extension `params`, becomes a double), drops
  `signatures`, drops `""`/`[]`/`{}`/`null` recursively, and canonicalizes with JCS.
- `sdk-legacy-sorted`: the same dict, written with `json.dumps(sort_keys=True)` (a2a-sdk 1.0.0
  to 1.1.3), so non-ASCII is `\\u`-escaped and doubles print as `1.0`.
- `sdk-0.3`: a2a-sdk 0.3.x: pydantic `model_validate` of the served card, then
  `model_dump(exclude_defaults, exclude_none, by_alias)`: members the v0.3 model does not know
  are dropped, and so are the defaults `protocolVersion: "0.3.0"`, `preferredTransport: "JSONRPC"`
  and each security scheme's `type`; then empties dropped and `json.dumps(sort_keys=True)`.
  Required members are not enforced here: leniency can only try more bytes against a signature,
  it can never make a wrong signature match.
- `a2a-js`: @a2a-js/sdk 1.x `canonicalizeAgentCard`: ts-proto's `AgentCard.toJSON(fromJSON(card))`
  (no v0.3 folding: v0.3 members are simply unknown; scalars coerced with `String()` and
  `Boolean()` instead of refused; the first set oneof alternative and camelCase win; `params`
  passed through as served), `signatures` dropped, the same recursive empty-dropping, then JCS
  (`{}` for a card with nothing left). Reproduced from @a2a-js/sdk 1.3.0 `dist/index.js`;
  `tests/test_js_interop.py` holds it to the SDK's own function byte for byte.

The SDK behaviour is reproduced from its source (a2a-sdk 1.3.0 `utils/signing.py`,
`client/card_resolver.py`, the `lf.a2a.v1` descriptors and protobuf's `json_format`; a2a-sdk
0.3.26 `utils/helpers.py` and its pydantic models) as the data tables below, not by importing
the SDK: the core stays pure and the SDK is only a test dependency. `tests/test_sdk_interop.py`
holds this emulation to the real SDK byte for byte, including on generated hostile cards.

Non-`served` forms leave some served members out of the signed bytes. Every scalar travels
through the normalizers as a `_Leaf` that remembers the served member it came from, through every
move (v0.3 `url` into `supportedInterfaces`) and drop, so `unsigned_members` names exactly the
served members a form did not carry. "Unsigned" means the member's value is not in the signed
bytes, so another value of the same fate (`""` for `[]`, `false` for `null`) would verify just as
well; the member's mere presence may still matter (an empty `supportedInterfaces` keeps the v0.3
`url` out of the payload). A projection copying an unsigned member is answered from unsigned
bytes, and the report says so. Where an SDK could not have read a card at all (a `skills` that is
not an array, say), the form does not apply and `FormError` says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from explorer.core.canonical import CanonicalError, canonical_text, canonicalize
from explorer.core.pointer import escape, resolve
from explorer.core.strict_json import describe_type

__all__ = ["FORMS", "FormError", "member_is_signed", "payload_bytes", "unsigned_members"]

FORMS: tuple[str, ...] = ("served", "sdk-normalized", "sdk-legacy-sorted", "sdk-0.3", "a2a-js")

_EXTENSION_NAME = re.compile(r"\[[a-zA-Z0-9._]*\]$")  # protobuf json_format's extension syntax


class FormError(ValueError):
    """The card cannot be read the way this form's signer reads it, so the form cannot apply."""


# --------------------------------------------------------------------------------------------
# Source tracking: every scalar remembers the served member it came from.


@dataclass(frozen=True)
class _Leaf:
    value: Any
    src: str | None  # None for values a normalizer made up (defaults)


class _Obj(dict[str, Any]):
    """A tracked object; `also` lists served members whose information lives in its key."""

    also: tuple[str, ...] = ()


_NULL = _Leaf(None, None)


def _track(value: Any, ptr: str) -> Any:
    if isinstance(value, Mapping):
        return _Obj({str(k): _track(v, f"{ptr}/{escape(str(k))}") for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return [_track(v, f"{ptr}/{i}") for i, v in enumerate(value)]
    return _Leaf(value, ptr)


def _is_null(node: Any) -> bool:
    return isinstance(node, _Leaf) and node.value is None


def _truthy(node: Any) -> bool:
    return bool(node.value) if isinstance(node, _Leaf) else bool(node)


def _clean(node: Any) -> Any:
    """The SDKs' `_clean_empty`: drop "", null and (cascading) empty objects and arrays."""
    if isinstance(node, _Obj):
        out = _Obj((k, c) for k, v in node.items() if (c := _clean(v)) is not None)
        out.also = node.also
        return out or None
    if isinstance(node, list):
        items = [c for v in node if (c := _clean(v)) is not None]
        return items or None
    if node is None or node.value is None or node.value == "":
        return None
    return node


def _plain(node: Any) -> Any:
    if isinstance(node, _Obj):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node.value


def _sources(node: Any, into: set[str]) -> None:
    if isinstance(node, _Obj):
        into.update(node.also)
        for v in node.values():
            _sources(v, into)
    elif isinstance(node, list):
        for v in node:
            _sources(v, into)
    elif node.src is not None:
        into.add(node.src)


def _kind(node: Any) -> str:
    if isinstance(node, _Obj):
        return "object"
    if isinstance(node, list):
        return "array"
    return describe_type(node.value)


def _where(node: Any) -> str:
    if isinstance(node, _Leaf) and node.src:
        return f" at {node.src}"
    return ""


# --------------------------------------------------------------------------------------------
# Schemas. Field kinds: "str", "bool" (proto3 bool without presence: false is not written),
# "bool?" (with presence), "struct" (google.protobuf.Struct), "any" (pydantic dict[str, Any]),
# "enum:a|b" (pydantic enum), ("msg", Name), ("rep", kind), ("map", kind).

Kind = Any

_V1: dict[str, dict[str, Kind]] = {
    "AgentCard": {
        "name": "str", "description": "str", "supportedInterfaces": ("rep", ("msg", "AgentInterface")),
        "provider": ("msg", "AgentProvider"), "version": "str", "documentationUrl": "str",
        "capabilities": ("msg", "AgentCapabilities"),
        "securitySchemes": ("map", ("msg", "SecurityScheme")),
        "securityRequirements": ("rep", ("msg", "SecurityRequirement")),
        "defaultInputModes": ("rep", "str"), "defaultOutputModes": ("rep", "str"),
        "skills": ("rep", ("msg", "AgentSkill")), "signatures": ("rep", ("msg", "AgentCardSignature")),
        "iconUrl": "str",
    },
    "AgentInterface": {"url": "str", "protocolBinding": "str", "tenant": "str", "protocolVersion": "str"},
    "AgentProvider": {"url": "str", "organization": "str"},
    "AgentCapabilities": {
        "streaming": "bool?", "pushNotifications": "bool?",
        "extensions": ("rep", ("msg", "AgentExtension")), "extendedAgentCard": "bool?",
    },
    "AgentExtension": {"uri": "str", "description": "str", "required": "bool", "params": "struct"},
    "SecurityScheme": {
        "apiKeySecurityScheme": ("msg", "APIKeySecurityScheme"),
        "httpAuthSecurityScheme": ("msg", "HTTPAuthSecurityScheme"),
        "oauth2SecurityScheme": ("msg", "OAuth2SecurityScheme"),
        "openIdConnectSecurityScheme": ("msg", "OpenIdConnectSecurityScheme"),
        "mtlsSecurityScheme": ("msg", "MutualTlsSecurityScheme"),
    },
    "APIKeySecurityScheme": {"description": "str", "location": "str", "name": "str"},
    "HTTPAuthSecurityScheme": {"description": "str", "scheme": "str", "bearerFormat": "str"},
    "OAuth2SecurityScheme": {
        "description": "str", "flows": ("msg", "OAuthFlows"), "oauth2MetadataUrl": "str",
    },
    "OAuthFlows": {
        "authorizationCode": ("msg", "AuthorizationCodeOAuthFlow"),
        "clientCredentials": ("msg", "ClientCredentialsOAuthFlow"),
        "implicit": ("msg", "ImplicitOAuthFlow"),
        "password": ("msg", "PasswordOAuthFlow"),
        "deviceCode": ("msg", "DeviceCodeOAuthFlow"),
    },
    "AuthorizationCodeOAuthFlow": {
        "authorizationUrl": "str", "tokenUrl": "str", "refreshUrl": "str",
        "scopes": ("map", "str"), "pkceRequired": "bool",
    },
    "ClientCredentialsOAuthFlow": {"tokenUrl": "str", "refreshUrl": "str", "scopes": ("map", "str")},
    "ImplicitOAuthFlow": {"authorizationUrl": "str", "refreshUrl": "str", "scopes": ("map", "str")},
    "PasswordOAuthFlow": {"tokenUrl": "str", "refreshUrl": "str", "scopes": ("map", "str")},
    "DeviceCodeOAuthFlow": {
        "deviceAuthorizationUrl": "str", "tokenUrl": "str", "refreshUrl": "str", "scopes": ("map", "str"),
    },
    "OpenIdConnectSecurityScheme": {"description": "str", "openIdConnectUrl": "str"},
    "MutualTlsSecurityScheme": {"description": "str"},
    "SecurityRequirement": {"schemes": ("map", ("msg", "StringList"))},
    "StringList": {"list": ("rep", "str")},
    "AgentSkill": {
        "id": "str", "name": "str", "description": "str", "tags": ("rep", "str"),
        "examples": ("rep", "str"), "inputModes": ("rep", "str"), "outputModes": ("rep", "str"),
        "securityRequirements": ("rep", ("msg", "SecurityRequirement")),
    },
    "AgentCardSignature": {"protected": "str", "signature": "str", "header": "struct"},
}
# Messages whose fields form one protobuf oneof: at most one may be set.
_V1_ONEOF = frozenset({"SecurityScheme", "OAuthFlows"})

_V03_SCOPES = ("map", "str")
_V03_SECURITY = ("rep", ("map", ("rep", "str")))
_V03: dict[str, dict[str, Kind]] = {
    "AgentCard": {
        "additionalInterfaces": ("rep", ("msg", "AgentInterface")),
        "capabilities": ("msg", "AgentCapabilities"),
        "defaultInputModes": ("rep", "str"), "defaultOutputModes": ("rep", "str"),
        "description": "str", "documentationUrl": "str", "iconUrl": "str", "name": "str",
        "preferredTransport": "str", "protocolVersion": "str", "provider": ("msg", "AgentProvider"),
        "security": _V03_SECURITY, "securitySchemes": ("map", ("msg", "SecurityScheme")),
        "skills": ("rep", ("msg", "AgentSkill")), "supportsAuthenticatedExtendedCard": "bool",
        "url": "str", "version": "str",
    },
    "AgentInterface": {"transport": "str", "url": "str"},
    "AgentCapabilities": {
        "extensions": ("rep", ("msg", "AgentExtension")), "pushNotifications": "bool",
        "stateTransitionHistory": "bool", "streaming": "bool",
    },
    "AgentExtension": {"description": "str", "params": "any", "required": "bool", "uri": "str"},
    "AgentProvider": {"organization": "str", "url": "str"},
    "AgentSkill": {
        "description": "str", "examples": ("rep", "str"), "id": "str", "inputModes": ("rep", "str"),
        "name": "str", "outputModes": ("rep", "str"), "security": _V03_SECURITY, "tags": ("rep", "str"),
    },
    "apiKey": {"description": "str", "in": "enum:cookie|header|query", "name": "str", "type": "str"},
    "http": {"bearerFormat": "str", "description": "str", "scheme": "str", "type": "str"},
    "oauth2": {
        "description": "str", "flows": ("msg", "OAuthFlows"), "oauth2MetadataUrl": "str", "type": "str",
    },
    "openIdConnect": {"description": "str", "openIdConnectUrl": "str", "type": "str"},
    "mutualTLS": {"description": "str", "type": "str"},
    "OAuthFlows": {
        "authorizationCode": ("msg", "AuthorizationCodeOAuthFlow"),
        "clientCredentials": ("msg", "ClientCredentialsOAuthFlow"),
        "implicit": ("msg", "ImplicitOAuthFlow"), "password": ("msg", "PasswordOAuthFlow"),
    },
    "AuthorizationCodeOAuthFlow": {
        "authorizationUrl": "str", "refreshUrl": "str", "scopes": _V03_SCOPES, "tokenUrl": "str",
    },
    "ClientCredentialsOAuthFlow": {"refreshUrl": "str", "scopes": _V03_SCOPES, "tokenUrl": "str"},
    "ImplicitOAuthFlow": {"authorizationUrl": "str", "refreshUrl": "str", "scopes": _V03_SCOPES},
    "PasswordOAuthFlow": {"refreshUrl": "str", "scopes": _V03_SCOPES, "tokenUrl": "str"},
}
# pydantic defaults that `exclude_defaults` drops (None defaults are dropped as nulls anyway).
_V03_DEFAULTS: dict[tuple[str, str], str] = {
    ("AgentCard", "preferredTransport"): "JSONRPC",
    ("AgentCard", "protocolVersion"): "0.3.0",
    **{(scheme, "type"): scheme for scheme in ("apiKey", "http", "oauth2", "openIdConnect", "mutualTLS")},
}
_LEGACY_SCHEME_TYPES = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _aliases(schema: dict[str, dict[str, Kind]]) -> dict[str, dict[str, str]]:
    """Per message: accepted member name -> field name (protobuf ParseDict and pydantic's
    validate_by_name both accept the snake_case field name besides the camelCase one)."""
    return {
        msg: {**{_snake(f): f for f in fields}, **{f: f for f in fields}}
        for msg, fields in schema.items()
    }


_V1_NAMES = _aliases(_V1)
_V03_NAMES = _aliases(_V03)


# --------------------------------------------------------------------------------------------
# sdk-normalized: a2a-sdk's parse_agent_card, ParseDict and MessageToDict.


def _legacy_requirements(node: Any) -> list[Any]:
    """card_resolver._map_legacy_security: [{name: scopes}] -> [{"schemes": {name: {"list": scopes}}}]."""
    if isinstance(node, _Leaf):
        if node.value == "":
            return []
        raise FormError(f"security should be an array, not {describe_type(node.value)}{_where(node)}")
    if isinstance(node, _Obj):  # iterating a dict gives its keys: only an empty one gets through
        if node:
            raise FormError("security should be an array of objects, not an object")
        return []
    out = []
    for requirement in node:
        if not isinstance(requirement, _Obj):
            raise FormError(f"a security requirement is not an object{_where(requirement)}")
        out.append(_Obj(schemes=_Obj((name, _Obj(list=scopes)) for name, scopes in requirement.items())))
    return out


def _fold_v03(data: _Obj) -> None:
    """card_resolver.parse_agent_card's three compatibility steps, on the tracked copy."""
    flag = data.pop("supportsAuthenticatedExtendedCard", None)
    if flag is not None and _truthy(flag):
        caps = data.setdefault("capabilities", _Obj())
        if not isinstance(caps, _Obj):
            raise FormError("capabilities is not an object")
        if "extendedAgentCard" not in caps:
            # Any truthy value becomes true, but only a literal true is carried as itself: "yes"
            # could become "no" (also truthy) unnoticed, so it counts as unsigned.
            literal = isinstance(flag, _Leaf) and flag.value is True
            caps["extendedAgentCard"] = _Leaf(True, flag.src if literal else None)

    main_url = data.pop("url", None)
    transport = data.pop("preferredTransport", _Leaf("JSONRPC", None))
    version = data.pop("protocolVersion", _Leaf("0.3.0", None))
    additional = data.pop("additionalInterfaces", None)
    if "supportedInterfaces" not in data and main_url is not None and _truthy(main_url):
        interfaces = [_Obj(url=main_url, protocolBinding=transport, protocolVersion=version)]
        if additional is not None and _truthy(additional):
            if not isinstance(additional, list):
                raise FormError("additionalInterfaces is not an array")
            for iface in additional:
                if not isinstance(iface, _Obj):
                    raise FormError(f"an additionalInterfaces entry is not an object{_where(iface)}")
                interfaces.append(
                    _Obj(url=iface.get("url", _NULL), protocolBinding=iface.get("transport", _NULL),
                         protocolVersion=version)
                )
        data["supportedInterfaces"] = interfaces

    legacy = data.pop("security", None)
    if "securityRequirements" not in data and legacy is not None and not _is_null(legacy):
        data["securityRequirements"] = _legacy_requirements(legacy)
    skills = data.get("skills", [])
    if not isinstance(skills, list):
        raise FormError(f"skills is not an array{_where(skills)}")
    for skill in skills:
        if not isinstance(skill, _Obj):
            raise FormError(f"a skill is not an object{_where(skill)}")
        skill_legacy = skill.pop("security", None)
        if "securityRequirements" not in skill and skill_legacy is not None and not _is_null(skill_legacy):
            skill["securityRequirements"] = _legacy_requirements(skill_legacy)

    schemes = data.get("securitySchemes", _Obj())
    if _truthy(schemes):
        if not isinstance(schemes, _Obj):
            raise FormError("securitySchemes is not an object")
        for scheme in schemes.values():
            if not isinstance(scheme, _Obj):
                raise FormError(f"a security scheme is not an object{_where(scheme)}")
            kind = scheme.pop("type", None)
            if kind is not None and not isinstance(kind, _Leaf):
                raise FormError("a security scheme's type is not a string")
            if kind is None or not isinstance(kind.value, str) or kind.value not in _LEGACY_SCHEME_TYPES:
                continue  # the SDK leaves a scheme without a known v0.3 type as it is
            wrapper = _LEGACY_SCHEME_TYPES[kind.value]
            if kind.value == "apiKey" and "in" in scheme:
                scheme["location"] = scheme.pop("in")
            inner = _Obj(scheme)
            inner.also = (kind.src,) if kind.src else ()
            scheme.clear()
            scheme[wrapper] = inner


def _struct(node: Any) -> Any:
    """A google.protobuf.Value round trip: numbers come back as doubles, the rest unchanged."""
    if isinstance(node, _Obj):
        return _Obj((k, _struct(v)) for k, v in node.items())
    if isinstance(node, list):
        return [_struct(v) for v in node]
    value = node.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return _Leaf(float(value), node.src)
        except OverflowError:
            raise FormError(f"a number is too large for a double{_where(node)}") from None
    if value is None or isinstance(value, (str, bool)):
        return node
    raise FormError(f"{describe_type(value)} is not a JSON value{_where(node)}")


def _v1_value(node: Any, kind: Kind) -> Any:
    if kind == "str":
        if isinstance(node, _Leaf) and isinstance(node.value, str):
            return node
        raise FormError(f"expected a string, found {_kind(node)}{_where(node)}")
    if kind in ("bool", "bool?"):
        if isinstance(node, _Leaf) and isinstance(node.value, bool):
            return None if kind == "bool" and node.value is False else node
        raise FormError(f"expected true or false, found {_kind(node)}{_where(node)}")
    if kind == "struct":
        if not isinstance(node, _Obj):
            raise FormError(f"expected an object, found {_kind(node)}{_where(node)}")
        return _struct(node)
    tag, inner = kind
    if tag == "msg":
        return _v1_message(node, inner)
    if tag == "rep":
        if not isinstance(node, list):
            raise FormError(f"expected an array, found {_kind(node)}{_where(node)}")
        if any(_is_null(v) for v in node):
            raise FormError("null is not allowed inside an array of a protobuf field")
        return [v for v in (_v1_value(item, inner) for item in node) if v is not None]
    if not isinstance(node, _Obj):  # map
        raise FormError(f"expected an object, found {_kind(node)}{_where(node)}")
    if any(_is_null(v) for v in node.values()):
        raise FormError("null is not allowed as a map value of a protobuf field")
    return _Obj((k, _v1_value(v, inner)) for k, v in node.items())


def _v1_message(node: Any, name: str) -> _Obj:
    fields, names = _V1[name], _V1_NAMES[name]
    if not isinstance(node, _Obj):
        # ParseDict iterates whatever it is given as member names: a string's characters and
        # an array's strings name no field and are ignored (an empty message); anything else fails.
        if isinstance(node, _Leaf) and isinstance(node.value, str):
            return _Obj()
        if isinstance(node, list) and all(
            isinstance(e, _Leaf) and isinstance(e.value, str) and e.value not in names
            and _EXTENSION_NAME.match(e.value) is None
            for e in node
        ):
            return _Obj()
        raise FormError(f"{name} should be an object, not {_kind(node)}{_where(node)}")
    out = _Obj()
    out.also = node.also
    for key, value in node.items():
        field = names.get(key)
        if field is None:
            if _EXTENSION_NAME.match(key):
                raise FormError(f"{name} has an extension-style member {key!r}, which protobuf refuses")
            continue  # ParseDict(ignore_unknown_fields=True)
        if field in out:
            raise FormError(f"{name} sets {field} twice (camelCase and snake_case)")
        if _is_null(value):
            continue
        if name in _V1_ONEOF and out:
            raise FormError(f"{name} sets more than one of its alternatives")
        converted = _v1_value(value, fields[field])
        if converted is not None:
            out[field] = converted
    return out


def _sdk_normalized(card: Mapping[str, Any]) -> Any:
    data = _track(card, "")
    _fold_v03(data)
    message = _v1_message(data, "AgentCard")
    message.pop("signatures", None)
    return _clean(message)


# --------------------------------------------------------------------------------------------
# sdk-0.3: pydantic model_dump(exclude_defaults=True, exclude_none=True, by_alias=True).


_SCHEME_MARKERS = (
    ("apiKey", "in"), ("http", "scheme"), ("oauth2", "flows"), ("openIdConnect", "openIdConnectUrl"),
)


def _scheme_model(node: _Obj) -> str:
    """Which v0.3 scheme model pydantic's union picks: the one `type` names, else by required member."""
    kind = node.get("type")
    if kind is not None:
        if isinstance(kind, _Leaf) and kind.value in _LEGACY_SCHEME_TYPES:
            return str(kind.value)
        raise FormError(f"unknown security scheme type{_where(kind)}")
    for model, marker in _SCHEME_MARKERS:
        if marker in node:
            return model
    return "mutualTLS"


_TRUE_WORDS = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE_WORDS = frozenset({"0", "off", "f", "false", "n", "no"})


def _lax_bool(node: Any) -> _Leaf:
    """pydantic's lax bool: also 0/1 and words like "yes"; dumped as a JSON boolean."""
    value = node.value if isinstance(node, _Leaf) else None
    if isinstance(value, bool):
        return node
    if isinstance(value, (int, float)) and value in (0, 1):
        return _Leaf(value == 1, node.src)
    if isinstance(value, str) and value.lower() in _TRUE_WORDS | _FALSE_WORDS:
        return _Leaf(value.lower() in _TRUE_WORDS, node.src)
    raise FormError(f"expected true or false, found {_kind(node)}{_where(node)}")


def _v03_value(node: Any, kind: Kind) -> Any:
    if _is_null(node):
        return None
    if kind == "any":
        if not isinstance(node, _Obj):
            raise FormError(f"expected an object, found {_kind(node)}{_where(node)}")
        return node
    if isinstance(kind, str) and kind.startswith("enum:"):
        if isinstance(node, _Leaf) and node.value in kind[5:].split("|"):
            return node
        raise FormError(f"expected one of {kind[5:]}{_where(node)}")
    if kind == "str":
        if isinstance(node, _Leaf) and isinstance(node.value, str):
            return node
        raise FormError(f"expected a string, found {_kind(node)}{_where(node)}")
    if kind == "bool":
        return _lax_bool(node)
    tag, inner = kind
    if tag == "msg":
        if inner == "SecurityScheme":
            if not isinstance(node, _Obj):
                raise FormError(f"a security scheme is not an object{_where(node)}")
            scheme = _v03_message(node, _scheme_model(node))
            kind = node.get("type")
            # `type` is dropped as a default, but it chose the model: its information is signed.
            scheme.also = (kind.src,) if isinstance(kind, _Leaf) and kind.src else ()
            return scheme
        return _v03_message(node, inner)
    if tag == "rep":
        if not isinstance(node, list):
            raise FormError(f"expected an array, found {_kind(node)}{_where(node)}")
        if any(_is_null(item) for item in node):
            raise FormError("null is not allowed inside an array of the v0.3 model")
        return [_v03_value(item, inner) for item in node]
    if not isinstance(node, _Obj):
        raise FormError(f"expected an object, found {_kind(node)}{_where(node)}")
    if any(_is_null(v) for v in node.values()):
        raise FormError("null is not allowed as a map value of the v0.3 model")
    return _Obj((k, _v03_value(v, inner)) for k, v in node.items())


def _v03_message(node: Any, name: str) -> _Obj:
    if not isinstance(node, _Obj):
        raise FormError(f"{name} should be an object, not {_kind(node)}{_where(node)}")
    fields, names = _V03[name], _V03_NAMES[name]
    out = _Obj()
    for key, value in node.items():
        field = names.get(key)
        if field is None:
            continue  # pydantic ignores extra members
        if field in out:
            raise FormError(f"{name} sets {field} twice (camelCase and snake_case)")
        converted = _v03_value(value, fields[field])
        default = _V03_DEFAULTS.get((name, field))
        if default is not None and isinstance(converted, _Leaf) and converted.value == default:
            continue
        if converted is not None:
            out[field] = converted
    return out


def _sdk_03(card: Mapping[str, Any]) -> Any:
    data = _track({k: v for k, v in card.items() if k != "signatures"}, "")
    return _clean(_v03_message(data, "AgentCard"))


# --------------------------------------------------------------------------------------------
# a2a-js: @a2a-js/sdk's canonicalizeAgentCard, AgentCard.toJSON(AgentCard.fromJSON(card)).
#
# ts-proto's fromJSON never refuses a shape, it coerces: a scalar field takes `String(value)` or
# `Boolean(value)` of whatever is there, a field that should be an array or an object and is not
# is left at its default, and a message given a scalar reads nothing from it. Only null where a
# message is expected (inside an array or a map) throws. camelCase wins over snake_case, the
# first set alternative of a oneof wins, and v0.3 members are not folded in: they are unknown.


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


def _js_string(node: Any) -> _Leaf:
    """String(node); a coerced value keeps no source: another value coerces to the same text."""
    if isinstance(node, _Leaf) and isinstance(node.value, str):
        return node
    if isinstance(node, list):  # Array.prototype.toString: join(","), null and undefined as ""
        return _Leaf(",".join("" if _is_null(v) else _js_string(v).value for v in node), None)
    if isinstance(node, _Obj):
        return _Leaf("[object Object]", None)
    return _Leaf(_js_text(node.value), None)


def _js_boolean(node: Any) -> _Leaf:
    if isinstance(node, _Leaf):
        if isinstance(node.value, bool):
            return node
        return _Leaf(bool(node.value) and node.value == node.value, None)  # NaN is falsy
    return _Leaf(True, None)  # objects and arrays are truthy


def _js_set(node: Any) -> bool:
    return node is not None and not _is_null(node)


def _js_field(node: Any, field: str, test: Any) -> Any:
    """`test(object.camel) ? camel : test(object.snake) ? snake : undefined` (None)."""
    if not isinstance(node, _Obj):
        return None  # a string's or an array's properties name no field
    for name in (field, _snake(field)):
        value = node.get(name)
        if test(value):
            return value
    return None


def _js_is_object(node: Any) -> bool:
    return isinstance(node, (_Obj, list))


# `acc["__proto__"] = value` sets a prototype instead of a member, so a JS object built member by
# member (a map in fromJSON, every object in cleanEmpty) silently loses a "__proto__" key.
_PROTO = "__proto__"


def _js_entries(node: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(node, _Obj):
        return ((k, v) for k, v in node.items() if k != _PROTO)
    return ((str(i), v) for i, v in enumerate(node))


def _js_struct(node: Any) -> Any:
    """A `params` or `header` value as cleanEmpty rebuilds it: without "__proto__" members."""
    if isinstance(node, _Obj):
        return _Obj((k, _js_struct(v)) for k, v in node.items() if k != _PROTO)
    if isinstance(node, list):
        return [_js_struct(v) for v in node]
    return node


def _js_element(node: Any, kind: Kind) -> Any:
    """One element of a repeated field or one map value."""
    if kind == "str":
        return _js_string(node)
    _, name = kind
    if _is_null(node) and name != "StringList":  # StringList.fromJSON reads `object?.list`
        raise FormError(f"null where the JS SDK expects a {name} (it throws a TypeError)")
    return _js_message(node, name)


def _js_message(node: Any, name: str) -> _Obj:
    out = _Obj()
    for field, kind in _V1[name].items():
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
            if name in _V1_ONEOF:
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
                out[field] = _Obj((k, _js_element(v, kind[1])) for k, v in _js_entries(value))
    return out


def _a2a_js(card: Mapping[str, Any]) -> Any:
    message = _js_message(_track(card, ""), "AgentCard")
    message.pop("signatures", None)
    return _clean(message)


# --------------------------------------------------------------------------------------------
# Payload forms.


def _sorted_dumps(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("ascii")


def _normalized(card_doc: Mapping[str, Any], form: str) -> Any:
    """The tracked payload tree of a non-served form (None when everything was dropped)."""
    if not isinstance(card_doc, Mapping):
        raise FormError(f"a card is a JSON object, not {describe_type(card_doc)}")
    try:
        if form == "sdk-0.3":
            return _sdk_03(card_doc)
        return _a2a_js(card_doc) if form == "a2a-js" else _sdk_normalized(card_doc)
    except RecursionError:
        raise FormError("the card is nested too deeply for this form") from None


def payload_bytes(card_doc: Mapping[str, Any], form: str) -> bytes:
    """The bytes a signer of this form signed. Raises FormError when the form cannot apply
    (the SDK in question could not have read this card) and ValueError for an unknown form."""
    if form not in FORMS:
        raise ValueError(f"unknown payload form {form!r}; expected one of {', '.join(FORMS)}")
    if form == "served":
        if not isinstance(card_doc, Mapping):
            raise FormError(f"a card is a JSON object, not {describe_type(card_doc)}")
        try:
            return canonicalize({k: v for k, v in card_doc.items() if k != "signatures"})
        except CanonicalError as exc:
            raise FormError(str(exc)) from None
    tree = _normalized(card_doc, form)
    value = _plain(tree) if tree is not None else None  # the SDKs sign "null" for an empty card
    if form == "a2a-js" and value is None:
        return b"{}"  # canonicalizeAgentCard's own answer for a card with nothing left
    if form in ("sdk-normalized", "a2a-js"):
        try:
            return canonicalize(value)
        except CanonicalError as exc:
            raise FormError(str(exc)) from None
    try:
        return _sorted_dumps(value)
    except (TypeError, ValueError) as exc:
        raise FormError(f"cannot serialize: {exc}") from None


def unsigned_members(card_doc: Mapping[str, Any], form: str) -> tuple[str, ...]:
    """Sorted pointers of the outermost served members that form's payload does not carry.

    `/signatures` is never listed: no form signs it, it is the signature. Raises like
    `payload_bytes`."""
    if form not in FORMS:
        raise ValueError(f"unknown payload form {form!r}; expected one of {', '.join(FORMS)}")
    if form == "served":
        return ()
    tree = _normalized(card_doc, "sdk-normalized" if form == "sdk-legacy-sorted" else form)
    covered: set[str] = set()
    if tree is not None:
        _sources(tree, covered)
    reached = {""}
    for ptr in covered:
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


def _empty(value: Any) -> bool:
    """What the SDKs' `_clean_empty` drops: "", null, and objects and arrays of nothing else."""
    if value is None or value == "":
        return True
    if isinstance(value, Mapping):
        return all(_empty(v) for v in value.values())
    if isinstance(value, list):
        return all(_empty(v) for v in value)
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
            if not found.found or not _empty(found.value):
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

