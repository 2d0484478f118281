"""The plain-HTTP client (explorer.net.plain) through `Fetcher`, against real loopback servers.

`tests/net/test_net_http.py` holds the Fetcher's promises for every transport (timeouts, caps,
redirects, 429, secrets); here is what only the plain client has to get right: which URLs it
takes and which it leaves to httpx (proxies, user info, URLs that need normalising), keep-alive
reuse and the dead-connection race, compressed answers and their bombs, 1xx answers, oversized
heads, bodies framed by the connection's end, and that a plain run never imports httpx.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import subprocess
import sys
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from explorer.core.run import Exchange
from explorer.net.http import Fetcher, Limits
from explorer.net.plain import plain_target
from tests.support.paths import REPO

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Loopback:
    """An asyncio server on 127.0.0.1 whose connections run `handler`; counts connections."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.port = 0
        self._server: asyncio.AbstractServer | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Loopback:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.handler(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        self._server = await asyncio.start_server(handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()


async def _request_head(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            await reader.readexactly(int(line.split(b":", 1)[1]))
    return head


async def _get(url: str, max_bytes: int = 1_000_000) -> Exchange:
    async with Fetcher(Limits(timeout=3.0, max_bytes=max_bytes)) as f:
        return await f.get(url, purpose="card")


@pytest.mark.parametrize(
    ("url", "host_header", "path"),
    [
        ("http://127.0.0.1:8080/card.json", "127.0.0.1:8080", "/card.json"),
        ("http://Agent.Example:80/a?b=c#frag", "agent.example", "/a?b=c"),
        ("http://agent.example", "agent.example", "/"),
        ("http://agent.example?x=1", "agent.example", "/?x=1"),
        ("http://[::1]:9000/rpc", "[::1]:9000", "/rpc"),
        ("http://agent.example/%7Euser/a%20b", "agent.example", "/%7Euser/a%20b"),
        ("http://agent.example/a.b/..c/x?y=/../", "agent.example", "/a.b/..c/x?y=/../"),
    ],
)
def test_plain_urls_are_sent_as_written(url: str, host_header: str, path: str) -> None:
    target = plain_target(url)
    assert target is not None and (target.host_header, target.path) == (host_header, path)


@pytest.mark.parametrize(
    "url",
    [
        "https://agent.example/card.json",  # TLS stays on httpx
        "http://user:pw@agent.example/",  # user info becomes credentials in httpx: not ours to send
        "http://agent.example/a b",  # needs percent-encoding
        "http://agent.example/é",
        "http://bücher.example/",  # IDNA
        "http://agent.example:12345678901/",
        "http://agent.example/a/../card.json",  # httpx removes dot segments
        "http://agent.example/./card.json",
        "http://agent.example/a/..",
        "http://agent.example:8o/",
        "http://[::1/x",
    ],
)
def test_urls_that_need_httpx_are_left_to_it(url: str) -> None:
    assert plain_target(url) is None


@pytest.mark.parametrize("port", [99999, -1])
async def test_a_port_outside_the_range_is_a_connect_error(port: int) -> None:
    ex = await _get(f"http://127.0.0.1:{port}/card.json")
    assert ex.error == f"transport: ConnectError: port {port} is outside 0-65535"


def test_a_proxy_in_the_environment_sends_plain_urls_through_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert plain_target("http://127.0.0.1:1/") is not None
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert plain_target("http://127.0.0.1:1/") is None


async def test_a_proxied_request_reaches_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # httpx sends an absolute-form request line to the proxy; the agent's own port is never used.
    seen: list[bytes] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _request_head(reader))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nproxied")
        await writer.drain()

    async with Loopback(proxy) as server:
        monkeypatch.setenv("HTTP_PROXY", server.base)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        ex = await _get("http://agent.invalid:8000/card.json")
    assert ex.status == 200 and ex.response_body == b"proxied"
    assert seen and seen[0].startswith(b"GET http://agent.invalid:8000/card.json HTTP/1.1")


async def test_a_request_leaves_in_one_write() -> None:
    # A request's head and body go out together, so the agent reads the whole request in one
    # segment (one wake-up), not two.
    first_reads: list[bytes] = []

    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first_reads.append(await reader.read(65536))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()

    async with Loopback(agent) as server, Fetcher(Limits(timeout=2.0)) as f:
        ex = await f.post(server.base + "/rpc", b'{"jsonrpc":"2.0"}', purpose="ask:identity#1")
    assert ex.status == 200 and ex.response_body == b"ok"
    assert len(first_reads) == 1 and first_reads[0].startswith(b"POST /rpc HTTP/1.1\r\n")
    assert first_reads[0].endswith(b'\r\n\r\n{"jsonrpc":"2.0"}')


async def test_a_host_header_the_user_gives_is_sent_instead_of_ours_and_the_framing_is_ours() -> None:
    heads: list[bytes] = []

    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await _request_head(reader))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()

    async with Loopback(agent) as server, Fetcher(Limits(timeout=3.0)) as f:
        ex = await f.post(
            server.base + "/rpc",
            b"{}",
            purpose="ask:identity#1",
            headers={"Host": "agent.example", "Content-Length": "999"},
        )
    assert ex.status == 200 and ex.error is None
    lines = [line.lower() for line in heads[0].split(b"\r\n")]
    assert [line for line in lines if line.startswith(b"host:")] == [b"host: agent.example"]
    assert b"content-length: 2" in lines and b"content-length: 999" not in lines


async def test_keep_alive_connections_are_reused() -> None:
    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await _request_head(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()

    async with Loopback(agent) as server, Fetcher(Limits(timeout=3.0)) as f:
        answers = [await f.get(server.base + f"/{i}", purpose="card") for i in range(5)]
    assert [(a.status, a.response_body) for a in answers] == [(200, b"ok")] * 5
    assert server.connections == 1


async def test_a_connection_found_dead_when_reused_is_retried_once_on_a_new_one() -> None:
    # The agent answers the first request, then closes the kept connection as the second one
    # arrives (the keep-alive race): the caller sees one good answer, not a transport error.
    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        await _request_head(reader)  # the second request on this connection: dropped unanswered

    async with Loopback(agent) as server, Fetcher(Limits(timeout=3.0)) as f:
        first = await f.post(server.base + "/rpc", b"{}", purpose="ask:identity#1")
        second = await f.post(server.base + "/rpc", b"{}", purpose="ask:identity#2")
    assert (first.status, first.error, second.status, second.error) == (200, None, 200, None)
    assert server.connections == 2


async def test_a_new_connection_that_dies_unanswered_is_a_transport_error_not_a_retry() -> None:
    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)  # and close without a word

    async with Loopback(agent) as server:
        ex = await _get(server.base + "/card.json")
    assert ex.status is None and (ex.error or "").startswith("transport: RemoteProtocolError")
    assert server.connections == 1


async def test_gzip_and_deflate_answers_are_decoded() -> None:
    card = b'{"name":"compressed"}' * 50
    bodies = {
        b"/gzip": (b"gzip", gzip.compress(card)),
        b"/deflate": (b"deflate", zlib.compress(card)),
        b"/raw-deflate": (b"deflate", zlib.compress(card)[2:-4]),  # as many servers send it
    }

    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await _request_head(reader)
        encoding, body = bodies[head.split(b" ")[1]]
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n"
            b"Connection: close\r\n\r\n%s" % (encoding, len(body), body)
        )
        await writer.drain()

    async with Loopback(agent) as server:
        answers = [await _get(server.base + path.decode()) for path in bodies]
    assert [(a.status, a.error, a.response_body) for a in answers] == [(200, None, card)] * 3


async def test_a_compression_bomb_is_cut_at_the_cap() -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)  # 50 MB of zeros in about 50 KB

    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(bomb), bomb)
        )
        await writer.drain()

    async with Loopback(agent) as server:
        ex = await _get(server.base + "/card.json", max_bytes=100_000)
    assert ex.error == "body_too_large" and ex.truncated and len(ex.response_body) == 100_000


async def test_a_broken_compressed_body_is_a_transport_error() -> None:
    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!")
        await writer.drain()

    async with Loopback(agent) as server:
        ex = await _get(server.base + "/card.json")
    assert ex.error is not None and ex.error.startswith("transport: DecodingError")


async def test_informational_answers_are_skipped_and_a_body_may_end_with_the_connection() -> None:
    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"framed":"by close"}')
        await writer.drain()

    async with Loopback(agent) as server:
        ex = await _get(server.base + "/card.json")
    assert (ex.status, ex.error, ex.response_body) == (200, None, b'{"framed":"by close"}')
    assert ex.header("content-type") == "application/json"


async def test_an_endless_response_head_is_refused_not_buffered() -> None:
    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n")
        for i in range(100_000):
            writer.write(b"X-Padding-%d: %s\r\n" % (i, b"p" * 100))
            await writer.drain()

    async with Loopback(agent) as server:
        ex = await _get(server.base + "/card.json")
    assert ex.status is None and (ex.error or "").startswith("transport: RemoteProtocolError")


async def test_non_ascii_header_values_are_read_as_httpx_reads_them() -> None:
    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request_head(reader)
        writer.write("HTTP/1.1 200 OK\r\nX-Name: Zoë\r\nContent-Length: 0\r\n\r\n".encode())
        await writer.drain()

    async with Loopback(agent) as server:
        ex = await _get(server.base + "/")
    assert ex.header("x-name") == "Zoë"


def test_a_plain_run_never_imports_httpx(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(
        "import asyncio, sys\n"
        "from explorer.net.http import fetch_once\n"
        "async def serve():\n"
        "    async def handle(r, w):\n"
        "        await r.readuntil(b'\\r\\n\\r\\n')\n"
        "        w.write(b'HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\n{}')\n"
        "        await w.drain(); w.close()\n"
        "    return await asyncio.start_server(handle, '127.0.0.1', 0)\n"
        "loop = asyncio.new_event_loop()\n"
        "server = loop.run_until_complete(serve())\n"
        "port = server.sockets[0].getsockname()[1]\n"
        "import threading\n"
        "threading.Thread(target=loop.run_forever, daemon=True).start()\n"
        "ex = fetch_once(f'http://127.0.0.1:{port}/card.json')\n"
        "print(ex.status, ex.response_body.decode(), 'httpx' in sys.modules, 'anyio' in sys.modules)\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "all_proxy")}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.split() == ["200", "{}", "False", "False"], out.stderr


async def test_framing_chunked_with_a_trailer_no_content_and_http10_to_the_close() -> None:
    # Keep-alive only where the framing allows it: a chunked body (trailer and all) and a 204
    # keep the connection; an HTTP/1.0 answer framed by the close does not.
    async def agent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await _request_head(reader)
            path = head.split(b" ")[1]
            if path == b"/chunked":
                writer.write(
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b'5\r\n{"a":\r\n3\r\n12}\r\n0\r\nX-Trailer: t\r\n\r\n'
                )
            elif path == b"/empty":
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            else:
                writer.write(b'HTTP/1.0 200 OK\r\n\r\n{"old":true}')
                await writer.drain()
                return  # the close ends the body
            await writer.drain()

    async with Loopback(agent) as server, Fetcher(Limits(timeout=3.0)) as f:
        chunked = await f.get(server.base + "/chunked", purpose="card")
        empty = await f.get(server.base + "/empty", purpose="card")
        old = await f.get(server.base + "/old", purpose="card")
        again = await f.get(server.base + "/chunked", purpose="card")
    assert (chunked.status, chunked.error, chunked.response_body) == (200, None, b'{"a":12}')
    assert (empty.status, empty.error, empty.response_body) == (204, None, b"")
    assert (old.status, old.error, old.response_body) == (200, None, b'{"old":true}')
    assert again.response_body == b'{"a":12}'
    assert server.connections == 2  # the first three on one connection; after the 1.0 close, a new one
