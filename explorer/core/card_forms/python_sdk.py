"""The `sdk-normalized` form: what a2a-sdk >= 1.1.4 (the official Python SDK) signs.

The SDK does not sign the JSON it serves; it signs its protobuf message of the card. It reads the
served card with `parse_agent_card` (v0.3 members folded into v1.0 ones, then protobuf
`ParseDict` ignoring unknown members), writes it back with `MessageToDict` (so `false` in a bool
without presence vanishes, and every number inside a `google.protobuf.Struct`, i.e. extension
`params`, becomes a double), drops `signatures`, drops `""`/`[]`/`{}`/`null` recursively, and
canonicalizes with JCS. So members the message has no field for, v0.3 members it moved, and
empties are not in the signed bytes, and a card the SDK could not parse has no payload at all.

Reproduced from a2a-sdk 1.3.0 `utils/signing.py`, `client/card_resolver.py`, the `lf.a2a.v1`
descriptors (`schemas.V1`) and protobuf's `json_format`. `python_sdk_legacy` writes the same
message the way a2a-sdk 1.0.0 to 1.1.3 did.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from explorer.core.card_forms.schemas import LEGACY_SCHEME_TYPES, V1, V1_NAMES, V1_ONEOF, Kind
from explorer.core.card_forms.tracked import (
    NULL,
    FormError,
    Leaf,
    Obj,
    canonical_payload,
    clean,
    clean_plain,
    describe_node,
    is_null,
    plain,
    read_card,
    require_card_object,
    track,
    truthy,
    where,
)
from explorer.core.strict_json import describe_type

_EXTENSION_NAME = re.compile(r"\[[a-zA-Z0-9._]*\]$")  # protobuf json_format's extension syntax


def _legacy_requirements(node: Any) -> list[Any]:
    """card_resolver._map_legacy_security: [{name: scopes}] -> [{"schemes": {name: {"list": scopes}}}]."""
    if isinstance(node, Leaf):
        if node.value == "":
            return []
        raise FormError(f"security should be an array, not {describe_type(node.value)}{where(node)}")
    if isinstance(node, Obj):  # iterating a dict gives its keys: only an empty one gets through
        if node:
            raise FormError("security should be an array of objects, not an object")
        return []
    out = []
    for requirement in node:
        if not isinstance(requirement, Obj):
            raise FormError(f"a security requirement is not an object{where(requirement)}")
        out.append(Obj(schemes=Obj((name, Obj(list=scopes)) for name, scopes in requirement.items())))
    return out


def _fold_v03(data: Obj) -> None:
    """card_resolver.parse_agent_card's three compatibility steps, on the tracked copy."""
    flag = data.pop("supportsAuthenticatedExtendedCard", None)
    if flag is not None and truthy(flag):
        caps = data.setdefault("capabilities", Obj())
        if not isinstance(caps, Obj):
            raise FormError("capabilities is not an object")
        if "extendedAgentCard" not in caps:
            # Any truthy value becomes true, but only a literal true is carried as itself: "yes"
            # could become "no" (also truthy) unnoticed, so it counts as unsigned.
            literal = isinstance(flag, Leaf) and flag.value is True
            caps["extendedAgentCard"] = Leaf(True, flag.src if literal else None)

    main_url = data.pop("url", None)
    transport = data.pop("preferredTransport", Leaf("JSONRPC", None))
    version = data.pop("protocolVersion", Leaf("0.3.0", None))
    additional = data.pop("additionalInterfaces", None)
    if "supportedInterfaces" not in data and main_url is not None and truthy(main_url):
        interfaces = [Obj(url=main_url, protocolBinding=transport, protocolVersion=version)]
        if additional is not None and truthy(additional):
            if not isinstance(additional, list):
                raise FormError("additionalInterfaces is not an array")
            for index, iface in enumerate(additional):
                if not isinstance(iface, Obj):
                    raise FormError(f"an additionalInterfaces entry is not an object{where(iface)}")
                folded = Obj(
                    url=iface.get("url", NULL),
                    protocolBinding=iface.get("transport", NULL),
                    protocolVersion=version,
                )
                folded.presence_of = (f"/additionalInterfaces/{index}",)
                interfaces.append(folded)
        data["supportedInterfaces"] = interfaces

    legacy = data.pop("security", None)
    if "securityRequirements" not in data and legacy is not None and not is_null(legacy):
        data["securityRequirements"] = _legacy_requirements(legacy)
    skills = data.get("skills", [])
    if not isinstance(skills, list):
        raise FormError(f"skills is not an array{where(skills)}")
    for skill in skills:
        if not isinstance(skill, Obj):
            raise FormError(f"a skill is not an object{where(skill)}")
        skill_legacy = skill.pop("security", None)
        if "securityRequirements" not in skill and skill_legacy is not None and not is_null(skill_legacy):
            skill["securityRequirements"] = _legacy_requirements(skill_legacy)

    schemes = data.get("securitySchemes", Obj())
    if truthy(schemes):
        if not isinstance(schemes, Obj):
            raise FormError("securitySchemes is not an object")
        for scheme in schemes.values():
            if not isinstance(scheme, Obj):
                raise FormError(f"a security scheme is not an object{where(scheme)}")
            kind = scheme.pop("type", None)
            if kind is not None and not isinstance(kind, Leaf):
                raise FormError("a security scheme's type is not a string")
            if kind is None or not isinstance(kind.value, str) or kind.value not in LEGACY_SCHEME_TYPES:
                continue  # the SDK leaves a scheme without a known v0.3 type as it is
            unfolded = Obj(scheme)  # what the SDK reads when the type names no v0.3 scheme
            wrapper = LEGACY_SCHEME_TYPES[kind.value]
            if kind.value == "apiKey" and "in" in scheme:
                scheme["location"] = scheme.pop("in")
            inner = Obj(scheme)
            scheme.clear()
            scheme[wrapper] = inner
            if kind.src and not _reads_alike(scheme, unfolded):
                inner.also = (kind.src,)


def _reads_alike(folded: Obj, unfolded: Obj) -> bool:
    """Whether a security scheme is the same message folded under its v0.3 `type` as without it.

    It is when the served scheme also holds that type's own v1.0 member, with the same content:
    then the key the type chose is signed, but not the type, which could name no scheme at all."""
    try:
        return plain(clean(_v1_message(folded, "SecurityScheme"))) == plain(
            clean(_v1_message(unfolded, "SecurityScheme"))
        )
    except FormError:  # one of them does not read: the type decides whether the card reads at all
        return False


def _struct(node: Any) -> Any:
    """A google.protobuf.Value round trip: numbers come back as doubles, the rest unchanged."""
    if isinstance(node, Obj):
        return Obj((k, _struct(v)) for k, v in node.items())
    if isinstance(node, list):
        return [_struct(v) for v in node]
    value = node.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return Leaf(float(value), node.src)
        except OverflowError:
            raise FormError(f"a number is too large for a double{where(node)}") from None
    if value is None or isinstance(value, (str, bool)):
        return node
    raise FormError(f"{describe_type(value)} is not a JSON value{where(node)}")


def _v1_value(node: Any, kind: Kind) -> Any:
    if kind == "str":
        if isinstance(node, Leaf) and isinstance(node.value, str):
            return node
        raise FormError(f"expected a string, found {describe_node(node)}{where(node)}")
    if kind in ("bool", "bool?"):
        if isinstance(node, Leaf) and isinstance(node.value, bool):
            return None if kind == "bool" and node.value is False else node
        raise FormError(f"expected true or false, found {describe_node(node)}{where(node)}")
    if kind == "struct":
        if not isinstance(node, Obj):
            raise FormError(f"expected an object, found {describe_node(node)}{where(node)}")
        return _struct(node)
    tag, inner = kind
    if tag == "msg":
        return _v1_message(node, inner)
    if tag == "rep":
        if not isinstance(node, list):
            raise FormError(f"expected an array, found {describe_node(node)}{where(node)}")
        if any(is_null(v) for v in node):
            raise FormError("null is not allowed inside an array of a protobuf field")
        return [v for v in (_v1_value(item, inner) for item in node) if v is not None]
    if not isinstance(node, Obj):  # map
        raise FormError(f"expected an object, found {describe_node(node)}{where(node)}")
    if any(is_null(v) for v in node.values()):
        raise FormError("null is not allowed as a map value of a protobuf field")
    return Obj((k, _v1_value(v, inner)) for k, v in node.items())


def _v1_message(node: Any, name: str) -> Obj:
    fields, names = V1[name], V1_NAMES[name]
    if not isinstance(node, Obj):
        # ParseDict iterates whatever it is given as member names: a string's characters and
        # an array's strings name no field and are ignored (an empty message); anything else fails.
        if isinstance(node, Leaf) and isinstance(node.value, str):
            return Obj()
        if isinstance(node, list) and all(
            isinstance(e, Leaf)
            and isinstance(e.value, str)
            and e.value not in names
            and _EXTENSION_NAME.match(e.value) is None
            for e in node
        ):
            return Obj()
        raise FormError(f"{name} should be an object, not {describe_node(node)}{where(node)}")
    out = Obj().keep_origin(node)
    for key, value in node.items():
        field = names.get(key)
        if field is None:
            if _EXTENSION_NAME.match(key):
                raise FormError(f"{name} has an extension-style member {key!r}, which protobuf refuses")
            continue  # ParseDict(ignore_unknown_fields=True)
        if field in out:
            raise FormError(f"{name} sets {field} twice (camelCase and snake_case)")
        if is_null(value):
            continue
        if name in V1_ONEOF and out:
            raise FormError(f"{name} sets more than one of its alternatives")
        converted = _v1_value(value, fields[field])
        if converted is not None:
            out[field] = converted
    return out


def _normalize(card: Mapping[str, Any]) -> Any:
    data = track(card, "")
    _fold_v03(data)
    message = _v1_message(data, "AgentCard")
    message.pop("signatures", None)
    return clean(message)


def payload_tree(card_doc: Mapping[str, Any]) -> Any:
    """The tracked message the SDK signs (None when nothing is left).

    Raises FormError when the SDK could not have parsed the card."""
    return read_card(card_doc, _normalize)


def payload_bytes(card_doc: Mapping[str, Any]) -> bytes:
    return canonical_payload(plain(payload_tree(card_doc)))  # an empty card signs "null"


# --------------------------------------------------------------------------------------------
# The same message on plain JSON values, for the bytes alone: no tracked tree, no deep copy (a
# catalogue of thousands of skills builds its payload several times faster). It mirrors the
# tracked code above step for step; `tests/core/test_payload_fast_path.py` holds the two equal.
# Where the card does not read it raises FormError without a pointer: `forms` then asks the
# tracked path, whose message names the member.

_ABSENT: Any = object()


def _plain_requirements(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        if value:
            raise FormError("security")
        return []
    if isinstance(value, (list, tuple)):
        out = []
        for requirement in value:
            if not isinstance(requirement, Mapping):
                raise FormError("security")
            out.append({"schemes": {str(n): {"list": scopes} for n, scopes in requirement.items()}})
        return out
    if value == "":
        return []
    raise FormError("security")


def _plain_fold_v03(card: Mapping[str, Any]) -> dict[str, Any]:
    """`_fold_v03` on a shallow copy: only the members it changes are copied, the card is untouched."""
    data = {str(k): v for k, v in card.items()}
    flag = data.pop("supportsAuthenticatedExtendedCard", None)
    if flag is not None and bool(flag):
        caps = data.get("capabilities", _ABSENT)
        if caps is _ABSENT:
            caps = {}
        elif not isinstance(caps, Mapping):
            raise FormError("capabilities")
        else:
            caps = dict(caps)
        caps.setdefault("extendedAgentCard", True)
        data["capabilities"] = caps

    main_url = data.pop("url", None)
    transport = data.pop("preferredTransport", "JSONRPC")
    version = data.pop("protocolVersion", "0.3.0")
    additional = data.pop("additionalInterfaces", None)
    if "supportedInterfaces" not in data and main_url is not None and bool(main_url):
        interfaces = [{"url": main_url, "protocolBinding": transport, "protocolVersion": version}]
        if additional is not None and bool(additional):
            if not isinstance(additional, (list, tuple)):
                raise FormError("additionalInterfaces")
            for iface in additional:
                if not isinstance(iface, Mapping):
                    raise FormError("additionalInterfaces")
                interfaces.append(
                    {
                        "url": iface.get("url"),
                        "protocolBinding": iface.get("transport"),
                        "protocolVersion": version,
                    }
                )
        data["supportedInterfaces"] = interfaces

    legacy = data.pop("security", None)
    if "securityRequirements" not in data and legacy is not None:
        data["securityRequirements"] = _plain_requirements(legacy)
    skills = data.get("skills", [])
    if not isinstance(skills, (list, tuple)):
        raise FormError("skills")
    folded_skills: list[Any] | None = None
    for index, skill in enumerate(skills):
        if not isinstance(skill, Mapping):
            raise FormError("skills")
        if "security" not in skill:
            continue
        if folded_skills is None:
            folded_skills = list(skills)
        copied = {str(k): v for k, v in skill.items()}
        skill_legacy = copied.pop("security")
        if "securityRequirements" not in copied and skill_legacy is not None:
            copied["securityRequirements"] = _plain_requirements(skill_legacy)
        folded_skills[index] = copied
    if folded_skills is not None:
        data["skills"] = folded_skills

    schemes = data.get("securitySchemes", {})
    if bool(schemes):
        if not isinstance(schemes, Mapping):
            raise FormError("securitySchemes")
        folded_schemes: dict[str, Any] = {}
        for name, scheme in schemes.items():
            if not isinstance(scheme, Mapping):
                raise FormError("securitySchemes")
            copied = {str(k): v for k, v in scheme.items()}
            kind = copied.pop("type", _ABSENT)
            if isinstance(kind, (Mapping, list, tuple)):
                raise FormError("securitySchemes")
            if not isinstance(kind, str) or kind not in LEGACY_SCHEME_TYPES:
                folded_schemes[str(name)] = copied
                continue
            if kind == "apiKey" and "in" in copied:
                copied["location"] = copied.pop("in")
            folded_schemes[str(name)] = {LEGACY_SCHEME_TYPES[kind]: copied}
        data["securitySchemes"] = folded_schemes
    return data


def _plain_struct(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain_struct(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_struct(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise FormError("struct") from None
    if value is None or isinstance(value, (str, bool)):
        return value
    raise FormError("struct")


def _plain_value(value: Any, kind: Kind) -> Any:
    if kind == "str":
        if isinstance(value, str):
            return value
        raise FormError(kind)
    if kind in ("bool", "bool?"):
        if isinstance(value, bool):
            return None if kind == "bool" and value is False else value
        raise FormError(kind)
    if kind == "struct":
        if not isinstance(value, Mapping):
            raise FormError(kind)
        return _plain_struct(value)
    tag, inner = kind
    if tag == "msg":
        return _plain_message(value, inner)
    if tag == "rep":
        if not isinstance(value, (list, tuple)):
            raise FormError(tag)
        if any(v is None for v in value):
            raise FormError(tag)
        return [v for v in (_plain_value(item, inner) for item in value) if v is not None]
    if not isinstance(value, Mapping):  # map
        raise FormError(tag)
    if any(v is None for v in value.values()):
        raise FormError(tag)
    return {str(k): _plain_value(v, inner) for k, v in value.items()}


def _plain_message(value: Any, name: str) -> dict[str, Any]:
    fields, names = V1[name], V1_NAMES[name]
    if not isinstance(value, Mapping):
        if isinstance(value, str):
            return {}
        if isinstance(value, (list, tuple)) and all(
            isinstance(e, str) and e not in names and _EXTENSION_NAME.match(e) is None for e in value
        ):
            return {}
        raise FormError(name)
    out: dict[str, Any] = {}
    for key, member in value.items():
        field = names.get(key)
        if field is None:
            if _EXTENSION_NAME.match(str(key)):
                raise FormError(name)
            continue
        if field in out:
            raise FormError(name)
        if member is None:
            continue
        if name in V1_ONEOF and out:
            raise FormError(name)
        converted = _plain_value(member, fields[field])
        if converted is not None:
            out[field] = converted
    return out


def payload_value(card_doc: Mapping[str, Any]) -> Any:
    """The JSON value of `payload_tree`, built without tracking (None when nothing is left).

    Raises FormError (or RecursionError) when the SDK could not have parsed the card; the
    tracked path says where."""
    require_card_object(card_doc)
    message = _plain_message(_plain_fold_v03(card_doc), "AgentCard")
    message.pop("signatures", None)
    return clean_plain(message)
