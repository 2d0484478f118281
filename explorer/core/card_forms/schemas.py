"""The Agent Card's message shapes as the SDKs declare them: v1.0 (protobuf) and v0.3 (pydantic).

`V1` is the `lf.a2a.v1` protobuf descriptors a2a-sdk 1.x compiles and @a2a-js/sdk generates its
ts-proto code from; `V03` is a2a-sdk 0.3.26's pydantic models, with `V03_DEFAULTS` the defaults
`model_dump(exclude_defaults=True)` leaves out. `LEGACY_SCHEME_TYPES` maps a v0.3 security
scheme's `type` to the v1.0 oneof alternative that holds it. The tables are transcribed from the
SDKs' source so the core never imports an SDK.

Field kinds: "str", "bool" (proto3 bool without presence: false is not written), "bool?" (with
presence), "struct" (google.protobuf.Struct), "any" (pydantic dict[str, Any]), "enum:a|b"
(pydantic enum), ("msg", Name), ("rep", kind), ("map", kind).
"""

from __future__ import annotations

import re
from typing import Any

Kind = Any

V1: dict[str, dict[str, Kind]] = {
    "AgentCard": {
        "name": "str",
        "description": "str",
        "supportedInterfaces": ("rep", ("msg", "AgentInterface")),
        "provider": ("msg", "AgentProvider"),
        "version": "str",
        "documentationUrl": "str",
        "capabilities": ("msg", "AgentCapabilities"),
        "securitySchemes": ("map", ("msg", "SecurityScheme")),
        "securityRequirements": ("rep", ("msg", "SecurityRequirement")),
        "defaultInputModes": ("rep", "str"),
        "defaultOutputModes": ("rep", "str"),
        "skills": ("rep", ("msg", "AgentSkill")),
        "signatures": ("rep", ("msg", "AgentCardSignature")),
        "iconUrl": "str",
    },
    "AgentInterface": {"url": "str", "protocolBinding": "str", "tenant": "str", "protocolVersion": "str"},
    "AgentProvider": {"url": "str", "organization": "str"},
    "AgentCapabilities": {
        "streaming": "bool?",
        "pushNotifications": "bool?",
        "extensions": ("rep", ("msg", "AgentExtension")),
        "extendedAgentCard": "bool?",
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
        "description": "str",
        "flows": ("msg", "OAuthFlows"),
        "oauth2MetadataUrl": "str",
    },
    "OAuthFlows": {
        "authorizationCode": ("msg", "AuthorizationCodeOAuthFlow"),
        "clientCredentials": ("msg", "ClientCredentialsOAuthFlow"),
        "implicit": ("msg", "ImplicitOAuthFlow"),
        "password": ("msg", "PasswordOAuthFlow"),
        "deviceCode": ("msg", "DeviceCodeOAuthFlow"),
    },
    "AuthorizationCodeOAuthFlow": {
        "authorizationUrl": "str",
        "tokenUrl": "str",
        "refreshUrl": "str",
        "scopes": ("map", "str"),
        "pkceRequired": "bool",
    },
    "ClientCredentialsOAuthFlow": {"tokenUrl": "str", "refreshUrl": "str", "scopes": ("map", "str")},
    "ImplicitOAuthFlow": {"authorizationUrl": "str", "refreshUrl": "str", "scopes": ("map", "str")},
    "PasswordOAuthFlow": {"tokenUrl": "str", "refreshUrl": "str", "scopes": ("map", "str")},
    "DeviceCodeOAuthFlow": {
        "deviceAuthorizationUrl": "str",
        "tokenUrl": "str",
        "refreshUrl": "str",
        "scopes": ("map", "str"),
    },
    "OpenIdConnectSecurityScheme": {"description": "str", "openIdConnectUrl": "str"},
    "MutualTlsSecurityScheme": {"description": "str"},
    "SecurityRequirement": {"schemes": ("map", ("msg", "StringList"))},
    "StringList": {"list": ("rep", "str")},
    "AgentSkill": {
        "id": "str",
        "name": "str",
        "description": "str",
        "tags": ("rep", "str"),
        "examples": ("rep", "str"),
        "inputModes": ("rep", "str"),
        "outputModes": ("rep", "str"),
        "securityRequirements": ("rep", ("msg", "SecurityRequirement")),
    },
    "AgentCardSignature": {"protected": "str", "signature": "str", "header": "struct"},
}
# Messages whose fields form one protobuf oneof: at most one may be set.
V1_ONEOF = frozenset({"SecurityScheme", "OAuthFlows"})

_V03_SCOPES = ("map", "str")
_V03_SECURITY = ("rep", ("map", ("rep", "str")))
V03: dict[str, dict[str, Kind]] = {
    "AgentCard": {
        "additionalInterfaces": ("rep", ("msg", "AgentInterface")),
        "capabilities": ("msg", "AgentCapabilities"),
        "defaultInputModes": ("rep", "str"),
        "defaultOutputModes": ("rep", "str"),
        "description": "str",
        "documentationUrl": "str",
        "iconUrl": "str",
        "name": "str",
        "preferredTransport": "str",
        "protocolVersion": "str",
        "provider": ("msg", "AgentProvider"),
        "security": _V03_SECURITY,
        "securitySchemes": ("map", ("msg", "SecurityScheme")),
        "skills": ("rep", ("msg", "AgentSkill")),
        "supportsAuthenticatedExtendedCard": "bool",
        "url": "str",
        "version": "str",
    },
    "AgentInterface": {"transport": "str", "url": "str"},
    "AgentCapabilities": {
        "extensions": ("rep", ("msg", "AgentExtension")),
        "pushNotifications": "bool",
        "stateTransitionHistory": "bool",
        "streaming": "bool",
    },
    "AgentExtension": {"description": "str", "params": "any", "required": "bool", "uri": "str"},
    "AgentProvider": {"organization": "str", "url": "str"},
    "AgentSkill": {
        "description": "str",
        "examples": ("rep", "str"),
        "id": "str",
        "inputModes": ("rep", "str"),
        "name": "str",
        "outputModes": ("rep", "str"),
        "security": _V03_SECURITY,
        "tags": ("rep", "str"),
    },
    "apiKey": {"description": "str", "in": "enum:cookie|header|query", "name": "str", "type": "str"},
    "http": {"bearerFormat": "str", "description": "str", "scheme": "str", "type": "str"},
    "oauth2": {
        "description": "str",
        "flows": ("msg", "OAuthFlows"),
        "oauth2MetadataUrl": "str",
        "type": "str",
    },
    "openIdConnect": {"description": "str", "openIdConnectUrl": "str", "type": "str"},
    "mutualTLS": {"description": "str", "type": "str"},
    "OAuthFlows": {
        "authorizationCode": ("msg", "AuthorizationCodeOAuthFlow"),
        "clientCredentials": ("msg", "ClientCredentialsOAuthFlow"),
        "implicit": ("msg", "ImplicitOAuthFlow"),
        "password": ("msg", "PasswordOAuthFlow"),
    },
    "AuthorizationCodeOAuthFlow": {
        "authorizationUrl": "str",
        "refreshUrl": "str",
        "scopes": _V03_SCOPES,
        "tokenUrl": "str",
    },
    "ClientCredentialsOAuthFlow": {"refreshUrl": "str", "scopes": _V03_SCOPES, "tokenUrl": "str"},
    "ImplicitOAuthFlow": {"authorizationUrl": "str", "refreshUrl": "str", "scopes": _V03_SCOPES},
    "PasswordOAuthFlow": {"refreshUrl": "str", "scopes": _V03_SCOPES, "tokenUrl": "str"},
}
# pydantic defaults that `exclude_defaults` drops (None defaults are dropped as nulls anyway).
V03_DEFAULTS: dict[tuple[str, str], str] = {
    ("AgentCard", "preferredTransport"): "JSONRPC",
    ("AgentCard", "protocolVersion"): "0.3.0",
    **{(scheme, "type"): scheme for scheme in ("apiKey", "http", "oauth2", "openIdConnect", "mutualTLS")},
}
LEGACY_SCHEME_TYPES: dict[str, str] = {
    "apiKey": "apiKeySecurityScheme",
    "http": "httpAuthSecurityScheme",
    "oauth2": "oauth2SecurityScheme",
    "openIdConnect": "openIdConnectSecurityScheme",
    "mutualTLS": "mtlsSecurityScheme",
}


def snake(name: str) -> str:
    """A camelCase field name as its snake_case proto field name."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _aliases(schema: dict[str, dict[str, Kind]]) -> dict[str, dict[str, str]]:
    """Per message: accepted member name -> field name (protobuf ParseDict and pydantic's
    validate_by_name both accept the snake_case field name besides the camelCase one)."""
    return {
        msg: {**{snake(f): f for f in fields}, **{f: f for f in fields}} for msg, fields in schema.items()
    }


V1_NAMES = _aliases(V1)
V03_NAMES = _aliases(V03)
