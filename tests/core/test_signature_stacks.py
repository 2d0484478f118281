"""`card.signature.accepted_by` held to the client stacks' own verifiers, card by card.

For every card here, the explorer's `accepted_by` must name exactly the stacks whose real verifier
accepts it: `a2a-python` is a2a-sdk's own `create_signature_verifier` on the card as its client
reads it (`parse_agent_card`); `a2a-js` is @a2a-js/sdk's own `verifyAgentCardSignature`, run in
node by tests/interop/js_agent/verify.mjs (installed as tests/core/test_js_interop.py installs the
agent: `npm ci` into a cache directory keyed by the pinned lock); `a2a-spec`, which has no
official implementation, is A2A section 8.4 read literally with code that is not the explorer's:
the `jcs` package's RFC 8785 bytes of the served card without `signatures`, checked by PyJWT.

The cards are the reference agents' own, fetched over loopback from the running fleet (every one
accepted by all three, except `legacy`, kept to show the disagreement), and crafted ones signed
by the explorer, by a2a-sdk's own signer and by hand: a served-form signature over a default
`"required": false`, an SDK signature on a card that still serves it, a member the v1.0 message
lacks, a value only the JS SDK coerces, a header without `typ`, an `Ed25519` signature, a forged
and a keyless one. Where the stacks disagree, the `fix` the explorer gives is applied and the real
verifiers must then all accept the card.
"""

from __future__ import annotations

import base64
import copy
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jcs
import jwt
import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard
from a2a.utils.signing import SignatureVerificationError, create_agent_card_signer, create_signature_verifier
from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.algorithms import get_default_algorithms
from jwt.api_jwk import PyJWK

from explorer.core.card import INTERVIEW_URI, TERMS_URI
from explorer.core.signatures import ALLOWED_ALGS, STACKS, generate_key, public_jwks, sign_card, verify_card
from explorer.demo.fleet import Fleet
from explorer.net.http import fetch_once
from tests.core.test_js_interop import js_dir  # noqa: F401  (the fixture: the npm ci install)
from tests.support.paths import INTEROP

ALGORITHMS = list(ALLOWED_ALGS)  # the SDK verifier is given the explorer's own allow-list


# --- the stacks' own verifiers ----------------------------------------------------------------


def _keys_by_kid(jwks: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {key["kid"]: key for key in jwks.get("keys", []) if "kid" in key}


def python_sdk_accepts(card: dict[str, Any], jwks: dict[str, Any]) -> bool:
    """a2a-sdk's own verifier, on the card as its client parses it."""
    keys = _keys_by_kid(jwks)

    def key_provider(kid: str | None, _jku: str | None) -> PyJWK:
        if kid not in keys:
            raise jwt.exceptions.PyJWKError(f"no key with kid {kid}")
        return PyJWK(keys[kid])

    try:
        parsed = parse_agent_card(copy.deepcopy(card))
    except Exception:  # the SDK's client cannot even read it
        return False
    try:
        create_signature_verifier(key_provider, ALGORITHMS)(parsed)
    except SignatureVerificationError:
        return False
    return True


def spec_accepts(card: dict[str, Any], jwks: dict[str, Any]) -> bool:
    """A2A 8.4 to the letter: the `jcs` package's bytes of the served card without signatures,
    checked with PyJWT's algorithm objects (Ed25519 is RFC 9864's name for its EdDSA), any entry."""
    keys = _keys_by_kid(jwks)
    payload = jcs.canonicalize({k: v for k, v in card.items() if k != "signatures"})
    encoded = base64.urlsafe_b64encode(payload).rstrip(b"=")
    for entry in card.get("signatures") or []:
        try:
            header = json.loads(
                base64.urlsafe_b64decode(entry["protected"] + "=" * (-len(entry["protected"]) % 4))
            )
            algorithm = get_default_algorithms()["EdDSA" if header["alg"] == "Ed25519" else header["alg"]]
            key = algorithm.from_jwk(json.dumps(keys[header["kid"]]))
            signature = base64.urlsafe_b64decode(entry["signature"] + "=" * (-len(entry["signature"]) % 4))
            if algorithm.verify(entry["protected"].encode() + b"." + encoded, key, signature):
                return True
        except (jwt.exceptions.PyJWTError, KeyError, ValueError):
            continue
    return False


class JsVerifier:
    """`node verify.mjs`, one card per line."""

    def __init__(self, where: Path) -> None:
        shutil.copyfile(INTEROP / "js_agent" / "verify.mjs", where / "verify.mjs")
        node = shutil.which("node")
        assert node is not None
        self.proc = subprocess.Popen(
            [node, "verify.mjs"], cwd=where, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def accepts(self, card: dict[str, Any], jwks: dict[str, Any]) -> bool:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"card": card, "jwks": jwks}) + "\n")
        self.proc.stdin.flush()
        return bool(json.loads(self.proc.stdout.readline())["accepted"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def js_verifier(js_dir: Path) -> Iterator[JsVerifier]:  # noqa: F811
    verifier = JsVerifier(js_dir)
    try:
        yield verifier
    finally:
        verifier.close()


def real_stacks(card: dict[str, Any], jwks: dict[str, Any], js: JsVerifier) -> list[str]:
    said = {
        "a2a-spec": spec_accepts(card, jwks),
        "a2a-python": python_sdk_accepts(card, jwks),
        "a2a-js": js.accepts(card, jwks),
    }
    return [stack for stack in STACKS if said[stack]]


def explorer_stacks(card: dict[str, Any], jwks: dict[str, Any]) -> list[str]:
    return list(verify_card(card, jwks).accepted_by)


# --- crafted cards ------------------------------------------------------------------------------


def base_card(**changes: Any) -> dict[str, Any]:
    card: dict[str, Any] = {
        "name": "Stonework Books (crafted)",
        "description": "Reconciles statements against ledgers.",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:9/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "provider": {"organization": "Stonework", "url": "https://stonework.example"},
        "version": "1.4.0",
        "capabilities": {
            "streaming": True,
            "extensions": [
                {"uri": INTERVIEW_URI, "description": "The five questions", "required": False},
                {"uri": TERMS_URI, "params": {"sow_spec": "0.18.0-draft"}},
            ],
        },
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {"id": "reconcile", "name": "Reconcile", "description": "Matches lines.", "tags": ["books"]}
        ],
    }
    card.update(changes)
    return card


def _sign_by_hand(card: dict[str, Any], key: Any, header: dict[str, Any]) -> dict[str, Any]:
    """A served-form signature whose protected header is exactly `header` (no typ added)."""
    from joserfc import jws

    from explorer.core.signatures import _registry, payload_bytes

    token = jws.serialize_compact(header, payload_bytes(card, "served"), key, registry=_registry())
    protected, _, signature = token.split(".")
    return {**card, "signatures": [{"protected": protected, "signature": signature}]}


def _sdk_signed(card: dict[str, Any], key: Any, kid: str) -> dict[str, Any]:
    """The card signed by a2a-sdk's own signer and served the way its card route serves it."""
    message = ParseDict({k: v for k, v in card.items() if k != "signatures"}, AgentCard())
    signer = create_agent_card_signer(
        signing_key=key.as_pem(private=True),
        protected_header={"kid": kid, "alg": "ES256", "jku": None, "typ": "JOSE"},  # PyJWT writes jku: null
    )
    return MessageToDict(signer(message))


def crafted_cards() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    key = generate_key("ES256", kid="crafted-1")
    jwks = public_jwks(key)
    ed = generate_key("Ed25519", kid="crafted-ed")
    card = base_card()
    sdk_served = _sdk_signed(card, key, "crafted-1")
    with_default = copy.deepcopy(sdk_served)
    with_default["capabilities"]["extensions"][0]["required"] = False
    extra = base_card(x_extra={"kept": "aside"})
    coerced = base_card(capabilities={"streaming": "yes", "extensions": []})
    return [
        ("served-with-default", sign_card(card, key, kid="crafted-1"), jwks),
        ("served-without-default", sign_card(_without_required(card), key, kid="crafted-1"), jwks),
        ("sdk-signed-as-served", sdk_served, jwks),
        ("sdk-signed-default-added", with_default, jwks),
        ("sdk-form-unknown-member", sign_card(extra, key, kid="crafted-1", form="sdk-normalized"), jwks),
        ("js-form-coerced", sign_card(coerced, key, kid="crafted-1", form="a2a-js"), jwks),
        ("no-typ", _sign_by_hand(_without_required(card), key, {"alg": "ES256", "kid": "crafted-1"}), jwks),
        ("ed25519", sign_card(_without_required(card), ed, kid="crafted-ed", alg="Ed25519"), public_jwks(ed)),
        ("forged", {**sign_card(card, key, kid="crafted-1"), "name": "edited after signing"}, jwks),
        ("no-key", sign_card(card, key, kid="crafted-1"), {"keys": []}),
    ]


def _without_required(card: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(card)
    for entry in out["capabilities"]["extensions"]:
        entry.pop("required", None)
    return out


CRAFTED = crafted_cards()


@pytest.mark.parametrize(("name", "card", "jwks"), CRAFTED, ids=[c[0] for c in CRAFTED])
def test_python_and_spec_verifiers_agree_with_accepted_by(
    name: str, card: dict[str, Any], jwks: dict[str, Any]
) -> None:
    """The Python SDK's own verifier and a literal 8.4 verifier say what `accepted_by` says."""
    mine = explorer_stacks(card, jwks)
    real = {"a2a-spec": spec_accepts(card, jwks), "a2a-python": python_sdk_accepts(card, jwks)}
    assert {s: s in mine for s in real} == real, name


def test_the_crafted_cards_cover_every_kind_of_answer() -> None:
    said = {name: explorer_stacks(card, jwks) for name, card, jwks in CRAFTED}
    assert said["served-with-default"] == ["a2a-spec"]
    assert said["served-without-default"] == list(STACKS)
    assert said["sdk-signed-as-served"] == list(STACKS)
    assert said["sdk-signed-default-added"] == ["a2a-python", "a2a-js"]
    assert said["sdk-form-unknown-member"] == ["a2a-python", "a2a-js"]
    assert said["js-form-coerced"] == ["a2a-js"]
    assert said["no-typ"] == ["a2a-spec", "a2a-python"]
    assert said["ed25519"] == ["a2a-spec", "a2a-js"]
    assert said["forged"] == said["no-key"] == []


def test_a_default_false_is_named_with_a_fix_that_the_sdk_verifier_confirms() -> None:
    """The SDK signed; the card still serves `"required": false`: the spec stack rejects it, the
    member is named, and serving the card without it makes a2a-sdk's verifier and a literal 8.4
    verifier both accept, with the signature it already has."""
    card, jwks = next((c, j) for n, c, j in CRAFTED if n == "sdk-signed-default-added")
    report = verify_card(card, jwks)
    assert [(d.stack, d.member) for d in report.disagreements] == [
        ("a2a-spec", "/capabilities/extensions/0/required")
    ]
    only = report.disagreements[0]
    assert "false" in only.detail and "serve the card without" in only.fix and "already covers" in only.fix
    fixed = copy.deepcopy(card)
    del fixed["capabilities"]["extensions"][0]["required"]
    assert spec_accepts(fixed, jwks) and python_sdk_accepts(fixed, jwks)
    assert list(verify_card(fixed, jwks).accepted_by) == list(STACKS)
    assert verify_card(fixed, jwks).disagreements == ()


def test_a_served_signature_over_a_default_says_sign_again() -> None:
    card, jwks = next((c, j) for n, c, j in CRAFTED if n == "served-with-default")
    report = verify_card(card, jwks)
    assert {(d.stack, d.member) for d in report.disagreements} == {
        ("a2a-python", "/capabilities/extensions/0/required"),
        ("a2a-js", "/capabilities/extensions/0/required"),
    }
    assert all("sign it again" in d.fix for d in report.disagreements)
    assert report.to_json()["accepted_by"] == ["a2a-spec"]
    assert report.to_json()["disagreements"][0]["stack"] == "a2a-python"


def test_a_header_the_js_sdk_refuses_points_at_the_signature() -> None:
    card, jwks = next((c, j) for n, c, j in CRAFTED if n == "no-typ")
    (only,) = verify_card(card, jwks).disagreements
    assert (only.stack, only.member) == ("a2a-js", "/signatures/0")
    assert "typ" in only.detail and "typ" in only.fix


# --- with node: the JS SDK's own verifier -------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("name", "card", "jwks"), CRAFTED, ids=[c[0] for c in CRAFTED])
def test_every_real_verifier_agrees_with_accepted_by_on_crafted_cards(
    name: str, card: dict[str, Any], jwks: dict[str, Any], js_verifier: JsVerifier
) -> None:
    assert explorer_stacks(card, jwks) == real_stacks(card, jwks, js_verifier), name


@pytest.mark.slow
def test_the_reference_agents_cards_are_accepted_by_every_real_verifier_but_legacy(
    fleet: Fleet, js_verifier: JsVerifier
) -> None:
    """Each signed reference card, fetched over loopback as served: the explorer's accepted_by is
    what the three verifiers say, and that is every stack, except for `legacy`."""
    checked = 0
    for name, agent in fleet.agents.items():
        if not agent.variant.signed or agent.variant.forge_signature or agent.variant.huge:
            continue
        card = json.loads(fetch_once(agent.card_url).response_body)
        jwks = agent.jwks
        real = real_stacks(card, jwks, js_verifier)
        assert explorer_stacks(card, jwks) == real, name
        if name == "legacy":
            assert real == ["a2a-spec"]
        else:
            assert real == list(STACKS), name
        checked += 1
    assert checked >= 25


@pytest.mark.slow
def test_the_legacy_agents_fix_is_what_the_real_verifiers_need(fleet: Fleet, js_verifier: JsVerifier) -> None:
    """`legacy`'s disagreements say to add a signature over each SDK's form; doing exactly that
    makes every real verifier accept the card."""
    agent = fleet.agents["legacy"]
    card = json.loads(fetch_once(agent.card_url).response_body)
    report = verify_card(card, agent.jwks)
    assert {d.stack for d in report.disagreements} == {"a2a-python", "a2a-js"}
    members = {d.member for d in report.disagreements if d.stack == "a2a-js"}
    assert {"/url", "/preferredTransport", "/protocolVersion"} <= members
    assert all("add a second signature over the" in d.fix for d in report.disagreements)
    key = generate_key("ES256", kid="legacy-fixer")
    jwks = {"keys": [*agent.jwks["keys"], *public_jwks(key)["keys"]]}
    for form in ("sdk-normalized", "a2a-js"):
        card = sign_card(card, key, kid="legacy-fixer", form=form)
    assert real_stacks(card, jwks, js_verifier) == list(STACKS)
    assert explorer_stacks(card, jwks) == list(STACKS)


# --- what the card command, verify and the TUI header say ---------------------------------------


def _run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from explorer.cli import main

    code = main(list(args))
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_card_verify_and_the_header_say_which_stacks_accept(
    fleet: Fleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over loopback: `card` and `verify` print the accepting stacks, and for `legacy` the members
    and the fix; the TUI header says, within 80 columns, who rejects it; `steady` gets no note."""
    from explorer.core.view import ReportView
    from explorer.tui.widgets.header import InterviewHeader

    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [k for a in fleet.agents.values() for k in a.jwks.get("keys", [])]}))
    legacy, steady = fleet.agents["legacy"].card_url, fleet.agents["steady"].card_url

    code, out = _run_cli(capsys, "card", legacy, "--keys", str(keys))
    assert code == 0
    assert "accepted by: a2a-spec; rejected by: a2a-python, a2a-js" in out
    assert "a2a-js: /url is not a member of the v1.0 AgentCard message, so the JS SDK ignores it" in out
    assert "fix for a2a-python: add a second signature over the sdk-normalized payload" in out

    code, out = _run_cli(capsys, "verify", steady, "--keys", str(keys), "--no-history")
    assert code == 0
    assert "  accepted by: a2a-spec, a2a-python, a2a-js (every client stack)" in out.splitlines()

    code, out = _run_cli(capsys, "verify", legacy, "--keys", str(keys), "--no-history", "--json")
    report = json.loads(out)
    assert report["card"]["signature"]["accepted_by"] == ["a2a-spec"]
    header = InterviewHeader(ReportView.of(report)).render_header(80).plain
    assert "signature rejected by a2a-python, a2a-js (accepted by a2a-spec)" in " ".join(header.split())
    code, out = _run_cli(capsys, "verify", steady, "--keys", str(keys), "--no-history", "--json")
    assert "rejected by" not in InterviewHeader(ReportView.of(json.loads(out))).render_header(80).plain
