"""No ambient state between origins: a cookie one server sets never reaches another (issue 21 item 5).

Two real loopback servers on two ports of 127.0.0.1 (two origins on one host, which is exactly
where a cookie jar's host matching ignores the port): the "interface" sets a session cookie,
the "proposal host" sets an attacker's cookie. Neither may ride along on any later request, to
either origin, on either of the Fetcher's clients: the plain h11 path (ordinary `http://` URLs)
and httpx (here reached with a dot segment in the path, which the plain path leaves to httpx;
https takes the same httpx client factory).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from explorer.net.http import Fetcher, Limits
from tests.support.http_server import base_url, serving


class _Recorder(BaseHTTPRequestHandler):
    """Answers every GET and POST with a Set-Cookie named after the server, and remembers the
    Cookie header each request carried."""

    cookie_name = "session"
    seen: list[tuple[str, str | None]] = []
    lock = threading.Lock()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        with self.lock:
            self.seen.append((f"{self.server.server_address[1]}{self.path}", self.headers.get("Cookie")))
        body = b'{"ok":true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Set-Cookie", f"{self.cookie_name}=s3cr3t-{self.cookie_name}; Path=/")
        self.end_headers()
        self.wfile.write(body)

    do_GET = _answer
    do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


class _Interface(_Recorder):
    cookie_name = "session"


class _Attacker(_Recorder):
    cookie_name = "evil"


@pytest.fixture
def origins() -> Iterator[tuple[str, str]]:
    _Recorder.seen = []
    with serving(_Interface) as interface, serving(_Attacker) as attacker:
        yield base_url(interface), base_url(attacker)


@pytest.mark.parametrize("path", ["/a/card.json", "/a/../card.json"], ids=["plain-h11", "httpx"])
async def test_a_cookie_never_reaches_another_origin_or_rides_along(
    origins: tuple[str, str], path: str
) -> None:
    interface, attacker = origins
    async with Fetcher(Limits(timeout=5.0)) as fetcher:
        await fetcher.get(f"{interface}{path}", purpose="card")  # the interface sets `session`
        await fetcher.get(f"{attacker}{path}", purpose="proposal")  # the attacker sets `evil`
        await fetcher.post(f"{interface}{path}", b"{}", purpose="ask:identity#1", credentials=True)
        await fetcher.get(f"{attacker}{path}", purpose="proposal")
    assert len(_Recorder.seen) == 4
    assert [cookie for _, cookie in _Recorder.seen] == [None] * 4, _Recorder.seen
