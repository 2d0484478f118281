"""What each browser session's process is started with: the explorer's options, and the demo's agents.

`serve` takes the same TARGET and options as the explorer in a terminal; every session opened
from a browser is a fresh `python -m explorer.tui.served` process that must start the app exactly
as `interview-explorer TARGET ...` would. The options travel as JSON in one environment variable
(`SESSION_ENV`), not on the command line, where any local user could read a `--header` value in
the process list; the environment of a process is readable by its own user only.

Under `demo --browser` the reference agents run in the server's process, and each session needs
what `demo` hands the terminal explorer in memory: which agents run where, which could not start,
the public keys they sign with (trusted for the session), the guarded agents' credential
references, and, with `--crowd N`, the crowd's card URLs for the fleet view. Their demo secrets
go into the session's environment beside it (`Launch.environment`), as their references expect.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SESSION_ENV = "INTERVIEW_EXPLORER_SESSION"


@dataclass(frozen=True)
class DemoHandover:
    """The running reference agents, as a session's explorer adopts them."""

    agents: tuple[tuple[str, str], ...] = ()  # (name, card URL) of each running agent
    skipped: Mapping[str, str] = field(default_factory=dict)  # name -> why it did not start
    keys: tuple[Mapping[str, Any], ...] = ()  # public JWKS the agents sign with
    credentials: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # card URL -> references
    fleet: tuple[str, ...] = ()  # card URLs the fleet view sweeps first (`demo --crowd N`)
    secrets: Mapping[str, str] = field(default_factory=dict)  # VAR -> demo secret (environment only)

    def to_data(self) -> dict[str, Any]:
        return {
            "agents": [list(pair) for pair in self.agents],
            "skipped": dict(self.skipped),
            "keys": [dict(jwks) for jwks in self.keys],
            "credentials": {url: dict(refs) for url, refs in self.credentials.items()},
            "fleet": list(self.fleet),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> DemoHandover:
        return cls(
            agents=tuple((str(name), str(url)) for name, url in data.get("agents", ())),
            skipped={str(k): str(v) for k, v in data.get("skipped", {}).items()},
            keys=tuple(data.get("keys", ())),
            credentials={str(url): dict(refs) for url, refs in data.get("credentials", {}).items()},
            fleet=tuple(str(url) for url in data.get("fleet", ())),
        )


@dataclass(frozen=True)
class Launch:
    """One session's start: the explorer's options by argparse name, and the demo, if any."""

    options: Mapping[str, Any]
    demo: DemoHandover | None = None

    def to_json(self) -> str:
        data: dict[str, Any] = {"options": dict(self.options)}
        if self.demo is not None:
            data["demo"] = self.demo.to_data()
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> Launch:
        data = json.loads(text)
        demo = data.get("demo")
        return cls(options=dict(data["options"]), demo=DemoHandover.from_data(demo) if demo else None)

    def environment(self) -> dict[str, str]:
        """The variables a session's process gets for this launch: the launch itself, and the
        demo's secrets."""
        out = {SESSION_ENV: self.to_json()}
        if self.demo is not None:
            out.update(self.demo.secrets)
        return out

    def references(self) -> tuple[Any, ...]:
        """Where this launch may name `env:` references: its options as typed (a `--header 'Name:
        env:VAR'` becomes a pair whose value is the reference) and the demo's credentials."""
        from explorer.config.settings import given

        try:
            typed = given(self.options)
        except ValueError:  # the session's own check reports it
            typed = {}
        credentials = self.demo.credentials if self.demo is not None else {}
        return (typed, dict(self.options), dict(credentials))


def demo_handover(fleet: Any, crowd: Any = None) -> DemoHandover:
    """The handover of a started fleet (and crowd): what `demo` gives the terminal explorer."""
    from explorer.demo.keyfile import public_jwks

    agents = [*fleet.agents.values(), *(crowd.agents.values() if crowd is not None else ())]
    jwks = public_jwks(agents)
    credentials: dict[str, dict[str, Any]] = {}
    secrets: dict[str, str] = {}
    for agent in fleet.agents.values():
        if getattr(agent, "credentials", None) is None:
            continue
        credentials[str(agent.card_url)] = dict(agent.credentials.settings())
        secrets.update(getattr(agent, "env", {}))
    return DemoHandover(
        agents=tuple((name, str(agent.card_url)) for name, agent in fleet.agents.items()),
        skipped=dict(getattr(fleet, "skipped", {})),
        keys=(jwks,) if jwks["keys"] else (),
        credentials=credentials,
        fleet=tuple(str(a.card_url) for a in crowd.agents.values()) if crowd is not None else (),
        secrets=secrets,
    )
