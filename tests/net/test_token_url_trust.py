"""A card is not trusted to choose where a secret goes (issue 21 item 1; docs/CONTRACT.md, authentication).

Against the guarded OAuth 2.0 reference agent (its JSON-RPC interface and its real token
endpoint) and small loopback servers of the test's own on other ports (other origins):

- a spy that records every request made to it, named by a card as its `tokenUrl` or OpenID
  Connect discovery URL: it must never receive a request, let alone `Authorization: Basic`;
- an identity provider on another origin that forwards token requests to the agent's real
  endpoint, which a card signed under a key the user trusts may name (and then the interview
  is put), but a card vouched for only by its own `jku` may not;
- a hostile agent of a sweep that declares OAuth 2.0 with a token endpoint on its own origin,
  listed beside the agent the credentials are for.

Cards are files (the interface stays the real agent), edited and signed by the test.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from explorer.cli import main
from explorer.core.signatures import generate_key, public_jwks, sign_card
from explorer.demo.fleet import Fleet, RunningAgent
from explorer.interview.options import Options
from explorer.interview.procedure import run_interview
from explorer.net.auth import TokenCache
from tests.support.cards import agent_card
from tests.support.http_server import Spy as _Spy
from tests.support.http_server import base_url, send_json, serving

pytestmark = pytest.mark.slow  # real servers, full interviews


class _Provider(BaseHTTPRequestHandler):
    """An identity provider on an origin of its own: `/token` forwards to the agent's real token
    endpoint (so the token it hands out is one the agent accepts), `/jwks.json` serves `jwks`."""

    upstream = ""
    jwks: ClassVar[dict[str, Any]] = {"keys": []}
    tokens_asked = 0
    lock = threading.Lock()

    def do_GET(self) -> None:
        send_json(self, self.jwks)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with self.lock:
            type(self).tokens_asked += 1
        forwarded = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
        answer = httpx.post(self.upstream, content=body, headers=forwarded, timeout=5)
        self._send(answer.status_code, answer.content, answer.headers.get("content-type", "application/json"))

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def agent() -> Iterator[RunningAgent]:
    with Fleet(["guarded-oauth2"]) as fleet:
        running = fleet.agents["guarded-oauth2"]
        saved = dict(os.environ)
        os.environ.update(running.env)
        try:
            yield running
        finally:
            os.environ.clear()
            os.environ.update(saved)


@pytest.fixture
def spy() -> Iterator[str]:
    _Spy.seen = []
    with serving(_Spy) as server:
        yield base_url(server)


@pytest.fixture
def provider(agent: RunningAgent) -> Iterator[str]:
    _Provider.upstream = f"{agent.base_url}/oauth2/token"
    _Provider.tokens_asked = 0
    _Provider.jwks = {"keys": []}
    with serving(_Provider) as server:
        yield base_url(server)


def _options(agent: RunningAgent, **more: Any) -> Options:
    assert agent.credentials is not None
    values = agent.credentials.option_values()
    return Options(timeout=5.0, runner="tests", tokens=TokenCache(), **{**values, **more})


def _card(agent: RunningAgent, token_url: str) -> dict[str, Any]:
    """The agent's card, unsigned, its client credentials flow naming `token_url`."""
    card = httpx.get(agent.card_url, timeout=5).json()
    card.pop("signatures", None)
    flows = card["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]["flows"]
    flows["clientCredentials"]["tokenUrl"] = token_url
    return card


def _write(tmp_path: Path, card: dict[str, Any], name: str = "card.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(card), encoding="utf-8")
    return str(path)


def _signed(card: dict[str, Any], *, jku: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    key = generate_key("ES256", kid="card-signer")
    return sign_card(card, key, kid="card-signer", jku=jku), public_jwks(key)


def _codes(report: Any) -> set[str]:
    return {f["code"] for f in report["findings"]}


def _detail(report: Any, code: str) -> str:
    return next(f["detail"] for f in report["findings"] if f["code"] == code)


def _asked(run: Any) -> bool:
    return any(e.purpose == "ask:identity#1" and e.status == 200 for e in run.exchanges)


def _secret_sent(seen: list[tuple[str, dict[str, str], bytes]]) -> bool:
    return any(
        "authorization" in {k.lower() for k in headers} or b"client_secret" in body
        for _, headers, body in seen
    )


def _oidc(card: dict[str, Any], discovery: str) -> dict[str, Any]:
    card["securitySchemes"] = {"oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": discovery}}}
    card["securityRequirements"] = [{"schemes": {"oidc": {"list": ["interview:read"]}}}]
    return card


async def test_an_unsigned_card_naming_its_own_spy_gets_no_secret(
    agent: RunningAgent, spy: str, tmp_path: Path
) -> None:
    card = _write(tmp_path, _card(agent, f"{spy}/token"))
    run = await run_interview(card, _options(agent))
    assert _Spy.seen == []
    report = run.report
    assert report["verdict"] == "unreachable"
    assert "auth_token_url_untrusted" in _codes(report) and "auth_failed" not in _codes(report)
    found = next(f for f in report["findings"] if f["code"] == "auth_token_url_untrusted")
    assert found["severity"] == "error"
    assert "--oauth2-token-url" in found["detail"] and f"{spy}/token" in found["detail"]
    assert not any(e.purpose.startswith("ask:") for e in run.exchanges)


def test_the_command_line_says_untrusted_unreachable_and_exit_3(
    agent: RunningAgent, spy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = _write(tmp_path, _card(agent, f"{spy}/token"))
    assert agent.credentials is not None
    options = [f"--{k.replace('_', '-')}={v}" for k, v in agent.credentials.to_config().items()]
    code = main(["verify", card, "--timeout", "5", "--json", "--no-history", *options])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 3 and report["verdict"] == "unreachable"
    assert "auth_token_url_untrusted" in _codes(report)
    assert "--oauth2-token-url" in err and _Spy.seen == []
    # Offline, the recorded refusal reads the same.
    transcript = tmp_path / "t.json"
    main(["verify", card, "--timeout", "5", "--no-history", *options, "--transcripts", str(tmp_path / "tr")])
    capsys.readouterr()
    written = next((tmp_path / "tr").glob("*.json"))
    transcript.write_bytes(written.read_bytes())
    assert main(["verify", "--offline", str(transcript), "--json"]) == 3
    assert "auth_token_url_untrusted" in _codes(json.loads(capsys.readouterr().out))


async def test_a_card_signed_under_a_key_you_trust_may_name_a_provider_elsewhere(
    agent: RunningAgent, provider: str, tmp_path: Path
) -> None:
    card, jwks = _signed(_card(agent, f"{provider}/token"))
    run = await run_interview(_write(tmp_path, card), _options(agent, keys=(jwks,)))
    assert _Provider.tokens_asked == 1, run.report["findings"]
    assert _asked(run), run.report["findings"]
    assert not {"auth_token_url_untrusted", "auth_failed", "auth_required"} & _codes(run.report)
    assert run.report["card"]["signature"]["status"] == "verified"


async def test_a_key_from_the_cards_own_jku_vouches_for_nothing(
    agent: RunningAgent, provider: str, tmp_path: Path
) -> None:
    card, jwks = _signed(_card(agent, f"{provider}/token"), jku=f"{provider}/jwks.json")
    _Provider.jwks = jwks  # the card's own jku serves the key that signed it
    run = await run_interview(_write(tmp_path, card), _options(agent, allow_jku=True))
    assert run.report["card"]["signature"]["status"] == "verified"  # by the jku key, as the report says
    assert run.report["card"]["signature"]["key_source"] == "jku"
    assert _Provider.tokens_asked == 0
    assert "jku" in _detail(run.report, "auth_token_url_untrusted")
    assert run.report["verdict"] == "unreachable"


@pytest.mark.parametrize("where", ["provider", "own origin"])
async def test_never_while_a_card_signature_fails(
    agent: RunningAgent, provider: str, tmp_path: Path, where: str
) -> None:
    """Signed under a key you trust, then its tokenUrl changed: not even the agent's own origin.
    (The interface's origin is pinned, so the token URL is what is judged; unpinned, the failing
    signature withholds every credential from the interface first: `auth_origin_untrusted`.)"""
    card, jwks = _signed(_card(agent, f"{provider}/token"))
    flows = card["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]["flows"]
    flows["clientCredentials"]["tokenUrl"] = (
        f"{provider}/other-token" if where == "provider" else f"{agent.base_url}/oauth2/token"
    )
    tokens_before = agent.guard.token_requests if agent.guard else 0
    unpinned = await run_interview(_write(tmp_path, card), _options(agent, keys=(jwks,)))
    assert "signature fails" in _detail(unpinned.report, "auth_origin_untrusted")
    pinned = _options(agent, keys=(jwks,), interface_origin=agent.base_url)
    run = await run_interview(_write(tmp_path, card), pinned)
    assert run.report["card"]["signature"]["status"] == "invalid"
    assert _Provider.tokens_asked == 0 and agent.guard is not None
    assert agent.guard.token_requests == tokens_before
    assert "signature fails" in _detail(run.report, "auth_token_url_untrusted")
    assert run.report["verdict"] == "unreachable"


async def test_a_token_url_the_user_pinned_is_used_whatever_the_card_names(
    agent: RunningAgent, spy: str, tmp_path: Path
) -> None:
    card = _write(tmp_path, _card(agent, f"{spy}/token"))
    run = await run_interview(card, _options(agent, oauth2_token_url=f"{agent.base_url}/oauth2/token"))
    assert _Spy.seen == [] and _asked(run), run.report["findings"]
    assert "auth_token_url_untrusted" not in _codes(run.report)


async def test_an_unsigned_card_may_name_a_token_url_on_its_own_origin(
    agent: RunningAgent, tmp_path: Path
) -> None:
    card = _write(tmp_path, _card(agent, f"{agent.base_url}/oauth2/token"))
    run = await run_interview(card, _options(agent))
    assert _asked(run), run.report["findings"]


class _CardHost(BaseHTTPRequestHandler):
    """Serves `card` at every path: the origin the user points the explorer at."""

    card: ClassVar[dict[str, Any]] = {}

    def do_GET(self) -> None:
        send_json(self, self.card)

    def log_message(self, *args: Any) -> None:
        pass


async def test_a_card_that_moves_its_interface_and_token_url_elsewhere_gets_no_secret(
    agent: RunningAgent, spy: str
) -> None:
    """The agent's own origin is the one its card came from: a card fetched from one origin that
    names both its interface and its token URL on another chose where the secret would go."""
    card = _card(agent, f"{spy}/token")
    for interface in card["supportedInterfaces"]:
        interface["url"] = f"{spy}/a2a"
    _CardHost.card = card
    with serving(_CardHost) as server:
        run = await run_interview(f"{base_url(server)}/.well-known/agent-card.json", _options(agent))
    assert not _secret_sent(_Spy.seen) and not [p for p, _, _ in _Spy.seen if p == "/token"]
    # The interface elsewhere already withholds every credential; pinned, the token URL is judged.
    assert "another origin than the agent's own" in _detail(run.report, "auth_origin_untrusted")
    with serving(_CardHost) as server:
        run = await run_interview(
            f"{base_url(server)}/.well-known/agent-card.json", _options(agent, interface_origin=spy)
        )
    assert not _secret_sent(_Spy.seen) and not [p for p, _, _ in _Spy.seen if p == "/token"]
    assert "another origin than the agent's own" in _detail(run.report, "auth_token_url_untrusted")
    # Served from the token URL's own origin, the same card may name it (its interface pinned).
    _CardHost.card = _card(agent, "/oauth2/token")
    with serving(_CardHost) as server:
        site = base_url(server)
        run = await run_interview(
            f"{site}/.well-known/agent-card.json", _options(agent, interface_origin=agent.base_url)
        )
    assert "auth_token_url_untrusted" not in _codes(run.report)
    assert [e.url for e in run.exchanges if e.purpose == "auth:token"] == [f"{site}/oauth2/token"]


async def test_openid_connect_discovery_elsewhere_is_not_fetched_for_an_unsigned_card(
    agent: RunningAgent, spy: str, tmp_path: Path
) -> None:
    card = _oidc(_card(agent, "unused"), f"{spy}/.well-known/openid-configuration")
    run = await run_interview(_write(tmp_path, card), _options(agent))
    assert _Spy.seen == []  # not even the discovery document, which would name the endpoint
    assert "openIdConnectUrl" in _detail(run.report, "auth_token_url_untrusted")
    assert run.report["verdict"] == "unreachable"


async def test_openid_connect_discovery_on_its_own_origin_may_not_name_an_endpoint_elsewhere(
    agent: RunningAgent, spy: str, tmp_path: Path
) -> None:
    """The discovery document is the agent's; an unsigned card's agent chooses only its own origin."""

    class _Discovery(_Spy):
        def do_GET(self) -> None:
            send_json(self, {"issuer": "x", "token_endpoint": f"{spy}/token"})

    with serving(_Discovery) as server:
        site = base_url(server)
        card = _oidc(_card(agent, "unused"), f"{site}/.well-known/openid-configuration")
        for interface in card["supportedInterfaces"]:
            interface["url"] = f"{site}/a2a"  # this origin is the agent's own
        run = await run_interview(_write(tmp_path, card), _options(agent))
    assert not [p for p, _, _ in _Spy.seen if p == "/token"]
    assert "OpenID Connect token endpoint" in _detail(run.report, "auth_token_url_untrusted")


# --- many targets: a credential reaches only the agent it is bound to ------------------------------


class _Collector(BaseHTTPRequestHandler):
    """A hostile agent of a sweep: its card declares the interview and OAuth 2.0 client
    credentials with a token endpoint on its own origin, where it collects what it is sent."""

    collected: ClassVar[list[tuple[str, dict[str, str], bytes]]] = []

    def do_GET(self) -> None:
        site = f"http://127.0.0.1:{self.server.server_address[1]}"
        card = agent_card(
            "Collector",
            url=f"{site}/a2a",
            description="wants your secrets",
            version="1.0.0",
            securitySchemes={
                "oauth2": {
                    "oauth2SecurityScheme": {
                        "flows": {
                            "clientCredentials": {
                                "tokenUrl": f"{site}/token",
                                "scopes": {"interview:read": "read"},
                            }
                        }
                    }
                }
            },
            securityRequirements=[{"schemes": {"oauth2": {"list": ["interview:read"]}}}],
        )
        send_json(self, card)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        type(self).collected.append((self.path, dict(self.headers.items()), body))
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[str]:
    _Collector.collected = []
    with serving(_Collector) as server:
        yield f"{base_url(server)}/.well-known/agent-card.json"


_SECRET_VAR = "INTERVIEW_EXPLORER_DEMO_OAUTH2_SECRET"


@pytest.mark.parametrize(
    "flags",
    [
        ["--oauth2-client-id", "interview-explorer-demo", "--oauth2-client-secret", f"env:{_SECRET_VAR}"],
        ["--bearer", f"env:{_SECRET_VAR}"],
        ["--header", f"X-Api-Key: env:{_SECRET_VAR}"],
    ],
    ids=["oauth2", "bearer", "header"],
)
def test_a_credential_given_to_a_sweep_and_bound_to_no_agent_is_a_usage_error(
    agent: RunningAgent, collector: str, flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = tmp_path / "agents.txt"
    listed.write_text(f"{agent.card_url}\n{collector}\n", encoding="utf-8")
    for args in (["verify", agent.card_url, collector], ["verify", "--from", str(listed)]):
        code = main([*args, "--no-history", "--timeout", "5", *flags])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "bound" in err and "[agents.NAME]" in err and flags[0] in err
    assert _Collector.collected == []
    assert agent.guard is not None and agent.guard.secret not in err


def test_a_credential_bound_in_the_config_reaches_only_its_agent(
    agent: RunningAgent, collector: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert agent.credentials is not None and agent.guard is not None
    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    entry = "\n".join(f"{k} = {json.dumps(v)}" for k, v in agent.credentials.to_config().items())
    config = f'[agents.locked]\nurl = "{agent.card_url}"\n{entry}\n'
    (home / "config.toml").write_text(config, encoding="utf-8")
    try:
        listed = tmp_path / "agents.txt"
        listed.write_text(f"locked\n{collector}\n", encoding="utf-8")
        code = main(["verify", "--from", str(listed), "--json", "--no-history", "--timeout", "5"])
    finally:
        (home / "config.toml").unlink()
    out, err = capsys.readouterr()
    reports = {r["target"]: r for r in map(json.loads, out.splitlines())}
    assert code == 3, err  # the collector is unreachable (it refuses every call)
    assert reports[agent.card_url]["verdict"] == "conformant", reports[agent.card_url]["findings"]
    assert reports[collector]["verdict"] == "unreachable"
    assert not [p for p, _, _ in _Collector.collected if p == "/token"]
    assert not _secret_sent(_Collector.collected)
    assert agent.guard.secret not in json.dumps(_Collector.collected, default=str)


def test_the_fleet_view_does_not_send_the_launch_credentials_to_a_list(
    agent: RunningAgent, collector: str, tmp_path: Path
) -> None:
    """The explorer launched with `--bearer` and sweeping a list (its fleet view): every target is
    refused with the way to bind, and nothing is asked."""
    from explorer.tui.context import AppContext

    context = AppContext(home=tmp_path, settings={"bearer": f"env:{_SECRET_VAR}"}, use_history=False)
    errors: list[tuple[str, str]] = []
    done: list[str] = []
    context.sweep(
        [agent.card_url, collector],
        2,
        stopped=lambda: False,
        on_error=lambda target, message: errors.append((target, message)),
        on_done=lambda target, run, run_id: done.append(target),
    )
    assert [t for t, _ in errors] == [agent.card_url, collector] and done == []
    assert all("[agents.NAME]" in message for _, message in errors)
    assert _Collector.collected == []
