"""Deterministic runs and apps for the snapshot tests and `scripts/screenshots.py`.

A live interview of a reference agent is the honest thing to draw, but three of its details change
on every fleet start: the loopback ports, the keys (so every signature, digest and card hash),
and the clock. `normalise_report` replaces each port by a fixed one of the same length, each
long token (hex digests, base64url signatures, nkeys) by a placeholder of the same length chosen
by order of first appearance, and the timestamps by a fixed instant. Lengths are kept so the
diff spans in the report stay valid. Everything else on screen is the agent's real answer.

`record_history` records the runs with the fixed clock, so the history screen draws the same
times on every machine.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from explorer.core.run import Run
from explorer.tui.context import AppContext, DemoAgent

FIXED_NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
FIXED_STAMP = "2026-01-01T12:00:00.000Z"
SIZE = (140, 42)
SMALL = (80, 24)  # the smallest terminal every screen is tested at
RUNNER = "demo-user"

_PORT = re.compile(r"127\.0\.0\.1:(\d+)")
_TOKEN = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{40,}(?![A-Za-z0-9_-])")


def screen_text(app: Any) -> str:
    """Exactly what the terminal would be sent for the app's current screen, as plain text."""
    import io

    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, record=True)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text(styles=False)


def fixed_clock() -> datetime:
    return FIXED_NOW


def _placeholder(index: int, length: int) -> str:
    seed = hashlib.sha256(f"placeholder-{index}".encode()).hexdigest()
    return (seed * (length // len(seed) + 1))[:length]


class Normaliser:
    """Replaces ports and long random tokens consistently across several texts."""

    def __init__(self) -> None:
        self.ports: dict[str, str] = {}
        self.tokens: dict[str, str] = {}

    def port(self, match: re.Match[str]) -> str:
        port = match.group(1)
        if port not in self.ports:
            base = 4 * 10 ** (len(port) - 1) if len(port) > 1 else 4
            self.ports[port] = str(base + len(self.ports))[: len(port)]
        return f"127.0.0.1:{self.ports[port]}"

    def token(self, match: re.Match[str]) -> str:
        token = match.group(0)
        if token not in self.tokens:
            self.tokens[token] = _placeholder(len(self.tokens), len(token))
        return self.tokens[token]

    def text(self, text: str) -> str:
        return _TOKEN.sub(self.token, _PORT.sub(self.port, text))

    def report(self, report: Mapping[str, Any]) -> dict[str, Any]:
        data = json.loads(self.text(json.dumps(report, ensure_ascii=False)))
        for key in ("started_at", "finished_at"):
            if key in data:
                data[key] = FIXED_STAMP
        return data


def normalise_report(report: Mapping[str, Any], normaliser: Normaliser | None = None) -> dict[str, Any]:
    return (normaliser or Normaliser()).report(report)


async def picture_run(
    fleet: Any,
    name: str,
    normaliser: Normaliser | None = None,
    *,
    exchanges: bool = False,
    card: bool = False,
    **options: Any,
) -> Run:
    """Interview one reference agent now and return the run with its volatile details fixed
    (`exchanges`: keep what was exchanged, for a screen that reads the card served, such as
    the sign-in dialog's declared schemes; `card`: keep only the card as served, its ports and
    tokens fixed like the report's, for the card screen, which draws all of it)."""
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview
    from explorer.tui.demo_agents import demo_keys

    opts = Options(keys=demo_keys(fleet), runner=RUNNER, **options)
    run = await run_interview(fleet.agents[name].card_url, opts)
    norm = normaliser or Normaliser()
    kept = run.exchanges if exchanges else ()
    if card:
        kept = tuple(
            replace(ex, url=norm.text(ex.url), response_body=norm.text(ex.response_body.decode()).encode())
            for ex in run.exchanges
            if ex.purpose == "card"
        )
    return Run(report=normalise_report(run.report, norm), exchanges=kept)


def picture_context(fleet: Any, home: Path, normaliser: Normaliser | None = None) -> AppContext:
    """An AppContext for pictures: fixed clock, the fleet's agents, no cursor blink."""
    from explorer.tui.demo_agents import demo_agents, demo_keys

    norm = normaliser or Normaliser()
    agents = [
        DemoAgent(a.name, a.description, a.expected_verdict, norm.text(a.url), a.expected_codes)
        for a in demo_agents(fleet)
    ]
    return AppContext(
        home=home,
        settings={"keys": demo_keys(fleet), "runner": RUNNER},
        clock=fixed_clock,
        demo=tuple(agents),
        export_dir=home / "exports",
        cursor_blink=False,
        read_stored=False,  # the picture runs are normalised, without the bytes to read them from
    )


# --- the scenes drawn by the snapshot tests and by scripts/screenshots.py ------------------------

PICTURE_AGENTS = ("steady", "drifting", "hostile")


async def collect_runs(fleet: Any, churn_fleet: Any) -> dict[str, Run]:
    """Normalised runs of steady, drifting and hostile, and two of churning (for compare).

    `churn_fleet` is a fleet of its own holding only `churning`, so its two runs see exactly one
    change of declarations each (test order elsewhere cannot shift its state).
    """
    shared = Normaliser()  # one for all: each agent keeps its own port, a digest reads the same twice
    runs = {name: await picture_run(fleet, name, shared) for name in PICTURE_AGENTS}
    runs["churning-1"] = await picture_run(churn_fleet, "churning", shared)
    runs["churning-2"] = await picture_run(churn_fleet, "churning", shared)
    # Asked without its credentials: auth_required, and the sign-in dialog reads its card.
    runs["guarded-bearer"] = await picture_run(fleet, "guarded-bearer", shared, exchanges=True)
    # Without the interview: each question from the declared documents, and the card screen.
    runs["silent"] = await picture_run(fleet, "silent", shared, card=True)
    return runs


def record_history(runs: Mapping[str, Run], home: Path) -> dict[str, int]:
    """Record the picture runs in `home`'s history, oldest first, at the fixed instant."""
    from explorer.store.sqlite import History

    order = ("steady", "churning-1", "drifting", "churning-2", "hostile", "steady")
    ids: dict[str, int] = {}
    with History.open(home, clock=fixed_clock) as history:
        for name in order:
            ids[name] = history.record(runs[name])
    return ids


Before = Any  # an async callable taking the Pilot, run before the picture is taken


def scene(
    name: str, fleet: Any, home: Path, runs: Mapping[str, Run], ids: Mapping[str, int]
) -> tuple[Any, Before]:
    """(app, run_before) for one picture: a name of SCENES or EXTRA_SCENES."""
    from explorer.tui.app import ExplorerApp, Start

    context = picture_context(fleet, home)
    if name in PICTURE_AGENTS:
        start = Start(run=runs[name], run_id=ids.get(name), origin="live")
        return ExplorerApp(context, start), _settle
    if name in KEYED_SCENES:
        run_name, keys = KEYED_SCENES[name]
        start = Start(run=runs[run_name], run_id=ids.get(run_name), origin="live")
        return ExplorerApp(context, start), _press(*keys)
    if name == "load":
        return ExplorerApp(context), _settle
    if name == "history":
        return ExplorerApp(context), _read_after("f2")
    if name == "fleet":
        return ExplorerApp(context), _read_after("f3")
    if name == "compare":
        from explorer.tui.screens.compare import CompareScreen

        async def compare(pilot: Any) -> None:
            before, after = runs["churning-1"], runs["churning-2"]
            await pilot.app.push_screen(CompareScreen(before, ids["churning-1"], after, ids["churning-2"]))
            await _settle(pilot)

        return ExplorerApp(context), compare
    raise KeyError(f"no scene named {name!r}")


SCENES: tuple[str, ...] = ("load", "steady", "drifting", "compare", "history", "fleet", "hostile")
# Scenes the snapshot tests also draw: a run opened, then keys pressed (F1's help on drifting,
# the sign-in dialog on an agent that refused the questions, what a churn's first attempt found,
# an agent without the interview read question by question from its card, and its card screen).
KEYED_SCENES: dict[str, tuple[str, tuple[str, ...]]] = {
    "help": ("drifting", ("f1",)),
    "sign-in": ("guarded-bearer", ("a",)),
    "churned": ("churning-1", ("u",)),
    "declared": ("silent", ("3",)),
    "card": ("silent", ("d",)),
}
EXTRA_SCENES: tuple[str, ...] = tuple(KEYED_SCENES)


async def _settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def _read_after(key: str) -> Before:
    """The key, then wait for the screen it opens (history, fleet) to have read the history,
    which it does in a worker thread (the fleet also the runs in view, under your keys)."""

    async def read(pilot: Any) -> None:
        await _settle(pilot)
        await pilot.press(key)
        for _ in range(400):
            screen = pilot.app.screen
            if getattr(screen, "settled", getattr(screen, "loaded", False)):
                break
            await pilot.pause(0.05)
        await _settle(pilot)

    return read


def _press(*keys: str) -> Before:
    """The keys, pressed once the first screen has settled; then settle again."""

    async def press(pilot: Any) -> None:
        await _settle(pilot)
        await pilot.press(*keys)
        await _settle(pilot)

    return press
