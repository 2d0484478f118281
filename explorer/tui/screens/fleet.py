"""The fleet: every agent in the history, and every agent of a sweep in progress, one row each.

A row says what a platform watching many agents scans for: the latest verdict (symbol and
word), the agent, its standing, the card signature status, when it last changed and how many of
its runs changed (churn), and how many runs there are. `s` cycles the sort (verdict worst
first, churn, last change, name), `v` cycles a verdict filter, enter opens the agent's latest
interview (from there history and compare work as everywhere), `r` reloads the history. The
history is read in a worker thread, and read again when another process records runs (a
`verify --from` in another terminal shows up within seconds).

Started with targets (`interview-explorer --from FILE`), the screen sweeps them: the
interviews run with the sweep engine in a worker thread with its own event loop, so
verification never blocks drawing, and each finished run is recorded and turned into a small
`fleet_model.Finished` before it reaches the screen. The table is rebuilt from the model at
most every quarter second, and never sooner than four times the last repaint took; a DataTable
draws only the rows in view, so a thousand agents stay responsive. Leaving the screen stops
handing out new interviews; the ones in flight finish within their timeout. Agent names and
URLs are untrusted: every cell is `rich.text.Text` of `safe` output, never markup.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from explorer.tui import model, safe
from explorer.tui.commands import PaletteCommand
from explorer.tui.context import ExplorerError
from explorer.tui.fleet_model import FILTERS, PENDING, SORTS, Finished, FleetEntry, FleetModel

if TYPE_CHECKING:
    from explorer.core.run import Run

# Fixed widths, the same as the cells are clipped to: a row never needs measuring (a thousand
# agents stay cheap) and no column is cut to its label's width.
COLUMNS = (
    ("verdict", 16),
    ("agent", 34),
    ("standing", 10),
    ("signature", 14),
    ("last change", 16),
    ("churn", 5),
    ("runs", 5),
    ("card URL", 60),
)
REPAINT_EVERY = 0.25  # seconds between repaints while a sweep reports runs
POLL_EVERY = 2.0  # seconds between looks for runs recorded by another process


def short_stamp(stamp: str | None) -> str:
    """`2026-01-01T12:00:00.000Z` -> `2026-01-01 12:00`; `-` for never."""
    if not stamp:
        return "-"
    text = safe.visible(stamp, 40)
    return text[:10] + " " + text[11:16] if "T" in text and len(text) >= 16 else text


class FleetTable(DataTable):
    HELP = """
## Fleet

One row per agent: latest verdict, standing, signature, when it last changed and its churn
(runs whose verdict, card or answers differ from the run before).

- **enter** open the agent's latest interview
- **s** change the sort, **v** show only one verdict, **r** reload the history
"""


class FleetScreen(Screen[None]):
    """Every agent's latest verdict, with churn; optionally sweeping a list live."""

    CSS_PATH = "fleet.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="fleet.back"),
        Binding("s", "sort", "Sort", id="fleet.sort"),
        Binding("v", "filter", "Verdict filter", id="fleet.filter"),
        Binding("r", "reload", "Reload", id="fleet.reload"),
    ]

    def __init__(self, targets: list[str] | None = None, *, jobs: int = 8) -> None:
        super().__init__()
        self.targets = list(targets or [])
        self.jobs = jobs
        self.fleet = FleetModel()
        self.sort = SORTS[0]
        self.verdict: str | None = None
        self.rows: list[FleetEntry] = []
        self.done = 0
        self.sweeping = False
        self.error: str | None = None
        self._dirty = True
        self._stop = threading.Event()
        self._began = 0.0
        self._painted_at = 0.0
        self._paint_cost = 0.0
        self._seen = 0  # the newest run id the fleet has read from the history
        self._loaded_at = 0.0
        self._load_cost = 0.0
        self.loaded = False

    def compose(self) -> ComposeResult:
        with Vertical(id="fleet"):
            yield Static(id="fleet-title")
            yield FleetTable(id="fleet-table", cursor_type="row", zebra_stripes=True)
            yield Static(id="fleet-status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(FleetTable)
        for label, width in COLUMNS:
            table.add_column(label, width=width)
        self._load_history()
        if self.targets:
            self.fleet.expect(self.targets)
            self._sweep()
        self.set_interval(REPAINT_EVERY, self._repaint)
        self.set_interval(POLL_EVERY, self._poll)
        self._repaint(now=True)
        table.focus()

    def on_unmount(self) -> None:
        self._stop.set()

    # ---- data ------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="fleet-load")
    def _load_history(self) -> None:
        """Read the history's fleet in this thread (a thousand agents take a second or more) and
        hand it to the screen; the table draws what it has meanwhile."""
        context = self.app.context  # type: ignore[attr-defined]
        began = time.perf_counter()
        try:
            latest = context.rows(limit=1)
            summaries, error = context.fleet(), None
        except ExplorerError as exc:
            latest, summaries, error = [], [], str(exc)
        seen = latest[0].run_id if latest else 0
        self._load_cost = time.perf_counter() - began
        self.app.call_from_thread(self._loaded, summaries, error, seen)

    def _loaded(self, summaries: list[Any], error: str | None, seen: int) -> None:
        if not self.is_mounted:
            return
        self.fleet.load(summaries)
        self.error = error
        self.loaded = True
        self._seen = max(self._seen, seen)
        self._loaded_at = time.perf_counter()
        self._dirty = True
        self._repaint(now=True)

    def _poll(self) -> None:
        """Reload when another process (a `verify --from` in another terminal) recorded runs; never
        sooner than four times the last reading took, so a large history read while a sweep
        records runs elsewhere takes at most a fifth of the time."""
        if self.sweeping or not self.loaded:
            return
        if time.perf_counter() - self._loaded_at < 4 * self._load_cost:
            return
        try:
            latest = self.app.context.rows(limit=1)  # type: ignore[attr-defined]
        except ExplorerError:
            return
        if latest and latest[0].run_id > self._seen:
            self._seen = latest[0].run_id
            self._load_history()

    @work(thread=True, exclusive=True, group="fleet-sweep")
    def _sweep(self) -> None:
        """Plan and sweep the targets in this thread, with an event loop of its own."""
        from explorer.store.history import agent_of

        def failed(target: str, message: str) -> None:
            self.app.call_from_thread(self.notify, f"{target}: {message}", severity="error")

        def finished(target: str, run: Run | None, run_id: int | None) -> None:
            if run is None:
                summary = Finished(target, None, "unreachable", None, None, None, None)
            else:
                summary = Finished.of(run.report, agent_of(run.report))
            self.app.call_from_thread(self._finished, target, summary, run_id)

        self.sweeping = True
        self._began = time.perf_counter()
        try:
            self.app.context.sweep(  # type: ignore[attr-defined]
                self.targets, self.jobs, stopped=self._stop.is_set, on_error=failed, on_done=finished
            )
        finally:
            self.sweeping = False
            self._dirty = True

    def _finished(self, target: str, summary: Finished, run_id: int | None) -> None:
        if not self.is_mounted:
            return
        now = self.app.context.clock()  # type: ignore[attr-defined]
        stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.fleet.finish(target, summary, run_id=run_id, at=stamp)
        self.done += 1
        self._dirty = True

    # ---- drawing ---------------------------------------------------------------------------------
    def _repaint(self, *, now: bool = False) -> None:
        """Rebuild the rows from the model when it changed. While a sweep reports runs, a repaint
        waits at least four times as long as the previous one took, so however large the fleet,
        at most a fifth of the time goes to repainting and keys stay responsive."""
        if not self._dirty:
            return
        began = time.perf_counter()
        if not now and began - self._painted_at < 4 * self._paint_cost:
            return
        self._dirty = False
        table = self.query_one(FleetTable)
        current = self.current()
        self.rows = self.fleet.view(self.sort, self.verdict)
        table.clear()
        table.add_rows(_cells(entry) for entry in self.rows)
        if current is not None:
            index = next((i for i, e in enumerate(self.rows) if e.key == current.key), None)
            if index is not None:
                table.move_cursor(row=index, animate=False)
        self._title()
        self._painted_at = time.perf_counter()
        self._paint_cost = self._painted_at - began

    def _title(self) -> None:
        counts = self.fleet.counts()
        words = ", ".join(f"{counts[v]} {v}" for v in (*model.VERDICT_MARK, PENDING) if counts.get(v))
        shown = "all verdicts" if self.verdict is None else f"only {self.verdict}"
        self.query_one("#fleet-title", Static).update(
            Content.assemble(
                ("Fleet  ", "bold"),
                (f"{model.plural(len(self.fleet.all()), 'agent')}", "bold"),
                (f"  ({words or 'no runs yet'})", "dim"),
                (f"   sort: {self.sort} · {shown} · showing {len(self.rows)}", "dim"),
            )
        )
        status = self.query_one("#fleet-status", Static)
        if self.error is not None:
            status.update(Content.assemble(("✗ ", "bold"), safe.text(self.error, 500)))
        elif self.targets:
            seconds = max(time.perf_counter() - self._began, 1e-6)
            state = "sweeping" if self.sweeping else "sweep done"
            status.update(
                Content.styled(
                    f"{state}: {self.done}/{len(self.targets)} agents, {self.done / seconds:.1f}/s", "dim"
                )
            )
        elif not self.loaded:
            status.update(Content.styled("reading the history…", "dim"))
        else:
            status.update(Content.styled("enter: latest interview · s: sort · v: verdict filter", "dim"))

    def current(self) -> FleetEntry | None:
        table = self.query_one(FleetTable)
        row = table.cursor_row
        if not self.rows or row is None or not 0 <= row < len(self.rows):
            return None
        return self.rows[row]

    # ---- actions ---------------------------------------------------------------------------------
    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        entry = self.current()
        if entry is None:
            return
        if entry.last_run_id is None:
            why = "has not answered yet" if entry.verdict == PENDING else "has no recorded run"
            self.notify(f"{safe.visible(entry.name, 80)} {why}", severity="warning", markup=False)
            return
        self.app.open_stored(entry.last_run_id)  # type: ignore[attr-defined]

    def action_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self._dirty = True
        self._repaint(now=True)

    def action_filter(self) -> None:
        self.verdict = FILTERS[(FILTERS.index(self.verdict) + 1) % len(FILTERS)]
        self._dirty = True
        self._repaint(now=True)

    def action_reload(self) -> None:
        self._load_history()

    def action_back(self) -> None:
        self._stop.set()
        if len(self.app.screen_stack) > 1:
            self.dismiss()
        else:
            self.app.go_home()  # type: ignore[attr-defined]

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            PaletteCommand("open: selected agent", "its latest interview", self.action_open),
            PaletteCommand("sort: fleet", f"cycle the sort ({', '.join(SORTS)})", self.action_sort),
            PaletteCommand("filter: fleet by verdict", "cycle through the verdicts", self.action_filter),
            PaletteCommand("reload: fleet", "read the history again", self.action_reload),
        ]


def _cells(entry: FleetEntry) -> tuple[Text, ...]:
    mark = model.VERDICT_MARK.get(entry.verdict, "…" if entry.verdict == PENDING else "?")
    return (
        Text(f"{mark} {safe.visible(entry.verdict, 14)}"),
        Text(safe.clip(entry.name, 34)),
        Text(safe.visible(entry.standing or "-", 10)),
        Text(safe.visible(entry.signature or "-", 14)),
        Text(short_stamp(entry.last_change_at)),
        Text(str(entry.churn)),
        Text(str(entry.runs)),
        Text(safe.clip(entry.key, 60)),
    )
