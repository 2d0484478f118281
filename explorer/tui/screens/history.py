"""The history: runs per agent, newest first, with what changed since the previous run.

Left, the agents that have runs (pick one to narrow the list, or all). Right, the runs with
time, verdict, short card and answers digests, a churn marker in words ("≠ answers
changed"), so churn is visible in the list itself, and the standing each run earns here (a
signed run is evidence only under a trusted runner key). From here a run opens offline (enter), is
replayed live (r), watched (w), exported (x) or deleted after a confirmation (d); two runs
marked with space are compared side by side (c). Agent names and URLs are untrusted: cells are
`rich.text.Text`, never markup strings.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option

from explorer.tui import model, safe
from explorer.tui.commands import PaletteCommand
from explorer.tui.context import CHECKING, ExplorerError, RunRow

# What a reader scans for comes first, so a narrow terminal still shows it: the verdict and
# whether the run changed since the one before.
COLUMNS = ("run", "verdict", "since previous run", "time (UTC)", "agent", "card", "answers", "standing")


def short_time(stamp: str) -> str:
    """`2026-01-01T12:00:00.000Z` -> `2026-01-01 12:00` (the stored stamp is UTC)."""
    text = safe.visible(stamp, 40)
    if "T" in text and len(text) >= 16:
        return text[:10] + " " + text[11:16]
    return text


def churn_words(row: RunRow, marker: str) -> str:
    if marker == "first" and row.changed:
        return "≠ changed"
    return marker


class RunTable(DataTable):
    HELP = """
## Runs

Newest first. **since previous** says what changed from this agent's previous run
(card, answers, verdict), so churn shows in the list itself.

- **enter** open the run offline, **space** mark it with ● (mark two, then **c** to compare)
- **r** replay it live now, **w** watch the agent, **x** export, **d** delete
"""


class AgentFilter(OptionList):
    HELP = """
## Agents

Every agent with recorded runs, most recent first. **enter** or **space** shows only its runs
(the first row, all agents, shows every run); **tab** goes to the runs.
"""
    # Space means "this one" here as it does in the runs table; without it, space in the sidebar
    # silently marked whatever run the table had selected.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Show its runs"),
        Binding("space", "select", "Show its runs", show=False),
    ]


class HistoryScreen(Screen[None]):
    """Recorded runs: open, replay, watch, export, compare two, delete."""

    CSS_PATH = "history.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="history.back"),
        Binding("space", "mark", "Mark", id="history.mark"),
        Binding("c", "compare", "Compare marked", id="history.compare"),
        Binding("r", "replay", "Replay", id="history.replay"),
        Binding("w", "watch", "Watch", id="history.watch"),
        Binding("x", "export", "Export", id="history.export"),
        Binding("d", "delete", "Delete", id="history.delete"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[RunRow] = []
        self.marked: list[int] = []
        self.agent: str | None = None
        self.agents: list[Any] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="history"):
            yield Static(id="history-title")
            with Horizontal(id="history-body"):
                yield AgentFilter(id="agents")
                table = RunTable(id="runs", cursor_type="row", zebra_stripes=True)
                yield table
            yield Static(id="history-error")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(RunTable)
        table.add_columns(*COLUMNS)
        self.reload()
        table.focus()

    def on_screen_resume(self) -> None:
        self.reload()

    # ---- data ------------------------------------------------------------------------------------
    def reload(self) -> None:
        context = self.app.context  # type: ignore[attr-defined]
        error = self.query_one("#history-error", Static)
        try:
            self.agents = context.agents()
            self.rows = context.rows(agent=self.agent)
        except ExplorerError as exc:
            self.rows, self.agents = [], []
            error.update(Content.assemble(("✗ ", "bold"), safe.text(str(exc), 500)))
            error.display = True
        else:
            error.display = False
        self.marked = [m for m in self.marked if any(r.run_id == m for r in self.rows)]
        self._fill_agents()
        self._fill_runs()
        pending = [r.run_id for r in self.rows if r.standing == CHECKING]
        if pending:  # signed runs: their signatures are checked off the event loop
            self.run_worker(lambda: self._check(pending), thread=True, exclusive=True, group="marks")

    def _check(self, run_ids: list[int]) -> None:
        marks = self.app.context.check_signed(run_ids)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._apply_marks, marks)

    def _apply_marks(self, marks: dict[int, str]) -> None:
        self.rows = [r._replace(standing=marks.get(r.run_id, r.standing)) for r in self.rows]
        self._fill_runs()

    def _fill_agents(self) -> None:
        options = [Option(Content.styled(f"all agents ({len(self.agents)})", "bold"), id="all")]
        for i, agent in enumerate(self.agents):
            count = f"\n  {model.plural(agent.runs, 'run')} · last {agent.last_verdict}"
            options.append(
                Option(
                    Content.assemble(
                        (safe.clip(agent.name or agent.agent, 26), "bold"),
                        (count, "dim"),
                        "\n  ",
                        (safe.clip(agent.agent, 24), "dim"),
                    ),
                    id=f"agent-{i}",
                )
            )
        sidebar = self.query_one(AgentFilter)
        highlighted = sidebar.highlighted
        sidebar.set_options(options)
        sidebar.highlighted = highlighted if highlighted is not None and highlighted < len(options) else 0

    def _fill_runs(self) -> None:
        table = self.query_one(RunTable)
        cursor = table.cursor_row
        table.clear()
        markers = model.churn_markers([r.as_dict() for r in self.rows])
        for row, marker in zip(self.rows, markers, strict=True):
            mark = "●" if row.run_id in self.marked else " "
            table.add_row(
                Text(f"{mark} #{row.run_id}"),
                Text(f"{model.VERDICT_MARK.get(row.verdict, '?')} {row.verdict}"),
                Text(churn_words(row, marker)),
                Text(short_time(row.started_at)),
                Text(safe.clip(row.name or row.agent, 30)),
                Text(model.short_digest(row.card_sha256, 8)),
                Text(model.short_digest(row.answers_sha256, 8)),
                Text(row.standing),
                key=str(row.run_id),
            )
        if self.rows:
            table.move_cursor(row=min(cursor, len(self.rows) - 1))
        title = "all agents" if self.agent is None else self.agent
        self.query_one("#history-title", Static).update(
            Content.assemble(
                ("History  ", "bold"),
                (f"{len(self.rows)} runs of ", "dim"),
                safe.text(title, 120, "dim"),
                (f"   marked: {', '.join('#' + str(m) for m in self.marked) or 'none'}", "dim"),
            )
        )

    def current(self) -> RunRow | None:
        table = self.query_one(RunTable)
        if not self.rows or table.cursor_row is None or not (0 <= table.cursor_row < len(self.rows)):
            return None
        return self.rows[table.cursor_row]

    # ---- events and actions ---------------------------------------------------------------------------
    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        self.agent = None if option_id == "all" else getattr(self.agents[int(option_id[6:])], "agent", None)
        self.reload()
        self.query_one(RunTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        row = self.current()
        if row is not None:
            self.app.open_stored(row.run_id)  # type: ignore[attr-defined]

    def action_mark(self) -> None:
        row = self.current()
        if row is None:
            return
        if row.run_id in self.marked:
            self.marked.remove(row.run_id)
        else:
            self.marked.append(row.run_id)
            self.marked = self.marked[-2:]
        self._fill_runs()

    def action_compare(self) -> None:
        from explorer.tui.screens.compare import CompareScreen

        if len(self.marked) != 2:
            self.notify("mark two runs with space, then press c", severity="warning")
            return
        context = self.app.context  # type: ignore[attr-defined]
        first, second = sorted(self.marked)
        try:
            before, after = context.load(first), context.load(second)
        except ExplorerError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.app.push_screen(CompareScreen(before, first, after, second))

    def _load_current(self) -> tuple[Any, RunRow] | None:
        row = self.current()
        if row is None:
            self.notify("no run selected", severity="warning")
            return None
        try:
            return self.app.context.load(row.run_id), row  # type: ignore[attr-defined]
        except ExplorerError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return None

    def action_replay(self) -> None:
        loaded = self._load_current()
        if loaded is not None:
            run, row = loaded
            target = run.report.get("target") or row.target
            self.app.start_interview(str(target), previous=(run, row.run_id))  # type: ignore[attr-defined]

    def action_watch(self) -> None:
        from explorer.tui.screens.watch import WatchScreen

        loaded = self._load_current()
        if loaded is not None:
            run, row = loaded
            self.app.push_screen(WatchScreen(str(run.report.get("target") or row.target), first=run))

    def action_export(self) -> None:
        from explorer.tui.screens.export import ExportScreen

        loaded = self._load_current()
        if loaded is not None:
            self.app.push_screen(ExportScreen(loaded[0], loaded[1].run_id))

    def action_delete(self) -> None:
        from explorer.tui.screens.confirm import ConfirmScreen

        row = self.current()
        if row is None:
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                self.notify("nothing deleted")
                return
            try:
                self.app.context.forget(row.run_id)  # type: ignore[attr-defined]
            except Exception as exc:
                self.notify(f"could not delete run #{row.run_id}: {exc}", severity="error", markup=False)
                return
            self.notify(f"deleted run #{row.run_id}", markup=False)
            self.reload()

        question = Content.assemble(
            ("Delete run ", "bold"),
            (f"#{row.run_id}", "bold"),
            " of ",
            safe.text(row.name or row.agent, 80),
            (f" ({row.started_at})?", "dim"),
            "\nIts transcript is removed from the history; this cannot be undone.",
        )
        self.app.push_screen(ConfirmScreen(question), answered)

    def action_back(self) -> None:
        self.dismiss()

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            PaletteCommand("open: selected run", "open the selected run offline", self._open_current),
            PaletteCommand("mark: selected run", "mark it for comparison (two at most)", self.action_mark),
            PaletteCommand("compare: marked runs", "the two marked runs side by side", self.action_compare),
            PaletteCommand("replay: selected run", "interview its target again now", self.action_replay),
            PaletteCommand(
                "watch: selected agent", "replay on an interval with a timeline", self.action_watch
            ),
            PaletteCommand("export: selected run", "write it as JSON, Markdown or HTML", self.action_export),
            PaletteCommand(
                "delete: selected run", "remove it from the history (asks first)", self.action_delete
            ),
        ]

    def _open_current(self) -> None:
        row = self.current()
        if row is not None:
            self.app.open_stored(row.run_id)  # type: ignore[attr-defined]
