"""The verifier against an agent it has never seen: another stack, signing its card at each start.

Issue 28 asks that the verifier be tried again against agents it has never seen. The reference
agents (`explorer.demo`, and the a2a-sdk replicas of tests/core/test_sdk_replicas.py built on the
`sdk-built` reference agent) share this project's own code or the official SDK; the agent here
shares neither. It is written below from the texts alone: a standard-library `http.server`
answering JSON-RPC over HTTP/1.1, its card canonicalized with `json.dumps` (what RFC 8785 gives for
a card of strings, integers and booleans under ASCII keys) and signed with joserfc, a detached
JWS over the card without `signatures`, at every start, as an agent that signs at start-up does.
It answers the interview by projecting its own card, `/signatures` included, refuses what it does
not declare with the standard refusal, and answers an interview method it was not activated for
with -32601.

Each stack is served twice on one address, signing again at the second start (ECDSA signatures
are randomized: other bytes, the same key), then under a rotated key, then with another
description. Both starts verify `conformant`; the second run is `signed again` in the history and
never a change, `compare` exits 0 saying so; the rotation is a `key` change named as such; the
new description a `declarations` change. Two stacks: a v1.0-layout card signed with ES256, and a
v0.3-layout card (`url`, `preferredTransport`, `protocolVersion`, answered under `A2A-Version:
0.3`) signed with ES384, which neither the reference agents nor the SDK replicas sign with.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from joserfc import jws
from joserfc.jwk import ECKey

from explorer.cli import main

pytestmark = pytest.mark.slow  # four interviews of a live agent per stack, through the CLI

INTERVIEW = "https://agentsow.com/extensions/a2a-interview/v1"
QUESTIONS = ("identity", "capabilities", "usage", "terms", "refusals")
CARD_PATH = "/.well-known/agent-card.json"
RPC_PATH = "/rpc"
CURVES = {"ES256": "P-256", "ES384": "P-384"}


def canonical(value: Any) -> bytes:
    """RFC 8785 for the values this card holds (no numbers but integers, ASCII member names)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class Stack:
    """How one agent is built: its card layout and its signing algorithm."""

    layout: str  # "v1.0" or "v0.3"
    alg: str


@dataclass(frozen=True)
class Signer:
    key: ECKey
    kid: str
    alg: str

    @classmethod
    def generate(cls, alg: str, kid: str) -> Signer:
        return cls(ECKey.generate_key(CURVES[alg], parameters={"kid": kid}), kid, alg)

    def sign(self, card: dict[str, Any]) -> dict[str, Any]:
        """`card` with one detached JWS over its canonical form without `signatures`: a new
        signature value at every call (ECDSA), over the same payload."""
        unsigned = {name: value for name, value in card.items() if name != "signatures"}
        protected = {"alg": self.alg, "kid": self.kid, "typ": "JOSE"}
        compact = jws.serialize_compact(protected, canonical(unsigned), self.key, algorithms=[self.alg])
        header, _, signature = compact.split(".")
        return {**unsigned, "signatures": [{"protected": header, "signature": signature}]}


def card_of(stack: Stack, base: str, description: str) -> dict[str, Any]:
    """The agent's unsigned card in `stack.layout`."""
    extensions = [{"uri": INTERVIEW, "description": "Answers the A2A interview from this card."}]
    skill = {
        "id": "ledger-balance",
        "name": "Ledger balance",
        "description": "Reads the balance of one ledger account.",
        "tags": ["ledger"],
        "inputModes": ["application/json"],
        "outputModes": ["application/json"],
    }
    common = {
        "name": "Ledger Lookup (raw http.server agent)",
        "description": description,
        "provider": {"organization": "Elsewhere Ledgers", "url": base},
        "version": "3.1.4",
        "capabilities": {"streaming": False, "extensions": extensions},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json", "text/plain"],
        "skills": [skill],
    }
    if stack.layout == "v0.3":
        return {
            "protocolVersion": "0.3.0",
            "url": base + RPC_PATH,
            "preferredTransport": "JSONRPC",
            **common,
        }
    interfaces = [{"url": base + RPC_PATH, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    return {**common, "supportedInterfaces": interfaces}


def projections(card: dict[str, Any], members: list[str]) -> list[dict[str, Any]]:
    """Each member (a top-level name, or `skills/N/name`) copied out of the card with its source."""
    out = []
    for member in members:
        value: Any = card
        for part in member.split("/"):
            value = value[int(part)] if isinstance(value, list) else value[part]
        out.append({"source": {"document": "card", "member": "/" + member}, "value": value})
    return out


def answer(card: dict[str, Any], question: str, skill: str | None) -> dict[str, Any]:
    """The answer to one question, or the standard refusal for a selector naming no skill."""
    ids = [s["id"] for s in card["skills"]]
    refusal = {"refused": True, "reason": "out_of_scope", "detail": "no such skill", "declared_skills": ids}
    if question not in QUESTIONS:
        return refusal
    if skill is not None and (question not in ("usage", "terms") or skill not in ids):
        return refusal
    interface = [
        m for m in ("supportedInterfaces", "url", "preferredTransport", "protocolVersion") if m in card
    ]
    indexes = range(len(ids)) if skill is None else [ids.index(skill)]
    members: list[str] = []
    if question == "identity":
        members = ["name", "provider", "version", *interface, "signatures"]
    elif question == "capabilities":
        members = [f"skills/{i}/{name}" for i in range(len(ids)) for name in ("id", "description")]
    elif question == "usage":
        members = [*interface, "defaultInputModes", "defaultOutputModes"]
        members += [f"skills/{i}/{name}" for i in indexes for name in ("inputModes", "outputModes")]
    elif question == "refusals":
        members = [f"skills/{i}/id" for i in range(len(ids))]
    else:  # terms: this card commits to no proposal
        return {"question": "terms", "declared": False, "projections": []}
    return {"question": question, "declared": True, "projections": projections(card, members)}


class Agent(ThreadingHTTPServer):
    """One start of the agent: it signs its card now, and serves it until shut down."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, stack: Stack, signer: Signer, description: str) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        base = f"http://127.0.0.1:{self.server_address[1]}"
        self.card = signer.sign(card_of(stack, base, description))
        self.body = json.dumps(self.card).encode()


class Handler(BaseHTTPRequestHandler):
    server: Agent
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def send_json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        body = value if isinstance(value, bytes) else json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, text in (headers or {}).items():
            self.send_header(name, text)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == CARD_PATH:
            self.send_json(200, self.server.body)
        else:
            self.send_json(404, {"error": "not found"})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != RPC_PATH:
            self.send_json(404, {"error": "not found"})
            return
        try:
            request = json.loads(raw)
            method, params, call = request["method"], request.get("params"), request.get("id")
        except (ValueError, KeyError, TypeError):
            self.send_json(200, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}})
            return
        activated = {
            uri.strip()
            for name in ("A2A-Extensions", "X-A2A-Extensions")
            for uri in (self.headers.get(name) or "").split(",")
        }
        if not (isinstance(method, str) and method.startswith("interview/") and INTERVIEW in activated):
            error = {"code": -32601, "message": f"method not found: {method}"}
            self.send_json(200, {"jsonrpc": "2.0", "id": call, "error": error})
            return
        skill = params.get("skill") if isinstance(params, dict) else None
        result = answer(self.server.card, method.removeprefix("interview/"), skill)
        self.send_json(200, {"jsonrpc": "2.0", "id": call, "result": result}, {"A2A-Extensions": INTERVIEW})


class Deployment:
    """The agent on one loopback port, started as often as asked, with its keys kept between."""

    def __init__(self, stack: Stack, folder: Path) -> None:
        self.stack = stack
        self.signer = Signer.generate(stack.alg, "ledger-1")
        self.rotated = Signer.generate(stack.alg, "ledger-2")
        self.jwks = folder / "trusted.jwks"
        keys = [signer.key.as_dict(private=False) for signer in (self.signer, self.rotated)]
        self.jwks.write_text(json.dumps({"keys": keys}), encoding="utf-8")
        self.port = 0

    @contextmanager
    def start(
        self, *, rotated: bool = False, description: str = "Looks up ledger balances."
    ) -> Iterator[str]:
        """The agent started (its card signed now): its card URL while the block runs."""
        server = Agent(self.port, self.stack, self.rotated if rotated else self.signer, description)
        self.port = server.server_address[1]
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{self.port}{CARD_PATH}"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(10)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


STACKS = [Stack("v1.0", "ES256"), Stack("v0.3", "ES384")]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("stack", STACKS, ids=[f"{s.layout}-{s.alg}" for s in STACKS])
def test_an_agent_of_another_stack_signing_at_each_start_is_told_apart_by_kind(
    stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = Deployment(stack, tmp_path)
    at = ["--home", str(tmp_path / "home")]
    keys = ["--keys", str(agent.jwks)]
    reports = []
    for started in ({}, {}, {"rotated": True}, {"rotated": True, "description": "Looks up and books."}):
        with agent.start(**started) as url:
            code, out = run(capsys, "verify", url, *keys, "--json", *at)
            report = json.loads(out[: out.rindex("}") + 1])
            errors = [f["code"] for f in report["findings"] if f["severity"] == "error"]
            assert (code, report["verdict"], errors) == (0, "conformant", []), out
            assert report["card"]["signature"]["status"] == "verified"
            assert report["card"]["layout"] == stack.layout
            reports.append(report)
    first, again, rotated, redeclared = (r["card"] for r in reports)
    # the second start signed again: other card bytes, the same declarations under the same key
    assert again["sha256"] != first["sha256"] and again["declarations_sha256"] == first["declarations_sha256"]
    assert again["signers"] == first["signers"] != rotated["signers"]
    assert redeclared["declarations_sha256"] != rotated["declarations_sha256"]
    assert reports[1]["answers_sha256"] == reports[0]["answers_sha256"]  # its /signatures answer too

    code, out = run(capsys, "history", "--json", *at)
    rows = {row["id"]: row for row in map(json.loads, out.splitlines())}
    assert len({row["agent"] for row in rows.values()}) == 1  # one agent throughout
    assert [(rows[i]["kinds"], rows[i]["changed"]) for i in (1, 2)] == [([], False), (["resigned"], False)]
    assert rows[3]["kinds"] == ["key"] and rows[3]["changed"]
    assert "declarations" in rows[4]["kinds"] and "key" not in rows[4]["kinds"] and rows[4]["changed"]
    code, out = run(capsys, "history", "--changed", "--json", *at)
    assert [json.loads(line)["id"] for line in out.splitlines()] == [4, 3]

    code, out = run(capsys, "compare", "1", "2", *keys, *at)
    assert code == 0 and "no change, signed again" in out and "signed again card /signatures" in out, out
    code, out = run(capsys, "compare", "2", "3", *keys, *at)
    assert code == 1 and "key changed" in out and "declarations changed" not in out, out
    code, out = run(capsys, "compare", "3", "4", *keys, *at)
    assert code == 1 and "declarations changed" in out and "key changed" not in out, out
