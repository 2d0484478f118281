"""A reference crowd: N extra agents on loopback, drawn from the reference variants with a seed.

A sweep and the fleet view have to be seen and tested at a realistic size, a few hundred agents,
which the one-server-per-agent fleet (`explorer.demo.fleet`) is not built for. The crowd keeps
what makes an agent an agent to a verifier, its own origin: every member listens on its own port
of 127.0.0.1, so per-host bounds, history and churn behave as they would on a real fleet. What
it shares is the machinery: ONE uvicorn server in one background thread serves every listening
socket, and a dispatcher hands each request to the app of the agent whose port it arrived on.

The mix is data (`MIX`, weights out of 100): mostly honest agents, some drifting, chatty,
churning, flaky, silent and unreachable ones. `draw(n, seed)` is a pure function of its
arguments, so a test or a benchmark that names a seed gets the same crowd every time. Members
are named `crowd-0001-steady` and carry the variant's expected verdict; an `unreachable` member
holds a bound port on which nothing listens (connections are refused), so its port cannot be
taken by something else while the crowd runs.

Expensive variants (the a2a-sdk agent, the 1 MB hostile card) and those whose verdict depends on
which keys a verifier trusts (a forged signature) are left out of the mix on purpose.
"""

from __future__ import annotations

import asyncio
import random
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import replace
from typing import Any

import uvicorn

from explorer.demo import documents
from explorer.demo.agent import Agent
from explorer.demo.app import build_app
from explorer.demo.fleet import HOST, FleetError, RunningAgent, _Slot
from explorer.demo.ratelimit import RateLimit, RateLimiter
from explorer.demo.sockets import listening_socket
from explorer.demo.variants import VARIANTS, Variant

MAX_CROWD = 5000
UNREACHABLE = "unreachable"
UNREACHABLE_VARIANT = Variant(
    UNREACHABLE,
    "its port is held but nothing listens on it: every connection is refused",
    "unreachable",
    frozenset({"card_unreachable"}),
    signature_form=None,
)

# (variant name, weight): the seeded mix of a crowd, weights summing to 100.
MIX: tuple[tuple[str, int], ...] = (
    ("steady", 38),
    ("legacy", 8),
    ("unsigned", 5),
    ("no-terms", 5),
    ("quiet", 4),
    ("reputation", 3),
    ("drifting", 8),
    ("chatty", 3),
    ("churning", 7),
    ("flaky", 7),
    ("silent", 6),
    (UNREACHABLE, 6),
)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _variant(name: str) -> Variant:
    return UNREACHABLE_VARIANT if name == UNREACHABLE else VARIANTS[name]


def draw(n: int, seed: int = 0) -> list[Variant]:
    """The crowd's members in order: `n` variants drawn with `seed`, renamed `crowd-NNNN-<variant>`."""
    if not 1 <= n <= MAX_CROWD:
        raise FleetError(f"a crowd has between 1 and {MAX_CROWD} agents, not {n}")
    rng = random.Random(seed)
    names = rng.choices([name for name, _ in MIX], weights=[w for _, w in MIX], k=n)
    width = max(4, len(str(n)))
    return [replace(_variant(name), name=f"crowd-{i + 1:0{width}d}-{name}") for i, name in enumerate(names)]


def dispatcher(apps: dict[int, App]) -> App:
    """One ASGI app that hands each request to the app of the port it arrived on."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server")
        target = apps.get(server[1]) if server else None
        if target is None:
            if scope.get("type") == "http":
                await send({"type": "http.response.start", "status": 404, "headers": []})
                await send({"type": "http.response.body", "body": b""})
            return
        await target(scope, receive, send)

    return app


class Crowd:
    """`n` agents drawn with `seed`, served by one uvicorn server from one background thread."""

    def __init__(self, n: int, *, seed: int = 0, port: int = 0, rate_limit: RateLimit | None = None) -> None:
        if not 0 <= port <= 65535 - n:
            raise FleetError(f"port must be between 0 and {65535 - n} for {n} agents, got {port}")
        self.variants = draw(n, seed)
        self.seed = seed
        self.port = port
        self.rate_limit = rate_limit or RateLimit()
        self.agents: dict[str, RunningAgent] = {}
        self.skipped: dict[str, str] = {}  # as Fleet.skipped; a crowd skips nothing
        self.startup_seconds: float | None = None
        self._sockets: list[socket.socket] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None

    def __enter__(self) -> Crowd:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Crowd:
        """Bind, build and serve; returns once every listening socket is served."""
        if self._thread is not None:
            raise FleetError("this crowd is already started")
        began = time.perf_counter()
        try:
            apps = self._build()
        except BaseException:
            self.stop()
            raise
        listening = [
            s for s, v in zip(self._sockets, self.variants, strict=True) if v.expected_verdict != UNREACHABLE
        ]
        config = uvicorn.Config(
            dispatcher(apps),
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            proxy_headers=False,
            ws="none",
            timeout_graceful_shutdown=1,
            timeout_keep_alive=5,
            limit_concurrency=None,
            backlog=128,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, args=(listening,), name="demo-crowd", daemon=True)
        self._thread.start()
        while not self._started.wait(0.01):
            if not self._thread.is_alive():
                break
        if self._error is not None or not self._server.started:
            reason = self._error
            self.stop()
            raise FleetError(f"the demo crowd failed to start: {reason}")
        self.startup_seconds = time.perf_counter() - began
        return self

    def stop(self) -> None:
        """Shut the server down and release every port (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        for sock in self._sockets:
            sock.close()
        self._sockets = []

    def _build(self) -> dict[int, App]:
        provider = documents.Provider()
        apps: dict[int, App] = {}
        for index, variant in enumerate(self.variants):
            reachable = variant.expected_verdict != UNREACHABLE
            sock = self._bind(self.port + index if self.port else 0, listen=reachable)
            port = sock.getsockname()[1]
            urls = documents.Urls(f"http://{HOST}:{port}")
            key = documents.CardKey.generate(variant.name)
            slot = _Slot()
            self.agents[variant.name] = RunningAgent(
                variant.name,
                variant,
                urls.base,
                urls.base + documents.CARD_PATH,
                urls.jsonrpc,
                urls.jwks if variant.signed else None,
                key.jwks,
                slot,
            )
            if reachable:
                generations = 2 if variant.churn else 1
                states = [documents.build(variant, urls, key, provider, g) for g in range(generations)]
                slot.agent = Agent(variant, states, RateLimiter(self.rate_limit))
                apps[port] = build_app(slot.agent)
            slot.ready.set()
        return apps

    def _bind(self, port: int, *, listen: bool) -> socket.socket:
        """A listening socket (`demo.sockets`: TCP_NODELAY), or for an unreachable member a bound
        one that never listens, so every connection to it is refused."""
        try:
            if listen:
                sock = listening_socket(HOST, port)
            else:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
                try:
                    sock.bind((HOST, port))
                except OSError:
                    sock.close()
                    raise
        except OSError as exc:
            raise FleetError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
        self._sockets.append(sock)
        return sock

    def _run(self, sockets: list[socket.socket]) -> None:
        assert self._server is not None
        server = self._server
        loop = asyncio.new_event_loop()

        async def main() -> None:
            task = loop.create_task(server.serve(sockets=sockets))
            while not server.started and not task.done():
                await asyncio.sleep(0.005)
            self._started.set()
            await task

        try:
            loop.run_until_complete(main())
        except BaseException as exc:  # noqa: BLE001 - reported to start() instead of dying silently
            self._error = exc
        finally:
            self._started.set()
            loop.close()
