"""Watch an agent: replay the interview every N seconds and keep a timeline of changes.

Each tick is an async worker (the screen keeps drawing) that hands the interview, its recording
and the comparison to a thread (they cost CPU, most of a second on a large agent), skipped if
the previous one is still running, so a slow agent never piles up interviews. Every run is
recorded in history and compared with the one before it by `compare_reports`; the timeline line
says the time (from the injected clock), the verdict, and what changed in words ("no change" or
the comparison summary, whose kinds name a `key changed`). A card only signed again over the same
declarations under the same key (a restart, another replica) raises no change: its line says
`no change: signed again` and it is not counted (CONTRACT "Signatures are proofs"). Space pauses
the schedule, r replays now (paused or not), escape stops.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from explorer.core.view import ReportView
from explorer.core.when import stamp
from explorer.tui import model, safe
from explorer.tui.app import context_of, explorer_of
from explorer.tui.palette import PaletteCommand
from explorer.tui.widgets.footer import ExplorerFooter

if TYPE_CHECKING:
    from explorer.core.run import Run


class Timeline(OptionList):
    HELP = """
## Timeline

One line per replay: when, the verdict, and what changed since the previous replay (`≠`, with
the kinds: declarations, key, answers, verdict), or `~ no change: signed again` when the card
was only signed again over the same declarations under the same key, which is no change.
**enter** opens that run.
"""


class WatchScreen(Screen[None]):
    """Replays one target on an interval."""

    CSS_PATH = "watch.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Stop", id="watch.back"),
        Binding("space", "pause", "Pause/resume", id="watch.pause"),
        Binding("r", "now", "Run now", id="watch.now"),
    ]

    def __init__(self, target: str, *, first: Run | None = None, interval: float | None = None) -> None:
        super().__init__()
        self.target = target
        self.previous: Run | None = first
        self.interval = interval
        self.ticks = 0
        self.changes = 0
        self.paused = False
        self.busy = False
        self.runs: list[tuple[Run, int | None]] = []
        self.timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="watch"):
            yield Static(id="watch-title")
            yield Static(id="watch-status")
            yield Timeline(id="timeline")
        yield ExplorerFooter()

    def on_mount(self) -> None:
        context = context_of(self)
        every = self.interval if self.interval is not None else context.watch_interval
        self.interval = every
        self.query_one("#watch-title", Static).update(
            Content.assemble(
                ("Watching ", "bold"), safe.text(self.target, 200, "bold"), (f"  every {every:g}s", "dim")
            )
        )
        self.timer = self.set_interval(every, self._scheduled)
        self._status()
        self.action_now()
        self.query_one(Timeline).focus()

    def _status(self, note: str = "") -> None:
        state = "paused" if self.paused else ("asking…" if self.busy else "waiting")
        self.query_one("#watch-status", Static).update(
            Content.styled(
                f"{model.plural(self.ticks, 'replay')} · {self.changes} with changes · {state}"
                + (f" · {note}" if note else ""),
                "dim",
            )
        )

    def _scheduled(self) -> None:
        if not self.paused:  # paused stops the schedule, not r
            self.action_now()

    def action_now(self) -> None:
        """Replay now: on the schedule, or at once when asked (r), paused or not."""
        if self.busy:
            return
        self.busy = True
        self._status()
        self.run_worker(self._tick(), group="watch", exclusive=False, name="watch-tick")

    async def _tick(self) -> None:
        context = context_of(self)
        previous = self.previous.report if self.previous is not None else None
        try:
            # Off the event loop: the interview (parsing and evaluation included), recording it
            # and comparing it take most of a second on a large agent.
            run, run_id, comparison = await asyncio.to_thread(_measure, context, self.target, previous)
        except Exception as exc:
            self._add(
                Content.assemble((self._now() + "  ! ", "bold"), safe.text(f"replay failed: {exc}", 300))
            )
            self.busy = False
            self._status()
            return
        explorer_of(self).flush_warnings()
        self.ticks += 1
        self.runs.append((run, run_id))
        verdict = ReportView.of(run.report).verdict_label
        resigned = False
        if comparison is None:
            what, changed = "baseline", False
        else:
            changed = comparison.changed  # a card only signed again is no change
            resigned = not changed and comparison.resigned
            what = comparison.summary()  # "no change: signed again", or what changed, in kinds
        self.changes += int(changed)
        self._add(
            Content.assemble(
                (self._now() + "  ", "dim"),
                ("≠ " if changed else "~ " if resigned else "= ", "bold"),
                (f"{verdict:<17}", "bold" if changed else ""),
                (f"run #{run_id}  " if run_id is not None else "", "dim"),
                safe.text(what, 400, "bold" if changed else ""),
            ),
            option_id=f"run-{len(self.runs) - 1}",
        )
        self.previous = run
        self.busy = False
        self._status()

    def _now(self) -> str:
        """The session clock's time of day (`12:00:00`, UTC), from its RFC 3339 stamp."""
        return stamp(context_of(self).clock(), precision="seconds")[11:19]

    def _add(self, line: Content, option_id: str | None = None) -> None:
        timeline = self.query_one(Timeline)
        timeline.add_option(Option(line, id=option_id))
        timeline.highlighted = timeline.option_count - 1

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if option_id.startswith("run-"):
            run, run_id = self.runs[int(option_id[4:])]
            explorer_of(self).show_run(run, run_id, origin="from watch")

    def action_pause(self) -> None:
        self.paused = not self.paused
        self._status()

    def action_back(self) -> None:
        if self.timer is not None:
            self.timer.stop()
        self.workers.cancel_group(self, "watch")
        self.dismiss()

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            PaletteCommand("watch: pause or resume", "stop or restart the replays", self.action_pause),
            PaletteCommand("watch: replay now", "replay without waiting for the next tick", self.action_now),
            PaletteCommand("watch: stop", "stop watching and go back", self.action_back),
        ]


def _measure(context: Any, target: str, previous: Any) -> tuple[Any, int | None, Any]:
    """One watch tick in a worker thread: the interview on a loop of its own, recorded, and
    compared with the previous run's report (None for the first)."""
    run = asyncio.run(context.interview(target))
    run_id = context.record(run)
    comparison = context.compare(previous, run.report) if previous is not None else None
    return run, run_id, comparison
