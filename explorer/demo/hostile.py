"""The hostile agent's server: one raw loopback HTTP/1.1 server for every hostile case.

What each case does, and what a verifier must conclude about it, is the case table in
`explorer.demo.hostile_cases`; this module only serves it. `HostileServer` serves every case from
one socket at `http://127.0.0.1:PORT/case/<name>`, which is where a case is "selected by name":
that base URL behaves like an agent's base URL (its card is at `/.well-known/agent-card.json`
under it, its JSON-RPC endpoint at `/a2a/jsonrpc`).

Why a raw asyncio HTTP/1.1 server instead of Starlette and uvicorn like the rest of the fleet:
the transport cases need what a well-behaved ASGI stack will not do on purpose: reset a
connection in the middle of a body, write a status line that is not HTTP, promise more bytes than
it sends, trickle a body one byte a second, stream forever, or accept and never answer. The server
reads one request per connection (bounded head and body), answers it and closes; it never trusts
what it reads beyond using the path and body as lookup keys, exactly like `explorer.demo.app`.

Every case shares one ES256 card key (`HostileServer.jwks`, also served at `/jwks.json`). Sites
are built on first use, in the server's own thread, so starting the server costs one socket.
"""

from __future__ import annotations

import asyncio
import http
import socket
import struct
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from explorer.core.card import INTERVIEW_URI
from explorer.demo import documents, projection
from explorer.demo.hostile_cases import HOSTILE_CASES, KEY_NAME, Site, Where, Wire, build_site
from explorer.demo.jsonrpc import RpcError, dumps, error_body, parse_request
from explorer.demo.sockets import listening_socket

HOST = "127.0.0.1"
CASE_PREFIX = "/case/"
MAX_REQUEST_HEAD = 64 * 1024
MAX_REQUEST_BODY = 1024 * 1024
CHUNK = 64 * 1024
HUGE_BYTES = 50 * 1024 * 1024


# --- HTTP/1.1, one request per connection -----------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header_values(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]


@dataclass(frozen=True)
class _Response:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers.append((name.strip().lower(), value.strip()))
    declared = dict(headers).get("content-length", "0")
    if not declared.isdigit() or int(declared) > MAX_REQUEST_BODY:
        return None
    try:
        body = await reader.readexactly(int(declared)) if int(declared) else b""
    except asyncio.IncompleteReadError:
        return None
    return _Request(parts[0].upper(), unquote(urlsplit(parts[1]).path), tuple(headers), body)


def _head(status: int, headers: Iterable[tuple[str, str]], length: int | None) -> bytes:
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = "Whatever"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{k}: {v}" for k, v in headers]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _json_headers(response: _Response) -> list[tuple[str, str]]:
    headers = list(response.headers)
    if response.body:
        headers.append(("Content-Type", "application/json"))
    return headers


async def _send(writer: asyncio.StreamWriter, response: _Response) -> None:
    writer.write(_head(response.status, _json_headers(response), len(response.body)) + response.body)
    await writer.drain()


async def _until_closed(reader: asyncio.StreamReader) -> None:
    while await reader.read(CHUNK):
        pass


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST instead of a FIN: SO_LINGER on, zero seconds."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


# --- transport behaviours ---------------------------------------------------------------------------

WireBehaviour = Callable[["_Serving"], Awaitable[None]]


@dataclass
class _Serving:
    """One request being answered: the honest response, and how to misbehave instead."""

    server: HostileServer
    site: Site
    request: _Request
    honest: _Response
    wire: Wire
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter


async def _silent(call: _Serving) -> None:
    await _until_closed(call.reader)


async def _trickle(call: _Serving) -> None:
    call.writer.write(_head(200, _json_headers(call.honest), len(call.honest.body)))
    for index in range(len(call.honest.body)):
        call.writer.write(call.honest.body[index : index + 1])
        await call.writer.drain()
        await asyncio.sleep(1.0)


async def _endless(call: _Serving) -> None:
    headers = [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")]
    call.writer.write(_head(200, headers, None))
    chunk = b"[" + b"0," * (CHUNK // 2)
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    while True:
        call.writer.write(frame)
        await call.writer.drain()


async def _huge(call: _Serving) -> None:
    call.writer.write(_head(200, [("Content-Type", "application/json")], HUGE_BYTES))
    sent = 0
    piece = b" " * CHUNK  # whitespace: valid JSON padding, generated as it goes, never held whole
    while sent < HUGE_BYTES:
        call.writer.write(piece[: min(CHUNK, HUGE_BYTES - sent)])
        await call.writer.drain()
        sent += CHUNK


async def _reset_mid_body(call: _Serving) -> None:
    body = call.honest.body
    call.writer.write(_head(200, _json_headers(call.honest), len(body)) + body[: len(body) // 2])
    await call.writer.drain()
    await asyncio.sleep(0.05)
    _reset(call.writer)


async def _garbage(call: _Serving) -> None:
    call.writer.write(b"HTTP/1.1 two-hundred OK-ish\r\nContent-Length: banana\r\n\r\n{}")
    await call.writer.drain()


async def _short(call: _Serving) -> None:
    body = call.honest.body
    call.writer.write(_head(200, _json_headers(call.honest), len(body) + 100) + body)
    await call.writer.drain()


async def _status(call: _Serving) -> None:
    message = f"HTTP {call.wire.status} from the hostile agent"
    body = error_body(None, -32000, message)
    await _send(call.writer, _Response(call.wire.status, body, call.wire.headers))


async def _redirect(call: _Serving) -> None:
    path = f"{CASE_PREFIX}{call.site.case.name}{call.request.path.removeprefix(call.site.base_path)}"
    targets = {
        "other-host": f"http://localhost:{call.server.port}{path}",
        "self": path,
        "private": f"http://10.0.0.1{path}",
    }
    headers = (("Location", targets[call.wire.location]),)
    await _send(call.writer, _Response(call.wire.status, b"", headers))


async def _rate_once(call: _Serving) -> None:
    key = (call.site.case.name, call.request.body)
    call.server.sightings[key] += 1
    if call.server.sightings[key] % 2:
        await _send(call.writer, _Response(429, error_body(None, -32000, "slow down"), call.wire.headers))
    else:
        await _send(call.writer, call.honest)


WIRES: dict[str, WireBehaviour] = {
    "silent": _silent,
    "trickle": _trickle,
    "endless": _endless,
    "huge": _huge,
    "reset": _reset_mid_body,
    "garbage": _garbage,
    "short": _short,
    "status": _status,
    "redirect": _redirect,
    "rate_once": _rate_once,
}
for _case_row in HOSTILE_CASES.values():  # a wire kind without a behaviour is a table typo, caught at import
    if _case_row.wire is not None and _case_row.wire.kind not in WIRES:  # pragma: no cover
        raise RuntimeError(f"hostile case {_case_row.name}: unknown wire behaviour {_case_row.wire.kind}")


# --- the server -------------------------------------------------------------------------------------


def _kind(site: Site, request: _Request) -> Where | None:
    path = request.path.removeprefix(site.base_path)
    if request.method == "POST" and path == documents.JSONRPC_PATH:
        return "rpc"
    if request.method == "GET" and path in site.docs.card_paths:
        return "card"
    if request.method == "GET" and path == documents.JWKS_PATH:
        return "jwks"
    if request.method == "GET" and path in site.docs.files:
        return "proposal"
    return None


def _activated(request: _Request) -> bool:
    for value in request.header_values("a2a-extensions"):
        if INTERVIEW_URI in (token.strip() for token in value.split(",")):
            return True
    return False


def _faulted_rpc(site: Site, request: _Request) -> bytes | None:
    """The case's replacement body for an activated call it targets, else None (answer honestly)."""
    case = site.case
    if (case.answer is None and case.probe is None) or not _activated(request):
        return None
    try:
        call = parse_request(request.body)
    except RpcError:
        return None
    if case.answer is not None:
        question, edit = case.answer
        if call.method == f"interview/{question}" and not call.params:
            docs = site.docs
            return edit(projection.answer(question, docs.card, docs.committed), call.request_id)
    if case.probe is not None and call.method.removeprefix("interview/") not in projection.QUESTIONS:
        return case.probe({}, call.request_id)
    return None


def _honest(site: Site, request: _Request, kind: Where | None) -> _Response:
    if kind == "rpc":
        faulted = _faulted_rpc(site, request)
        if faulted is not None:
            return _Response(200, faulted, (("A2A-Extensions", INTERVIEW_URI),))
        reply = site.agent.handle_rpc(request.body, client="hostile-suite", activated=_activated(request))
        return _Response(reply.status, reply.body, tuple(reply.headers.items()))
    if kind == "card":
        return _Response(200, site.card_body)
    if kind == "jwks":
        return _Response(200, site.jwks_body)
    if kind == "proposal":
        return _Response(200, site.docs.files[request.path.removeprefix(site.base_path)])
    return _Response(404, b'{"error":"not_found"}')


class HostileServer:
    """Every hostile case on one loopback port, served from a background thread.

    `start()` returns the base URL; `case_url(name)` is a case's base URL (where its card is
    discovered); `jwks` the suite's public card key set (also served at `jwks_url`).
    `hits[(name, kind)]` counts requests per case and kind ("card", "rpc", "jwks", "proposal",
    None for anything else), so a test can prove something was never contacted. A context
    manager; `stop()` is idempotent.
    """

    def __init__(self, names: Iterable[str] | None = None, *, port: int = 0) -> None:
        chosen = list(HOSTILE_CASES) if names is None else list(dict.fromkeys(names))
        unknown = [n for n in chosen if n not in HOSTILE_CASES]
        if unknown:
            raise ValueError(f"unknown hostile case(s): {', '.join(unknown)}")
        self.names = chosen
        self.port = port
        self.key = documents.CardKey.generate(KEY_NAME)
        self.hits: Counter[tuple[str, str | None]] = Counter()
        self.sightings: Counter[tuple[str, bytes]] = Counter()
        self.errors: dict[str, str] = {}
        self._provider = documents.Provider()
        self._sites: dict[str, Site] = {}
        self._sock: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- addresses ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def case_url(self, name: str) -> str:
        if name not in self.names:
            raise KeyError(f"hostile case {name!r} is not served here")
        return f"{self.base_url}{CASE_PREFIX}{name}"

    @property
    def jwks(self) -> dict[str, Any]:
        return self.key.jwks

    @property
    def jwks_url(self) -> str:
        return f"{self.base_url}/jwks.json"

    # --- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> HostileServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> str:
        if self._thread is not None:
            raise RuntimeError("this hostile server is already started")
        sock = listening_socket(HOST, self.port, backlog=256)
        self._sock = sock
        self.port = sock.getsockname()[1]
        self._thread = threading.Thread(target=self._run, name="hostile-agent", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self.base_url

    def stop(self) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        finally:
            self._ready.set()
            loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        assert self._sock is not None
        server = await asyncio.start_server(self._connection, sock=self._sock, limit=MAX_REQUEST_HEAD)
        self._ready.set()
        await self._stop.wait()
        server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # --- serving --------------------------------------------------------------------------------

    def site(self, name: str) -> Site:
        """A case's published state (built on first use)."""
        if name not in self._sites:
            case = HOSTILE_CASES[name]
            self._sites[name] = build_site(case, self.case_url(name), self.key, self._provider)
        return self._sites[name]

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._serve_one(reader, writer)
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass  # the client went away (or was meant to): nothing to answer
        except Exception as exc:  # noqa: BLE001 - a broken case is reported, and must not stop the server
            self.errors[f"serving: {type(exc).__name__}"] = str(exc)
        finally:
            try:
                writer.close()
            except (ConnectionError, OSError, RuntimeError):
                pass
            if task is not None:
                self._tasks.discard(task)

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read one request and answer it, honestly or the case's way."""
        request = await _read_request(reader)
        if request is None:
            await _send(writer, _Response(400, b'{"error":"bad_request"}'))
            return
        if not request.path.startswith(CASE_PREFIX):
            await _send(writer, self._root(request))
            return
        name = request.path.removeprefix(CASE_PREFIX).split("/", 1)[0]
        if name not in self.names:
            await _send(writer, _Response(404, b'{"error":"no_such_case"}'))
            return
        try:
            site = self.site(name)
        except Exception as exc:  # noqa: BLE001 - a broken case must say so, not kill the server
            self.errors[name] = f"{type(exc).__name__}: {exc}"
            await _send(writer, _Response(500, dumps({"error": "case_build_failed", "case": name})))
            return
        kind = _kind(site, request)
        self.hits[(name, kind)] += 1
        honest = _honest(site, request, kind)
        wire = site.case.wire
        if wire is None or wire.where != kind:
            await _send(writer, honest)
            return
        await WIRES[wire.kind](_Serving(self, site, request, honest, wire, reader, writer))

    def _root(self, request: _Request) -> _Response:
        if request.method == "GET" and request.path == "/jwks.json":
            return _Response(200, dumps(self.jwks))
        if request.method == "GET" and request.path in ("/", "/cases"):
            index = [
                {
                    "name": n,
                    "layer": HOSTILE_CASES[n].layer,
                    "description": HOSTILE_CASES[n].description,
                    "url": self.case_url(n),
                }
                for n in self.names
            ]
            return _Response(200, dumps(index))
        return _Response(404, b'{"error":"not_found"}')
