"""Shared fixtures: a temporary explorer home for every test, the reference agents, the TUI.

Where things are, for a newcomer:

- `fleet` (session): every reference agent of `explorer.demo` on 127.0.0.1.
- `demo_runs` (session): one live interview each of steady, drifting and hostile, for tests that
  are about what is shown rather than about the network.
- `tui`: starts the explorer app headless under Textual's Pilot (`async with tui() as pilot:`).
- `tests/support/`: what the tests share (`tests/support/__init__.py` lists it): waiting for
  screens (`tui`), a canned loopback HTTP server (`http_server`), `demo --serve` in a subprocess
  (`demo_serve`), a generic card (`cards`), synthetic runs (`runs`), JSON strategies
  (`strategies`); `tests/vectors/`: the published test vectors (see its README).
- Every test stays on loopback: `tests/support/loopback_only.py` refuses (and the test fails on)
  a name lookup or a connection beyond 127.0.0.0/8 and ::1 in this process.
- The tests themselves sit in folders named after the part of `explorer/` they test
  (`tests/core/`, `tests/tui/`, ...); `tests/repo/` checks the repository as a whole.

Tests marked `slow` (end-to-end, TUI, pseudo-terminal, subprocess, benchmark, heavy property
tests) are skipped by `pytest -m "not slow"`; CI runs everything. Mark a test (or a file, with
`pytestmark`) `slow` when it takes more than a fraction of a second. Two kinds are marked here
whether or not they say so, so the everyday run stays fast as tests are added: tests that use
the `fleet`, `demo_runs` or `tui` fixtures, and everything in a `test_*_bench.py` file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from explorer.core.run import Run
    from explorer.demo.fleet import Fleet
    from tests.support.tui import Tui


SLOW_FIXTURES = frozenset({"fleet", "demo_runs", "tui"})


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests of the reference agents, of the TUI, and benchmarks are `slow` whatever they say."""
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if uses & SLOW_FIXTURES or item.path.name.endswith("_bench.py"):
            item.add_marker(pytest.mark.slow)


def pytest_configure(config: pytest.Config) -> None:
    """Keep this process on loopback (`tests/support/loopback_only.py`)."""
    from tests.support import loopback_only

    loopback_only.install()


@pytest.fixture(autouse=True)
def _loopback_only() -> Iterator[None]:
    """A test that looked up a name or opened a connection beyond loopback fails, even where the
    attempt itself failed quietly (the guard refuses it as a dead network would)."""
    from tests.support import loopback_only

    loopback_only.take()
    yield
    reached = loopback_only.take()
    assert not reached, f"this test tried to leave loopback: {'; '.join(reached)}"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test ever reads or writes the user's real history or config, and a `demo` a test starts
    uses free ports, not the reference agents' usual ones (`explorer.demo.ports`): test runs side
    by side, or beside a user's own `demo`, never meet."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("INTERVIEW_EXPLORER_HOME", str(home))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("INTERVIEW_EXPLORER_DEMO_PORTS", "free")
    return home


# --- reference agents (explorer/demo; maintained with the demo package) -------------------------


@pytest.fixture(scope="session")
def fleet() -> Iterator[Fleet]:
    """Every reference agent on 127.0.0.1, started once per session and stopped at its end.

    `fleet.agents[name]` has `.base_url`, `.card_url`, `.jsonrpc_url`, `.jwks_url` and `.variant`
    (expected verdict and codes). The agents are shared by every test: churning flips its state
    once per verifier run and flaky changes its order per ask, both deterministically, but a test that
    depends on an exact call sequence should start a `Fleet([...])` of its own. The rate limit is
    raised so a whole test session never meets a 429 (tests of the limit use their own fleet).
    """
    from explorer.demo.fleet import Fleet as DemoFleet
    from explorer.demo.ratelimit import RateLimit

    started = DemoFleet(rate_limit=RateLimit(calls=100_000, per_seconds=60.0)).start()
    started.wait_ready(timeout=60.0)
    yield started
    started.stop()


DEMO_RUN_AGENTS = ("steady", "drifting", "hostile")


@pytest.fixture(scope="session")
def demo_runs(fleet: Fleet) -> dict[str, Run]:
    """One live interview each of steady, drifting and hostile, run once per session.

    Most screen tests are about what is shown, not about the network, so they open these runs
    directly (the live path has its own tests). Treat them as read-only: they are shared.
    """
    import asyncio

    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview
    from explorer.tui.demo_agents import demo_keys

    async def interview(name: str) -> Run:
        options = Options(keys=demo_keys(fleet), runner="tester")
        return await run_interview(fleet.agents[name].card_url, options)

    return {name: asyncio.run(interview(name)) for name in DEMO_RUN_AGENTS}


# --- the TUI under Pilot ----------------------------------------------------------------------------


@pytest.fixture
def tui(request: pytest.FixtureRequest, tmp_path: Path) -> Tui:
    """Start the explorer app headless: `async with tui() as pilot:`, then `pilot.app`.

    The app runs on the reference agents (the `fleet`, started on first use) with a fixed clock,
    no cursor blink, runner "tester" and exports under `tmp_path / "exports"`
    (`tests.support.tui.make_app`). `tui(agents=False)` starts it on no agents; `size=(w, h)` sets
    the terminal (default `tests.support.tui.TUI_SIZE`); other keywords set `AppContext` fields, e.g.
    `tui(watch_interval=0.2)`. The app starts when the `async with` is entered, so whatever a
    test records in the history beforehand is there when the first screen mounts.
    """
    from tests.support.tui import TUI_SIZE, make_app

    def start(*, agents: bool = True, size: tuple[int, int] = TUI_SIZE, **overrides: Any) -> Any:
        fleet = request.getfixturevalue("fleet") if agents else None
        return make_app(fleet, tmp_path, **overrides).run_test(size=size)

    return start


# --- history stores (explorer/store): every backend the tests can reach ---------------------------

STORE_KINDS = ("sqlite", "postgresql")


@pytest.fixture(params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    """Each history backend in turn; PostgreSQL skips (one line naming what to install) where no
    server can be started here."""
    if request.param == "postgresql":
        request.getfixturevalue("postgres_server")
    return str(request.param)


@pytest.fixture
def store_url(store_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty history of `store_kind`, as the URL `--history` takes."""
    if store_kind == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / 'history.sqlite3'}"
    server = request.getfixturevalue("postgres_server")
    return server.fresh_database()


@pytest.fixture
def fresh_store_url(store_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Another fresh, empty history of `store_kind` at each call (its URL)."""
    count = iter(range(1, 1_000_000))

    def fresh() -> str:
        if store_kind == "sqlite":
            return f"sqlite:///{tmp_path / f'fresh{next(count)}' / 'history.sqlite3'}"
        return str(request.getfixturevalue("postgres_server").fresh_database())

    return fresh


@pytest.fixture
def store_factory(store_url: str) -> Iterator[Any]:
    """Open the test's history (as many times as asked: each open is another connection, as
    another process or runner would hold); every store opened is closed at the end."""
    from explorer.store.location import open_store

    opened: list[Any] = []

    def open_(**kwargs: Any) -> Any:
        store = open_store(store_url, **kwargs)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A PostgreSQL server of the test session's own (tests/support/postgres.py), or a skip naming
    what to install."""
    from tests.support.postgres import start_server

    server, reason = start_server(tmp_path_factory.mktemp("pg"))
    if server is None:
        pytest.skip(reason)
    try:
        yield server
    finally:
        server.stop()
