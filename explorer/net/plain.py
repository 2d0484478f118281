"""Plain HTTP/1.1 for `http://` agents: h11 on asyncio streams, with nothing in between.

A loopback or in-cluster agent is where an interview is cheapest and where the verifier's own
cost shows most. Through httpx's async client each of the interview's eighteen requests crossed
httpx's request and cookie layers, httpcore's pool (anyio locks and cancel scopes, a scan of
every pooled connection per request) and a network backend; the same requests sent one after
another by a plain synchronous httpx client took two thirds of the time. Here a request is
h11's bytes written in one send (head and body together: one segment, one wake-up of the
agent) and h11's events read back, on asyncio's own streams (TCP_NODELAY on, as asyncio sets
it for every TCP connection). h11 is the HTTP/1.1 state machine httpx itself runs on, so the
bytes on the wire and the strictness of parsing (header size, framing, chunked bodies) are
the same; what is gone is the layering, and with it the import of httpx, httpcore and anyio.

Only what `plain_target` accepts comes here: an `http` URL with an ASCII host and a path and
query made only of characters RFC 3986 allows and no dot segments, no user info, and no proxy
configured in the environment. Everything else (https, public-only pinning, proxies, URLs httpx would have to
normalise) stays on httpx, so no request is sent differently from before.

Limits are the caller's: `Fetcher` wraps every request in its overall deadline and passes the
body cap. A connection goes back to the pool only after a complete exchange both sides agree
can continue; a cancelled or failed one is closed. A kept connection that the agent closed
while idle is not reused, and a request that finds one dead before any byte of an answer
arrived is sent once more on a new connection (the race every HTTP/1.1 client has).
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import h11

# The stream buffer, and the most read in one go.
_BUFFER = 64 * 1024
# As httpcore sets it: a response head larger than this is refused, not buffered forever.
_MAX_HEAD = 100 * 1024
_HAPPY_EYEBALLS_DELAY = 0.25
_PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")
# RFC 3986 characters of a path and query as sent (percent-escapes included); anything else
# would need the normalising httpx does, so such a URL is left to httpx.
_SAFE_TARGET = re.compile(r"[A-Za-z0-9\-._~:/?\[\]@!$&'()*+,;=%]*\Z")
_HOSTNAME = re.compile(r"[A-Za-z0-9\-._]{1,253}\Z")
_IPV6 = re.compile(r"[0-9A-Fa-f:.]{2,45}\Z")
_DOT_SEGMENT = re.compile(r"/\.\.?(?:/|\Z)")
_PORT = re.compile(r"-?[0-9]{1,10}\Z")


class PlainError(Exception):
    """A request on a plain connection failed; the class name says at which step."""


class ConnectError(PlainError):
    pass


class WriteError(PlainError):
    pass


class ReadError(PlainError):
    pass


class RemoteProtocolError(PlainError):
    pass


class LocalProtocolError(PlainError):
    pass


class DecodingError(PlainError):
    pass


@dataclass(frozen=True)
class Target:
    """Where a plain request goes: the address to connect to and what the request line says."""

    host: str
    port: int
    host_header: str
    path: str  # the request target: path and query


@dataclass
class Answer:
    """A response as read: status, headers (names in lower case), body up to the cap."""

    status: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytearray = field(default_factory=bytearray)
    truncated: bool = False


def plain_target(url: str) -> Target | None:
    """The target of a URL this module sends as is, or None for one httpx should send."""
    if not url.startswith("http://") or any(os.environ.get(name) for name in _PROXY_VARIABLES):
        return None
    rest = url[len("http://") :].split("#", 1)[0]
    slash = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, path = rest[:slash], rest[slash:]
    if "@" in authority or not _SAFE_TARGET.match(path) or _DOT_SEGMENT.search(path.split("?", 1)[0]):
        return None  # httpx removes dot segments (RFC 3986 5.2.4); such a URL is left to it
    if authority.startswith("["):
        host, sep, port_text = authority[1:].partition("]")
        if not sep or not _IPV6.match(host) or (port_text and not port_text.startswith(":")):
            return None
        port_text = port_text[1:]
        shown = f"[{host.lower()}]"
    else:
        host, _, port_text = authority.partition(":")
        if not _HOSTNAME.match(host):
            return None
        host = host.lower()
        shown = host
    if port_text == "":
        port = 80
    elif _PORT.match(port_text):
        port = int(port_text)  # one outside 0-65535 fails at connect, as a ConnectError
    else:
        return None  # httpx says what is wrong with such a port
    if path.startswith("?"):
        path = "/" + path
    return Target(
        host=host,
        port=port,
        host_header=shown if port == 80 else f"{shown}:{port}",
        path=path or "/",
    )


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.state = h11.Connection(h11.CLIENT, max_incomplete_event_size=_MAX_HEAD)
        self.used = False
        self.heard = False  # any byte received on it during the current exchange

    async def read(self) -> bytes:
        try:
            chunk = await self.reader.read(_BUFFER)
        except OSError as exc:
            raise ReadError(str(exc) or type(exc).__name__) from exc
        self.heard = self.heard or bool(chunk)
        return chunk

    def idle_and_alive(self) -> bool:
        """Still fit to carry a request: the agent has not closed it or written on it unasked."""
        if self.reader.at_eof() or self.writer.is_closing() or self.reader._buffer:  # type: ignore[attr-defined]  # noqa: SLF001
            return False
        sock = self.writer.get_extra_info("socket")
        if sock is None:
            return False
        try:
            if hasattr(select, "poll"):  # any descriptor number (select() stops at 1024)
                poller = select.poll()
                poller.register(sock.fileno(), select.POLLIN)
                return not poller.poll(0)
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    def close(self) -> None:
        self.writer.close()


class PlainPool:
    """Keep-alive connections per host and port, at most `max_connections` in use at once."""

    def __init__(self, *, max_connections: int = 20, max_idle: int = 10) -> None:
        self._slots = asyncio.Semaphore(max_connections)
        self._max_idle = max_idle
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._closed = False

    async def send(
        self,
        method: str,
        target: Target,
        headers: Mapping[str, str],
        body: bytes | None,
        answer: Answer,
        *,
        max_bytes: int,
        headers_only: frozenset[int] = frozenset(),
    ) -> None:
        """Send one request and fill `answer` with the response; raises `PlainError` (or
        OSError/ValueError for what cannot even be written). The body of a status in
        `headers_only` is not read (the connection is then closed)."""
        request = _Request(method, target, headers, body, max_bytes, headers_only)
        key = (target.host, target.port)
        async with self._slots:
            for may_retry in (True, False):
                conn = self._take(key) if may_retry else None
                if conn is None:
                    conn = await _connect(target)
                try:
                    kept = await request.exchange(conn, answer)
                except _DeadBeforeAnswer:
                    conn.close()  # a kept connection the agent had closed: once more on a new one
                    continue
                except BaseException:
                    conn.close()
                    raise
                self._give_back(key, conn, kept)
                return

    def _give_back(self, key: tuple[str, int], conn: _Connection, kept: bool) -> None:
        idle = self._idle.setdefault(key, [])
        if kept and not self._closed and len(idle) < self._max_idle:
            idle.append(conn)
        else:
            conn.close()

    def _take(self, key: tuple[str, int]) -> _Connection | None:
        pool = self._idle.get(key)
        while pool:
            conn = pool.pop()
            if conn.idle_and_alive():
                return conn
            conn.close()
        return None

    async def aclose(self) -> None:
        self._closed = True
        idle = [conn for pool in self._idle.values() for conn in pool]
        self._idle.clear()
        for conn in idle:
            conn.close()
        for conn in idle:
            try:
                await conn.writer.wait_closed()
            except OSError:
                pass  # reset by the agent: closed either way


class _DeadBeforeAnswer(Exception):
    """A kept connection failed before a single byte of the answer arrived."""


async def _connect(target: Target) -> _Connection:
    if not 0 <= target.port <= 65535:
        # An agent's URL can name any port; asyncio would fail on it outside OSError (an
        # OverflowError, or an IndexError from the happy-eyeballs race).
        raise ConnectError(f"port {target.port} is outside 0-65535")
    try:
        reader, writer = await asyncio.open_connection(
            target.host,
            target.port,
            limit=_BUFFER,
            # Like anyio's connect: a host with an unreachable IPv6 address and a working IPv4
            # one is not stuck on the first until the timeout (RFC 8305).
            happy_eyeballs_delay=_HAPPY_EYEBALLS_DELAY,
        )
    except (OSError, IndexError, OverflowError) as exc:  # the last two: asyncio on odd addresses
        raise ConnectError(str(exc) or type(exc).__name__) from exc
    return _Connection(reader, writer)


class _Request:
    """One request as it goes on the wire, and how its answer is read."""

    def __init__(
        self,
        method: str,
        target: Target,
        headers: Mapping[str, str],
        body: bytes | None,
        max_bytes: int,
        headers_only: frozenset[int],
    ) -> None:
        self.method = method
        self.path = target.path.encode("ascii")
        # As httpx does: a Host the caller gives wins; the framing (Content-Length) is always ours.
        given = [(name, value) for name, value in headers.items() if name.lower() != "content-length"]
        own_host = [] if any(name.lower() == "host" for name, _ in given) else [("Host", target.host_header)]
        self.head = [*own_host, *given]
        if body is not None:
            self.head.append(("Content-Length", str(len(body))))
        self.body = body
        self.max_bytes = max_bytes
        self.headers_only = headers_only

    async def exchange(self, conn: _Connection, answer: Answer) -> bool:
        """The request and its response on `conn`; whether the connection may be kept.
        A reused connection that fails before any byte of the answer raises `_DeadBeforeAnswer`."""
        reused, conn.used, conn.heard = conn.used, True, False
        try:
            await self._write(conn)
        except WriteError as error:
            if reused:
                raise _DeadBeforeAnswer(error) from None
            raise
        try:
            return await self._read(conn, answer)
        except PlainError as error:
            if reused and answer.status is None and not conn.heard:
                raise _DeadBeforeAnswer(error) from None
            raise

    async def _write(self, conn: _Connection) -> None:
        state = conn.state
        try:
            data = state.send(h11.Request(method=self.method, target=self.path, headers=self.head))
            if self.body:
                data += state.send(h11.Data(data=self.body))
            data += state.send(h11.EndOfMessage())
        except h11.LocalProtocolError as exc:
            raise LocalProtocolError(str(exc)) from exc
        try:
            conn.writer.write(data)  # head and body in one send
            await conn.writer.drain()
        except OSError as exc:
            raise WriteError(str(exc) or type(exc).__name__) from exc

    async def _read(self, conn: _Connection, answer: Answer) -> bool:
        state = conn.state
        decoder: _Decoder | None = None
        while True:
            try:
                event = state.next_event()
            except h11.RemoteProtocolError as exc:
                raise RemoteProtocolError(str(exc)) from exc
            if event is h11.NEED_DATA:
                state.receive_data(await conn.read())
            elif isinstance(event, h11.Response):
                answer.status = event.status_code
                answer.headers = _decode_headers(event.headers)
                if answer.status in self.headers_only:
                    return False
                decoder = _Decoder.for_headers(answer.headers)
            elif isinstance(event, h11.Data):
                data = bytes(event.data)
                if decoder is not None:
                    data = decoder.feed(data, self.max_bytes - len(answer.body) + 1)
                if not _keep(answer, data, self.max_bytes):
                    return False
            elif isinstance(event, h11.EndOfMessage):
                rest = decoder.flush(self.max_bytes - len(answer.body) + 1) if decoder is not None else b""
                if not _keep(answer, rest, self.max_bytes):
                    return False
                break
            elif isinstance(event, h11.ConnectionClosed):  # h11 raises for the other early ends
                raise RemoteProtocolError("the agent closed the connection without answering")
            # an InformationalResponse (1xx) is skipped: the final response follows
        if state.our_state is h11.DONE and state.their_state is h11.DONE:
            state.start_next_cycle()
            return True
        return False


def _keep(answer: Answer, data: bytes, max_bytes: int) -> bool:
    """Append to the body up to the cap; False once the cap is passed (the answer is cut)."""
    room = max_bytes - len(answer.body)
    if len(data) > room:
        answer.body += data[: max(room, 0)]
        answer.truncated = True
        return False
    answer.body += data
    return True


def _decode_headers(raw: Sequence[tuple[bytes, bytes]]) -> tuple[tuple[str, str], ...]:
    """As httpx reads them: ASCII, else UTF-8, else Latin-1, one choice for the whole head."""
    for encoding in ("ascii", "utf-8"):
        try:
            return tuple((name.decode(encoding), value.decode(encoding)) for name, value in raw)
        except UnicodeDecodeError:
            continue
    return tuple((name.decode("iso-8859-1"), value.decode("iso-8859-1")) for name, value in raw)


class _Decoder:
    """Undo a Content-Encoding the agent applied although asked for identity (gzip or deflate),
    never producing more than the caller's limit: a compressed bomb is cut at the body cap.
    Stacked encodings are refused rather than inflated layer by layer without a bound."""

    def __init__(self, name: str) -> None:
        self._inflate = _inflater(name)

    @classmethod
    def for_headers(cls, headers: tuple[tuple[str, str], ...]) -> _Decoder | None:
        names = [
            part.strip().lower()
            for name, value in headers
            if name == "content-encoding"
            for part in value.split(",")
            if part.strip().lower() not in ("", "identity")
        ]
        known = [name for name in names if name in ("gzip", "x-gzip", "deflate")]
        if len(known) > 1:
            raise DecodingError(f"stacked content encodings are not decoded ({', '.join(names)})")
        return cls(known[0]) if known else None

    def feed(self, data: bytes, limit: int) -> bytes:
        try:
            return self._inflate.decompress(data, max(limit, 1))
        except zlib.error as exc:
            raise DecodingError(str(exc)) from exc

    def flush(self, limit: int) -> bytes:
        try:
            return self._inflate.flush()[: max(limit, 1)]
        except zlib.error as exc:
            raise DecodingError(str(exc)) from exc


class _Inflate(Protocol):
    """What a decoder needs of an inflater: zlib's own decompress object, or `_Deflate`."""

    def decompress(self, data: bytes, max_length: int, /) -> bytes: ...

    def flush(self) -> bytes: ...


def _inflater(name: str) -> _Inflate:
    if name in ("gzip", "x-gzip"):
        return zlib.decompressobj(zlib.MAX_WBITS | 16)
    return _Deflate()


class _Deflate:
    """'deflate' as servers send it: zlib-wrapped as RFC 9110 says, or raw, as many do."""

    def __init__(self) -> None:
        self._inner = zlib.decompressobj()
        self._first = True

    def decompress(self, data: bytes, max_length: int) -> bytes:
        if self._first:
            self._first = False
            try:
                return self._inner.decompress(data, max_length)
            except zlib.error:
                self._inner = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._inner.decompress(data, max_length)

    def flush(self) -> bytes:
        return self._inner.flush()
