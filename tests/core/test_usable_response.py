"""One rule for "is this a usable response?": `Exchange.problem()`, and every reader agrees on it.

Discovery, key loading, the procedure, the evaluation and the `card` command once each had their
own test (and card files were judged differently by the procedure and the evaluation). These
tests pin the rule down on plain exchanges, then serve real responses on 127.0.0.1 with statuses
at the edges of 2xx and check that the readers reach the same decision.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from explorer.cli import main
from explorer.core.run import Exchange
from explorer.interview.options import Options
from explorer.interview.procedure import reverify_offline, run_interview_sync
from explorer.net.http import Limits
from explorer.net.keys import KeysError, load_keys
from tests.support.http_server import base_url, serving
from tests.support.paths import REPO

CARD = json.loads((REPO / "examples" / "agent-card.json").read_text(encoding="utf-8"))
CARD["capabilities"] = {}  # no interview and no terms: nothing is fetched or asked beyond the card
JWKS = (REPO / "examples" / "agent-keys.jwks").read_bytes()


@pytest.mark.parametrize(
    ("exchange", "problem"),
    [
        (Exchange("card", 1, "GET", "http://a/", status=200), None),
        (Exchange("card", 1, "GET", "http://a/", status=203), None),
        (Exchange("card", 1, "GET", "http://a/", status=299), None),
        (Exchange("card", 1, "GET", "http://a/", status=199), "HTTP 199"),
        (Exchange("card", 1, "GET", "http://a/", status=301), "HTTP 301"),
        (Exchange("card", 1, "GET", "http://a/", status=404), "HTTP 404"),
        (Exchange("card", 1, "GET", "http://a/"), "HTTP None"),  # no status and no error: not usable
        (Exchange("card", 1, "GET", "http://a/", error="timeout"), "timeout"),
        (
            Exchange("card", 1, "GET", "http://a/", status=200, error="body_too_large", truncated=True),
            "body_too_large",
        ),
        (Exchange("card", 1, "GET", "http://a/", status=200, truncated=True), "body_too_large"),
        (Exchange("card", 1, "FILE", "card.json"), None),
        (Exchange("card", 1, "FILE", "card.json", error="transport: cannot read"), "transport: cannot read"),
        (Exchange("card", 1, "FILE", "card.json", truncated=True), "body_too_large"),
        # A transcript may claim anything: a "file read" with a status is not one this explorer made.
        (Exchange("card", 1, "FILE", "card.json", status=404), "HTTP 404 on a file read"),
    ],
)
def test_the_rule(exchange: Exchange, problem: str | None) -> None:
    assert exchange.problem() == problem
    assert exchange.usable is (problem is None)


class _Server:
    """Serves the example card (without extensions) and key set with a chosen status."""

    def __init__(self) -> None:
        self.status = 200
        self.base = ""


@pytest.fixture
def server() -> Iterator[_Server]:
    state = _Server()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (stdlib name)
            body = JWKS if self.path == "/keys.jwks" else json.dumps(CARD).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Handler) as httpd:
        state.base = base_url(httpd)
        yield state


@pytest.mark.parametrize(("status", "usable"), [(200, True), (203, True), (404, False), (500, False)])
def test_discovery_the_procedure_the_evaluation_and_card_agree(
    server: _Server, status: int, usable: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    server.status = status
    url = server.base + "/.well-known/agent-card.json"
    run = run_interview_sync(url, Options(timeout=2.0, reruns=0))
    card = next(e for e in run.exchanges if e.purpose == "card")
    assert card.usable is usable
    codes = {f["code"] for f in run.report["findings"]}
    # The procedure went on to read the card exactly when the evaluation could use it.
    assert ("card_unreachable" not in codes and "http_status" not in codes) is usable
    assert (run.report["card"].get("layout") is not None) is usable
    assert run.report["verdict"] == ("not_offered" if usable else "unreachable")
    assert reverify_offline(run).report["verdict"] == run.report["verdict"]
    assert {e.url for e in run.exchanges} <= {url, server.base + "/.well-known/agent.json"}
    assert (main(["card", url, "--timeout", "2"]) == 0) is usable
    err = capsys.readouterr().err
    assert usable or f"HTTP {status}" in err


@pytest.mark.parametrize(("status", "usable"), [(203, True), (404, False)])
def test_key_sets_follow_the_same_rule(server: _Server, status: int, usable: bool) -> None:
    server.status = status
    source = server.base + "/keys.jwks"
    if usable:
        keys, _ = asyncio.run(load_keys([source], Limits(timeout=2.0)))
        assert keys["keys"]
    else:
        with pytest.raises(KeysError, match=f"the server answered HTTP {status}"):
            asyncio.run(load_keys([source], Limits(timeout=2.0)))
