"""The served explorer as the tests meet it: a real `interview-explorer serve` process and real clients.

`Served.start(...)` runs `python -m explorer serve --port 0 ...` (or `demo --browser`) as a user
does, reads the one URL it prints on stdout, and stops it with SIGTERM at the end (its exit status
is checked: 0). The clients are the real thing, on 127.0.0.1:

- `request(path, host=..., cookie=..., headers=...)`: one HTTP/1.1 request over `http.client`,
  with any `Host` header the test wants (a rebinding page's, for instance);
- `session(origin=..., cookie=..., host=...)`: an aiohttp WebSocket client to `/ws`, with the
  `Origin` a page of any origin would send; `Terminal` reads what the explorer draws into it.

`chromium` is scripts/chromium.py (headless Chromium under Selenium), for the browser tests.
`children()` lists the server's child processes from /proc (Linux), which is how the tests see
whether a session process was started; `environ(pid)` reads one process's environment the same
way. `SESSION_WAIT` bounds every wait for a process or a frame: sessions start a Python process
each, slow on a loaded machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import importlib.util
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from tests.support.paths import REPO

SESSION_WAIT = 60.0


def _load_chromium() -> Any:
    """scripts/chromium.py, loaded by path (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("chromium", REPO / "scripts" / "chromium.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


chromium = _load_chromium()
CSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|\x1b[=>]")


def has_proc() -> bool:
    return Path("/proc/self/status").is_file()


def _parent_of(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"^PPid:\s+(\d+)", text, re.M)
    return int(match[1]) if match else None


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (zombies excluded)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _parent_of(int(entry.name)) == pid:
            with contextlib.suppress(OSError):
                if re.search(r"^State:\s+Z", (entry / "status").read_text(), re.M):
                    continue
                out.append(int(entry.name))
    return out


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.decode("utf-8", "replace").partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


def wait_until(predicate: Any, timeout: float = SESSION_WAIT, what: str = "the condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: str

    def cookie(self) -> str | None:
        return self.headers.get("Set-Cookie")


@dataclass
class Served:
    """A running `serve` (or `demo --browser`) process and its URL."""

    process: subprocess.Popen[bytes]
    url: str
    stderr_path: Path
    cookie_value: str | None = field(default=None)

    @classmethod
    def start(
        cls,
        argv: Iterable[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path,
        command: str = "serve",
    ) -> Served:
        handle, name = tempfile.mkstemp(dir=cwd, prefix=f"{command.split()[0]}-", suffix="-stderr.txt")
        os.close(handle)
        stderr_path = Path(name)
        extra = [] if command != "serve" else ["--port", "0"]
        process = subprocess.Popen(
            [sys.executable, "-m", "explorer", *command.split(), *extra, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr_path.open("wb"),
            cwd=cwd,
            env={**os.environ, **(env or {})},
        )
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], SESSION_WAIT)
        line = process.stdout.readline().decode().strip() if ready else ""
        if not line.startswith("http://"):
            process.kill()
            process.wait()
            raise AssertionError(f"no URL printed: {line!r}\n{stderr_path.read_text(errors='replace')}")
        return cls(process, line, stderr_path)

    # ---- where -----------------------------------------------------------------------------
    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 80)

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    @property
    def cookie_name(self) -> str:
        return f"interview_explorer_{self.port}"

    def children(self) -> list[int]:
        return children(self.process.pid)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    # ---- HTTP ------------------------------------------------------------------------------
    def request(
        self,
        path: str,
        *,
        host: str | None = None,
        cookie: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=SESSION_WAIT)
        try:
            connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
            connection.putheader("Host", host if host is not None else self.host)
            if cookie is not None:
                connection.putheader("Cookie", f"{self.cookie_name}={cookie}")
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            connection.endheaders()
            answer = connection.getresponse()
            return Response(answer.status, answer.headers, answer.read().decode("utf-8", "replace"))
        finally:
            connection.close()

    def login(self) -> str:
        """Open the printed URL; returns the session cookie's value."""
        answer = self.request(urlsplit(self.url).path + "?" + urlsplit(self.url).query)
        assert answer.status == 303, answer
        match = re.match(rf"{self.cookie_name}=([^;]+);", answer.cookie() or "")
        assert match, answer.cookie()
        self.cookie_value = match[1]
        return match[1]

    # ---- WebSocket -------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def session(
        self,
        *,
        origin: str | None = "",
        cookie: str | None = "",
        host: str | None = None,
        size: tuple[int, int] = (120, 40),
    ) -> AsyncIterator[Terminal]:
        """A WebSocket to /ws; `origin`/`cookie` default to the right ones ("" = default, None = none)."""
        headers = {"Host": host or self.host}
        origin = self.origin if origin == "" else origin
        if origin is not None:
            headers["Origin"] = origin
        cookie = (self.cookie_value or self.login()) if cookie == "" else cookie
        if cookie is not None:
            headers["Cookie"] = f"{self.cookie_name}={cookie}"
        url = f"ws://127.0.0.1:{self.port}/ws?width={size[0]}&height={size[1]}"
        async with aiohttp.ClientSession() as client:
            timeout = aiohttp.ClientWSTimeout(ws_close=5)
            async with client.ws_connect(url, headers=headers, timeout=timeout) as ws:
                yield Terminal(ws)

    # ---- end -------------------------------------------------------------------------------
    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"serve did not stop on SIGTERM\n{self.stderr()}") from None
        finally:
            if self.process.stdout is not None:
                self.process.stdout.close()


@dataclass
class Terminal:
    """What the explorer drew into one WebSocket, and the text messages it sent beside it."""

    ws: aiohttp.ClientWebSocketResponse
    output: bytearray = field(default_factory=bytearray)
    messages: list[Any] = field(default_factory=list)

    def text(self) -> str:
        return CSI.sub("", self.output.decode("utf-8", "replace"))

    def mark(self) -> int:
        """Where the output is now: `wait_for(needle, since=mark)` looks only at what comes after."""
        return len(self.output)

    async def wait_for(self, needle: str, since: int = 0, timeout: float = SESSION_WAIT) -> None:
        """Read until `needle` has been drawn after `since` (escape sequences removed)."""
        deadline = time.monotonic() + timeout
        while needle not in CSI.sub("", self.output[since:].decode("utf-8", "replace")):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} never drawn; last output:\n{self.text()[-1500:]}")
            if not await self.read(left):
                raise AssertionError(f"the session closed before {needle!r}:\n{self.text()[-1500:]}")

    async def wait_for_message(self, kind: str, timeout: float = SESSION_WAIT) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            for message in self.messages:
                if isinstance(message, list) and message and message[0] == kind:
                    self.messages.remove(message)
                    return message
            left = deadline - time.monotonic()
            if left <= 0 or not await self.read(left):
                raise AssertionError(f"no {kind!r} message; got {self.messages}")

    async def read(self, timeout: float) -> bool:
        """Read one message; False once the socket is closed."""
        import json

        try:
            message = await self.ws.receive(timeout=timeout)
        except TimeoutError:
            return True
        if message.type == aiohttp.WSMsgType.BINARY:
            self.output.extend(message.data)
        elif message.type == aiohttp.WSMsgType.TEXT:
            self.messages.append(json.loads(message.data))
        else:
            return False
        return True

    async def type(self, keys: str) -> None:
        await self.ws.send_json(["stdin", keys])
        await asyncio.sleep(0)
