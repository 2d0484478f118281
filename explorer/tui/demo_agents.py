"""The reference agents inside a TUI session: a running fleet as the app sees it.

`interview-explorer demo` starts the fleet before the app and hands it over (`run_demo`); a plain
`interview-explorer` session can start one later from the load screen or its palette. Either
way the app needs the same two things from a fleet: its agents as `DemoAgent` rows with the
verdict each is built to get (in the variants' display order), and the public key sets they sign
with, trusted in memory so the demo's signatures show "verified" by keys the user was given
rather than keys the cards point at. The guarded agents also need their demo credentials: their
secrets go into this process's environment, as a user would export them, and the agents carry
`env:` references to them (`demo_credentials`).

`DemoAgent` lives here, with the code that makes them; `explorer.tui.context` uses this module,
never the other way round.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple


class DemoAgent(NamedTuple):
    """A reference agent as the load screen lists it."""

    name: str
    description: str
    expected_verdict: str
    url: str
    expected_codes: tuple[str, ...] = ()


def demo_agents(fleet: Any) -> list[DemoAgent]:
    """The fleet's agents, in the variants' display order, with their expected verdicts."""
    from explorer.demo.variants import VARIANTS

    agents = getattr(fleet, "agents", {})
    out = []
    for name, variant in VARIANTS.items():
        agent = agents.get(name) if isinstance(agents, dict) else None
        if agent is None:
            continue
        url = getattr(agent, "card_url", None) or getattr(agent, "base_url", "")
        out.append(
            DemoAgent(
                name=name,
                description=variant.description,
                expected_verdict=variant.expected_verdict,
                url=str(url),
                expected_codes=tuple(sorted(variant.expected_codes)),
            )
        )
    return out


def demo_credentials(fleet: Any) -> dict[str, Any]:
    """The guarded agents' demo credentials (`explorer.config.credentials.Credentials`, references only)
    by card URL; their secrets are put in this process's environment so the references resolve."""
    out: dict[str, Any] = {}
    for agent in getattr(fleet, "agents", {}).values():
        credentials = getattr(agent, "credentials", None)
        if credentials is None:
            continue
        os.environ.update(getattr(agent, "env", {}))
        out[str(agent.card_url)] = credentials
    return out


def demo_keys(fleet: Any) -> tuple[Any, ...]:
    """The public key set the reference agents sign with (in memory), as `demo --serve` writes it."""
    from explorer.demo.keyfile import public_jwks

    jwks = public_jwks(getattr(fleet, "agents", {}).values())
    return (jwks,) if jwks["keys"] else ()


def start_fleet(home: Path | None = None) -> Any:
    """Start every reference agent on 127.0.0.1, each on its own port and with its own kept
    signing keys as `demo` does (blocks for about a third of a second; the slow builders finish
    in the background with their sockets already listening)."""
    from explorer.demo.fleet import Fleet
    from explorer.demo.kept_keys import FOLDER
    from explorer.home import home_dir

    return Fleet(stable=True, keys_in=home_dir(home) / FOLDER).start()
