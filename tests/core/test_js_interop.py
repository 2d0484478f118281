"""Interop with the official A2A JavaScript SDK (@a2a-js/sdk): a correct agent built on it must
verify, and the `a2a-js` payload form must be the SDK's own signing payload byte for byte.

The agent in tests/interop/js_agent/ is built the documented way (typed card, the SDK's
`generateAgentCardSignature`, `agentCardHandler`, `jsonRpcHandler`, `DefaultRequestHandler`) with
the interview in front of the JSON-RPC handler. Its pinned dependencies are installed with
`npm ci` into a cache directory outside the repository (keyed by the lock file), so a plain
`pip install -e .` never needs node; these tests skip, saying why, only when node or npm is absent.
The explorer interviews it through its real command line over real loopback sockets: as a
v1.0-only agent, with the SDK's `legacyCompat` (which serves a v0.3 translation of the card to
clients that do not announce A2A-Version 1.0), and guarded by the bearer scheme its typed card
declares in ts-proto's oneof shape.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.core.card_forms.forms import payload_bytes, unsigned_members
from explorer.core.card_forms.tracked import FormError
from explorer.core.pointer import escape
from explorer.core.signatures import generate_key, public_jwks, sign_card, verify_card
from explorer.core.strict_json import parse as strict_parse
from explorer.net.http import Fetcher, Limits
from tests.support.paths import INTEROP

pytestmark = pytest.mark.slow  # installs node packages once, then runs node processes

AGENT_SOURCE = INTEROP / "js_agent"
NPM_TIMEOUT = 600
NODE, NPM = shutil.which("node"), shutil.which("npm")


def _cache_root() -> Path:
    configured = os.environ.get("INTERVIEW_EXPLORER_JS_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "interview-explorer" / "js-interop"


@pytest.fixture(scope="module")
def js_dir() -> Path:
    """A directory with the agent's sources and its `npm ci` install (reused while the lock is)."""
    if NODE is None or NPM is None:
        pytest.skip("node and npm are needed for the @a2a-js/sdk interop tests (not found on PATH)")
    lock = (AGENT_SOURCE / "package-lock.json").read_bytes()
    where = _cache_root() / hashlib.sha256(lock).hexdigest()[:16]
    where.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json", "agent.mjs", "canonicalize.mjs"):
        shutil.copyfile(AGENT_SOURCE / name, where / name)
    done = where / "node_modules" / ".interview-explorer-ci-done"
    if not done.exists():
        proc = subprocess.run(
            [NPM, "ci", "--no-audit", "--no-fund", "--prefer-offline"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
            check=False,
        )
        said = f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert proc.returncode == 0, f"npm ci failed in {where}:\n{said}"
        done.write_text("ok\n", encoding="utf-8")
    return where


class JsAgent:
    """`node agent.mjs` on 127.0.0.1, stopped when the block ends."""

    def __init__(self, where: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [str(NODE), "agent.mjs", "--seconds", "120", *args],
            cwd=where,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(30)
        if not line or not line[0].strip():
            self.stop()
            raise AssertionError(f"the JS agent did not start: {self.proc.stderr.read()[-2000:]}")  # type: ignore[union-attr]
        ready = json.loads(line[0])
        self.url: str = ready["url"]
        self.jwks: dict[str, Any] = ready["jwks"]
        self.guarded = False

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


TOKEN_ENV = {"JS_AGENT_TOKEN": "js-interop-token-7f3a"}
MODES = {"v1.0": [], "legacy-compat": ["--legacy"], "guarded": ["--guarded"]}


@pytest.fixture(params=list(MODES))
def agent(request: pytest.FixtureRequest, js_dir: Path) -> Iterator[JsAgent]:
    running = JsAgent(js_dir, *MODES[request.param], env=TOKEN_ENV)
    running.guarded = request.param == "guarded"
    try:
        yield running
    finally:
        running.stop()


def _verify(agent: JsAgent, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps(agent.jwks), encoding="utf-8")
    auth = ["--bearer", "env:JS_AGENT_TOKEN"] if agent.guarded else []
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "verify",
            "--json",
            "--no-history",
            "--keys",
            str(keys),
            *auth,
            agent.url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **TOKEN_ENV, "HOME": str(tmp_path)},
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_a_js_sdk_agent_is_conformant(agent: JsAgent, tmp_path: Path) -> None:
    code, report, stderr = _verify(agent, tmp_path)
    assert (code, report["verdict"]) == (0, "conformant"), stderr
    card = report["card"]
    # With legacyCompat the SDK serves the v1.0 card only to a client announcing A2A-Version 1.0.
    assert card["layout"] == "v1.0"
    assert card["signature"]["status"] == "verified"
    assert card["signature"]["form"] in ("sdk-normalized", "a2a-js")  # the same bytes for this card
    assert card["signature"]["alg"] == "ES256"
    # A card from another stack, checked against the v1.0 definition: the typed card's scheme in
    # ts-proto's oneof shape is the one member the definition does not have, and only a warning.
    assert card["problems"] == [
        {
            "code": "member_unknown",
            "member": "/securitySchemes/bearer/scheme",
            "layout": "v1.0",
            "detail": "/securitySchemes/bearer/scheme is not a member of the v1.0 Agent Card",
        }
    ]
    for name, question in report["questions"].items():
        statuses = {p["status"] for p in question.get("projections", [])}
        assert statuses <= {"match"}, (name, question)
    assert {p["name"]: p["outcome"] for p in report["probes"]} == {
        "undefined_method": "refused",
        "unmatched_selector": "refused",
        "valid_selector": "answered",
        "unactivated_call": "method_not_found",
        "unactivated_call_no_params": "method_not_found",
    }
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert errors == []
    # The typed card carries `securityRequirements: []`, `inputModes: []`, `tenant: ""` and its
    # scheme as ts-proto's `{scheme: {$case, value}}`: served, but outside the signed bytes (the
    # SDK's fromJSON reads no scheme from that shape), and the report says so per projection.
    # Guarded, the bearer token still reached the agent: the typed scheme was read as a bearer one.
    unsigned = {f["member"] for f in report["findings"] if f["code"] == "member_unsigned"}
    assert unsigned == {
        "/securitySchemes",
        "/securityRequirements",
        "/skills/1/inputModes",
        "/skills/1/outputModes",
    }


@pytest.mark.parametrize("misquote", [False, True], ids=["honest", "misquoting"])
def test_a_v03_only_js_agent_is_compared_with_the_card_it_serves_to_v03(
    js_dir: Path, tmp_path: Path, misquote: bool
) -> None:
    """Only a v0.3 JSON-RPC interface, legacyCompat on: the interview is asked in v0.3 and the
    agent answers about the v0.3 translation it serves to v0.3 clients (`/url`,
    `/preferredTransport`, `/protocolVersion`), while the signature is verified on the v1.0 card
    it serves to A2A-Version 1.0. Honest is conformant; a pointer in neither card is not."""
    agent = JsAgent(js_dir, "--v03-only", *(["--misquote"] if misquote else []))
    try:
        keys = tmp_path / "jwks.json"
        keys.write_text(json.dumps(agent.jwks), encoding="utf-8")
        out = tmp_path / "transcripts"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "explorer",
                "verify",
                "--json",
                "--no-history",
                "--keys",
                str(keys),
                "--transcripts",
                str(out),
                agent.url,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    finally:
        agent.stop()
    report = json.loads(proc.stdout)
    card = report["card"]
    assert (card["layout"], card["protocol_version"]) == ("v1.0", "0.3")  # the v0.3 interface is asked
    assert (card["compared_layout"], card["compared_served_to"]) == ("mixed", "0.3")
    assert card["compared_sha256"] != card["sha256"]
    assert (card["signature"]["status"], card["signature"]["form"]) == ("verified", "sdk-normalized")
    identity = [p["member"] for p in report["questions"]["identity"]["projections"]]
    assert identity[2:5] == ["/url", "/preferredTransport", "/protocolVersion"]
    errors = [(f["code"], f.get("member")) for f in report["findings"] if f["severity"] == "error"]
    if misquote:
        assert (proc.returncode, report["verdict"]) == (1, "nonconformant"), proc.stderr
        assert errors == [("pointer_unresolved", "/interfaceUrl")]
        detail = next(f["detail"] for f in report["findings"] if f["code"] == "pointer_unresolved")
        assert "A2A-Version 0.3 nor in the card fetched for its signatures" in detail
    else:
        assert (proc.returncode, report["verdict"]) == (0, "conformant"), proc.stderr
        assert errors == []
        for question in report["questions"].values():
            assert {p["status"] for p in question["projections"]} <= {"match"}
        # The v0.3 members are in no signed bytes, and the report says so per projection.
        unsigned = {f["member"] for f in report["findings"] if f["code"] == "member_unsigned"}
        assert unsigned == {"/url", "/preferredTransport", "/protocolVersion", "/securitySchemes"}
    # Both cards are recorded exchanges: the transcript re-verifies offline, under the same keys
    # (a reader's own; the keys a transcript records are said, never used), to the same report.
    (transcript,) = out.glob("*.json")
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "verify",
            "--json",
            "--offline",
            str(transcript),
            "--keys",
            str(keys),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    offline = json.loads(again.stdout)
    assert (again.returncode, offline["verdict"]) == (proc.returncode, report["verdict"])
    assert offline["card"] == card and offline["findings"] == report["findings"]


def test_a_tampered_js_signed_card_is_invalid(js_dir: Path) -> None:
    agent = JsAgent(js_dir)
    try:

        async def fetch() -> bytes:
            async with Fetcher(Limits()) as fetcher:
                ex = await fetcher.get(agent.url + "/.well-known/agent-card.json", purpose="card")
                return ex.response_body

        doc = strict_parse(asyncio.run(fetch()))
    finally:
        agent.stop()
    report = verify_card(doc, agent.jwks)
    assert (report.status, report.form) == ("verified", "sdk-normalized")
    assert payload_bytes(doc, "a2a-js") == payload_bytes(doc, "sdk-normalized")
    tampered = copy.deepcopy(doc)
    tampered["skills"][0]["description"] += "!"
    assert verify_card(tampered, agent.jwks).status == "invalid"


# --- the a2a-js form against the SDK's own canonicalizeAgentCard --------------------------------

_NAMES = (
    "name",
    "description",
    "version",
    "url",
    "protocolVersion",
    "preferredTransport",
    "security",
    "supportedInterfaces",
    "supported_interfaces",
    "protocolBinding",
    "protocol_binding",
    "tenant",
    "provider",
    "organization",
    "capabilities",
    "streaming",
    "pushNotifications",
    "extensions",
    "extendedAgentCard",
    "uri",
    "required",
    "params",
    "securitySchemes",
    "security_schemes",
    "securityRequirements",
    "schemes",
    "list",
    "httpAuthSecurityScheme",
    "apiKeySecurityScheme",
    "api_key_security_scheme",
    "oauth2SecurityScheme",
    "flows",
    "clientCredentials",
    "implicit",
    "tokenUrl",
    "scopes",
    "pkceRequired",
    "scheme",
    "location",
    "type",
    "skills",
    "id",
    "tags",
    "examples",
    "inputModes",
    "input_modes",
    "outputModes",
    "defaultInputModes",
    "iconUrl",
    "documentationUrl",
    "signatures",
    "protected",
    "signature",
    "header",
    "supportsAuthenticatedExtendedCard",
    "__proto__",
)
_SCALARS = ("", "x", "é日本", "\u2028", "0", True, False, 0, 1, -1.5, 1e21, 2**31, None)


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.45:
        return rng.choice(_SCALARS)
    if roll < 0.7:
        return [_value(rng, depth - 1) for _ in range(rng.randrange(4))]
    return {rng.choice(_NAMES): _value(rng, depth - 1) for _ in range(rng.randrange(5))}


def _card(rng: random.Random) -> dict[str, Any]:
    """A card shaped like a real one in places and hostile in others."""
    card: dict[str, Any] = {
        "name": "n",
        "supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC", "tenant": ""}],
        "capabilities": {"extensions": [{"uri": "x", "required": False, "params": {"a": 1, "b": []}}]},
        "skills": [{"id": "s", "tags": ["t"], "examples": []}],
        "securitySchemes": {"b": {"httpAuthSecurityScheme": {"scheme": "bearer"}}},
    }
    for _ in range(rng.randrange(6)):
        target: Any = card
        for _ in range(rng.randrange(3)):
            inner = [
                v
                for v in (target.values() if isinstance(target, dict) else target)
                if isinstance(v, (dict, list)) and v
            ]
            if not inner:
                break
            target = rng.choice(inner)
        if isinstance(target, dict):
            target[rng.choice(_NAMES)] = _value(rng, 3)
        elif target:
            target[rng.randrange(len(target))] = _value(rng, 3)
    return card


# Hand-written cards for what the generator reaches rarely: coercions, oneofs, snake_case,
# null where a message is expected, "__proto__" keys, an empty card.
_EDGE_CARDS: list[Any] = [
    {},
    {
        "name": 5,
        "version": True,
        "description": [1, None, [2, 3], {"a": 1}],
        "provider": "acme",
        "capabilities": {"streaming": "no", "pushNotifications": 0, "extendedAgentCard": {}},
    },
    {
        "name": "v03",
        "url": "http://x",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "security": [{"b": []}],
        "supportsAuthenticatedExtendedCard": True,
        "securitySchemes": {"b": {"type": "http", "scheme": "bearer"}},
    },
    {
        "supportedInterfaces": [{"protocol_binding": "GRPC", "protocolBinding": "JSONRPC"}],
        "securitySchemes": {
            "a": {"apiKeySecurityScheme": {"name": "k"}, "httpAuthSecurityScheme": {}},
            "b": {"http_auth_security_scheme": {"bearer_format": "JWT"}},
        },
    },
    {
        "skills": [{"id": "a", "tags": [None, 1, True]}],
        "securityRequirements": [{"schemes": {"a": None, "b": {"list": ["x", 2]}}}],
    },
    {"skills": [None]},
    {"signatures": [None], "name": "n"},
    {
        "securitySchemes": [{"mtlsSecurityScheme": {"description": "d"}}],
        "defaultInputModes": "text",
        "default_input_modes": ["a"],
    },
    {
        "securitySchemes": {
            "o": {
                "oauth2SecurityScheme": {
                    "flows": {
                        "client_credentials": {"tokenUrl": "t", "scopes": {"a": "b", "c": None, "d": 5}},
                        "implicit": {"authorizationUrl": "z"},
                    }
                }
            }
        }
    },
    {
        "name": "é日本\u2028",
        "description": "\u0001",
        "iconUrl": "",
        "documentationUrl": 7,
        "capabilities": {"extensions": [{"uri": "u", "params": [1, {"a": ""}], "required": 1}]},
    },
    {"capabilities": 5, "provider": [1], "skills": [5, "x", {"id": 1e21, "name": 0.1, "description": -0.0}]},
    {
        "name": "n",
        "securitySchemes": {
            "__proto__": {"mtlsSecurityScheme": {"description": "d"}},
            "b": {"mtlsSecurityScheme": {"description": "e"}},
        },
        "capabilities": {
            "extensions": [{"uri": "u", "params": {"__proto__": {"a": 1}, "k": {"__proto__": "x"}}}]
        },
    },
]


def _node_payloads(js_dir: Path, cards: list[Any]) -> list[dict[str, Any]]:
    text = "".join(json.dumps(card) + "\n" for card in cards)  # ASCII: U+2028 stays one line
    proc = subprocess.run(
        [str(NODE), "canonicalize.mjs"],
        cwd=js_dir,
        input=text,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=True,
    )
    return [json.loads(line) for line in proc.stdout.split("\n") if line]


def _ours(card: Any) -> str | None:
    try:
        return payload_bytes(card, "a2a-js").decode("utf-8")
    except FormError:
        return None


def test_a2a_js_form_is_the_sdk_payload_byte_for_byte(js_dir: Path) -> None:
    rng = random.Random(8785)
    cards = [*_EDGE_CARDS, *(_card(rng) for _ in range(600))]
    theirs = _node_payloads(js_dir, cards)
    assert len(theirs) == len(cards)
    applied = 0
    for card, js in zip(cards, theirs, strict=True):
        mine = _ours(card)
        # The form applies exactly when the SDK can canonicalize the card, and then it agrees.
        assert mine == js.get("payload"), (card, js)
        applied += mine is not None
    assert applied > 400  # most generated cards are readable: the comparison is not vacuous


def test_a_js_signed_card_with_v03_members_verifies_only_as_a2a_js(js_dir: Path) -> None:
    """a2a-sdk folds `security` and a true `supportsAuthenticatedExtendedCard` into the payload;
    the JS SDK drops them, so only the a2a-js form has the bytes, and it says they are unsigned."""
    card = {
        "name": "Mixed",
        "version": "1",
        "url": "http://127.0.0.1:1/rpc",
        "protocolVersion": "0.3.0",
        "supportedInterfaces": [{"url": "http://127.0.0.1:1/rpc", "protocolBinding": "JSONRPC"}],
        "supportsAuthenticatedExtendedCard": True,
        "security": [{"bearer": []}],
        "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "bearer"}}},
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": []}],
    }
    (node,) = _node_payloads(js_dir, [card])
    ours = payload_bytes(card, "a2a-js")
    assert node["payload"] == ours.decode() and ours != payload_bytes(card, "sdk-normalized")
    key = generate_key("ES256", kid="js")
    report = verify_card(sign_card(card, key, kid="js", form="a2a-js"), public_jwks(key))
    assert (report.status, report.form) == ("verified", "a2a-js")
    assert {"/security", "/supportsAuthenticatedExtendedCard", "/url", "/protocolVersion"} <= set(
        report.unsigned_members
    )


def _leaves(doc: Any, base: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _leaves(value, f"{base}/{escape(key)}")
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield from _leaves(value, f"{base}/{index}")
    else:
        yield base, doc


def _replace(doc: Any, pointer: str, value: Any) -> Any:
    out = copy.deepcopy(doc)
    *parents, last = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]
    target = out
    for token in parents:
        target = target[int(token) if isinstance(target, list) else token]
    target[int(last) if isinstance(target, list) else last] = value
    return out


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    return f"{value}~changed"


def test_members_the_a2a_js_form_calls_signed_are_in_the_sdk_payload(js_dir: Path) -> None:
    """Changing any scalar the form does not report unsigned changes the SDK's signed bytes."""
    rng = random.Random(6901)
    probes: list[tuple[Any, str, Any]] = []
    for _ in range(80):
        card = _card(rng)
        if _ours(card) is None:
            continue
        unsigned = unsigned_members(card, "a2a-js")
        for pointer, value in _leaves(card):
            if pointer.startswith("/signatures") or value is None:
                continue
            if any(pointer == u or pointer.startswith(u + "/") for u in unsigned):
                continue
            probes.append((card, pointer, _replace(card, pointer, _other(value))))
    assert len(probes) > 200
    before = _node_payloads(js_dir, [card for card, _, _ in probes])
    after = _node_payloads(js_dir, [changed for _, _, changed in probes])
    for (card, pointer, _), old, new in zip(probes, before, after, strict=True):
        assert "payload" in old, card
        assert old != new, f"{pointer} is reported signed but the SDK payload ignores it: {card}"
