"""Interop with the official A2A Python SDK: cards it signs and serves must verify, and say what
they leave unsigned.

The cards are signed by a2a-sdk's own `create_agent_card_signer` (PyJWT underneath) and served by
its own `create_agent_card_routes` on a real uvicorn on 127.0.0.1; the explorer fetches them
through its own HTTP client and verifies them. Older signers are reproduced from their published
algorithm with the SDK's own pieces (`_clean_empty`, `MessageToDict`, the v0.3 pydantic models,
PyJWT). Property tests then hold `explorer.core.card_forms` to the SDK byte for byte on generated
hostile cards, and check that every member reported unsigned really is outside the payload.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import jwt
import pydantic
import pytest
import uvicorn
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as v03
from a2a.server.routes.agent_card_routes import create_agent_card_routes
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.signing import _canonicalize_agent_card, _clean_empty, create_agent_card_signer
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jwt import api_jws
from starlette.applications import Starlette

from explorer.core.canonical import canonicalize
from explorer.core.card import INTERVIEW_URI, TERMS_URI, parse_card
from explorer.core.pointer import parse as parse_pointer
from explorer.core.signatures import (
    FormError,
    generate_key,
    payload_bytes,
    public_jwks,
    unsigned_members,
    verify_card,
)
from explorer.core.strict_json import parse as strict_parse
from explorer.net.http import fetch_once
from tests.support.strategies import json_scalars, json_values

DIGEST = "sha256:078355014bf9a87852e4ca580395ffe123920ae243700c7e8dc5a2853f85d54d"
pytestmark = [
    pytest.mark.slow,  # imports a2a-sdk and fuzzes the signature forms against it
    pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning"),
]


# --- cards built and signed with the SDK ------------------------------------------------------


def _struct(values: dict[str, Any]) -> Struct:
    params = Struct()
    params.update(values)
    return params


def sdk_card(name: str, *, v03_too: bool = False, params: dict[str, Any] | None = None) -> AgentCard:
    interfaces = [
        AgentInterface(url="http://127.0.0.1/a2a", protocol_binding="JSONRPC", protocol_version="1.0")
    ]
    if v03_too:
        interfaces.append(
            AgentInterface(url="http://127.0.0.1/a2a/v03", protocol_binding="JSONRPC", protocol_version="0.3")
        )
    terms = {
        "sow_spec": "0.18.0-draft",
        "proposals": [
            {"url": "http://127.0.0.1/terms/p.sow.json", "digest": DIGEST, "offering": "reconcile-statement"}
        ],
    }
    card = AgentCard(
        name=name,
        description="Reconciles statements against ledgers.",
        version="1.4.0",
        supported_interfaces=interfaces,
        provider=AgentProvider(organization="Stonework", url="https://stonework.example"),
        capabilities=AgentCapabilities(
            streaming=False,
            extensions=[
                AgentExtension(uri=INTERVIEW_URI, required=False, description="The five questions"),
                AgentExtension(uri=TERMS_URI, params=_struct(params if params is not None else terms)),
            ],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["application/json"],
        skills=[
            AgentSkill(
                id="reconcile-statement",
                name="Reconcile",
                description="Matches lines.",
                tags=["accounting"],
                input_modes=["text/csv"],
            )
        ],
    )
    if v03_too:
        card.security_schemes["apiKey"].CopyFrom(
            SecurityScheme(api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-Api-Key"))
        )
        card.security_requirements.append(SecurityRequirement(schemes={"apiKey": StringList(list=[])}))
    return card


def sdk_sign(card: AgentCard, alg: str, kid: str) -> tuple[AgentCard, dict[str, Any]]:
    key = generate_key(alg, kid=kid)
    # The SDK's documented header shape; PyJWT writes "jku": null for the None.
    header = {"alg": alg, "kid": kid, "jku": None, "typ": "JOSE"}
    signer = create_agent_card_signer(key.as_pem(private=True), header)  # type: ignore[arg-type]
    return signer(card), public_jwks(key)


# Per case: the alg, and the form expected to match. A v1.0-only card without empties is served
# exactly as the SDK signs it, so both forms give the same bytes and the spec-literal name is used.
CASES: dict[str, dict[str, Any]] = {
    "v10": {"alg": "ES256", "card": lambda: sdk_card("Steady"), "form": "served"},
    "merged": {"alg": "EdDSA", "card": lambda: sdk_card("Merged", v03_too=True), "form": "sdk-normalized"},
    "empties": {
        "alg": "RS256",
        "card": lambda: sdk_card(
            "Empties",
            params={
                "sow_spec": "x",
                "note": "",
                "tags": [],
                "extra": {},
                "nested": {"a": {"b": ""}, "keep": [0, "", []]},
                "nothing": None,
            },
        ),
        "form": "sdk-normalized",
    },
    "numbers": {
        "alg": "ES256",
        "card": lambda: sdk_card(
            "Zürich ☃ 代理",
            params={
                "big": 1e21,
                "tenth": 0.1,
                "negzero": -0.0,
                "tiny": 1e-7,
                "int": 7,
                "huge": 2.0**60,
                "text": "naïve ✓",
            },
        ),
        "form": "served",
    },
}


# --- a real SDK server on loopback ------------------------------------------------------------


class LoopbackServer:
    """An ASGI app served by uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, tuple[dict[str, Any], dict[str, Any], str]]]:
    """Per case: (the card as the SDK served it, the public JWKS, the alg)."""
    routes = []
    keys: dict[str, tuple[dict[str, Any], str]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.getLogger("a2a").setLevel(logging.ERROR)
        for name, case in CASES.items():
            signed, jwks = sdk_sign(case["card"](), case["alg"], f"{name}-key")
            routes += create_agent_card_routes(signed, card_url=f"/{name}/.well-known/agent-card.json")
            keys[name] = (jwks, case["alg"])
    with LoopbackServer(Starlette(routes=routes)) as base:
        out = {}
        for name, (jwks, alg) in keys.items():
            exchange = fetch_once(f"{base}/{name}/.well-known/agent-card.json")
            assert exchange.status == 200, exchange.error
            out[name] = (strict_parse(exchange.response_body), jwks, alg)
        yield out


# --- SDK-signed, SDK-served cards -------------------------------------------------------------


@pytest.mark.parametrize("name", list(CASES))
def test_sdk_signed_cards_verify(served: Any, name: str) -> None:
    doc, jwks, alg = served[name]
    report = verify_card(doc, jwks)
    form = CASES[name]["form"]
    assert (report.status, report.form, report.alg, report.kid) == ("verified", form, alg, f"{name}-key")
    if form == "served":
        assert payload_bytes(doc, "served") == payload_bytes(doc, "sdk-normalized")
        assert report.unsigned_members == ()
    # The SDK's own verifier agrees that this is the card it signed.
    key = jwt.PyJWK(jwks["keys"][0])
    from a2a.utils.signing import create_signature_verifier

    create_signature_verifier(lambda _kid, _jku: key, [alg])(parse_agent_card(copy.deepcopy(doc)))


@pytest.mark.parametrize("name", list(CASES))
def test_tampered_sdk_cards_are_invalid(served: Any, name: str) -> None:
    doc, jwks, _ = served[name]
    tampered = copy.deepcopy(doc)
    tampered["skills"][0]["description"] = "Matches lines, and anything else you like."
    report = verify_card(tampered, jwks)
    assert report.status == "invalid"
    assert "does not verify" in report.detail


def test_a_merged_card_leaves_its_v03_members_unsigned(served: Any) -> None:
    doc, jwks, _ = served["merged"]
    assert parse_card(doc).layout == "mixed"
    report = verify_card(doc, jwks)
    assert report.unsigned_members == (
        "/capabilities/extensions/0/required",
        "/capabilities/extensions/1/required",
        "/preferredTransport",
        "/protocolVersion",
        "/security",
        # A requirement without scopes is {"schemes": {"apiKey": {}}}: all empties, so dropped.
        "/securityRequirements",
        "/securitySchemes/apiKey/apiKeySecurityScheme",
        # The served scheme reads the same without it (its apiKeySecurityScheme says the same).
        "/securitySchemes/apiKey/type",
        "/url",
    )
    # Which is why it matters: the v0.3 endpoint can be changed without breaking the signature.
    moved = {**doc, "url": "https://attacker.example/a2a"}
    assert verify_card(moved, jwks).status == "verified"
    assert "/url" in verify_card(moved, jwks).unsigned_members


def test_empties_inside_params_are_unsigned(served: Any) -> None:
    doc, jwks, _ = served["empties"]
    params = "/capabilities/extensions/1/params"
    assert verify_card(doc, jwks).unsigned_members == (
        f"{params}/extra",
        f"{params}/nested/a",
        f"{params}/nested/keep/1",
        f"{params}/nested/keep/2",
        f"{params}/note",
        f"{params}/nothing",
        f"{params}/tags",
    )


def test_numbers_and_non_ascii_survive_the_round_trip(served: Any) -> None:
    doc, jwks, _ = served["numbers"]
    params = doc["capabilities"]["extensions"][1]["params"]
    assert params["big"] == 1e21 and params["tiny"] == 1e-7 and params["int"] == 7.0
    assert doc["name"] == "Zürich ☃ 代理"
    report = verify_card(doc, jwks)
    assert report.status == "verified"
    assert report.unsigned_members == ()
    # The SDK wrote 7 as 7.0 (a protobuf double); JCS reads both as the same number.
    assert payload_bytes(doc, "served") == payload_bytes(doc, "sdk-normalized")


# --- other signers -----------------------------------------------------------------------------


def _resign(doc: dict[str, Any], payload: bytes, alg: str = "ES256") -> tuple[dict[str, Any], dict[str, Any]]:
    key = generate_key(alg, kid="other-signer")
    token = api_jws.encode(
        payload=payload,
        key=key.as_pem(private=True),
        algorithm=alg,
        headers={"kid": "other-signer", "typ": "JOSE"},
    )
    protected, _, signature = token.split(".")
    return {**doc, "signatures": [{"protected": protected, "signature": signature}]}, public_jwks(key)


def test_a_spec_literal_signature_on_the_served_card_verifies_as_served(served: Any) -> None:
    doc, _, _ = served["merged"]
    unsigned = {k: v for k, v in doc.items() if k != "signatures"}
    resigned, jwks = _resign(doc, canonicalize(unsigned))
    report = verify_card(resigned, jwks)
    assert (report.status, report.form, report.unsigned_members) == ("verified", "served", ())


def test_a_legacy_sorted_signature_verifies_as_sdk_legacy_sorted(served: Any) -> None:
    """a2a-sdk 1.0.0-1.1.3: the same normalized dict, serialized by json.dumps(sort_keys=True)."""
    doc, _, _ = served["numbers"]
    normalized = _clean_empty(
        {k: v for k, v in MessageToDict(parse_agent_card(copy.deepcopy(doc))).items() if k != "signatures"}
    )
    payload = json.dumps(normalized, separators=(",", ":"), sort_keys=True).encode()
    resigned, jwks = _resign(doc, payload, "EdDSA")
    assert verify_card(resigned, jwks).form == "sdk-legacy-sorted"


def _v03_payload(doc: dict[str, Any]) -> bytes:
    """a2a-sdk 0.3.x `canonicalize_agent_card`, with the SDK's own v0.3 pydantic models."""
    model = v03.AgentCard.model_validate(doc)
    dumped = model.model_dump(exclude={"signatures"}, exclude_defaults=True, exclude_none=True, by_alias=True)
    return json.dumps(_clean_empty(dumped), separators=(",", ":"), sort_keys=True).encode()


def test_a_v03_sdk_signature_verifies_as_sdk_03() -> None:
    card = v03.AgentCard(
        name="Ältere",
        description="A 0.3 agent",
        version="0.9.0",
        url="http://127.0.0.1/a2a",
        capabilities=v03.AgentCapabilities(
            streaming=False,
            extensions=[v03.AgentExtension(uri=INTERVIEW_URI, required=False, params={"n": 1, "e": ""})],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[v03.AgentSkill(id="s", name="S", description="d", tags=["t"])],
        security_schemes={
            "k": v03.SecurityScheme(root=v03.APIKeySecurityScheme(in_=v03.In.header, name="X"))
        },
    )
    doc = card.model_dump(mode="json", exclude_none=True, by_alias=True)  # how a 0.3 SDK served it
    key = generate_key("ES256", kid="old")
    token = jwt.encode(
        payload=json.loads(_v03_payload(doc)),
        key=key.as_pem(private=True),
        algorithm="ES256",
        headers={"kid": "old", "typ": "JOSE"},
    )
    protected, _, signature = token.split(".")
    signed = {**doc, "signatures": [{"protected": protected, "signature": signature}]}
    report = verify_card(signed, public_jwks(key))
    assert (report.status, report.form) == ("verified", "sdk-0.3")
    assert report.unsigned_members == (
        "/capabilities/extensions/0/params/e",
        "/preferredTransport",
        "/protocolVersion",
    )


# --- the emulation, byte for byte, on generated cards ------------------------------------------

scalars = json_scalars(
    integers=st.integers(-(10**6), 10**6),
    floats=st.floats(allow_nan=False, allow_infinity=False, width=32),
    text=st.text(max_size=3),
    also=st.sampled_from(["", "JSONRPC", "apiKey", "0.3.0", "true", "é☃"]),
)
anything = json_values(
    scalars, keys=st.sampled_from(["a", "", "list", "in", "type", "url"]), list_size=3, max_leaves=6
)


def field(good: Any) -> Any:
    """Mostly a value of the right shape, sometimes anything at all."""
    return st.one_of(good, good, good, anything)


text = st.text(max_size=4)
texts = st.lists(text, max_size=2)
interface = st.fixed_dictionaries(
    {},
    optional={
        "url": field(text),
        "protocolBinding": field(st.just("JSONRPC")),
        "transport": field(text),
        "protocolVersion": field(st.sampled_from(["1.0", "0.3"])),
        "tenant": field(text),
        "extra": anything,
    },
)
extension = st.fixed_dictionaries(
    {},
    optional={
        "uri": field(text),
        "required": field(st.booleans()),
        "description": field(text),
        "params": field(st.dictionaries(st.text(max_size=2), anything, max_size=3)),
    },
)
scheme = st.fixed_dictionaries(
    {},
    optional={
        "type": field(st.sampled_from(["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS", "x"])),
        "in": field(st.sampled_from(["header", "query"])),
        "name": field(text),
        "scheme": field(text),
        "description": field(text),
        "openIdConnectUrl": field(text),
        "apiKeySecurityScheme": field(st.fixed_dictionaries({}, optional={"name": text, "location": text})),
    },
)
requirement = st.dictionaries(st.sampled_from(["k", "j"]), field(texts), max_size=2)
skill = st.fixed_dictionaries(
    {},
    optional={
        "id": field(text),
        "name": field(text),
        "description": field(text),
        "tags": field(texts),
        "examples": field(texts),
        "inputModes": field(texts),
        "security": field(st.lists(requirement, max_size=2)),
    },
)
cards = st.fixed_dictionaries(
    {},
    optional={
        "name": field(text),
        "description": field(text),
        "version": field(text),
        "url": field(text),
        "supportedInterfaces": field(st.lists(interface, max_size=2)),
        "preferredTransport": field(st.sampled_from(["JSONRPC", "GRPC"])),
        "protocolVersion": field(st.sampled_from(["0.3.0", "0.3"])),
        "additionalInterfaces": field(st.lists(interface, max_size=2)),
        "supportsAuthenticatedExtendedCard": field(st.booleans()),
        "capabilities": field(
            st.fixed_dictionaries(
                {},
                optional={
                    "streaming": field(st.booleans()),
                    "extendedAgentCard": field(st.booleans()),
                    "extensions": field(st.lists(extension, max_size=2)),
                },
            )
        ),
        "securitySchemes": field(st.dictionaries(st.sampled_from(["k", "j"]), scheme, max_size=2)),
        "security": field(st.lists(requirement, max_size=2)),
        "skills": field(st.lists(skill, max_size=2)),
        "defaultInputModes": field(texts),
        "extra": anything,
    },
)
# INTERVIEW_EXPLORER_FUZZ=5000 runs a longer hunt locally; CI keeps the suite quick.
EXAMPLES = settings(
    max_examples=int(os.environ.get("INTERVIEW_EXPLORER_FUZZ", "120")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def _quiet_sdk(call: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.getLogger("a2a").setLevel(logging.ERROR)
        return call()


@EXAMPLES
@given(cards)
def test_sdk_normalized_matches_the_sdk_byte_for_byte(doc: dict[str, Any]) -> None:
    doc = json.loads(json.dumps(doc))
    try:
        theirs: bytes | None = _quiet_sdk(
            lambda: _canonicalize_agent_card(parse_agent_card(copy.deepcopy(doc))).encode()
        )
    except Exception:  # the SDK refuses the card (ParseError, or a TypeError it lets escape)
        theirs = None
    try:
        mine: bytes | None = payload_bytes(doc, "sdk-normalized")
    except FormError:
        mine = None
    assert mine == theirs


@EXAMPLES
@given(cards)
def test_sdk_03_matches_the_v03_models_byte_for_byte(doc: dict[str, Any]) -> None:
    doc = json.loads(json.dumps(doc))
    try:
        theirs = _v03_payload(doc)
    except pydantic.ValidationError:
        return  # the 0.3 SDK could not have read it; the explorer is lenient there
    assert payload_bytes(doc, "sdk-0.3") == theirs


def _string_leaves(doc: Any, base: str = "") -> Iterator[tuple[str, str]]:
    from explorer.core.pointer import members

    for pointer, value in members(doc):
        if isinstance(value, str) and value and not pointer.startswith("/signatures"):
            yield base + pointer, value


def _set(doc: Any, pointer: str, value: Any) -> Any:
    out = copy.deepcopy(doc)
    *parents, last = parse_pointer(pointer)
    node = out
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node[token]
    node[int(last) if isinstance(node, list) else last] = value
    return out


@EXAMPLES
@given(cards, st.sampled_from(["sdk-normalized", "sdk-0.3"]))
# Each v0.3 additionalInterfaces entry becomes an interface even when none of its values is signed.
@example({"name": "", "url": "0", "additionalInterfaces": [{}]}, "sdk-normalized")
# A scheme that already holds its type's v1.0 member reads the same without the type.
@example(
    {"securitySchemes": {"k": {"name": "0", "apiKeySecurityScheme": {"name": "0"}, "type": "apiKey"}}},
    "sdk-normalized",
)
def test_unsigned_members_are_exactly_the_members_outside_the_payload(doc: dict[str, Any], form: str) -> None:
    doc = json.loads(json.dumps(doc))
    try:
        payload = payload_bytes(doc, form)
    except FormError:
        return
    unsigned = unsigned_members(doc, form)
    for pointer in unsigned:  # nulling an unsigned member never silently changes the signed bytes
        if pointer == "/supportsAuthenticatedExtendedCard":
            continue  # a non-boolean flag: only its truthiness is signed, so it is reported unsigned
        try:
            assert payload_bytes(_set(doc, pointer, None), form) == payload, pointer
        except FormError:
            pass  # null is not allowed there: the card no longer reads, which is not silent
    for pointer, value in _string_leaves(doc):  # changing a signed string always does
        if any(pointer == u or pointer.startswith(u + "/") for u in unsigned):
            continue
        try:
            changed = payload_bytes(_set(doc, pointer, value + "x"), form)
        except FormError:
            continue  # e.g. an enum value that no longer parses: not a silent change either
        assert changed != payload, pointer
