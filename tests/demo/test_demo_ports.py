"""Each reference agent listens on its own port in every `demo` session, or says where it went.

A new port each session made one agent look like many (the history keys an agent by its card
URL). The ports come from the names (`explorer.demo.ports`); these tests run `demo --serve` twice
and find every agent at the same URL, take one agent's port away and read where it went, and
check that the `fleet` fixture and `INTERVIEW_EXPLORER_DEMO_PORTS=free` keep tests on free ports.
Each test that wants the stable ports picks a range of its own at random, so two runs of this
file side by side (or a user's own `demo`) do not meet.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

import pytest

from explorer.demo.ports import BASE, ENV, SIZE, PortsError, configured_base, slot, stable_ports
from explorer.demo.variants import VARIANTS
from tests.support.demo_serve import demo_serve

# --- the rule -------------------------------------------------------------------------------------


def test_every_reference_agent_has_its_own_port_in_the_range() -> None:
    ports = stable_ports(VARIANTS)
    assert set(ports) == set(VARIANTS)
    assert len(set(ports.values())) == len(ports), "two agents share a port"
    assert all(BASE <= port < BASE + SIZE for port in ports.values())
    assert BASE + SIZE <= 32768, "the range must stay below the kernel's ephemeral ports"


def test_the_ports_depend_on_the_names_only() -> None:
    names = list(VARIANTS)
    assert stable_ports(names) == stable_ports(reversed(names)) == stable_ports(VARIANTS)
    ports = stable_ports(VARIANTS)
    # Most agents sit on their own slot; only a collision moves one, to the next free slot.
    assert sum(ports[n] == BASE + slot(n) for n in VARIANTS) >= len(VARIANTS) * 0.8
    assert stable_ports(VARIANTS, 20_000)["drifting"] == ports["drifting"] - BASE + 20_000


def test_the_environment_moves_the_range_or_asks_for_free_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert configured_base() == BASE
    monkeypatch.setenv(ENV, "free")
    assert configured_base() is None
    monkeypatch.setenv(ENV, "21000")
    assert configured_base() == 21000
    for bad in ("nope", "80", "65000"):
        monkeypatch.setenv(ENV, bad)
        with pytest.raises(PortsError, match=ENV):
            configured_base()


# --- demo --serve ----------------------------------------------------------------------------------


def _free_range(names: list[str]) -> int:
    """A random range base whose ports for `names` are free right now."""
    for _ in range(50):
        base = random.randrange(10_000, 32_000 - SIZE, 10)
        ports = stable_ports(VARIANTS, base)
        try:
            for name in names:
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", ports[name]))
        except OSError:
            continue
        return base
    raise AssertionError("no free range found")


def _serve_once(base: int | str, *names: str) -> tuple[dict[str, str], str]:
    """`demo --serve --only NAMES` with the port range at `base`: each agent's card URL, and what it
    said on stderr from start to its clean stop."""
    with demo_serve("--only", *names, env={ENV: str(base)}) as served:
        urls = {name: agent.card_url for name, agent in served.agents.items()}
        code, err = served.stop(timeout=30)
    assert code == 0, err
    return urls, err


NAMES = ["steady", "drifting"]


@pytest.mark.slow
def test_demo_puts_each_agent_on_the_same_port_every_session() -> None:
    base = _free_range(NAMES)
    expected = stable_ports(VARIANTS, base)
    seen = []
    for _session in range(2):
        urls, err = _serve_once(base, *NAMES)
        assert "taken" not in err, err
        seen.append(urls)
    assert seen[0] == seen[1]
    for name in NAMES:
        assert seen[0][name].startswith(f"http://127.0.0.1:{expected[name]}/"), seen[0]


@pytest.mark.slow
def test_an_agent_whose_port_is_taken_listens_elsewhere_and_says_so() -> None:
    base = _free_range(NAMES)
    wanted = stable_ports(VARIANTS, base)["drifting"]
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", wanted))
        squatter.listen()
        urls, err = _serve_once(base, *NAMES)
    moved = urls["drifting"]
    assert not moved.startswith(f"http://127.0.0.1:{wanted}/")
    port = moved.split(":")[2].split("/")[0]
    assert f"drifting: its usual port {wanted} is taken" in err and f"it listens on {port} this time" in err
    assert urls["steady"].startswith(f"http://127.0.0.1:{stable_ports(VARIANTS, base)['steady']}/")


@pytest.mark.slow
def test_free_ports_when_asked() -> None:
    """What the test suite itself runs with (conftest sets it): no stable port is used."""
    urls, _err = _serve_once("free", *NAMES)
    for url in urls.values():
        port = int(url.split(":")[2].split("/")[0])
        assert not BASE <= port < BASE + SIZE, url  # a kernel-chosen port, never in the range


@pytest.mark.slow
def test_the_fleet_fixture_uses_free_ports(fleet: object) -> None:
    ports = stable_ports(VARIANTS)
    agents = fleet.agents  # type: ignore[attr-defined]
    assert sum(agent.base_url.endswith(f":{ports[name]}") for name, agent in agents.items()) <= 1
    assert not fleet.stable and not fleet.moved  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (150, 50)], ids=["80x24", "150x50"])
async def test_the_load_screen_says_which_agent_is_not_on_its_usual_port(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, size: tuple[int, int]
) -> None:
    from textual.widgets import Static

    from explorer.demo.fleet import Fleet
    from tests.support.tui import make_app, plain

    base = _free_range(NAMES)
    monkeypatch.setenv(ENV, str(base))
    wanted = stable_ports(VARIANTS, base)["drifting"]
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", wanted))
        squatter.listen()
        with Fleet(NAMES, stable=True) as fleet:
            assert fleet.agents["steady"].base_url.endswith(f":{stable_ports(VARIANTS, base)['steady']}")
            assert set(fleet.moved) == {"drifting"}
            app = make_app(None, tmp_path)
            app.context.adopt_fleet(fleet, owned=False)
            async with app.run_test(size=size) as pilot:
                await pilot.pause()
                note = app.screen.query_one("#demo-note", Static)
                assert note.display and f"drifting: its usual port {wanted} is taken" in plain(note)
