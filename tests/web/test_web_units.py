"""The served explorer's decisions, each on its own: token, cookie, Host, Origin, binding, environment.

These are the rules `explorer.web` applies to every request and every session (tests/web/test_web_serve.py
proves them against the running server); here each is checked at its edges without a socket.
"""

from __future__ import annotations

import json
import re

import pytest

from explorer.web import page
from explorer.web.binding import plan_binding
from explorer.web.environment import referenced_variables, session_environment
from explorer.web.guard import Address, Guard, public_address
from explorer.web.handover import SESSION_ENV, DemoHandover, Launch
from explorer.web.session_process import safe_file_name

LOCAL = Address("http", "127.0.0.1", 8123)


# --- guard ----------------------------------------------------------------------------------------


def test_every_guard_is_fresh_and_its_url_holds_only_the_token() -> None:
    first, second = Guard.fresh((LOCAL,)), Guard.fresh((LOCAL,))
    assert first.token != second.token and first.cookie_secret != second.cookie_secret
    assert first.token != first.cookie_secret
    assert first.url == f"http://127.0.0.1:8123/?token={first.token}"
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", first.token)
    assert first.cookie_name == "interview_explorer_8123" and not first.secure


def test_the_token_and_the_cookie_match_only_themselves() -> None:
    guard = Guard.fresh((LOCAL,))
    assert guard.token_ok(guard.token)
    for wrong in (
        None,
        "",
        guard.token[:-1],
        guard.token + "x",
        guard.token.upper(),
        guard.cookie_secret,
        "é" * 43,
        guard.token + "\0",
    ):
        assert not guard.token_ok(wrong), wrong
    assert guard.cookie_ok(guard.cookie_secret)
    assert not guard.cookie_ok(guard.token) and not guard.cookie_ok(None) and not guard.cookie_ok("")


def test_the_host_header_must_name_an_address_browsers_use() -> None:
    guard = Guard.fresh((public_address("https://explorer.example.org"), LOCAL))
    for host in ("127.0.0.1:8123", "EXPLORER.example.org", "explorer.example.org"):
        assert guard.host_ok(host), host
    for host in (
        None,
        "",
        "127.0.0.1",
        "127.0.0.1:8124",
        "localhost:8123",
        "attacker.example:8123",
        "explorer.example.org:8443",
        "explorer.example.org.attacker.example",
        "127.0.0.1:8123 x",
    ):
        assert not guard.host_ok(host), host


def test_the_origin_must_be_one_of_the_servers_own() -> None:
    guard = Guard.fresh((LOCAL,))
    assert guard.origin_ok("http://127.0.0.1:8123")
    for origin in (
        None,
        "",
        "null",
        "http://127.0.0.1:8124",
        "http://localhost:8123",
        "https://127.0.0.1:8123",
        "http://127.0.0.1:8123/",
        "http://attacker.example",
        "http://127.0.0.1",
    ):
        assert not guard.origin_ok(origin), origin


def test_addresses_are_written_as_browsers_write_them() -> None:
    assert Address("http", "::1", 8000).authority == "[::1]:8000"
    assert Address("http", "::1", 8000).origin == "http://[::1]:8000"
    assert Address("http", "127.0.0.1", 80).origin == "http://127.0.0.1"
    assert Address("https", "x.example", 443).authority == "x.example"
    assert Guard.fresh((public_address("https://x.example"),)).secure


@pytest.mark.parametrize(
    "text",
    [
        "explorer.example.org",
        "ftp://x.example",
        "https://user:pw@x.example",
        "https://x.example/path",
        "https://x.example/?q=1",
        "https://x.example:99999",
        "https://",
    ],
)
def test_a_public_origin_is_exactly_scheme_host_and_port(text: str) -> None:
    with pytest.raises(ValueError):
        public_address(text)


def test_a_public_origin_keeps_its_port_and_drops_the_default_one() -> None:
    assert public_address("https://X.example:8443/").origin == "https://x.example:8443"
    assert public_address("http://x.example:80").origin == "http://x.example"


# --- binding --------------------------------------------------------------------------------------


def test_loopback_addresses_need_no_acknowledgement() -> None:
    for host, bound in (
        ("127.0.0.1", "127.0.0.1"),
        ("localhost", "127.0.0.1"),
        ("127.0.0.2", "127.0.0.2"),
        ("::1", "::1"),
        ("[::1]", "::1"),
    ):
        binding = plan_binding(host, 0)
        assert binding.host == bound and binding.warning is None
    assert [a.origin for a in plan_binding("127.0.0.1", 0).addresses(8123)] == ["http://127.0.0.1:8123"]


def test_any_other_address_needs_expose_and_gets_a_warning() -> None:
    for host in ("0.0.0.0", "192.168.1.10", "::", "203.0.113.5"):
        with pytest.raises(ValueError, match="--expose"):
            plan_binding(host, 0)
    binding = plan_binding("192.168.1.10", 0, expose=True)
    assert binding.warning is not None and "reverse proxy with TLS" in binding.warning
    assert [a.origin for a in binding.addresses(9000)] == ["http://192.168.1.10:9000"]


def test_listening_everywhere_also_needs_the_origin_browsers_use() -> None:
    with pytest.raises(ValueError, match="--public-origin"):
        plan_binding("0.0.0.0", 0, expose=True)
    binding = plan_binding("0.0.0.0", 0, expose=True, public_origin="https://explorer.example.org")
    assert [a.origin for a in binding.addresses(9000)] == ["https://explorer.example.org"]
    behind = plan_binding("127.0.0.1", 9000, public_origin="https://explorer.example.org")
    assert [a.origin for a in behind.addresses(9000)] == [
        "https://explorer.example.org",
        "http://127.0.0.1:9000",
    ]


@pytest.mark.parametrize("host", ["example.org", "my-laptop", ""])
def test_a_host_name_is_refused(host: str) -> None:
    with pytest.raises(ValueError, match="IP address"):
        plan_binding(host, 0)


# --- environment ----------------------------------------------------------------------------------


SERVER_ENV = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "LANG": "C.UTF-8",
    "LC_TIME": "en_GB.UTF-8",
    "TZ": "UTC",
    "PYTHONPATH": "/src",
    "HTTPS_PROXY": "http://proxy:3128",
    "INTERVIEW_EXPLORER_HOME": "/data",
    "STONEWORK_TOKEN": "secret-a",
    "AWS_SECRET_ACCESS_KEY": "secret-b",
    "GITHUB_TOKEN": "secret-c",
    "SSH_AUTH_SOCK": "/tmp/agent",
    "DISPLAY": ":0",
    "TEXTUAL": "devtools",
    "PYTHONSTARTUP": "/evil.py",
}


def test_a_session_gets_named_variables_only() -> None:
    env = session_environment(SERVER_ENV, {"STONEWORK_TOKEN", "UNSET_VAR"}, {"EXTRA": "1"})
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "LC_TIME": "en_GB.UTF-8",
        "TZ": "UTC",
        "HTTPS_PROXY": "http://proxy:3128",
        "INTERVIEW_EXPLORER_HOME": "/data",
        "STONEWORK_TOKEN": "secret-a",
        "EXTRA": "1",
    }


def test_references_are_found_wherever_settings_hold_them() -> None:
    config_settings = {"headers": (("Authorization", "env:GLOBAL_TOKEN"),), "keys": ("file:/k.jwks",)}
    agents = [{"bearer": "env:AGENT_BEARER", "oauth2_scopes": ("read",)}, {"api_key": "file:~/key"}]
    options = {"header": ["X-Api: env:HEADER_VAR", "Plain: value"], "bearer": "env:CLI", "target": "env:"}
    assert referenced_variables(config_settings, agents, options, None, 3) == {
        "GLOBAL_TOKEN",
        "AGENT_BEARER",
        "CLI",
    }


# --- handover -------------------------------------------------------------------------------------


def test_a_launch_travels_as_json_and_the_demo_secrets_only_as_variables() -> None:
    demo = DemoHandover(
        agents=(("steady", "http://127.0.0.1:1/.well-known/agent-card.json"),),
        skipped={"sdk-built": "a2a-sdk is not installed"},
        keys=({"keys": [{"kty": "OKP", "kid": "k"}]},),
        credentials={"http://127.0.0.1:2/card": {"bearer": "env:DEMO_BEARER"}},
        fleet=("http://127.0.0.1:3/card",),
        secrets={"DEMO_BEARER": "the-demo-secret"},
    )
    launch = Launch(options={"target": None, "home": "/h", "headers": ["A: env:X"]}, demo=demo)
    environment = launch.environment()
    assert environment["DEMO_BEARER"] == "the-demo-secret"
    assert "the-demo-secret" not in environment[SESSION_ENV]
    back = Launch.from_json(environment[SESSION_ENV])
    assert back.options == launch.options
    assert back.demo is not None and back.demo.agents == demo.agents and back.demo.fleet == demo.fleet
    assert back.demo.credentials == demo.credentials and back.demo.skipped == demo.skipped
    assert referenced_variables(*launch.references()) == {"X", "DEMO_BEARER"}
    assert json.loads(Launch(options={}).to_json()) == {"options": {}}


# --- the page, its files and downloads ------------------------------------------------------------


def test_the_page_loads_nothing_from_another_host() -> None:
    text = page.page(16)
    assert 'data-font-size="16"' in text and 'id="terminal"' in text
    for name, (path, _media_type) in page.static_files().items():
        assert path.is_file(), name
    ours = [
        page.page(),
        *(path.read_text() for name, (path, _) in page.static_files().items() if name.startswith("page.")),
    ]
    for text in ours:
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), text[:200]
    assert "googleapis" not in "".join(ours)
    assert "@font-face" in page.static_files()["page.css"][0].read_text()


def test_every_response_forbids_framing_other_hosts_and_inline_scripts() -> None:
    csp = page.HEADERS["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";")[0]
    assert page.HEADERS["Referrer-Policy"] == "no-referrer"


@pytest.mark.parametrize(("given", "expected"), [("20", 20), ("7", 16), ("41", 16), ("x", 16), (None, 16)])
def test_the_font_size_stays_within_reason(given: str | None, expected: int) -> None:
    assert page.font_size(given) == expected


def test_a_delivered_file_keeps_a_safe_name() -> None:
    assert safe_file_name("steady-run3.json") == "steady-run3.json"
    assert safe_file_name("../../etc/passwd") == "etc-passwd"
    assert safe_file_name('a"b\r\nc.md') == "a-b-c.md"
    assert safe_file_name("...") == "download"
    disposition = page.content_disposition("résumé run.md")
    assert disposition.startswith('attachment; filename="r?sum? run.md"')
    assert "filename*=UTF-8''r%C3%A9sum%C3%A9%20run.md" in disposition
