"""The web server of `interview-explorer serve`: textual-serve's way of running an app in a browser,
behind the checks it does not make.

Routes (GET only; anything else is 405):

- `/`: with `?token=` the token is checked and exchanged for the session cookie, then the browser
  is sent to `/` (303) so the token leaves the address bar. Without it the cookie must be valid
  (403 and a page saying what to open otherwise); when `max_sessions` sessions are live (after a
  short wait for one to end, as a reloaded tab's does), 503 and a page saying so; else the
  explorer's page (`explorer.web.page`).
- `/ws`: the WebSocket that drives one explorer process. Refused with 403 before anything starts
  unless the `Origin` is this server's own and the cookie is valid; over the session limit it is
  accepted only to write the reason into the terminal, and closed (1013) without a process.
- `/static/{name}`: the page's files, by name from a fixed list; cookie required.
- `/download/{key}`: a file the app delivered (an export, a copy, a screenshot), as an attachment;
  cookie required.

Every request first passes the Host check (403 for a name the server is not reached by: DNS
rebinding), and every response carries `explorer.web.page.HEADERS`. Each accepted WebSocket
starts one `SessionProcess` with the given argument list and environment, in the given folder;
the number of live ones is checked and reserved without yielding to the event loop, so two
handshakes cannot both take the last place. Nothing is logged with a token, a cookie or a request
line (aiohttp's access log is off); what a client sent is logged only through `safe_text`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aiohttp import WSMsgType, web
from textual_serve.download_manager import DownloadManager

from explorer.core.text import safe_text
from explorer.web import page
from explorer.web.guard import Guard
from explorer.web.session_process import SessionProcess

log = logging.getLogger("explorer.web")

MAX_MESSAGE = 1024 * 1024  # one WebSocket message from the browser: a large paste, at most
HEARTBEAT = 15.0  # seconds between pings; a browser that vanished is noticed after two
ROOM_WAIT = 3.0  # seconds a page load at the session limit waits for a session to end
MAX_COLUMNS, MAX_ROWS = 1000, 500
_MEDIA_TYPE = re.compile(r"[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+\Z")
_CHARSET = re.compile(r"[A-Za-z0-9_-]+\Z")
_CLOSE_TRY_AGAIN = 1013  # WebSocket close code: try again later


def _size(value: Any, default: int, largest: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return min(max(number, 1), largest)


class ExplorerServer:
    """The aiohttp application and the live sessions of one `serve` run."""

    def __init__(
        self,
        guard: Guard,
        *,
        max_sessions: int,
        argv: Sequence[str],
        environment: Mapping[str, str],
        on_session: Callable[[str, SessionProcess], None] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.guard = guard
        self.max_sessions = max_sessions
        self.argv = tuple(argv)
        self.environment = dict(environment)
        self.cwd = cwd  # the folder every session runs in (`serve` makes a private one)
        self.on_session = on_session or (lambda _event, _session: None)
        self.live: set[SessionProcess] = set()
        self.sockets: set[web.WebSocketResponse] = set()
        self.downloads = DownloadManager()
        self.files = page.static_files()

    # ---- the application ------------------------------------------------------------------
    def application(self) -> web.Application:
        app = web.Application(middlewares=[self._check_host])
        app.add_routes(
            [
                web.get("/", self.index),
                web.get("/ws", self.websocket),
                web.get("/static/{name:.+}", self.static),
                web.get("/download/{key}", self.download),
            ]
        )
        app.on_response_prepare.append(self._headers)
        return app

    @web.middleware
    async def _check_host(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if not self.guard.host_ok(request.headers.get("Host")):
            log.warning("refused a request for Host %s", safe_text(request.headers.get("Host", ""), limit=80))
            return web.Response(status=403, text="This server does not answer to that host name.\n")
        return await handler(request)

    @staticmethod
    async def _headers(_request: web.Request, response: web.StreamResponse) -> None:
        for name, value in page.HEADERS.items():
            response.headers.setdefault(name, value)

    def _signed_in(self, request: web.Request) -> bool:
        return self.guard.cookie_ok(request.cookies.get(self.guard.cookie_name))

    @staticmethod
    def _forbidden() -> web.Response:
        return web.Response(status=403, text=page.forbidden_page(), content_type="text/html")

    # ---- routes -----------------------------------------------------------------------------
    async def index(self, request: web.Request) -> web.Response:
        tokens = request.query.getall("token", [])
        size = request.query.get("fontsize")
        clean = f"/?fontsize={page.font_size(size)}" if size is not None else "/"
        if tokens:
            if len(tokens) != 1 or not self.guard.token_ok(tokens[0]):
                return self._forbidden()
            response = web.Response(status=303, headers={"Location": clean})
            response.set_cookie(
                self.guard.cookie_name,
                self.guard.cookie_secret,
                path="/",
                httponly=True,
                samesite="Strict",
                secure=self.guard.secure or None,
            )
            return response
        if not self._signed_in(request):
            return self._forbidden()
        if set(request.query) - {"fontsize"}:
            return web.Response(status=303, headers={"Location": clean})
        if not await self._room():
            return web.Response(status=503, text=page.full_page(self.max_sessions), content_type="text/html")
        return web.Response(text=page.page(page.font_size(size)), content_type="text/html")

    async def _room(self) -> bool:
        """Whether another session fits, waiting up to `ROOM_WAIT` seconds for one to end: a tab
        reloaded at the limit closes its old session just before it asks for the page again."""
        deadline = asyncio.get_running_loop().time() + ROOM_WAIT
        while len(self.live) >= self.max_sessions:
            if asyncio.get_running_loop().time() > deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    async def static(self, request: web.Request) -> web.StreamResponse:
        if not self._signed_in(request):
            return self._forbidden()
        entry = self.files.get(request.match_info["name"])
        if entry is None:
            raise web.HTTPNotFound()
        path, media_type = entry
        return web.FileResponse(path, headers={"Content-Type": media_type, "Cache-Control": "no-cache"})

    async def download(self, request: web.Request) -> web.StreamResponse:
        if not self._signed_in(request):
            return self._forbidden()
        key = request.match_info["key"]
        try:
            meta = await self.downloads.get_download_metadata(key)
        except KeyError:
            raise web.HTTPNotFound() from None
        media_type = meta.mime_type if _MEDIA_TYPE.match(meta.mime_type or "") else "application/octet-stream"
        if meta.encoding and _CHARSET.match(meta.encoding):
            media_type += f"; charset={meta.encoding}"
        response = web.StreamResponse(
            headers={
                "Content-Type": media_type,
                "Content-Disposition": page.content_disposition(meta.file_name),
                "Content-Security-Policy": page.DOWNLOAD_CSP,
            }
        )
        await response.prepare(request)
        async for chunk in self.downloads.download(key):
            await response.write(chunk)
        await response.write_eof()
        return response

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if not self.guard.origin_ok(origin):
            log.warning("refused a WebSocket from origin %s", safe_text(origin or "(none)", limit=80))
            return web.Response(status=403, text="This WebSocket is for the explorer's own page.\n")
        if not self._signed_in(request):
            return self._forbidden()
        ws = web.WebSocketResponse(heartbeat=HEARTBEAT, max_msg_size=MAX_MESSAGE)
        if len(self.live) >= self.max_sessions:
            await ws.prepare(request)
            await ws.send_bytes(page.full_message(self.max_sessions))
            await ws.close(code=_CLOSE_TRY_AGAIN, message=b"too many sessions")
            return ws
        session = SessionProcess(
            self.argv,
            self.environment,
            write_bytes=ws.send_bytes,
            write_str=ws.send_str,
            close=ws.close,
            download_manager=self.downloads,
            cwd=self.cwd,
        )
        self.live.add(session)  # reserved before the first await
        self.sockets.add(ws)
        try:
            await ws.prepare(request)
            width = _size(request.query.get("width"), 80, MAX_COLUMNS)
            height = _size(request.query.get("height"), 24, MAX_ROWS)
            await session.start(width, height)
            self.on_session("started", session)
            await self._drive(ws, session)
        finally:
            await session.close()
            self.live.discard(session)
            self.sockets.discard(ws)
            if not ws.closed:
                await ws.close()
            self.on_session("ended", session)
        return ws

    async def _drive(self, ws: web.WebSocketResponse, session: SessionProcess) -> None:
        """Pass the browser's messages to the session until either side ends."""
        pump = asyncio.create_task(self._pump(ws, session))
        watched: set[asyncio.Future[Any]] = {pump}
        if session.finished is not None:
            watched.add(session.finished)
        try:
            await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump

    @staticmethod
    async def _pump(ws: web.WebSocketResponse, session: SessionProcess) -> None:
        async for message in ws:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
            except ValueError:
                continue
            if not isinstance(envelope, list) or not envelope:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await session.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                await session.set_terminal_size(
                    _size(data.get("width"), 80, MAX_COLUMNS), _size(data.get("height"), 24, MAX_ROWS)
                )
            elif kind == "ping" and isinstance(data, (str, int, float)):
                await ws.send_json(["pong", data])
            elif kind == "blur":
                await session.blur()
            elif kind == "focus":
                await session.focus()

    async def close(self) -> None:
        """End every session (their WebSockets are closed, so each handler stops its process)."""
        for ws in list(self.sockets):
            with contextlib.suppress(Exception):
                await ws.close(code=1001, message=b"the server is stopping")
        await asyncio.gather(*(session.close() for session in list(self.live)), return_exceptions=True)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host` (an IP address) and `port` (0: any free port); OSError if not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


async def serve(
    sock: socket.socket,
    server: ExplorerServer,
    announce: Callable[[], None],
    stop: asyncio.Event,
) -> None:
    """Serve on `sock` until `stop` is set; `announce` runs once the server accepts connections."""
    runner = web.AppRunner(server.application(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.SockSite(runner, sock, shutdown_timeout=2.0).start()
        announce()
        await stop.wait()
        await server.close()
    finally:
        await runner.cleanup()
