"""The fleet: every reference agent in one process, each its own uvicorn server on 127.0.0.1.

`Fleet(names=None, *, port=0, stable=False)` picks variants from `VARIANTS` (all of them by
default, in table order). `start()` binds one listening socket per agent (an ephemeral port each;
`port`, `port + 1`, ... when `port` is given; with `stable`, each agent's own port of
`explorer.demo.ports`, or a free one when that is taken, said in `moved`), builds every agent's
documents with its signing keys (made now, or with `keys_in` kept there across sessions by
`explorer.demo.kept_keys`), and serves them all from one background thread running one asyncio
event loop. It returns once every socket is bound and listening and the ordinary agents are
serving; `stop()` shuts every server down and releases the ports. The fleet is a context manager.

Three agents are expensive to build and are finished in the background after `start()` returns:
`sdk-built` (importing a2a-sdk takes about a second), `hostile` (a 1 MB card to sign) and `huge`
(a 2.9 MB card to sign, and its answers, computed before it serves). Their
sockets are already listening, so a client that connects early simply waits in the listen
backlog until the agent is ready; `wait_ready()` blocks until every agent serves. This keeps the
start-up time (`startup_seconds`) well under a second. `sdk-built` is skipped, with the reason in
`skipped`, when a2a-sdk is not installed (it is part of the test extra).

Each server is configured for a loopback test fixture, not a deployment: no lifespan, no access
log, no proxy headers (so `X-Forwarded-For` cannot spoof the per-client rate limit), and a short
graceful-shutdown timeout.
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from explorer.config.credentials import Credentials
from explorer.demo import documents, openclasp_site
from explorer.demo.agent import Agent
from explorer.demo.app import build_app
from explorer.demo.guard import Guard
from explorer.demo.ratelimit import RateLimit, RateLimiter
from explorer.demo.sockets import listening_socket
from explorer.demo.variants import VARIANTS, Variant

__all__ = ["VARIANTS", "Fleet", "FleetError", "RunningAgent", "Variant"]

HOST = "127.0.0.1"
Builder = Callable[[], tuple[Agent, Any]]  # builds an agent and its ASGI app


class FleetError(RuntimeError):
    """The fleet cannot start: an unknown agent name, or a port that cannot be bound."""


@dataclass
class _Slot:
    """Where a running agent's parts live; `agent` is set once it is built."""

    agent: Agent | None = None
    ready: threading.Event = field(default_factory=threading.Event)
    error: str | None = None


@dataclass(frozen=True)
class RunningAgent:
    """One agent of a started fleet: its variant and where to reach it."""

    name: str
    variant: Variant
    base_url: str
    card_url: str
    jsonrpc_url: str
    jwks_url: str | None
    jwks: dict[str, Any] = field(repr=False)
    _slot: _Slot = field(repr=False, compare=False)
    guard: Guard | None = field(default=None, repr=False, compare=False)

    @property
    def credentials(self) -> Credentials | None:
        """The explorer settings a guarded agent needs (env: references to `env`), else None."""
        return self.guard.credentials if self.guard is not None else None

    @property
    def env(self) -> dict[str, str]:
        """The environment variables holding a guarded agent's demo secret (empty otherwise)."""
        return self.guard.env if self.guard is not None else {}

    @property
    def agent(self) -> Agent | None:
        """The agent's behaviour object (None until a deferred agent is built)."""
        return self._slot.agent


_Job = tuple[RunningAgent, socket.socket, Builder]


def _sdk_available() -> bool:
    return importlib.util.find_spec("a2a") is not None


def _sdk_install_hint() -> str:
    """How to add a2a-sdk (the test extra) to this installation: from the clone when the code runs
    from a source tree (an editable install), else from the package."""
    from pathlib import Path

    import explorer

    installed = "site-packages" in Path(explorer.__file__).resolve().parts
    return "pip install 'interview-explorer[test]'" if installed else "pip install -e '.[test]'"


def _deferred(variant: Variant) -> bool:
    return variant.sdk or variant.hostile or variant.huge


class Fleet:
    """All chosen reference agents, served from one background thread."""

    def __init__(
        self,
        names: Iterable[str] | None = None,
        *,
        port: int = 0,
        stable: bool = False,
        rate_limit: RateLimit | None = None,
        token_lifetime: int = 120,
        keys_in: Path | None = None,
    ) -> None:
        chosen = list(VARIANTS) if names is None else list(dict.fromkeys(names))
        unknown = [n for n in chosen if n not in VARIANTS]
        if unknown:
            raise FleetError(f"unknown demo agent(s): {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
        if not 0 <= port <= 65535:
            raise FleetError(f"port must be between 0 and 65535, got {port}")
        self.skipped: dict[str, str] = {}
        if not _sdk_available():
            for name in [n for n in chosen if VARIANTS[n].sdk]:
                self.skipped[name] = f"a2a-sdk is not installed ({_sdk_install_hint()} to add it)"
                chosen.remove(name)
        self.variants: list[Variant] = [VARIANTS[n] for n in chosen]
        self.port = port
        self.stable = stable and not port  # each agent on its own port across sessions
        self.moved: dict[str, str] = {}  # agents whose stable port was taken: where they went, and why
        self.rate_limit = rate_limit or RateLimit()
        self.token_lifetime = token_lifetime  # seconds an access token of guarded-oauth2 lives
        self.keys_in = keys_in  # where the signing keys are kept across sessions (None: made anew)
        self.agents: dict[str, RunningAgent] = {}
        self.startup_seconds: float | None = None
        self._sockets: list[socket.socket] = []
        self._servers: list[uvicorn.Server] = []
        self._watchers: list[asyncio.Task[None]] = []
        self._thread: threading.Thread | None = None
        self._serving = threading.Event()
        self._stopping = False
        self._start_error: BaseException | None = None

    # --- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> Fleet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Fleet:
        """Bind, build and serve; returns once every socket listens and ordinary agents serve."""
        if self._thread is not None:
            raise FleetError("this fleet is already started")
        began = time.perf_counter()
        self._bind()
        jobs: list[_Job] = []
        try:
            provider = documents.Provider(self.keys_in)
            for variant, sock in zip(self.variants, self._sockets, strict=True):
                running, build = self._prepare(variant, sock, provider)
                self.agents[variant.name] = running
                jobs.append((running, sock, build))
        except BaseException:
            self.stop()
            raise
        self._thread = threading.Thread(target=self._run, args=(jobs,), name="demo-fleet", daemon=True)
        self._thread.start()
        self._serving.wait()
        if self._start_error is not None:
            self.stop()
            raise FleetError(f"the demo fleet failed to start: {self._start_error}")
        self.startup_seconds = time.perf_counter() - began
        return self

    def wait_ready(self, timeout: float = 30.0) -> bool:
        """Block until every agent (deferred ones included) serves or failed; False on timeout."""
        deadline = time.monotonic() + timeout
        for running in self.agents.values():
            if not running._slot.ready.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True

    @property
    def errors(self) -> dict[str, str]:
        """Agents that failed to build in the background, with the reason."""
        return {n: a._slot.error for n, a in self.agents.items() if a._slot.error is not None}

    def stop(self) -> None:
        """Shut every server down and release the ports (idempotent)."""
        self._stopping = True
        for server in self._servers:
            server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        for sock in self._sockets:
            sock.close()
        self._sockets = []

    # --- building ----------------------------------------------------------------------------------

    def _stable_ports(self) -> dict[str, int]:
        """Each variant's stable port, when this fleet uses them (none when the environment asks
        for free ports)."""
        if not self.stable:
            return {}
        from explorer.demo.ports import PortsError, configured_base, stable_ports

        try:
            base = configured_base()
        except PortsError as exc:
            raise FleetError(str(exc)) from None
        return stable_ports(VARIANTS, base) if base is not None else {}

    def _bind(self) -> None:
        stable = self._stable_ports()
        for index, variant in enumerate(self.variants):
            wanted = self.port + index if self.port else stable.get(variant.name, 0)
            try:
                sock = self._listen(variant.name, wanted, fallback=variant.name in stable)
            except OSError as exc:
                for other in self._sockets:
                    other.close()
                self._sockets = []
                raise FleetError(f"cannot listen on {HOST}:{wanted}: {exc.strerror or exc}") from None
            self._sockets.append(sock)

    def _listen(self, name: str, wanted: int, *, fallback: bool) -> socket.socket:
        """A socket on `wanted`; with `fallback`, on a free port when `wanted` is taken (said in
        `moved`)."""
        try:
            return listening_socket(HOST, wanted)
        except OSError as exc:
            if not fallback:
                raise
            sock = listening_socket(HOST, 0)
            self.moved[name] = (
                f"its usual port {wanted} is taken ({exc.strerror or exc}); "
                f"it listens on {sock.getsockname()[1]} this time"
            )
            return sock

    def _prepare(
        self, variant: Variant, sock: socket.socket, provider: documents.Provider
    ) -> tuple[RunningAgent, Builder]:
        port = sock.getsockname()[1]
        urls = documents.Urls(f"http://{HOST}:{port}")
        key = documents.CardKey.generate(variant.name, self.keys_in)
        card_url = urls.base + documents.CARD_PATH
        if variant.openclasp:
            card_url = openclasp_site.urls(urls.base, variant.name).a2a_card
        signed = variant.signed and not variant.openclasp
        guard = Guard(variant.guard, lifetime=self.token_lifetime) if variant.guard else None
        running = RunningAgent(
            variant.name,
            variant,
            urls.base,
            card_url,
            urls.jsonrpc,
            urls.jwks if signed else None,
            key.jwks,
            _Slot(),
            guard,
        )
        limiter = RateLimiter(self.rate_limit)

        def build() -> tuple[Agent, Any]:
            if variant.sdk:
                from explorer.demo import sdk_agent

                return sdk_agent.build(variant, urls, key, provider, limiter)
            generations = 2 if variant.churn else 1
            states = [documents.build(variant, urls, key, provider, g) for g in range(generations)]
            agent = Agent(variant, states, limiter)
            if variant.huge:
                agent.prepare()
            return agent, build_app(agent, guard)

        return running, build

    # --- the server thread -------------------------------------------------------------------------

    def _run(self, jobs: list[_Job]) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._main(jobs))
        except BaseException as exc:  # noqa: BLE001 - reported to start() instead of dying silently
            self._start_error = exc
        finally:
            self._serving.set()
            for running, _sock, _build in jobs:
                running._slot.ready.set()
            loop.run_until_complete(loop.shutdown_default_executor())
            loop.close()

    async def _main(self, jobs: list[_Job]) -> None:
        tasks: list[asyncio.Task[None]] = []
        for running, sock, build in jobs:
            if not _deferred(running.variant):
                tasks.append(self._serve(running, sock, *build()))
        while not all(s.started for s in self._servers) and not any(t.done() for t in tasks):
            await asyncio.sleep(0.002)
        for task in tasks:
            failure = task.exception() if task.done() else None
            if failure is not None:
                raise failure
        self._serving.set()
        loop = asyncio.get_running_loop()
        for running, sock, build in jobs:
            if _deferred(running.variant) and not self._stopping:
                try:
                    agent, app = await loop.run_in_executor(None, build)
                except Exception as exc:  # noqa: BLE001 - one broken agent must not take the fleet down
                    running._slot.error = f"{type(exc).__name__}: {exc}"
                    running._slot.ready.set()
                    sock.close()
                    continue
                if not self._stopping:
                    tasks.append(self._serve(running, sock, agent, app))
        await asyncio.gather(*tasks, *self._watchers, return_exceptions=True)

    def _serve(
        self, running: RunningAgent, sock: socket.socket, agent: Agent, app: Any
    ) -> asyncio.Task[None]:
        config = uvicorn.Config(
            app,
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            proxy_headers=False,
            ws="none",
            timeout_graceful_shutdown=1,
            timeout_keep_alive=5,
        )
        server = uvicorn.Server(config)
        self._servers.append(server)
        if self._stopping:
            server.should_exit = True
        running._slot.agent = agent
        loop = asyncio.get_running_loop()
        task = loop.create_task(server.serve(sockets=[sock]))
        self._watchers.append(loop.create_task(_ready_when_started(server, running._slot)))
        return task


async def _ready_when_started(server: uvicorn.Server, slot: _Slot) -> None:
    while not server.started and not server.should_exit:
        await asyncio.sleep(0.002)
    slot.ready.set()
