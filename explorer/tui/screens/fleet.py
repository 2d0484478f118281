"""The fleet: every agent in the history, and every agent of a sweep in progress, one row each.

A row says what a platform watching many agents scans for: the latest verdict (symbol and word),
the agent's card name (cut in the middle when the column is narrow: agents of one provider often
differ only at its end) and where its latest run was (host:port, with as much of the path as
tells two agents on one host apart, so two agents of one name are two different rows a user can
tell apart, and `+2` when the agent was seen on two other addresses), its churn (runs whose
verdict is churn: a conflict that did not survive the re-run), its changes (runs whose
declarations, signing key, answers or verdict differ from the run before; a card only signed
again over the same declarations under the same key is none: CONTRACT "Signatures are proofs"),
how many runs, when it last changed, its standing and card signature status, and the card URL.
Verdict, agent, where, churn, changes and runs are in view at 80 columns; the others come into
view as the width allows, and the selected agent's detail under the table says them all whole,
with every address the agent was seen on (the latest first) and what its latest run changed
(`model.change_words`). A live sweep's rows count churn and changes as the history does: by the
kinds the history recorded each run with. `s` cycles the sort (verdict worst first, churn,
changes, last change, name), `v` cycles a verdict filter, `/` finds agents by name or URL as you
type, enter opens the agent's latest interview, `h` its history, `r` reads the history again.

The verdict, standing and signature of a recorded row are what its latest run's bytes give
under your keys and trusted runner keys (`AppContext.read_latest`, for the rows in view, in a
worker thread), not what the runner that recorded it saw.

Nothing here blocks the event loop: the history is read in a worker thread, and every two
seconds another worker reads the store's change mark (`HistoryStore.mark`, one small aggregate
on either backend) and reads the fleet again only when it moved, so runs that another process
or another machine records into the same history show up by themselves. The table
(`widgets.rowtable.RowTable`) turns only the rows in view into cells, so sorting, filtering or
reloading ten thousand agents costs a sort of a Python list.

Started with targets (`interview-explorer --from FILE`), the screen sweeps them: the
interviews run with the sweep engine in a worker thread with its own event loop, so
verification never blocks drawing, and each finished run is recorded and turned into a small
`fleet_model.Finished` before it reaches the screen. The rows are rebuilt from the model at
most every quarter second, and never sooner than four times the last rebuild took. Leaving the
screen stops handing out new interviews; the ones in flight finish within their timeout. Agent
names and URLs are untrusted: every cell is `rich.text.Text` of `safe` output, never markup.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input, Static

from explorer.core.view import VERDICT_MARKS, ReportView
from explorer.core.when import stamp
from explorer.tui import model, safe
from explorer.tui.app import context_of, explorer_of
from explorer.tui.errors import ExplorerError
from explorer.tui.fleet_model import (
    FILTERS,
    PENDING,
    SORTS,
    Finished,
    FleetEntry,
    FleetModel,
    fit_middle,
    prepare,
)
from explorer.tui.palette import PaletteCommand
from explorer.tui.stored import open_run
from explorer.tui.widgets.footer import ExplorerFooter
from explorer.tui.widgets.rowtable import PADDING, Column, RowTable

if TYPE_CHECKING:
    from explorer.core.run import Run

VERDICT_WIDTH = 15  # "✗ nonconformant"
WHERE_WIDTHS = (9, 28)  # the where column fits its longest label within these (cut in the middle)
# Always in view, at 80 columns too: the latest verdict, the agent, where, churn and changes.
COUNTS = (Column("churn", 5), Column("changes", 7), Column("runs", 4))
# Then as many of these as the width leaves room for once the agent has its least width; the
# rest are reachable with → and the selected agent's detail under the table says them all.
REST = (
    Column("last change", 16),
    Column("standing", 9),
    Column("signature", 12),
    Column("card URL", 60),
)
TAIL = (*COUNTS, *REST)
AGENT_WIDTHS = (14, 40)  # the agent column takes what a narrow terminal leaves, within these
ADDRESSES_SHOWN = 3  # addresses listed in the selected agent's detail, then how many more
REPAINT_EVERY = 0.25  # seconds between repaints while a sweep reports runs
POLL_EVERY = 2.0  # seconds between looks at the history's change mark
READ_EVERY = 0.3  # seconds between looks for rows in view still as recorded


def fleet_columns(width: int, where: int) -> list[Column]:
    """The columns for a table `width` cells wide whose longest where label is `where` (with its
    "+N" more addresses): verdict, agent, where, churn, changes and runs always in view (at 80
    columns too); then the last change, standing, signature and card URL, each while it fits
    whole beside an agent column of its least width; the agent's name takes what is left."""
    where = max(WHERE_WIDTHS[0], min(WHERE_WIDTHS[1] + 4, where))
    low, high = AGENT_WIDTHS
    used = sum(column.width + 2 * PADDING for column in COUNTS)
    used += VERDICT_WIDTH + where + low + 3 * 2 * PADDING
    shown = 0
    for column in REST:
        if used + column.width + 2 * PADDING > width:
            break
        used += column.width + 2 * PADDING
        shown += 1
    agent = max(low, min(high, low + width - used))
    return [Column("verdict", VERDICT_WIDTH), Column("agent", agent), Column("where", where), *TAIL]


def more_addresses(entry: FleetEntry) -> str:
    """` +2` when the agent was seen on two addresses besides the one its latest run was at."""
    others = len(entry.addresses) - 1
    return f" +{others}" if others > 0 else ""


def recorded_kinds(context: Any, run_id: int | None) -> tuple[str, ...] | None:
    """What the history decided a run it recorded changed from its agent's run before (`RunSummary.
    kinds`), so a sweep's row counts it as the history does; None when it was not recorded or
    cannot be read (the model then compares the run with the row itself). Blocks: a worker thread."""
    if run_id is None:
        return None
    try:
        return tuple(context.history().summary(run_id).kinds)
    except Exception:  # the history went away meanwhile: the model's own comparison stands in
        return None


def short_stamp(stamp: str | None) -> str:
    """`2026-01-01T12:00:00.000Z` -> `2026-01-01 12:00`; `-` for never."""
    if not stamp:
        return "-"
    text = safe.visible(stamp, 40)
    return text[:10] + " " + text[11:16] if "T" in text and len(text) >= 16 else text


class FleetTable(RowTable):
    HELP = """
## Fleet

One row per agent, wherever it answered (a signed agent by its key and card name): its latest
verdict, its card name and where its latest run was (host:port, and the path when two agents
share a host; **+2** when it was seen on two other addresses), its **churn** (runs whose verdict
is churn: a conflict on the first attempt that did not survive the re-run), its **changes**
(runs whose declarations, signing key, answers or verdict differ from the run before; a card
only signed again over the same declarations under the same key is no change), runs, when it
last changed, its standing and card signature. Those are what the latest run's bytes give under
your keys (the runs in view are read again from the history: *unchecked* until then), never what
the runner that recorded it saw with its own keys. Under the table, the selected agent whole:
its standing and signature, what its latest run changed, and every address it was seen on.

- **enter** open the agent's latest interview, **h** its history
- **s** change the sort, **v** show only one verdict, **/** find agents by name or URL
- **r** read the history again (runs other runners record show up by themselves)
"""


class FleetScreen(Screen[None]):
    """Every agent's latest verdict, with churn and changes; optionally sweeping a list live."""

    CSS_PATH = "fleet.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="fleet.back"),
        Binding("s", "sort", "Sort", id="fleet.sort"),
        Binding("v", "filter", "Verdict", id="fleet.filter"),
        Binding("slash", "find", "Find", id="fleet.find"),
        Binding("h", "history", "History", id="fleet.history"),
        Binding("r", "reload", "Reload", id="fleet.reload"),
    ]

    def __init__(self, targets: list[str] | None = None, *, jobs: int = 8) -> None:
        super().__init__()
        self.targets = list(targets or [])
        self.jobs = jobs
        self.fleet = FleetModel()
        self.sort = SORTS[0]
        self.verdict: str | None = None
        self.find = ""
        self.rows: list[FleetEntry] = []
        self.done = 0
        self.sweeping = False
        self.error: str | None = None
        self.loaded = False
        self.reads = 0  # how many times the history's fleet was read (the first load included)
        self._mark: Any = None  # the history's change mark when it was last read
        self._dirty = True
        self._stop = threading.Event()
        self._began = 0.0
        self._painted_at = 0.0
        self._paint_cost = 0.0
        self._polling = False
        self._reading_runs = False
        self._where_width = 0
        self._agent_width = AGENT_WIDTHS[1]

    def compose(self) -> ComposeResult:
        with Vertical(id="fleet"):
            yield Static(id="fleet-title")
            yield Input(placeholder="find agents by name or URL (esc: every agent)", id="fleet-find")
            yield FleetTable(self._cells, self._columns, id="fleet-table")
            yield Static(id="fleet-detail")
            yield Static(id="fleet-status")
        yield ExplorerFooter()

    def on_mount(self) -> None:
        self.query_one("#fleet-find", Input).display = False
        self._load_history()
        if self.targets:
            self.fleet.expect(self.targets)
            self._sweep()
        self.set_interval(REPAINT_EVERY, self._repaint)
        self.set_interval(POLL_EVERY, self._poll)
        self.set_interval(READ_EVERY, self._read_in_view)
        self._repaint(now=True)
        self.query_one(FleetTable).focus()

    def on_unmount(self) -> None:
        self._stop.set()

    # ---- data ------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="fleet-load")
    def _load_history(self) -> None:
        """Read the history's fleet in this thread and hand it to the screen; the table draws
        what it has meanwhile. The mark is read first: a run recorded while the fleet is read
        moves the mark again, so the next poll reads once more."""
        context = context_of(self)
        try:
            mark = context.mark()
            summaries, error = prepare(context.fleet()), None
        except ExplorerError as exc:
            mark, summaries, error = None, [], str(exc)
        self.app.call_from_thread(self._loaded, summaries, error, mark)

    def _loaded(self, summaries: list[Any], error: str | None, mark: Any) -> None:
        if not self.is_mounted:
            return
        if error is None:
            self.fleet.load(summaries)
        self.error = error
        self.loaded = True
        self.reads += 1
        self._mark = mark
        self._dirty = True
        self._repaint(now=True)

    def _poll(self) -> None:
        """Look at the history's change mark off the event loop (another runner may have
        recorded or forgotten runs); read the fleet again when it moved."""
        if self.sweeping or not self.loaded or self._polling:
            return
        self._polling = True
        self._read_mark()

    @work(thread=True, exclusive=True, group="fleet-mark")
    def _read_mark(self) -> None:
        try:
            mark = context_of(self).mark()
        except ExplorerError:
            mark = None
        self.app.call_from_thread(self._marked, mark)

    def _marked(self, mark: Any) -> None:
        self._polling = False
        if self.is_mounted and mark is not None and mark != self._mark:
            self._load_history()

    @property
    def settled(self) -> bool:
        """The history read and every row in view read under your keys (pictures wait for it)."""
        return self.loaded and not self._reading_runs and not self._unread_in_view()

    def _unread_in_view(self) -> list[int]:
        table = self.query_one(FleetTable)
        return self.fleet.unread(round(table.scroll_y), table.scrollable_content_region.height, self.rows)

    def _read_in_view(self) -> None:
        """Rows in view whose latest run is still as recorded are read under your keys (each
        derived again from its bytes, some milliseconds a run) in a worker thread."""
        if self._reading_runs or not self.loaded:
            return
        unread = self._unread_in_view()
        if unread:
            self._reading_runs = True
            self._read_runs(unread)

    @work(thread=True, exclusive=True, group="fleet-read")
    def _read_runs(self, run_ids: list[int]) -> None:
        try:
            found = context_of(self).read_latest(run_ids)
        except ExplorerError as exc:
            found = {}
            self.app.call_from_thread(self.notify, str(exc), severity="error", markup=False)
        self.app.call_from_thread(self._runs_read, found)

    def _runs_read(self, found: dict[int, Any]) -> None:
        self._reading_runs = False
        if self.is_mounted and self.fleet.read(found):
            self._dirty = True
            self._repaint(now=True)

    @work(thread=True, exclusive=True, group="fleet-sweep")
    def _sweep(self) -> None:
        """Plan and sweep the targets in this thread, with an event loop of its own."""
        from explorer.store.sqlite import agent_of

        def failed(target: str, message: str) -> None:
            self.app.call_from_thread(self.notify, f"{target}: {message}", severity="error", markup=False)

        def finished(target: str, run: Run | None, run_id: int | None) -> None:
            if run is None:
                summary = Finished(target, None, "unreachable", None, None, None, None)
            else:
                kinds = recorded_kinds(context_of(self), run_id)
                summary = Finished.of(ReportView.of(run.report), agent_of(run.report), kinds)
            self.app.call_from_thread(self._finished, target, summary, run_id)

        self.sweeping = True
        self._began = time.perf_counter()
        try:
            context_of(self).sweep(
                self.targets, self.jobs, stopped=self._stop.is_set, on_error=failed, on_done=finished
            )
        finally:
            self.sweeping = False
            self._dirty = True

    def _finished(self, target: str, summary: Finished, run_id: int | None) -> None:
        if not self.is_mounted:
            return
        self.fleet.finish(target, summary, run_id=run_id, at=stamp(context_of(self).clock()))
        self.done += 1
        self._dirty = True

    # ---- drawing ---------------------------------------------------------------------------------
    def _repaint(self, *, now: bool = False) -> None:
        """Rebuild the rows from the model when it changed. While a sweep reports runs, a rebuild
        waits at least four times as long as the previous one took, so however large the fleet,
        at most a fifth of the time goes to it and keys stay responsive."""
        if not self._dirty:
            return
        began = time.perf_counter()
        if not now and began - self._painted_at < 4 * self._paint_cost:
            return
        self._dirty = False
        table = self.query_one(FleetTable)
        current = table.current
        self.rows = self.fleet.view(self.sort, self.verdict, self.find)
        index = None
        if current is not None:
            index = next((i for i, e in enumerate(self.rows) if e.key == current.key), None)
        where_width = self.fleet.where_width() + max((len(more_addresses(e)) for e in self.rows), default=0)
        if where_width != self._where_width:
            self._where_width = where_width
            table.set_columns(self._columns)
        table.set_rows(self.rows, cursor=index)
        self._title()
        self._detail()
        self._painted_at = time.perf_counter()
        self._paint_cost = self._painted_at - began

    def _columns(self, width: int) -> list[Column]:
        columns = fleet_columns(width, self._where_width)
        self._agent_width = columns[1].width
        return columns

    def _cells(self, entry: FleetEntry) -> Sequence[Text]:
        mark = VERDICT_MARKS.get(entry.verdict, "…" if entry.verdict == PENDING else "?")
        return (
            Text(f"{mark} {safe.visible(entry.verdict, 14)}"),
            # cut in the middle: agents of one provider often differ only at the end of the name
            Text(safe.middle(entry.name, self._agent_width)),
            Text(
                fit_middle(safe.visible(self.fleet.where(entry.key), 200), WHERE_WIDTHS[1])
                + more_addresses(entry)
            ),
            Text(str(entry.churn)),
            Text(str(entry.changes)),
            Text(str(entry.runs)),
            Text(short_stamp(entry.last_change_at)),
            Text(safe.visible(entry.standing or "-", 10)),
            Text(safe.visible(entry.signature or "-", 14)),
            Text(safe.clip(entry.key, 200)),
        )

    def _title(self) -> None:
        counts = self.fleet.counts()
        words = ", ".join(f"{counts[v]} {v}" for v in (*VERDICT_MARKS, PENDING) if counts.get(v))
        shown = "every verdict" if self.verdict is None else f"only {self.verdict}"
        if self.find:
            shown += f" · name or URL has “{safe.visible(self.find, 40)}”"
        self.query_one("#fleet-title", Static).update(
            Content.assemble(
                ("Fleet  ", "bold"),
                (f"{model.plural(len(self.fleet.all()), 'agent')}", "bold"),
                (f"  ({words or 'no runs yet'})", "dim"),
                (f"\nsort: {self.sort} · {shown} · showing {len(self.rows)}", "dim"),
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
        elif not self.rows and self.fleet.all():
            undo = [
                *(["v shows another verdict"] if self.verdict is not None else []),
                *(["esc clears the find"] if self.find else []),
            ]
            status.update(
                Content.assemble(
                    ("no agent here matches", "bold"), (f"; {' and '.join(undo)}" if undo else "", "dim")
                )
            )
        else:
            status.update(
                Content.styled("runs recorded elsewhere into this history show up by themselves", "dim")
            )

    def _detail(self) -> None:
        """The selected agent whole, under the table: its name, verdict, standing and signature,
        what its latest run changed and when it last changed, and every address it was seen on
        (the row says only where its latest run was, and how many more there are)."""
        entry = self.current()
        detail = self.query_one("#fleet-detail", Static)
        detail.display = entry is not None
        if entry is None:
            return
        mark = VERDICT_MARKS.get(entry.verdict, "…" if entry.verdict == PENDING else "?")
        facts = f"{mark} {safe.visible(entry.verdict, 20)}"
        if entry.verdict == PENDING:
            latest = "waiting for its first answer"
        else:
            facts += (
                f" · standing {safe.visible(entry.standing or '-', 20)}"
                f" · signature {safe.visible(entry.signature or '-', 20)} · {model.plural(entry.runs, 'run')}"
            )
            changed = short_stamp(entry.last_change_at) if entry.last_change_at else None
            latest = (
                "its first run"
                if entry.runs <= 1
                else f"since the run before: {model.change_words(entry.kinds)} · "
                + (f"last changed {changed}" if changed else "never changed")
            )
        addresses = entry.addresses or (entry.key,)
        lines: list[tuple[str, str]] = []
        for i, address in enumerate(addresses[:ADDRESSES_SHOWN]):
            lines += [
                (f"\n{'seen at' if i == 0 else '':8}", "dim"),
                (safe.visible(address, 300), ""),
                (" (latest)" if i == 0 and len(addresses) > 1 else "", "dim"),
            ]
        if len(addresses) > ADDRESSES_SHOWN:
            lines.append((f"\n{'':8}… and {len(addresses) - ADDRESSES_SHOWN} more", "dim"))
        detail.update(
            Content.assemble(
                (safe.visible(entry.name, 200), "bold"),
                (f"\n{facts}", ""),
                (f"\n{latest}", "dim"),
                *lines,
            )
        )

    def on_row_table_highlighted(self, event: RowTable.Highlighted) -> None:
        event.stop()
        self._detail()

    def current(self) -> FleetEntry | None:
        entry = self.query_one(FleetTable).current
        return entry if isinstance(entry, FleetEntry) else None

    # ---- actions ---------------------------------------------------------------------------------
    def on_row_table_selected(self, event: RowTable.Selected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        entry = self.current()
        if entry is None:
            return
        if entry.last_run_id is None:
            why = "has not answered yet" if entry.verdict == PENDING else "has no recorded run"
            self.notify(f"{safe.visible(entry.name, 80)} {why}", severity="warning", markup=False)
            return
        open_run(self, entry.last_run_id)

    def action_history(self) -> None:
        from explorer.tui.screens.history import HistoryScreen

        entry = self.current()
        if entry is None or entry.last_run_id is None:
            self.notify("no recorded runs for this row", severity="warning")
            return
        self.app.push_screen(HistoryScreen(agent=entry.key))

    def action_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self._dirty = True
        self._repaint(now=True)

    def action_filter(self) -> None:
        self.verdict = FILTERS[(FILTERS.index(self.verdict) + 1) % len(FILTERS)]
        self._dirty = True
        self._repaint(now=True)

    def action_find(self) -> None:
        field = self.query_one("#fleet-find", Input)
        field.display = True
        field.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "fleet-find":
            self.find = event.value
            self._dirty = True
            self._repaint(now=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "fleet-find":
            self.query_one(FleetTable).focus()

    def action_reload(self) -> None:
        self._load_history()

    def action_back(self) -> None:
        field = self.query_one("#fleet-find", Input)
        if field.display and (field.has_focus or field.value):
            field.value = ""  # esc clears the search first, then leaves
            field.display = False
            self.query_one(FleetTable).focus()
            return
        self._stop.set()
        if len(self.app.screen_stack) > 1:
            self.dismiss()
        else:
            explorer_of(self).go_home()

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            PaletteCommand("open: selected agent", "its latest interview", self.action_open),
            PaletteCommand("show: history of selected agent", "every run of this agent", self.action_history),
            PaletteCommand("sort: fleet", f"cycle the sort ({', '.join(SORTS)})", self.action_sort),
            PaletteCommand("filter: fleet by verdict", "cycle through the verdicts", self.action_filter),
            PaletteCommand("find: agents in the fleet", "by name or URL, as you type", self.action_find),
            PaletteCommand("reload: fleet", "read the history again", self.action_reload),
        ]
