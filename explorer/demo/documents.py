"""The declared documents of one reference agent: its card, its proposals, the files it serves.

`build(variant, urls, key, provider, generation)` assembles everything an agent publishes for one state
of its declaration, signs it with keys generated at start-up, and returns the served bytes. The
card commits to each proposal by the digest of the exact document it serves (except where the
variant says otherwise), so the chain the verifier walks, card signature -> terms entry digest ->
proposal bytes -> provider signature, holds by construction. Signing is delegated to the core
modules the verifier itself uses to check (`explorer.core.signatures`, `explorer.core.sow`,
`explorer.core.openclasp`); this module writes no crypto of its own.

A v1.0 card lists `supportedInterfaces`; a v0.3 card uses `url` + `preferredTransport` +
`protocolVersion`. Both put extensions in `capabilities.extensions`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.core import signatures
from explorer.core.canonical import digest
from explorer.core.card import INTERVIEW_URI, REPUTATION_URI, TERMS_URI
from explorer.core.sow import public_nkey, sign_proposal
from explorer.demo import content, openclasp_site
from explorer.demo.jsonrpc import dumps
from explorer.demo.projection import Committed
from explorer.demo.variants import Variant

CARD_PATH = "/.well-known/agent-card.json"
JWKS_PATH = "/.well-known/jwks.json"
JSONRPC_PATH = "/a2a/jsonrpc"
TOKEN_PATH = "/oauth2/token"  # a guarded-oauth2 agent's token endpoint (explorer.demo.guard)
OIDC_PATH = "/.well-known/openid-configuration"  # and its OpenID Connect discovery document
REPUTATION_PATH = "/reputation/record.json"


@dataclass(frozen=True)
class Urls:
    """Where one agent lives."""

    base: str

    @property
    def jsonrpc(self) -> str:
        return self.base + JSONRPC_PATH

    @property
    def jwks(self) -> str:
        return self.base + JWKS_PATH

    def proposal(self, name: str) -> str:
        return f"{self.base}/terms/{name}.sow.json"


@dataclass(frozen=True)
class CardKey:
    """One agent's card signing key (ES256) and its `kid`."""

    key: Any
    kid: str

    @classmethod
    def generate(cls, name: str, kept_in: Path | None = None) -> CardKey:
        """`name`'s key, kept in `kept_in` across sessions (`kept_keys`), or made for this one."""
        from explorer.demo.kept_keys import card_key

        kid = f"{name}-card-1"
        return cls(card_key(kept_in, name, kid), kid)

    @property
    def jwks(self) -> dict[str, Any]:
        return signatures.public_jwks(self.key)


@dataclass(frozen=True)
class Signed:
    """One proposal as the card commits to it (`digest`) and as the agent serves it."""

    digest: str
    sow: str
    served: dict[str, Any]
    served_bytes: bytes


class Provider:
    """The organisation behind every demo agent, with its Ed25519 keys (kept across sessions
    when `kept_in` is given, see `kept_keys`).

    `key` signs the standing proposals, `stranger` is "a key that does not match" where a variant
    needs one, and `platform` is the OpenClasp platform's attestation key. Proposals do not name
    the agent's URL, so each signed document is made once per fleet and shared (`proposal`).
    """

    def __init__(self, kept_in: Path | None = None) -> None:
        from explorer.demo.kept_keys import ed25519_key

        self.key = ed25519_key(kept_in, "provider")
        self.stranger = ed25519_key(kept_in, "stranger")
        self.platform = ed25519_key(kept_in, "platform")
        self._signed: dict[tuple[str, str | None], Signed] = {}

    def proposal(self, name: str, doc: Mapping[str, Any], fault: str | None) -> Signed:
        """The signed proposal `name` (content from `doc`), with `fault` applied; cached."""
        if (name, fault) not in self._signed:
            promised, served = self._pair(doc, fault)
            self._signed[(name, fault)] = Signed(digest(promised), promised["id"], served, dumps(served))
        return self._signed[(name, fault)]

    def _pair(self, doc: Mapping[str, Any], fault: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
        unsigned = copy.deepcopy(dict(doc))
        unsigned["parties"]["provider"]["agent"] = public_nkey(self.key)
        if fault == "unsigned":
            return unsigned, unsigned
        if fault == "wrong_key":
            signed = sign_proposal(unsigned, self.stranger, signed_at=content.SIGNED_AT)
            return signed, signed
        if fault == "not_standing":
            buyer = {"agent": public_nkey(self.stranger), "handle": "buyer@client.demo"}
            unsigned["parties"]["offered_to"] = buyer
        signed = sign_proposal(unsigned, self.key, signed_at=content.SIGNED_AT)
        if fault == "tampered":
            revised = {**unsigned, "ends_at": "2027-08-01T00:00:00Z"}
            return signed, sign_proposal(revised, self.key, signed_at=content.RESIGNED_AT)
        return signed, signed


@dataclass(frozen=True)
class Documents:
    """One state of an agent's declaration, ready to serve."""

    card: dict[str, Any]
    card_bytes: bytes
    committed: tuple[Committed, ...] | None  # None: the card declares no terms
    uncommitted: tuple[Committed, ...] = ()  # served and cited, never committed (fabricating)
    files: dict[str, bytes] = field(default_factory=dict)  # GET path -> body
    card_paths: tuple[str, ...] = (CARD_PATH,)
    site: openclasp_site.Site | None = None  # the OpenClasp platform documents, when published there


def _terms(
    variant: Variant, urls: Urls, provider: Provider, skill_ids: list[str]
) -> tuple[list[dict[str, Any]], tuple[Committed, ...], dict[str, bytes]]:
    """The terms entry's proposal list, what the agent projects, and the files it serves.

    The last proposal carries the variant's `proposal_fault`, if any.
    """
    sources = content.hostile_proposals(skill_ids) if variant.hostile else content.proposals()
    entries: list[dict[str, Any]] = []
    committed: list[Committed] = []
    files: dict[str, bytes] = {}
    for index, (offering, doc) in enumerate(sources.items()):
        fault = variant.proposal_fault if index == len(sources) - 1 else None
        name = f"offer-{index + 1}" if variant.hostile else offering
        signed = provider.proposal(("hostile-" if variant.hostile else "") + name, doc, fault)
        url = urls.proposal(name)
        entries.append({"url": url, "digest": signed.digest, "sow": signed.sow, "offering": offering})
        committed.append(Committed(url, signed.digest, offering, signed.served))
        files[url.removeprefix(urls.base)] = signed.served_bytes
    return entries, tuple(committed), files


def _uncommitted(urls: Urls, provider: Provider) -> tuple[tuple[Committed, ...], dict[str, bytes]]:
    signed = provider.proposal("unlisted-offer", content.uncommitted_proposal(), None)
    url = urls.proposal("unlisted-offer")
    return (Committed(url, signed.digest, "reconcile-statement", signed.served),), {
        url.removeprefix(urls.base): signed.served_bytes
    }


def _extensions(variant: Variant, urls: Urls, terms_entries: list[dict[str, Any]] | None) -> list[Any]:
    extensions: list[dict[str, Any]] = []
    if variant.interview:
        extensions.append(
            {
                "uri": INTERVIEW_URI,
                "description": content.INTERVIEW_DESCRIPTION,
                "required": variant.interview_required,
            }
        )
    if terms_entries is not None:
        extensions.append(
            {
                "uri": TERMS_URI,
                "required": False,
                "params": {"sow_spec": content.SOW_SPEC, "proposals": terms_entries},
            }
        )
    if variant.reputation:
        extensions.append(
            {"uri": REPUTATION_URI, "required": False, "params": {"url": urls.base + REPUTATION_PATH}}
        )
    if variant.openclasp:
        extensions.append(openclasp_site.extension_entry(urls.base, variant.name))
    return extensions


# Words a plain title-casing gets wrong ("Oauth2", "Sdk", "Openclasp", "Apikey").
_WORDS = {
    "oauth2": "OAuth2",
    "sdk": "SDK",
    "openclasp": "OpenClasp",
    "apikey": "API Key",
    "jku": "JKU",
    "by": "by",
}


def display_title(name: str) -> str:
    """A variant's name as the words of its card name: `guarded-oauth2` -> `Guarded OAuth2`,
    `sdk-built` -> `SDK Built`, `openclasp-forged` -> `OpenClasp Forged`."""
    return " ".join(_WORDS.get(word, word.capitalize()) for word in name.split("-") if word)


def _identity(variant: Variant, urls: Urls) -> dict[str, Any]:
    if variant.hostile:
        return {
            "name": content.hostile_name(),
            "description": f"{content.MARKUP} {content.ANSI} {content.CONTROL} {content.BIDI}",
            "provider": {
                "organization": f"{content.MARKUP} {content.BIDI}",
                "url": urls.base,
                "employees": content.BIG_INT,
            },
        }
    title = display_title(variant.name)
    return {
        "name": f"Stonework Books ({title})",
        "description": f"Demo reference agent '{variant.name}': {variant.description}.",
        "provider": {"organization": "Stonework Analytics (demo)", "url": urls.base},
    }


def card(
    variant: Variant, urls: Urls, generation: int, extensions: list[Any], skills: list[dict[str, Any]]
) -> dict[str, Any]:
    """The unsigned card of one state, in the variant's layout, declaring `skills`."""
    ident = _identity(variant, urls)
    caps = {"streaming": False, "pushNotifications": False, "extensions": extensions}
    modes = {
        "defaultInputModes": list(content.DEFAULT_INPUT_MODES),
        "defaultOutputModes": list(content.DEFAULT_OUTPUT_MODES),
    }
    if variant.layout == "v0.3":
        sec = copy.deepcopy(content.SECURITY_V03)
        return {
            "protocolVersion": "0.3.0",
            "name": ident["name"],
            "description": ident["description"],
            "url": urls.jsonrpc,
            "preferredTransport": "JSONRPC",
            "provider": ident["provider"],
            "version": content.card_version(generation),
            "capabilities": caps,
            "securitySchemes": sec["schemes"],
            "security": sec["requirements"],
            **modes,
            "skills": skills,
        }
    sec = copy.deepcopy(content.SECURITY_V1)
    if variant.guard in ("bearer", "oauth2"):
        sec = content.guarded_security(variant.guard, urls.base + TOKEN_PATH)
    out = {
        "name": ident["name"],
        "description": ident["description"],
        "supportedInterfaces": [
            {"url": urls.jsonrpc, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ],
        "provider": ident["provider"],
        "version": content.card_version(generation),
    }
    if variant.openclasp:
        out["documentationUrl"] = openclasp_site.urls(urls.base, variant.name).public_card
    out.update(
        {
            "capabilities": caps,
            "securitySchemes": sec["schemes"],
            "securityRequirements": sec["requirements"],
            **modes,
            "skills": skills,
        }
    )
    return out


def _sign_card(variant: Variant, doc: dict[str, Any], urls: Urls, key: CardKey) -> dict[str, Any]:
    if variant.openclasp:
        return {**doc, "signatures": []}
    if not variant.signed:
        return doc
    signed = signatures.sign_card(doc, key.key, kid=key.kid, jku=urls.jwks)
    if variant.stacks_agree:
        signed = _sign_for_sdks(signed, key, urls)
    if variant.forge_signature:
        signed = {**signed, "description": signed["description"] + " (edited after signing)"}
    return signed


def _sign_for_sdks(signed: dict[str, Any], key: CardKey, urls: Urls) -> dict[str, Any]:
    """The served-form signature, plus one over each official SDK's payload form whose bytes differ
    from every form signed so far, so that a client following A2A section 8.4 and both official
    SDKs' verifiers all accept the card (`card.signature.accepted_by`). The SDKs drop members the
    card means (an API key requirement with no scopes, `{"list": []}`, is an empty they drop), so
    serving only their form would change what the card declares."""
    done = {signatures.payload_bytes(signed, "served")}
    for form in ("sdk-normalized", "a2a-js"):
        payload = signatures.payload_bytes(signed, form)
        if payload not in done:
            signed = signatures.sign_card(signed, key.key, kid=key.kid, jku=urls.jwks, form=form)
            done.add(payload)
    return signed


def build(variant: Variant, urls: Urls, key: CardKey, provider: Provider, generation: int = 0) -> Documents:
    """Everything one agent serves for one state (`generation`) of its declaration."""
    if variant.hostile:
        skills = content.hostile_skills()
    elif variant.huge:
        skills = content.huge_skills()
    else:
        skills = content.skills(generation)
    skill_ids = [s["id"] for s in skills]
    files: dict[str, bytes] = {}
    terms_entries: list[dict[str, Any]] | None = None
    committed: tuple[Committed, ...] | None = None
    if variant.terms:
        terms_entries, committed, proposal_files = _terms(variant, urls, provider, skill_ids)
        files.update(proposal_files)
    uncommitted: tuple[Committed, ...] = ()
    if "fabricate" in variant.faults:
        uncommitted, extra = _uncommitted(urls, provider)
        files.update(extra)
    unsigned = card(variant, urls, generation, _extensions(variant, urls, terms_entries), skills)
    doc = _sign_card(variant, unsigned, urls, key)
    card_bytes = dumps(doc)
    card_paths: tuple[str, ...] = (CARD_PATH,)
    site = None
    if variant.signed and not variant.openclasp:
        files[JWKS_PATH] = dumps(key.jwks)
    if variant.reputation:
        files[REPUTATION_PATH] = dumps({"subject": doc["name"], "note": "demo pointer; nothing is measured"})
    if variant.openclasp:
        site = openclasp_site.build(
            variant, urls.base, urls.jsonrpc, doc, provider.platform, provider.stranger
        )
        files.update(site.files)
        card_paths = (CARD_PATH, site.a2a_card_path)
    return Documents(doc, card_bytes, committed, uncommitted, files, card_paths, site)
