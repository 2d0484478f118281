"""Shared fixtures: a temporary explorer home for every test, and the reference agents.

The published test vectors the tests compare against live in tests/vectors/ (see its README).
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test ever reads or writes the user's real history or config."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("INTERVIEW_EXPLORER_HOME", str(home))
    monkeypatch.setenv("NO_COLOR", "1")
    return home


# --- reference agents (explorer/demo; maintained with the demo package) -------------------------

import typing  # noqa: E402 - this section is appended; it keeps its imports to itself

if typing.TYPE_CHECKING:
    from collections.abc import Iterator

    from explorer.demo.fleet import Fleet


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
