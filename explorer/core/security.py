"""What a card declares about authentication: its security schemes and requirements, both layouts.

A2A cards say how a client authenticates (docs/PROTOCOL.md section 1): v0.3 writes
`securitySchemes{name: {type: apiKey|http|oauth2|openIdConnect|mutualTLS, ...}}` with
`security[{name: [scopes]}]`, v1.0 writes `securitySchemes{name: {apiKeySecurityScheme: {...}}}`
with `securityRequirements[{schemes: {name: {list: [scopes]}}}]`, and a merged card may carry
both. A card typed against @a2a-js/sdk's TypeScript definitions writes a v1.0 scheme (and its
OAuth flows) as ts-proto's oneof, `{scheme: {$case: "httpAuthSecurityScheme", value: {...}}}`;
it is read as the v1.0 wrapper it names. This module reads either into one model, `Security`,
so the procedure can decide where a credential goes and the evaluation can name the option that
would supply each declared scheme.

Pure and total, like `core.card`: a card is a stranger's document, so anything unreadable is
skipped (a scheme of an unknown shape is kept as `kind="unknown"`, which the explorer cannot
satisfy), never raised. Which kinds the explorer can satisfy is stated once here (`supported`),
with the command-line option and config setting that supplies each (`supply_hint`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from explorer.core.jsonshape import mapping_of

Kind = Literal["apiKey", "bearer", "basic", "oauth2", "openIdConnect", "mutualTLS", "unknown"]

# v1.0 wrapper member -> the v0.3 `type` it corresponds to.
_V10_WRAPPERS = {
    "apiKeySecurityScheme": "apiKey",
    "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2",
    "openIdConnectSecurityScheme": "openIdConnect",
    "mtlsSecurityScheme": "mutualTLS",
}


@dataclass(frozen=True)
class Scheme:
    """One declared security scheme, whatever the layout it was written in."""

    name: str
    kind: Kind
    pointer: str
    location: str | None = None  # apiKey: header | query | cookie
    header: str | None = None  # apiKey: the header (or query/cookie) name
    token_url: str | None = None  # oauth2: the clientCredentials flow's tokenUrl (OIDC: discovered)
    flows: tuple[str, ...] = ()  # oauth2: the flows declared
    discovery_url: str | None = None  # openIdConnect: the provider's discovery document

    @property
    def supported(self) -> bool:
        """Whether the explorer can send what this scheme asks for."""
        if self.kind == "apiKey":
            return self.location == "header" and bool(self.header)
        if self.kind == "bearer":
            return True
        if self.kind == "oauth2":
            return "clientCredentials" in self.flows
        if self.kind == "openIdConnect":  # client credentials at the discovered token endpoint
            return bool(self.discovery_url or self.token_url)
        return False

    def describe(self) -> str:
        """A short human description: `bearer (HTTP bearer token)`."""
        if self.kind == "apiKey":
            where = self.location or "an unstated place"
            return f"{self.name} (API key in {where} {self.header or '(unnamed)'})"
        if self.kind == "bearer":
            return f"{self.name} (HTTP bearer token)"
        if self.kind == "oauth2":
            flows = ", ".join(self.flows) or "no flow"
            return f"{self.name} (OAuth 2.0, flows: {flows})"
        labels = {"basic": "HTTP basic", "openIdConnect": "OpenID Connect", "mutualTLS": "mutual TLS"}
        return f"{self.name} ({labels.get(self.kind, 'a scheme of unknown type')})"


@dataclass(frozen=True)
class Security:
    """The card's schemes by name and its requirements (each: scheme name -> scopes), in order."""

    schemes: dict[str, Scheme] = field(default_factory=dict)
    requirements: tuple[dict[str, tuple[str, ...]], ...] = ()

    @property
    def declared(self) -> bool:
        return bool(self.schemes) or bool(self.requirements)

    def alternatives(self) -> tuple[dict[str, tuple[str, ...]], ...]:
        """The ways in: the requirements, or, when none are stated, each scheme alone."""
        if self.requirements:
            return self.requirements
        return tuple({name: ()} for name in self.schemes)

    def satisfiable(self) -> bool:
        """True when some way in uses only schemes the explorer can satisfy (or none is needed)."""
        ways = self.alternatives()
        if not ways:
            return True
        return any(all(n in self.schemes and self.schemes[n].supported for n in way) for way in ways)


def supply_hint(scheme: Scheme) -> str:
    """The option (and config setting) that supplies a credential for this scheme."""
    if scheme.kind == "apiKey" and scheme.supported:
        return '--api-key env:VAR (config: api_key = "env:VAR")'
    if scheme.kind == "bearer":
        return '--bearer env:VAR (config: bearer = "env:VAR")'
    if scheme.kind in ("oauth2", "openIdConnect") and scheme.supported:
        return (
            '--oauth2-client-id ID --oauth2-client-secret env:VAR (config: oauth2_client_id = "ID", '
            'oauth2_client_secret = "env:VAR")'
        )
    return "no option of the explorer can supply it"


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def _oneof(raw: Mapping[str, Any], member: str) -> tuple[str, Mapping[str, Any]] | None:
    """ts-proto's in-memory oneof, `{member: {"$case": name, "value": {...}}}`, as (name, value).

    @a2a-js/sdk 1.x types a security scheme (and OAuth flows) this way and serves the card as its
    author wrote it, so a TypeScript-typed card carries this shape on the wire instead of the
    protojson `{name: {...}}` (docs/PROTOCOL.md section 2)."""
    inner = raw.get(member)
    if isinstance(inner, Mapping):
        case, value = inner.get("$case"), inner.get("value")
        if isinstance(case, str) and isinstance(value, Mapping):
            return case, value
    return None


def _scheme(name: str, raw: Mapping[str, Any], pointer: str) -> Scheme:
    body: Mapping[str, Any] = raw
    kind_name = raw.get("type")
    typed = _oneof(raw, "scheme")
    if typed is not None and typed[0] in _V10_WRAPPERS:
        raw, pointer = {typed[0]: typed[1]}, f"{pointer}/scheme/value"
    for wrapper, v03_type in _V10_WRAPPERS.items():
        inner = raw.get(wrapper)
        if isinstance(inner, Mapping):
            body, kind_name = inner, v03_type
            pointer = pointer if typed is not None else f"{pointer}/{wrapper}"
            break
    if kind_name == "apiKey":
        location = body.get("location", body.get("in"))
        header = body.get("name")
        return Scheme(
            name,
            "apiKey",
            pointer,
            location=location if isinstance(location, str) else None,
            header=header if isinstance(header, str) else None,
        )
    if kind_name == "http":
        scheme = body.get("scheme")
        text = scheme.lower() if isinstance(scheme, str) else ""
        kind: Kind = "bearer" if text == "bearer" else "basic" if text == "basic" else "unknown"
        return Scheme(name, kind, pointer)
    if kind_name == "oauth2":
        flows = mapping_of(body.get("flows"))
        typed_flow = _oneof(flows, "flow")
        if typed_flow is not None:
            flows = {typed_flow[0]: typed_flow[1]}
        token_url = mapping_of(flows.get("clientCredentials")).get("tokenUrl")
        return Scheme(
            name,
            "oauth2",
            pointer,
            token_url=token_url if isinstance(token_url, str) else None,
            flows=tuple(k for k in flows if isinstance(k, str)),
        )
    if kind_name == "openIdConnect":
        url = body.get("openIdConnectUrl")
        return Scheme(name, "openIdConnect", pointer, discovery_url=url if isinstance(url, str) else None)
    if kind_name == "mutualTLS":
        return Scheme(name, kind_name, pointer)
    return Scheme(name, "unknown", pointer)


def _requirement(raw: Any) -> dict[str, tuple[str, ...]] | None:
    if not isinstance(raw, Mapping):
        return None
    schemes = raw.get("schemes")
    if isinstance(schemes, Mapping):  # v1.0: {schemes: {name: {list: [scopes]}}}
        out: dict[str, tuple[str, ...]] = {}
        for name, scopes in schemes.items():
            out[name] = _strings(mapping_of(scopes).get("list"))
        return out
    return {name: _strings(scopes) for name, scopes in raw.items()}  # v0.3: {name: [scopes]}


def read_security(doc: Mapping[str, Any]) -> Security:
    """The card's security declaration, from either layout (v1.0 requirements first)."""
    schemes: dict[str, Scheme] = {}
    raw_schemes = doc.get("securitySchemes")
    if isinstance(raw_schemes, Mapping):
        for name, raw in raw_schemes.items():
            if isinstance(name, str) and isinstance(raw, Mapping):
                schemes[name] = _scheme(name, raw, f"/securitySchemes/{_escape(name)}")
    requirements: list[dict[str, tuple[str, ...]]] = []
    for member in ("securityRequirements", "security"):
        items = doc.get(member)
        for item in items if isinstance(items, list) else []:
            found = _requirement(item)
            if found is not None and found not in requirements:
                requirements.append(found)
    return Security(schemes, tuple(requirements))


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def declared_summary(security: Security) -> str:
    """Every declared scheme with the option that supplies it, for a finding's detail."""
    if not security.schemes:
        return "the card declares no security scheme"
    parts = [f"{s.describe()}: {supply_hint(s)}" for s in security.schemes.values()]
    return "the card declares " + "; ".join(parts)
