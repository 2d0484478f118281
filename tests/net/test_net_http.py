"""The Fetcher against misbehaving servers on 127.0.0.1.

Each server is a few lines of raw asyncio that writes exactly the bytes a hostile or broken
agent would (hang, trickle, endless chunks, reset mid-body, redirect games, 429), so the tests
exercise the real client and socket path and assert what a user depends on: the run ends on
time, memory stays capped, secrets stay home, and nothing raises.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import socket
import ssl
import struct
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from explorer.core.run import REDACTED
from explorer.net import http as http_module
from explorer.net.http import Fetcher, Limits, fetch_once, retry_after_seconds
from explorer.net.origins import PinnedTarget

Writer = asyncio.StreamWriter
Handler = Callable[[str, dict[str, str], bytes, Writer], Awaitable[None]]


def _response(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class RawServer:
    """A loopback HTTP/1.1 server whose routes write raw bytes; counts hits per path."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.hits: dict[str, int] = {}
        self.seen_headers: list[dict[str, str]] = []
        self.port = 0
        self._ssl = ssl_context
        self._server: asyncio.AbstractServer | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self._ssl)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            pairs = (ln.partition(":") for ln in lines[1:] if ln)
            headers = {k.strip().lower(): v.strip() for k, _, v in pairs}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.hits[path] = self.hits.get(path, 0) + 1
            self.seen_headers.append(headers)
            await self.route(method, path, headers, body, writer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            if not writer.is_closing():
                writer.close()

    async def route(self, method: str, path: str, headers: dict[str, str], body: bytes, w: Writer) -> None:
        if path == "/echo":
            w.write(_response(200, json.dumps(headers).encode(), {"Content-Type": "application/json"}))
        elif path == "/hang":
            await asyncio.sleep(3600)
        elif path == "/trickle":
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            for _ in range(1000):
                w.write(b"x")
                await w.drain()
                await asyncio.sleep(0.5)
        elif path == "/endless":
            w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            chunk = b"a" * 65536
            while True:
                w.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await w.drain()
        elif path.startswith("/status/"):
            w.write(_response(int(path.rsplit("/", 1)[1]), b'{"error":"down"}'))
        elif path == "/reset":
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"y" * 10)
            await w.drain()
            sock = w.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            w.transport.abort()
        elif path == "/redirect-other":
            w.write(_response(302, headers={"Location": f"http://localhost:{self.port}/echo"}))
        elif path == "/redirect-same":
            w.write(_response(307, headers={"Location": "/echo"}))
        elif path == "/redirect-bad":
            w.write(_response(302, headers={"Location": "http://[::1/x"}))
        elif path == "/redirect-loop":
            w.write(_response(302, headers={"Location": "/redirect-loop"}))
        elif path == "/429-short":
            if self.hits[path] == 1:
                w.write(_response(429, b"slow down", {"Retry-After": "1"}))
            else:
                w.write(_response(200, b'{"ok":true}'))
        elif path == "/429-long":
            w.write(_response(429, b"slow down", {"Retry-After": "99999"}))
        elif path == "/quiet-close":  # keep-alive implied (HTTP/1.1), then closed by the server
            w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        elif path == "/post":
            w.write(_response(200, json.dumps({"method": method, "body": body.decode()}).encode()))
        else:
            w.write(_response(404, b"no"))


@pytest.fixture
async def server() -> AsyncIterator[RawServer]:
    srv = RawServer()
    await srv.start()
    yield srv
    await srv.stop()


async def _get(url: str, limits: Limits | None = None, **kwargs: object) -> tuple[Fetcher, object]:
    async with Fetcher(limits or Limits(timeout=2.0), **kwargs) as f:  # type: ignore[arg-type]
        ex = await f.get(url, purpose="card")
    return f, ex


async def test_ok_and_headers_recorded(server: RawServer) -> None:
    async with Fetcher(Limits(timeout=2.0)) as f:
        ex = await f.get(server.base + "/echo", purpose="card", attempt=2, headers={"A2A-Version": "1.0"})
    assert ex.status == 200 and ex.error is None and not ex.truncated
    assert ex.purpose == "card" and ex.attempt == 2 and ex.method == "GET"
    assert json.loads(ex.response_body)["a2a-version"] == "1.0"
    assert ("A2A-Version", "1.0") in ex.request_headers
    assert ex.started_at.endswith("Z") and ex.elapsed_ms > 0
    assert f.exchanges == [ex]


async def test_post_sends_body(server: RawServer) -> None:
    async with Fetcher(Limits(timeout=2.0)) as f:
        ex = await f.post(server.base + "/post", b'{"jsonrpc":"2.0"}', purpose="ask:identity#1")
    assert json.loads(ex.response_body) == {"method": "POST", "body": '{"jsonrpc":"2.0"}'}
    assert ex.request_body == b'{"jsonrpc":"2.0"}'


async def test_hang_is_cut_at_the_timeout(server: RawServer) -> None:
    t0 = time.monotonic()
    _, ex = await _get(server.base + "/hang", Limits(timeout=1.0))
    assert ex.error == "timeout" and ex.status is None
    assert time.monotonic() - t0 < 2.5


async def test_trickle_is_cut_by_the_overall_deadline(server: RawServer) -> None:
    # Every byte arrives well within the read timeout; only the whole-body deadline can stop it.
    t0 = time.monotonic()
    _, ex = await _get(server.base + "/trickle", Limits(timeout=1.5))
    assert ex.error == "timeout"
    assert ex.status == 200 and 0 < len(ex.response_body) < 10
    assert time.monotonic() - t0 < 3.0


async def test_endless_body_is_cut_at_the_cap(server: RawServer) -> None:
    _, ex = await _get(server.base + "/endless", Limits(timeout=5.0, max_bytes=100_000))
    assert ex.error == "body_too_large" and ex.truncated
    assert len(ex.response_body) == 100_000


@pytest.mark.parametrize("status", [500, 503])
async def test_server_errors_are_recorded_not_raised(server: RawServer, status: int) -> None:
    _, ex = await _get(f"{server.base}/status/{status}")
    assert ex.status == status and ex.error is None
    assert ex.response_body == b'{"error":"down"}'


async def test_reset_mid_body_is_a_transport_error(server: RawServer) -> None:
    _, ex = await _get(server.base + "/reset")
    assert ex.error is not None and ex.error.startswith("transport: ")
    assert ex.status == 200


async def test_connection_refused_is_readable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _, ex = await _get(f"http://127.0.0.1:{port}/")
    assert ex.error == "transport: ConnectError: Connection refused"


async def test_a_pooled_connection_the_server_closed_is_not_reused(server: RawServer) -> None:
    # The server keeps nothing alive although its answer says nothing of closing: the second
    # request must go on a new connection, not fail on the dead one.
    async with Fetcher(Limits(timeout=2.0)) as f:
        first = await f.get(server.base + "/quiet-close", purpose="card")
        await asyncio.sleep(0.05)  # the server's close reaches the client's idle connection
        second = await f.get(server.base + "/quiet-close", purpose="card")
    assert [(e.status, e.error, e.response_body) for e in (first, second)] == [(200, None, b"ok")] * 2
    assert server.hits["/quiet-close"] == 2


async def test_same_origin_redirect_is_followed(server: RawServer) -> None:
    _, ex = await _get(server.base + "/redirect-same")
    assert ex.status == 200 and ex.url == server.base + "/echo"


async def test_redirect_to_another_origin_is_refused(server: RawServer) -> None:
    _, ex = await _get(server.base + "/redirect-other")
    assert ex.status == 302
    assert ex.error is not None and ex.error.startswith("redirect_refused: ")
    assert "another origin" in ex.error
    assert "/echo" not in server.hits


async def test_redirect_loop_is_stopped(server: RawServer) -> None:
    _, ex = await _get(server.base + "/redirect-loop", Limits(timeout=2.0, max_redirects=3))
    assert ex.error is not None and ex.error.startswith("redirect_refused: more than 3 redirects")
    assert server.hits["/redirect-loop"] == 4


async def test_429_with_short_retry_after_is_waited_once(server: RawServer) -> None:
    t0 = time.monotonic()
    f, ex = await _get(server.base + "/429-short")
    assert ex.status == 200
    assert [e.status for e in f.exchanges] == [429, 200]
    assert [e.purpose for e in f.exchanges] == ["card", "card"]
    assert time.monotonic() - t0 >= 0.9


async def test_429_with_absurd_retry_after_is_not_waited(server: RawServer) -> None:
    t0 = time.monotonic()
    f, ex = await _get(server.base + "/429-long")
    assert ex.status == 429 and len(f.exchanges) == 1
    assert time.monotonic() - t0 < 1.0


def test_retry_after_parsing() -> None:
    now = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.UTC)
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:04 GMT", now=now) == 4.0
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("9" * 500) is not None and retry_after_seconds("9" * 500) > 1e9
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds("-5") is None
    assert retry_after_seconds(None) is None


async def test_secrets_go_only_to_their_origin_and_are_redacted(server: RawServer) -> None:
    secrets = {"Authorization": "Bearer s3cret"}
    async with Fetcher(Limits(timeout=2.0), secret_headers=secrets, secret_origin=server.base) as f:
        home = await f.get(server.base + "/echo", purpose="card")
        away = await f.get(f"http://localhost:{server.port}/echo", purpose="jwks")
    assert server.seen_headers[0]["authorization"] == "Bearer s3cret"  # sent home, echoed back...
    assert json.loads(home.response_body)["authorization"] == REDACTED  # ...and never kept
    assert "authorization" not in json.loads(away.response_body)
    assert ("Authorization", REDACTED) in home.request_headers
    transcript = json.dumps([e.to_json() for e in f.exchanges])
    assert "s3cret" not in transcript


async def test_secrets_do_not_follow_a_cross_origin_redirect(server: RawServer) -> None:
    secrets = {"X-Api-Key": "k3y"}
    async with Fetcher(Limits(timeout=2.0), secret_headers=secrets, secret_origin=server.base) as f:
        ex = await f.get(server.base + "/redirect-other", purpose="card")
    assert ex.error is not None and ex.error.startswith("redirect_refused")
    assert all(h.get("x-api-key") in (None, "k3y") for h in server.seen_headers)
    assert len(server.seen_headers) == 1


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://example.com/card.json", "https only"),
        ("https://example.com:8443/card.json", "port 443 only"),
        ("https://127.0.0.1/card.json", "not a public address"),
        ("https://[::1]/card.json", "not a public address"),
        ("https://10.1.2.3/card.json", "not a public address"),
        ("https://169.254.169.254/latest", "not a public address"),
        ("https://localhost/card.json", "not a public address"),
        ("https://[::ffff:192.168.1.1]/x", "not a public address"),
    ],
)
async def test_public_only_refuses(url: str, reason: str) -> None:
    _, ex = await _get(url, Limits(timeout=2.0, public_only=True))
    assert ex.error is not None and ex.error.startswith("blocked: ") and reason in ex.error
    assert ex.status is None


def _tls_context(tmp: Path, hostname: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for `hostname`, and a client context trusting it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert_path, key_path)
    client_ctx = ssl.create_default_context(cafile=str(cert_path))
    return server_ctx, client_ctx


async def test_public_only_connects_to_the_pinned_address_with_host_and_sni(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DNS is answered by the pin (checked elsewhere); here the point is that the connection goes
    # to the pinned address while Host, SNI and certificate checks use the name.
    server_ctx, client_ctx = _tls_context(tmp_path, "agent.example")
    srv = RawServer(ssl_context=server_ctx)
    await srv.start()
    resolved: list[str] = []

    async def fake_resolve(url: str) -> PinnedTarget:
        resolved.append(url)
        return PinnedTarget(hostname="agent.example", address="127.0.0.1", port=srv.port)

    monkeypatch.setattr(http_module, "resolve_public", fake_resolve)
    try:
        async with Fetcher(Limits(timeout=3.0, public_only=True), verify=client_ctx) as f:
            ok = await f.get("https://agent.example/echo", purpose="openclasp:public_card")
            redirect = await f.get("https://agent.example/redirect-same", purpose="card")
    finally:
        await srv.stop()
    assert ok.status == 200, ok.error
    assert json.loads(ok.response_body)["host"] == "agent.example"
    assert ok.url == "https://agent.example/echo"
    assert redirect.error == "redirect_refused: public-only mode follows no redirects"
    assert resolved == ["https://agent.example/echo", "https://agent.example/redirect-same"]


@pytest.mark.parametrize(
    "url", ["ftp://example.com/card.json", "http://[::1", "http://x\x00/", "", "card.json"]
)
def test_fetch_once_is_synchronous_and_never_raises(url: str) -> None:
    ex = fetch_once(url, Limits(timeout=1.0))
    assert ex.error is not None and ex.error.startswith("transport: ")
    assert ex.purpose == "card" and ex.status is None


async def test_a_malformed_location_is_refused_not_raised(server: RawServer) -> None:
    _, ex = await _get(server.base + "/redirect-bad")
    # httpx itself refuses to read such a Location; either way it is an error, not an exception.
    assert ex.error is not None and "location" in ex.error.lower()
    assert "/x" not in server.hits


@pytest.mark.parametrize("url", ["https://127.0.0.1:99999/card.json", "https://127.0.0.1:-1/card.json"])
async def test_an_https_port_outside_the_range_is_a_transport_error_not_a_crash(url: str) -> None:
    # httpx's connect races addresses in an anyio task group, which wraps the OverflowError
    # in an ExceptionGroup: still this request's failure, never the run's.
    _, ex = await _get(url)
    assert ex.status is None and (ex.error or "").startswith("transport: ConnectError: ")
