"""Agents that require authentication, end to end against the guarded reference agents.

Each scheme (bearer, API key in a v0.3 card, OAuth 2.0 client credentials) is interviewed with
the credentials its card declares, without them, and with wrong ones; OAuth tokens are reused
within a run and across runs until they expire, then renewed; the client falls back from HTTP
Basic to the request body when the token endpoint says so. A spy server on another port stands
as the card's `jku` and proposal host and must never see a credential; the secret and the issued
tokens must appear nowhere the explorer writes (history, transcripts, exports, stderr).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from explorer.cli import main
from explorer.config.credentials import CredentialError, Credentials
from explorer.core.security import read_security
from explorer.demo.fleet import Fleet, RunningAgent
from explorer.demo.ratelimit import RateLimit
from explorer.interview.options import Options
from explorer.interview.procedure import run_interview
from explorer.net.auth import TokenCache
from tests.support.cards import agent_card
from tests.support.demo_serve import demo_serve
from tests.support.http_server import Spy as _Spy

GUARDED = ("guarded-bearer", "guarded-apikey", "guarded-oauth2")


@pytest.fixture(scope="module")
def guarded() -> Iterator[Fleet]:
    """The three guarded agents (tokens live 5 s), their demo secrets in the environment as
    `demo` hands them over (restored afterwards)."""
    with Fleet(GUARDED, token_lifetime=5) as fleet:
        saved = dict(os.environ)
        for agent in fleet.agents.values():
            os.environ.update(agent.env)
        try:
            yield fleet
        finally:
            os.environ.clear()
            os.environ.update(saved)


def _options(agent: RunningAgent | None, tokens: TokenCache | None = None, **creds: Any) -> Options:
    credentials = Credentials(**creds) if creds else (agent.credentials if agent else None)
    values = credentials.option_values() if credentials is not None else {}
    return Options(allow_jku=True, timeout=5.0, runner="tests", tokens=tokens or TokenCache(), **values)


def _codes(report: dict[str, Any]) -> set[str]:
    return {f["code"] for f in report["findings"]}


def _detail(report: dict[str, Any], code: str) -> str:
    return next(f["detail"] for f in report["findings"] if f["code"] == code)


# --- the card's declaration --------------------------------------------------------------------


def test_both_layouts_are_read() -> None:
    v03 = read_security(
        {
            "securitySchemes": {
                "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": "sid"},
            },
            "security": [{"key": []}],
        }
    )
    assert v03.schemes["key"].supported and not v03.schemes["cookie"].supported
    oidc = read_security(
        {"securitySchemes": {"o": {"type": "openIdConnect", "openIdConnectUrl": "https://id/x"}}}
    )
    assert oidc.schemes["o"].discovery_url == "https://id/x" and oidc.satisfiable()
    assert v03.requirements == ({"key": ()},)
    v10 = read_security(
        {
            "securitySchemes": {
                "o": {
                    "oauth2SecurityScheme": {
                        "flows": {
                            "clientCredentials": {
                                "tokenUrl": "https://auth.example/token",
                                "scopes": {"a": "", "b": ""},
                            }
                        }
                    }
                },
                "m": {"mtlsSecurityScheme": {}},
            },
            "securityRequirements": [{"schemes": {"o": {"list": ["a"]}}}],
        }
    )
    assert v10.schemes["o"].token_url == "https://auth.example/token" and v10.schemes["o"].supported
    assert v10.schemes["m"].kind == "mutualTLS" and not v10.schemes["m"].supported
    assert v10.requirements == ({"o": ("a",)},)


def test_a_card_typed_against_the_js_sdk_declares_its_schemes_as_a_ts_proto_oneof() -> None:
    # @a2a-js/sdk serves the card as its author typed it: `{scheme: {$case, value}}`, and OAuth
    # flows as `{flow: {$case, value}}`, instead of the protojson wrapper member.
    typed = read_security(
        {
            "securitySchemes": {
                "bearer": {"scheme": {"$case": "httpAuthSecurityScheme", "value": {"scheme": "Bearer"}}},
                "key": {
                    "scheme": {
                        "$case": "apiKeySecurityScheme",
                        "value": {"location": "header", "name": "X-Key", "description": ""},
                    }
                },
                "o": {
                    "scheme": {
                        "$case": "oauth2SecurityScheme",
                        "value": {
                            "flows": {
                                "flow": {
                                    "$case": "clientCredentials",
                                    "value": {"tokenUrl": "https://auth.example/t", "scopes": {}},
                                }
                            }
                        },
                    }
                },
                "odd": {"scheme": {"$case": "noSuchScheme", "value": {}}},
            },
            "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        }
    )
    assert typed.schemes["bearer"].kind == "bearer" and typed.schemes["bearer"].supported
    assert typed.schemes["bearer"].pointer == "/securitySchemes/bearer/scheme/value"
    assert (typed.schemes["key"].location, typed.schemes["key"].header) == ("header", "X-Key")
    assert typed.schemes["o"].token_url == "https://auth.example/t" and typed.schemes["o"].supported
    assert typed.schemes["odd"].kind == "unknown"
    assert typed.requirements == ({"bearer": ()},)
    v03_http = read_security({"securitySchemes": {"h": {"type": "http", "scheme": "bearer"}}})
    assert v03_http.schemes["h"].kind == "bearer"  # v0.3's string `scheme` is not a oneof


def test_literal_secrets_are_refused_and_references_resolve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(CredentialError, match="env:VAR or file:PATH"):
        Credentials(bearer="s3cr3t-token")
    path = tmp_path / "secret"
    path.write_text("from-a-file\n", encoding="utf-8")
    monkeypatch.setenv("IE_TEST_KEY", "from-the-env")
    secrets = Credentials(bearer=f"file:{path}", api_key="env:IE_TEST_KEY").resolve()
    assert (secrets.bearer, secrets.api_key) == ("from-a-file", "from-the-env")
    assert "from-a-file" not in repr(secrets) and "from-the-env" not in repr(secrets)
    with pytest.raises(CredentialError, match="IE_TEST_UNSET is not set"):
        Credentials(api_key="env:IE_TEST_UNSET").resolve()


# --- each scheme end to end ----------------------------------------------------------------------


@pytest.mark.slow  # real servers, full interviews
@pytest.mark.parametrize("name", GUARDED)
async def test_with_the_declared_credentials_the_agent_is_conformant(guarded: Fleet, name: str) -> None:
    agent = guarded.agents[name]
    run = await run_interview(agent.card_url, _options(agent))
    assert run.report["verdict"] == "conformant", run.report["findings"]
    asks = [e for e in run.exchanges if e.purpose.startswith("ask:")]
    header = "X-Api-Key" if name == "guarded-apikey" else "Authorization"
    assert asks and all(dict(e.request_headers).get(header) == "<redacted>" for e in asks)
    card = next(e for e in run.exchanges if e.purpose == "card")
    assert header not in dict(card.request_headers)  # the card is fetched without credentials


@pytest.mark.slow  # real servers, full interviews
@pytest.mark.parametrize("name", GUARDED)
async def test_without_credentials_auth_required_and_unreachable(guarded: Fleet, name: str) -> None:
    agent = guarded.agents[name]
    run = await run_interview(agent.card_url, _options(None))
    report = run.report
    assert report["verdict"] == "unreachable"
    assert _codes(report) == {"auth_required"}, report["findings"]
    option = {
        "guarded-bearer": "--bearer",
        "guarded-apikey": "--api-key",
        "guarded-oauth2": "--oauth2-client-id",
    }[name]
    detail = _detail(report, "auth_required")
    assert option in detail and "no credential was sent" in detail
    assert not any(e.purpose.startswith("probe:") for e in run.exchanges)  # stopped after one round


@pytest.mark.slow  # real servers, full interviews
async def test_a_wrong_bearer_token_is_named_as_sent_and_refused(guarded: Fleet, tmp_path: Path) -> None:
    wrong = tmp_path / "token"
    wrong.write_text("not-the-right-token", encoding="utf-8")
    agent = guarded.agents["guarded-bearer"]
    run = await run_interview(agent.card_url, _options(agent, bearer=f"file:{wrong}"))
    assert run.report["verdict"] == "unreachable"
    assert "a credential was sent (Authorization: <redacted>) and refused" in _detail(
        run.report, "auth_required"
    )


@pytest.mark.slow  # real servers, full interviews
async def test_a_wrong_client_secret_is_auth_failed(guarded: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IE_WRONG_SECRET", "definitely-wrong-secret")
    agent = guarded.agents["guarded-oauth2"]
    run = await run_interview(
        agent.card_url,
        _options(
            agent, oauth2_client_id="interview-explorer-demo", oauth2_client_secret="env:IE_WRONG_SECRET"
        ),
    )
    assert run.report["verdict"] == "unreachable"
    assert "invalid_client" in _detail(run.report, "auth_failed")
    tries = [e for e in run.exchanges if e.purpose == "auth:token"]
    assert len(tries) == 2  # HTTP Basic, then the body after invalid_client
    assert not any(e.purpose.startswith("ask:") for e in run.exchanges)


@pytest.mark.slow  # real servers, full interviews
async def test_a_scope_the_server_does_not_grant_is_auth_failed(guarded: Fleet) -> None:
    agent = guarded.agents["guarded-oauth2"]
    run = await run_interview(
        agent.card_url,
        _options(
            agent,
            oauth2_client_id="interview-explorer-demo",
            oauth2_client_secret=agent.credentials.oauth2_client_secret,
            oauth2_scopes=("admin",),
        ),
    )
    assert run.report["verdict"] == "unreachable"
    assert "invalid_scope" in _detail(run.report, "auth_failed")


@pytest.mark.slow  # real servers, full interviews
async def test_the_card_scopes_are_requested_and_basic_falls_back_to_the_body(guarded: Fleet) -> None:
    agent = guarded.agents["guarded-oauth2"]
    assert agent.guard is not None
    agent.guard.accept_basic = False
    try:
        run = await run_interview(agent.card_url, _options(agent))
    finally:
        agent.guard.accept_basic = True
    assert run.report["verdict"] == "conformant", run.report["findings"]
    tries = [e for e in run.exchanges if e.purpose == "auth:token"]
    assert [e.status for e in tries] == [401, 200]
    assert dict(tries[0].request_headers)["Authorization"] == "<redacted>"
    body = (tries[1].request_body or b"").decode()
    assert "scope=interview%3Aread" in body and "client_secret=<redacted>" in body
    assert agent.guard.secret not in body
    assert json.loads(tries[1].response_body)["access_token"] == "<redacted>"


@pytest.mark.slow  # real servers, full interviews
async def test_one_token_per_run_reused_across_runs_and_renewed_after_expiry(guarded: Fleet) -> None:
    agent = guarded.agents["guarded-oauth2"]
    assert agent.guard is not None
    tokens = TokenCache()
    issued = agent.guard.tokens_issued
    first = await run_interview(agent.card_url, _options(agent, tokens))
    second = await run_interview(agent.card_url, _options(agent, tokens))
    assert agent.guard.tokens_issued == issued + 1  # the whole first run and the second share one
    assert [e.purpose for e in second.exchanges].count("auth:token") == 0
    await asyncio.sleep(5.2)  # the demo tokens live 5 s here
    third = await run_interview(agent.card_url, _options(agent, tokens))
    assert agent.guard.tokens_issued == issued + 2
    assert {r.report["verdict"] for r in (first, second, third)} == {"conformant"}


# --- nothing secret leaves for other hosts or lands anywhere -----------------------------------------


@pytest.fixture
def spy() -> Iterator[str]:
    _Spy.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Spy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _card_pointing_at(agent: RunningAgent, spy: str, tmp_path: Path) -> Path:
    card = httpx.get(agent.card_url, timeout=5).json()
    header = {"alg": "ES256", "kid": "spy-key", "jku": f"{spy}/jwks.json"}
    protected = base64.urlsafe_b64encode(json.dumps(header).encode()).decode().rstrip("=")
    card["signatures"] = [{"protected": protected, "signature": "AAAA"}]
    for ext in card["capabilities"]["extensions"]:
        for proposal in (ext.get("params") or {}).get("proposals", []):
            proposal["url"] = f"{spy}/terms/{proposal['url'].rsplit('/', 1)[-1]}"
    path = tmp_path / f"{agent.name}.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


@pytest.mark.slow  # real servers, full interviews
@pytest.mark.parametrize("name", GUARDED)
def test_secrets_reach_only_the_interface_and_are_written_nowhere(
    guarded: Fleet, name: str, spy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = guarded.agents[name]
    assert agent.guard is not None and agent.credentials is not None
    card = _card_pointing_at(agent, spy, tmp_path)
    options = [f"--{k.replace('_', '-')}={v}" for k, v in agent.credentials.to_config().items()]
    code = main(["verify", str(card), "--allow-jku", "--timeout", "5", *options, "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 1, report["findings"]  # asked (authenticated); the spy's proposals fail
    assert "auth_required" not in _codes(report) and "auth_failed" not in _codes(report)
    paths = [p for p, _, _ in _Spy.seen]
    assert "/jwks.json" in paths and any(p.startswith("/terms/") for p in paths)
    issued = list(agent.guard._tokens)
    secrets = [agent.guard.secret, *issued]
    for _path, headers, body in _Spy.seen:
        lowered = {k.lower() for k in headers}
        assert "authorization" not in lowered and "x-api-key" not in lowered
        assert not any(s in json.dumps(headers) or s.encode() in body for s in secrets)
    assert main(["export", "1", "--format", "json", "-o", str(tmp_path / "t.json")]) == 0
    assert main(["export", "1", "--format", "md", "-o", str(tmp_path / "t.md")]) == 0
    capsys.readouterr()
    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    written = [p for p in [*home.rglob("*"), *tmp_path.glob("t.*")] if p.is_file()]
    assert written
    for path in written:
        data = path.read_bytes()
        assert not any(s.encode() in data for s in secrets), path
    assert not any(s in out or s in err for s in secrets)


def test_a_literal_secret_on_the_command_line_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for option in ("--bearer", "--api-key", "--oauth2-client-secret"):
        with pytest.raises(SystemExit) as stopped:
            main(["verify", "http://127.0.0.1:9/", option, "hunter2-literal", "--oauth2-client-id", "x"])
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert "env:VAR or file:PATH" in err and "hunter2-literal" not in err


@pytest.mark.slow  # real servers, full interviews
def test_config_entries_carry_the_same_settings(
    guarded: Fleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    agent = guarded.agents["guarded-oauth2"]
    assert agent.credentials is not None
    entry = "\n".join(f"{k} = {json.dumps(v)}" for k, v in agent.credentials.to_config().items())
    (home / "config.toml").write_text(
        f'[agents.locked]\nurl = "{agent.card_url}"\n{entry}\n', encoding="utf-8"
    )
    code = main(["verify", "locked", "--allow-jku", "--timeout", "5", "--no-history"])
    assert code == 0, capsys.readouterr().err
    (home / "config.toml").write_text(
        f'[agents.locked]\nurl = "{agent.card_url}"\nbearer = "plain"\n', encoding="utf-8"
    )
    assert main(["verify", "locked", "--no-history"]) == 2
    assert "env:VAR or file:PATH" in capsys.readouterr().err


@pytest.mark.slow  # a sweep of real interviews that outlives two tokens
def test_a_long_sweep_renews_the_token_when_it_expires(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    no_limit = RateLimit(calls=100_000, per_seconds=60.0)
    with Fleet(["guarded-oauth2"], token_lifetime=2, rate_limit=no_limit) as short:
        agent = short.agents["guarded-oauth2"]
        assert agent.guard is not None and agent.credentials is not None
        saved = dict(os.environ)
        os.environ.update(agent.env)
        try:
            targets = tmp_path / "targets.txt"
            targets.write_text("\n".join([agent.card_url] * 64) + "\n", encoding="utf-8")
            # In a sweep a credential is bound to its agent by a config entry (matched by URL).
            home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
            entry = "\n".join(f"{k} = {json.dumps(v)}" for k, v in agent.credentials.to_config().items())
            (home / "config.toml").write_text(
                f'[agents.locked]\nurl = "{agent.card_url}"\n{entry}\n', encoding="utf-8"
            )
            began = time.monotonic()
            code = main(["verify", "--from", str(targets), "--jobs", "1", "--json", "--no-history"])
            elapsed = time.monotonic() - began
        finally:
            os.environ.clear()
            os.environ.update(saved)
        reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and [r["verdict"] for r in reports] == ["conformant"] * 64
    # A 2 s token is used for at most its first second (it is renewed a second before expiry): a
    # sweep longer than that needed a second token, and each token served several interviews.
    issued = agent.guard.tokens_issued
    assert elapsed > 1.0, elapsed  # long enough to outlive the first token
    assert 2 <= issued < 64, (issued, elapsed)


@pytest.mark.slow  # real servers
async def test_under_public_only_the_token_url_obeys_the_transport_rules(
    guarded: Fleet, tmp_path: Path
) -> None:
    agent = guarded.agents["guarded-oauth2"]
    card = tmp_path / "card.json"
    card.write_text(httpx.get(agent.card_url, timeout=5).text, encoding="utf-8")
    options = _options(agent)
    run = await run_interview(str(card), replace(options, public_only=True))
    tries = [e for e in run.exchanges if e.purpose == "auth:token"]
    assert tries and tries[-1].error is not None and tries[-1].error.startswith("blocked")
    assert run.report["verdict"] == "unreachable"
    assert "blocked" in _detail(run.report, "auth_failed")


def test_a_card_with_only_schemes_the_explorer_cannot_satisfy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card = agent_card(
        "Fortress",
        securitySchemes={
            "mtls": {"mtlsSecurityScheme": {}},
            "cookie": {"apiKeySecurityScheme": {"location": "cookie", "name": "sid"}},
        },
        securityRequirements=[{"schemes": {"mtls": {"list": []}}}, {"schemes": {"cookie": {"list": []}}}],
    )
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    code = main(["verify", str(path), "--json", "--no-history", "--timeout", "2"])
    report = json.loads(capsys.readouterr().out)
    assert code == 3
    found = [f for f in report["findings"] if f["code"] == "auth_scheme_unsupported"]
    assert found and found[0]["severity"] == "warning" and "mutual TLS" in found[0]["detail"]


@pytest.mark.slow  # real servers
async def test_a_cached_token_the_agent_refuses_is_replaced_once(guarded: Fleet) -> None:
    agent = guarded.agents["guarded-oauth2"]
    assert agent.guard is not None
    tokens = TokenCache()
    await run_interview(agent.card_url, _options(agent, tokens))
    issued = agent.guard.tokens_issued
    agent.guard.revoke_all()  # the cached token is still unexpired, but the server forgot it
    run = await run_interview(agent.card_url, _options(agent, tokens))
    assert run.report["verdict"] == "conformant", run.report["findings"]
    assert agent.guard.tokens_issued == issued + 1
    assert [e.status for e in run.exchanges if e.purpose == "ask:identity#1"] == [401, 200]


@pytest.mark.slow  # a subprocess serving the agents
def test_demo_serve_prints_the_environment_variables_of_the_guarded_agents() -> None:
    with demo_serve("--only", "steady", *GUARDED) as served:
        agents = served.agents
    assert set(agents) == {"steady", *GUARDED} and agents["steady"].env == {}
    for name, var in (
        ("guarded-bearer", "INTERVIEW_EXPLORER_DEMO_BEARER"),
        ("guarded-apikey", "INTERVIEW_EXPLORER_DEMO_API_KEY"),
        ("guarded-oauth2", "INTERVIEW_EXPLORER_DEMO_OAUTH2_SECRET"),
    ):
        assert list(agents[name].env) == [var] and len(agents[name].env[var]) > 15


@pytest.mark.slow  # real servers
async def test_concurrent_interviews_of_one_agent_fetch_one_token(guarded: Fleet) -> None:
    agent = guarded.agents["guarded-oauth2"]
    assert agent.guard is not None
    tokens = TokenCache()
    issued = agent.guard.tokens_issued
    runs = await asyncio.gather(*(run_interview(agent.card_url, _options(agent, tokens)) for _ in range(4)))
    assert {r.report["verdict"] for r in runs} == {"conformant"}
    assert agent.guard.tokens_issued == issued + 1  # the others waited for the first one's token


@pytest.mark.slow  # real servers
async def test_a_client_secret_is_never_sent_to_a_plain_http_token_url_elsewhere(
    guarded: Fleet, tmp_path: Path
) -> None:
    """Even a token URL the user pinned: plain HTTP carries the secret in clear, so only loopback."""
    agent = guarded.agents["guarded-oauth2"]
    options = replace(_options(agent), oauth2_token_url="http://auth.example.invalid/token")
    run = await run_interview(agent.card_url, options)
    tries = [e for e in run.exchanges if e.purpose == "auth:token"]
    assert len(tries) == 1 and tries[0].status is None  # recorded as refused, never sent
    assert tries[0].url == "http://auth.example.invalid/token"
    assert run.report["verdict"] == "unreachable"
    assert "not https" in _detail(run.report, "auth_failed")


@pytest.mark.slow  # real servers
async def test_an_openid_connect_scheme_takes_its_token_endpoint_from_discovery(
    guarded: Fleet, tmp_path: Path
) -> None:
    agent = guarded.agents["guarded-oauth2"]
    card = httpx.get(agent.card_url, timeout=5).json()
    discovery = f"{agent.base_url}/.well-known/openid-configuration"
    card["securitySchemes"] = {"oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": discovery}}}
    card["securityRequirements"] = [{"schemes": {"oidc": {"list": ["interview:read"]}}}]
    card.pop("signatures")  # unsigned, so discovery on the agent's own origin is what may choose
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    run = await run_interview(str(path), _options(agent))
    assert any(e.purpose == "ask:identity#1" and e.status == 200 for e in run.exchanges)
    assert not {"auth_required", "auth_failed", "auth_token_url_untrusted"} & _codes(run.report)
    found = [e for e in run.exchanges if e.purpose == "auth:discovery"]
    assert found and {e.url for e in found} == {discovery}  # once per attempt
    assert not any("Authorization" in dict(e.request_headers) for e in found)
    token = [e for e in run.exchanges if e.purpose == "auth:token"]
    assert token and token[-1].url == f"{agent.base_url}/oauth2/token" and token[-1].status == 200
    assert "scope=interview%3Aread" in (token[-1].request_body or b"").decode()


@pytest.mark.slow  # a real interview against a spy
def test_a_card_that_declares_no_scheme_gets_no_credential(
    guarded: Fleet, spy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The card says where each credential goes: one that declares none gets none, even when a
    `--bearer` was given (in a sweep one token serves many agents; it must not reach the rest)."""
    agent = guarded.agents["guarded-bearer"]
    assert agent.credentials is not None
    card = httpx.get(agent.card_url, timeout=5).json()
    card.pop("securitySchemes", None)
    card.pop("securityRequirements", None)
    card.pop("security", None)
    for interface in card.get("supportedInterfaces", []):
        interface["url"] = f"{spy}/a2a"
    path = tmp_path / "undeclared.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    options = [f"--{k.replace('_', '-')}={v}" for k, v in agent.credentials.to_config().items()]
    main(["verify", str(path), "--timeout", "5", *options, "--json", "--no-history"])
    out, err = capsys.readouterr()
    assert "declares no security scheme" in err
    asked = [headers for p, headers, _ in _Spy.seen if p == "/a2a"]
    assert asked, _Spy.seen  # the questions were put to the spy
    assert all("authorization" not in {k.lower() for k in headers} for headers in asked)
    assert agent.guard is not None and agent.guard.secret not in out + err


@pytest.mark.slow  # a subprocess fleet and a subprocess verify
def test_the_line_demo_serve_prints_for_the_oauth2_agent_verifies_it(tmp_path: Path) -> None:
    """`demo --serve` says on stderr, per guarded agent, a verify line with everything it needs
    (the secret's variable, the client id, the keys file); pasted into a shell it is conformant."""
    home = {"INTERVIEW_EXPLORER_HOME": str(tmp_path)}
    with demo_serve("--only", "guarded-oauth2", env=home) as served:
        line = served.wait_for_stderr("guarded-oauth2: ")[-1]
        command = line.split("guarded-oauth2: ", 1)[1].strip()
        assert "--oauth2-client-id" in command and "env:INTERVIEW_EXPLORER_DEMO_OAUTH2_SECRET" in command
        command = command.replace("interview-explorer ", f"{sys.executable} -m explorer ", 1)
        env = {**os.environ, **home}
        clean = {k: v for k, v in env.items() if not k.startswith("INTERVIEW_EXPLORER_DEMO_")}
        done = subprocess.run(["bash", "-c", command], env=clean, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
