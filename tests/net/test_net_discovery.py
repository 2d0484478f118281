"""Card discovery: base URLs, card URLs, files and OpenClasp references, against a loopback server.

The server is a stdlib ThreadingHTTPServer serving a dict of canned routes, so each test states
exactly which paths exist and then checks which exchanges discovery recorded, under which
purpose, and what it told the user.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from explorer.net.discovery import discover_card
from explorer.net.http import Fetcher, Limits
from tests.support.http_server import base_url, serving

CARD = {"name": "Stonework", "supportedInterfaces": []}


class Routes:
    """path -> (status, body); a body of None hangs the request."""

    def __init__(self) -> None:
        self.table: dict[str, tuple[int, bytes | None]] = {}
        self.queries: list[dict[str, list[str]]] = []


class _Handler(BaseHTTPRequestHandler):
    routes: Routes

    def do_GET(self) -> None:  # noqa: N802 (stdlib name)
        parts = urlsplit(self.path)
        self.routes.queries.append(parse_qs(parts.query))
        status, body = self.routes.table.get(parts.path, (404, b'{"error":"not found"}'))
        if body is None:
            time.sleep(5)
            return
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[tuple[str, Routes]]:
    routes = Routes()
    handler = type("Handler", (_Handler,), {"routes": routes})
    with serving(handler) as server:
        yield base_url(server), routes


async def _discover(target: str, **kwargs: object) -> tuple[list, object, str, list[str]]:
    said: list[str] = []
    async with Fetcher(Limits(timeout=1.0)) as f:
        ex, via = await discover_card(f, target, say=said.append, **kwargs)  # type: ignore[arg-type]
    return f.exchanges, ex, via, said


async def test_base_url_uses_agent_card_json(site: tuple[str, Routes]) -> None:
    base, routes = site
    routes.table["/.well-known/agent-card.json"] = (200, json.dumps(CARD).encode())
    exchanges, ex, via, said = await _discover(base + "/")
    assert via == "/.well-known/agent-card.json"
    assert [e.purpose for e in exchanges] == ["card"]
    assert json.loads(ex.response_body) == CARD
    assert any("card found at" in s for s in said)


async def test_base_url_falls_back_to_agent_json(site: tuple[str, Routes]) -> None:
    base, routes = site
    routes.table["/.well-known/agent.json"] = (200, b"{}")
    exchanges, ex, via, _ = await _discover(base)
    assert via == "/.well-known/agent.json"
    assert [(e.purpose, e.status) for e in exchanges] == [("card-discovery", 404), ("card", 200)]
    assert ex.url.endswith("/.well-known/agent.json")


async def test_no_card_anywhere_leaves_a_failed_card_exchange(site: tuple[str, Routes]) -> None:
    base, _ = site
    exchanges, ex, _, said = await _discover(base)
    assert [e.purpose for e in exchanges] == ["card-discovery", "card"]
    assert ex.status == 404
    assert "no card under" in said[-1]


async def test_a_timeout_is_not_retried_on_the_other_path(site: tuple[str, Routes]) -> None:
    base, routes = site
    routes.table["/.well-known/agent-card.json"] = (200, None)
    t0 = time.monotonic()
    exchanges, ex, _, _ = await _discover(base)
    assert ex.error == "timeout" and len(exchanges) == 1
    assert time.monotonic() - t0 < 2.0


async def test_card_url_is_fetched_as_is(site: tuple[str, Routes]) -> None:
    base, routes = site
    routes.table["/cards/mine.json"] = (200, b"{}")
    exchanges, ex, via, _ = await _discover(base + "/cards/mine.json")
    assert via == "card-url" and ex.status == 200 and len(exchanges) == 1


async def test_card_file(tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_bytes(b'{"name": "file"}')
    exchanges, ex, via, _ = await _discover(str(path))
    assert via == "file" and ex.method == "FILE" and ex.url == str(path)
    assert ex.response_body == b'{"name": "file"}' and ex.error is None
    assert exchanges == [ex]


async def test_oversized_card_file_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * 2000)
    async with Fetcher(Limits(max_bytes=1000)) as f:
        ex, _ = await discover_card(f, str(path))
    assert ex.error == "body_too_large" and ex.truncated and len(ex.response_body) == 1000


async def test_nonsense_target_is_a_clear_error() -> None:
    _, ex, _, _ = await _discover("no such thing at all")
    assert ex.error is not None and "not a URL, an existing card file" in ex.error


async def test_openclasp_public_card_url_leads_to_the_a2a_card(site: tuple[str, Routes]) -> None:
    base, routes = site
    routes.table["/agents/agt_1/a2a-agent-card.json"] = (200, b"{}")
    exchanges, ex, via, said = await _discover(base + "/agents/agt_1/card.json")
    assert via == "openclasp:public_card"
    assert ex.url == base + "/agents/agt_1/a2a-agent-card.json" and ex.status == 200
    assert "OpenClasp public card URL" in said[0] and "a2a-agent-card.json" in said[0]


async def test_openclasp_profile_url_is_resolved(site: tuple[str, Routes]) -> None:
    base, routes = site
    a2a = base + "/agents/agt_9/a2a-agent-card.json"
    resolution = {
        "reference": "stonework",
        "matchedBy": "slug",
        "card": {"agentId": "agt_9", "a2aAgentCardUrl": a2a},
    }
    routes.table["/directory/resolve"] = (200, json.dumps(resolution).encode())
    routes.table["/agents/agt_9/a2a-agent-card.json"] = (200, b"{}")
    exchanges, ex, via, said = await _discover(base + "/a/stonework")
    assert via == "openclasp:profile"
    assert [e.purpose for e in exchanges] == ["openclasp:resolve", "card"]
    assert {"reference": [base + "/a/stonework"]} in routes.queries
    assert ex.url == a2a and ex.status == 200
    assert any(a2a in s for s in said)


async def test_bare_slug_needs_and_uses_the_openclasp_base(site: tuple[str, Routes]) -> None:
    base, routes = site
    resolution = {"card": {"agentId": "agt_2"}}
    routes.table["/directory/resolve"] = (200, json.dumps(resolution).encode())
    routes.table["/agents/agt_2/a2a-agent-card.json"] = (200, b"{}")
    _, ex, via, _ = await _discover("stonework", openclasp_base=base)
    assert via == "openclasp:slug_or_id" and ex.url == base + "/agents/agt_2/a2a-agent-card.json"
    _, ex, _, _ = await _discover("stonework")
    assert ex.error is not None and "--openclasp" in ex.error


async def test_unresolvable_reference_is_a_failed_card(site: tuple[str, Routes]) -> None:
    base, _ = site
    exchanges, ex, _, _ = await _discover("ghost", openclasp_base=base)
    assert [e.purpose for e in exchanges] == ["openclasp:resolve", "card"]
    assert (
        ex.error is not None
        and "could not resolve the reference 'ghost'" in ex.error
        and "HTTP 404" in ex.error
    )


async def test_the_card_request_announces_a2a_version_1_0(site: tuple[str, Routes]) -> None:
    # @a2a-js/sdk's legacyCompat serves a v0.3 translation of the card (the v1.0 card's signature
    # on other bytes) to a request that does not announce 1.0, as its own client does.
    base, routes = site
    routes.table["/.well-known/agent-card.json"] = (200, json.dumps(CARD).encode())
    exchanges, _, _, _ = await _discover(base)
    assert ("A2A-Version", "1.0") in exchanges[0].request_headers
