"""`interview-explorer card`: what a user sees for a card file or URL, and the exit statuses.

Cards are served by a real HTTP server on 127.0.0.1 (stdlib http.server in a thread); the signed
fixtures are tests/data/steady-card.json (spec-literal signature) and merged-card.json (signed
the way a2a-sdk signs a merged v1.0 + v0.3 card).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.core.signatures import generate_key, public_jwks, sign_card
from tests.support.http_server import base_url, serving
from tests.support.paths import DATA, REPO

STEADY = DATA / "steady-card.json"
STEADY_KEYS = DATA / "steady-keys.jwks"


class CardServer:
    """Serves fixed bodies by path; anything else is a 404."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, bytes]] = {}
        routes = self.routes

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                status, body = routes.get(self.path, (404, b"not found"))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        self.handler = Handler
        self.httpd: ThreadingHTTPServer  # set by the fixture once it serves
        self.base = ""

    def add(self, path: str, body: bytes | dict[str, Any], status: int = 200) -> str:
        self.routes[path] = (status, body if isinstance(body, bytes) else json.dumps(body).encode())
        return self.base + path


@pytest.fixture
def server() -> Iterator[CardServer]:
    srv = CardServer()
    with serving(srv.handler) as httpd:
        srv.httpd, srv.base = httpd, base_url(httpd)
        yield srv


def run_card(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["card", *args])
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_signed_card_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_card(capsys, str(STEADY), "--keys", str(STEADY_KEYS))
    assert code == 0, err
    assert "Layout     v1.0" in out
    assert "Name       Stonework Reconciler" in out
    assert "* JSONRPC 1.0 https://stonework.example/a2a  /supportedInterfaces/0" in out
    assert "reconcile-statement (Reconcile a statement)" in out
    assert "interview   declared at /capabilities/extensions/0 (required: false)" in out
    assert "https://stonework.example/terms/reconcile-statement.sow.json" in out
    assert "Signature  verified (payload form served)" in out
    assert "Every served member is covered" in out


def test_without_keys_the_signature_is_unverifiable_and_says_how_to_fix_it(capsys: Any) -> None:
    code, out, _ = run_card(capsys, str(STEADY))
    assert code == 0
    assert "Signature  unverifiable" in out
    assert "no trusted key has kid 'stonework-card-2026'" in out
    assert "pass --keys" in out


def test_a_merged_sdk_card_lists_its_unsigned_members(capsys: Any) -> None:
    code, out, _ = run_card(capsys, str(DATA / "merged-card.json"), "--keys", str(DATA / "merged-keys.jwks"))
    assert code == 0
    assert "Layout     mixed" in out
    assert "Signature  verified (payload form sdk-normalized)" in out
    after = out.split("Not covered by the sdk-normalized payload", 1)[1]
    for member in ("/url", "/preferredTransport", "/protocolVersion"):
        assert f"\n  {member}\n" in after


def test_the_example_card_of_the_readme_verifies(capsys: Any) -> None:
    code, out, _ = run_card(
        capsys,
        str(REPO / "examples" / "agent-card.json"),
        "--keys",
        str(REPO / "examples" / "agent-keys.jwks"),
    )
    assert code == 0
    assert "Signature  verified" in out


def test_json_output_is_one_object(capsys: Any) -> None:
    code, out, _ = run_card(capsys, str(STEADY), "--keys", str(STEADY_KEYS), "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {
        "target",
        "url",
        "discovered_via",
        "sha256",
        "card",
        "signature",
        "jku",
        "lossy_integers",
        "keys",
        "proposals",
        "proposals_not_fetched",
        "declared",
    }
    assert doc["discovered_via"] == "file"
    # A card file is read offline: its committed proposal is named, not fetched from the internet.
    assert doc["proposals"] == []
    assert doc["proposals_not_fetched"] == ["https://stonework.example/terms/reconcile-statement.sow.json"]
    assert doc["declared"]["terms"] == []
    assert doc["declared"]["identity"][0] == {
        "member": "/name",
        "document": "card",
        "value": "Stonework Reconciler",
        "signed": True,
    }
    assert len(doc["sha256"]) == 64
    assert doc["card"]["layout"] == "v1.0"
    assert doc["card"]["jsonrpc_url"] == "https://stonework.example/a2a"
    assert doc["card"]["extensions"]["interview"]["required"] is False
    assert doc["card"]["extensions"]["terms"][0]["valid"] is True
    assert doc["signature"]["status"] == "verified"
    assert doc["signature"]["form"] == "served"
    assert doc["signature"]["signatures"][0]["kid"] == "stonework-card-2026"
    assert doc["keys"]["count"] == 1


def test_a_base_url_falls_back_to_the_older_well_known_path(server: CardServer, capsys: Any) -> None:
    server.add("/.well-known/agent.json", STEADY.read_bytes())
    # The steady card names its proposal on stonework.example: the tests stay on loopback.
    code, out, err = run_card(
        capsys, server.base, "--keys", str(STEADY_KEYS), "--json", "--proposals", "skip"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["proposals_not_fetched"] == ["https://stonework.example/terms/reconcile-statement.sow.json"]
    assert doc["url"] == server.base + "/.well-known/agent.json"
    assert doc["discovered_via"] == "/.well-known/agent.json"
    assert doc["signature"]["status"] == "verified"


def test_a_card_url_and_keys_from_a_url(server: CardServer, capsys: Any) -> None:
    card_url = server.add("/cards/steady.json", STEADY.read_bytes())
    keys_url = server.add("/keys.jwks", STEADY_KEYS.read_bytes())
    code, out, _ = run_card(capsys, card_url, "--keys", keys_url, "--proposals", "skip")
    assert code == 0
    assert f"Card       {card_url} (via card-url)" in out
    assert "Signature  verified" in out


def test_no_card_at_the_url_exits_3(server: CardServer, capsys: Any) -> None:
    code, out, err = run_card(capsys, server.base + "/agent", "--json")
    assert code == 3
    assert json.loads(out)["error"]["code"] == "card_unreachable"
    assert "HTTP 404" in err and "agent-card.json answered HTTP 404" in err


def test_a_refused_connection_exits_3(server: CardServer, capsys: Any) -> None:
    base = server.base
    server.httpd.shutdown()
    server.httpd.server_close()
    code, _, err = run_card(capsys, base + "/card.json", "--timeout", "2")
    assert code == 3
    assert "no card at" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"name": "a", "name": "b"}', "duplicate key"),
        (b"[1, 2, 3]", "is a JSON array, not an object"),
        (b"{not json", "not usable JSON"),
        (b'{"n": NaN}', "not usable JSON"),
        (b"\xff\xfe{}", "not usable JSON"),
    ],
)
def test_a_malformed_card_exits_3_with_a_clear_message(
    server: CardServer, capsys: Any, body: bytes, expected: str
) -> None:
    url = server.add("/bad.json", body)
    code, out, err = run_card(capsys, url)
    assert code == 3
    assert expected in err
    assert out == ""


@pytest.mark.slow  # a subprocess
def test_a_malformed_card_prints_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    bad = tmp_path / "card.json"
    bad.write_bytes(b'{"skills": [1, 2,]}')
    command = [sys.executable, "-m", "explorer", "card", str(bad)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 3
    assert "not usable JSON" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("keys", ["missing.jwks", "card"])
def test_unreadable_keys_are_a_usage_error(tmp_path: Path, capsys: Any, keys: str) -> None:
    source = str(tmp_path / keys) if keys == "missing.jwks" else str(STEADY)  # a card is not a JWKS
    code, _, err = run_card(capsys, str(STEADY), "--keys", source)
    assert code == 2
    assert "--keys" in err


def test_bad_options_are_usage_errors(capsys: Any) -> None:
    assert run_card(capsys, str(STEADY), "--timeout", "soon")[0] == 2
    assert run_card(capsys)[0] == 2


def test_hostile_text_is_escaped_and_odd_cards_still_show(tmp_path: Path, capsys: Any) -> None:
    key = generate_key("ES256", kid="k")
    doc = {
        "name": "Evil\x1b]52;c;cHduZWQ=\x07\x1b[2J agent \u202egnp.exe",
        "skills": "not a list",
        "capabilities": {"extensions": [{"uri": "urn:x\x1b[31m"}, 5]},
        "supportedInterfaces": [
            {"url": "https://e.example/rpc\r\nInjected: 1", "protocolBinding": "JSONRPC"}
        ],
        "big": 2**64 + 1,
    }
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(sign_card(doc, key, kid="k")))
    keys = tmp_path / "keys.jwks"
    keys.write_text(json.dumps(public_jwks(key)))
    code, out, _ = run_card(capsys, str(path), "--keys", str(keys))
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\r" not in out
    assert "Evil\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J agent <U+202E>gnp.exe" in out
    assert "/skills should be an array, not string" in out
    assert "Integers beyond +-(2^53-1)" in out and "  /big" in out
    assert "Signature  verified" in out
    code, out, _ = run_card(capsys, str(path), "--json")
    assert code == 0 and "\x1b" not in out
    assert json.loads(out)["lossy_integers"] == ["/big"]


@pytest.mark.slow  # a fresh interpreter
def test_the_card_command_never_imports_textual(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from explorer.cli import main\n"
        f"code = main(['card', {str(STEADY)!r}, '--keys', {str(STEADY_KEYS)!r}, '--json'])\n"
        "assert code == 0, code\n"
        "loaded = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]\n"
        "assert not loaded, loaded\n"
    )
    command = [sys.executable, "-c", script]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
