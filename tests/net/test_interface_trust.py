"""A card is not trusted to choose where a credential goes: its JSON-RPC interface on another origin.

Two real servers on two loopback origins (127.0.0.1, two ports): the first serves the card the
user points the explorer at (and, for OAuth 2.0, a token endpoint); the second is the JSON-RPC
interface that card names, and records the headers of every request it gets. A bearer token, an
API key and an OAuth 2.0 access token reach the second origin only when the user pinned it
(`--interface-origin`, or `interface_origin` in the agent's config entry) or a card signature
verified under a key the user trusts covers the interface; an unsigned card gets nothing sent
there (and, for OAuth 2.0, no token is even asked for), with an `auth_origin_untrusted` finding
that says how to allow it. On the card's own origin a credential goes as before, but never while
the card's signature fails.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from explorer.cli import main
from explorer.core.signatures import generate_key, public_jwks, sign_card
from tests.support.cards import agent_card
from tests.support.http_server import base_url, send_json, serving

pytestmark = pytest.mark.slow  # real servers, whole interviews through the command line

BEARER = "bearer-token-for-the-agent-0123"
API_KEY = "api-key-for-the-agent-4567"
CLIENT_SECRET = "client-secret-of-the-runner-89ab"
ACCESS_TOKEN = "access-token-issued-cdef-0123"
ENV = {"IT_BEARER": BEARER, "IT_API_KEY": API_KEY, "IT_CLIENT_SECRET": CLIENT_SECRET}


def _method_not_found(handler: BaseHTTPRequestHandler, body: bytes) -> None:
    try:
        request_id = json.loads(body).get("id")
    except (ValueError, AttributeError):
        request_id = None
    send_json(handler, {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}})


class _CardHost(BaseHTTPRequestHandler):
    """The origin the user chose: the card at any GET, a token endpoint at POST /token, and
    -32601 to any other POST (an interface on the card's own origin); records every POST."""

    card: ClassVar[dict[str, Any]] = {}
    posts: ClassVar[list[tuple[str, dict[str, str]]]] = []
    lock = threading.Lock()

    def do_GET(self) -> None:
        send_json(self, self.card)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with self.lock:
            type(self).posts.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        if self.path == "/token":
            send_json(self, {"access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 300})
        else:
            _method_not_found(self, body)

    def log_message(self, *args: Any) -> None:
        pass


class _Interface(BaseHTTPRequestHandler):
    """The interface the card names: records each request's headers, answers -32601."""

    seen: ClassVar[list[dict[str, str]]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        with self.lock:
            type(self).seen.append({k.lower(): v for k, v in self.headers.items()})
        _method_not_found(self, body)

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def origins(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """(the card's origin, the interface's origin), both serving, their records cleared."""
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    _CardHost.posts = []
    _Interface.seen = []
    with serving(_CardHost) as card_host, serving(_Interface) as interface:
        yield base_url(card_host), base_url(interface)


SCHEMES: dict[str, dict[str, Any]] = {
    "bearer": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
    "api_key": {"apiKey": {"apiKeySecurityScheme": {"location": "header", "name": "X-Api-Key"}}},
}
OPTIONS = {
    "bearer": ["--bearer", "env:IT_BEARER"],
    "api_key": ["--api-key", "env:IT_API_KEY"],
    "oauth2": ["--oauth2-client-id", "runner", "--oauth2-client-secret", "env:IT_CLIENT_SECRET"],
}
SENT = {"bearer": BEARER, "api_key": API_KEY, "oauth2": ACCESS_TOKEN}


def _card(kind: str, card_origin: str, interface: str) -> dict[str, Any]:
    """A card whose one security scheme is `kind` and whose JSON-RPC interface is `interface`."""
    if kind == "oauth2":
        flow = {"tokenUrl": f"{card_origin}/token", "scopes": {"interview:read": "ask"}}
        schemes = {"oauth2": {"oauth2SecurityScheme": {"flows": {"clientCredentials": flow}}}}
    else:
        schemes = SCHEMES[kind]
    name = next(iter(schemes))
    return agent_card(
        "two-origins",
        url=f"{interface}/rpc",
        skills=["lookup"],
        securitySchemes=schemes,
        securityRequirements=[{"schemes": {name: {"list": []}}}],
    )


def _verify(card_origin: str, *options: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    """`verify CARD_URL OPTIONS --json`: (exit status, report, stderr)."""
    code = main(
        [
            "verify",
            f"{card_origin}/.well-known/agent-card.json",
            "--timeout",
            "5",
            "--json",
            "--no-history",
            "--reruns",
            "0",
            *options,
        ]
    )
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _credentials_seen() -> list[str]:
    """Every credential-bearing header value the interface got."""
    return [
        value
        for headers in _Interface.seen
        for name, value in headers.items()
        if name in ("authorization", "x-api-key")
    ]


def _finding(report: dict[str, Any], code: str) -> dict[str, Any] | None:
    return next((f for f in report["findings"] if f["code"] == code), None)


@pytest.mark.parametrize("kind", ["bearer", "api_key", "oauth2"])
def test_an_unsigned_card_naming_an_interface_elsewhere_gets_no_credential_sent_there(
    kind: str, origins: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card_origin, interface = origins
    _CardHost.card = _card(kind, card_origin, interface)
    code, report, err = _verify(card_origin, *OPTIONS[kind], tmp_path=tmp_path, capsys=capsys)

    assert _credentials_seen() == []
    assert _CardHost.posts == []  # no client secret either: the token would go nowhere
    assert code == 3 and report["verdict"] == "unreachable"
    found = _finding(report, "auth_origin_untrusted")
    assert found is not None and found["severity"] == "error", report["findings"]
    assert interface in found["detail"] and "--interface-origin" in found["detail"]
    assert "--keys" in found["detail"]
    assert "--interface-origin" in err
    for secret in (BEARER, API_KEY, CLIENT_SECRET, ACCESS_TOKEN):
        assert secret not in json.dumps(report) and secret not in err


@pytest.mark.parametrize("kind", ["bearer", "api_key", "oauth2"])
def test_the_interface_s_origin_pinned_by_the_user_gets_the_credential(
    kind: str, origins: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card_origin, interface = origins
    _CardHost.card = _card(kind, card_origin, interface)
    code, report, _ = _verify(
        card_origin, *OPTIONS[kind], "--interface-origin", interface, tmp_path=tmp_path, capsys=capsys
    )
    assert _finding(report, "auth_origin_untrusted") is None, report["findings"]
    assert _Interface.seen, report["findings"]
    expected = SENT[kind] if kind == "api_key" else f"Bearer {SENT[kind]}"
    assert set(_credentials_seen()) == {expected}
    assert len(_credentials_seen()) == len(_Interface.seen)  # every interview call carried it


def test_the_pin_in_the_agent_s_config_entry_counts_too(
    origins: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    card_origin, interface = origins
    _CardHost.card = _card("bearer", card_origin, interface)
    card_url = f"{card_origin}/.well-known/agent-card.json"
    Path(os.environ["INTERVIEW_EXPLORER_HOME"], "config.toml").write_text(
        f'[agents.split]\nurl = "{card_url}"\nbearer = "env:IT_BEARER"\ninterface_origin = "{interface}"\n'
    )
    code = main(["verify", "split", "--timeout", "5", "--json", "--no-history", "--reruns", "0"])
    report = json.loads(capsys.readouterr().out)
    assert _finding(report, "auth_origin_untrusted") is None, report["findings"]
    assert set(_credentials_seen()) == {f"Bearer {BEARER}"}, (code, report["findings"])


def _signed(card: dict[str, Any], tmp_path: Path) -> tuple[dict[str, Any], str]:
    key = generate_key("ES256", kid="card-signer")
    keys = tmp_path / "trusted.jwks"
    keys.write_text(json.dumps(public_jwks(key)))
    return sign_card(card, key, kid="card-signer"), str(keys)


@pytest.mark.parametrize("kind", ["bearer", "oauth2"])
def test_a_card_signed_under_a_key_you_trust_may_name_its_interface_elsewhere(
    kind: str, origins: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card_origin, interface = origins
    _CardHost.card, keys = _signed(_card(kind, card_origin, interface), tmp_path)
    _, report, _ = _verify(card_origin, *OPTIONS[kind], "--keys", keys, tmp_path=tmp_path, capsys=capsys)
    assert report["card"]["signature"]["status"] == "verified"
    assert _finding(report, "auth_origin_untrusted") is None, report["findings"]
    assert set(_credentials_seen()) == {f"Bearer {SENT[kind]}"}


def test_a_signature_under_a_key_you_do_not_trust_vouches_for_nothing(
    origins: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card_origin, interface = origins
    _CardHost.card, _ = _signed(_card("bearer", card_origin, interface), tmp_path)
    _, report, _ = _verify(card_origin, *OPTIONS["bearer"], tmp_path=tmp_path, capsys=capsys)
    assert report["card"]["signature"]["status"] == "unverifiable"
    assert _finding(report, "auth_origin_untrusted") is not None
    assert _credentials_seen() == []


def test_no_credential_goes_even_to_the_card_s_own_origin_while_its_signature_fails(
    origins: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The interface on the card's own origin (the card host answers its calls here), but the card
    was changed after it was signed under a key the user trusts."""
    card_origin, _ = origins
    signed, keys = _signed(_card("bearer", card_origin, card_origin), tmp_path)
    _CardHost.card = {**signed, "name": "changed after signing"}
    _, report, _ = _verify(card_origin, *OPTIONS["bearer"], "--keys", keys, tmp_path=tmp_path, capsys=capsys)
    assert report["card"]["signature"]["status"] == "invalid"
    found = _finding(report, "auth_origin_untrusted")
    assert found is not None and "signature fails" in found["detail"], report["findings"]
    assert _CardHost.posts == []


def test_an_interface_on_the_card_s_own_origin_gets_the_credential_unsigned(
    origins: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the user pointed the explorer at: an unsigned card, its interface on its own origin."""
    card_origin, _ = origins
    _CardHost.card = _card("bearer", card_origin, card_origin)
    _, report, _ = _verify(card_origin, *OPTIONS["bearer"], tmp_path=tmp_path, capsys=capsys)
    assert _finding(report, "auth_origin_untrusted") is None, report["findings"]
    assert _CardHost.posts and {h.get("authorization") for _, h in _CardHost.posts} == {f"Bearer {BEARER}"}


def test_the_refusal_is_recorded_and_reads_the_same_offline(
    origins: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    card_origin, interface = origins
    _CardHost.card = _card("bearer", card_origin, interface)
    transcripts = tmp_path / "transcripts"
    code, report, _ = _verify(
        card_origin, *OPTIONS["bearer"], "--transcripts", str(transcripts), tmp_path=tmp_path, capsys=capsys
    )
    assert code == 3 and _finding(report, "auth_origin_untrusted") is not None
    written = next(transcripts.glob("*.json"))
    assert BEARER not in written.read_text()
    assert main(["verify", "--offline", str(written), "--json"]) == 3
    offline = json.loads(capsys.readouterr().out)
    assert _finding(offline, "auth_origin_untrusted") == _finding(report, "auth_origin_untrusted")
