"""The history: every recorded run, newest first, at any depth, with what changed since the one before.

Runs come a page at a time, by keyset (`HistoryStore.query` with `before` the last run shown,
never OFFSET, so the ten-thousandth page costs what the first does): the next page is read when
the last rows come into view. Filters narrow what is read, not what is shown: one agent (the
sidebar, with a field that finds an agent among thousands by name or URL; `a` shows it on a
narrow terminal), one verdict (`v` cycles), only runs that changed from their agent's run
before (`o`: their declarations, signing key, answers or verdict; a card only signed again is
no change), and a jump to a date (`t`: the list then starts at the newest run recorded before
it). Each row says in words which kinds changed since the agent's run before it (`≠ key+answers`,
or `~ signed again` for a card signed again over the same declarations under the same key: CONTRACT
"Signatures are proofs"), as the store decided when it recorded the run, so it is right under any
filter and the same as `history` says, and the standing the
run earns here (a signed run is evidence only under a trusted runner key; its signature is
checked in a worker). With every agent listed, a row names its agent, and where two agents share
a card name, how to tell them apart (`:41234`).

Nothing is read on the event loop: pages, the agents and the store's change mark are read in
worker threads. Every two seconds the mark (`HistoryStore.mark`) is read; when it moved, runs
another runner recorded show up at the top (the highlighted run stays highlighted), and runs
forgotten elsewhere disappear.

From here a run opens offline (enter), is replayed live (r), watched (w), exported (x) or
deleted after a confirmation (d); two runs marked with space are compared side by side (c).
Agent names and URLs are untrusted: cells are `rich.text.Text` of `safe` output, never markup.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from explorer.core.view import VERDICT_MARKS
from explorer.tui import model, safe
from explorer.tui.app import context_of, explorer_of
from explorer.tui.errors import ExplorerError
from explorer.tui.fleet_model import where_labels
from explorer.tui.palette import PaletteCommand
from explorer.tui.runs import CHECKING, RunFilter, RunRow
from explorer.tui.stored import forget_run, open_run, with_runs
from explorer.tui.widgets.footer import ExplorerFooter
from explorer.tui.widgets.rowtable import Column, RowTable

PAGE = 200  # runs read per page
POLL_EVERY = 2.0  # seconds between looks at the history's change mark
AGENTS_SHOWN = 60  # agents listed in the sidebar at once (the find field narrows the rest)
SIDEBAR_FROM = 110  # columns from which the agents sidebar is shown without asking
VERDICTS: tuple[str | None, ...] = (
    None,
    "nonconformant",
    "churn",
    "unreachable",
    "conformant",
    "not_offered",
)
# The columns with every agent listed, in order; with one agent, "agent" is left out (the title
# names it). What a reader scans for comes first, so a narrow terminal still shows it: the
# verdict, the agent and whether the run changed since the one before.
COLUMNS = ("run", "verdict", "agent", "since previous", "time (UTC)", "card", "answers", "standing")
# What `o` keeps, in the title: the kinds that are a change (a card only signed again is none).
CHANGED_ONLY = "only runs that changed: declarations, key, answers or verdict"
AGENT_WIDTHS = (18, 40)


def short_time(stamp: str) -> str:
    """`2026-01-01T12:00:00.000Z` -> `2026-01-01 12:00` (the stored stamp is UTC)."""
    text = safe.visible(stamp, 40)
    if "T" in text and len(text) >= 16:
        return text[:10] + " " + text[11:16]
    return text


def short_where(keys: Sequence[str]) -> dict[str, str]:
    """What tells apart agents that share a card name, as briefly as it can: their `where_labels`
    without what all of them share (`:41234` for ports of one host, `/b` for paths of one origin)."""
    labels = where_labels(keys)
    shown = list(labels.values())
    common = os.path.commonprefix(shown) if len(shown) > 1 else ""
    cut = max(common.rfind(":"), common.rfind("/"))
    if cut > 0:
        return {key: label[cut:] for key, label in labels.items()}
    return labels


def agent_cell(name: str, where: str | None, width: int) -> str:
    """The agent column: its card name, with `where` kept whole after it when given."""
    if not where:
        return safe.clip(name, width)
    tail = " " + safe.visible(where, 60)
    return safe.clip(name, max(4, width - len(tail))) + tail


class RunTable(RowTable):
    HELP = """
## Runs

Newest first, a page at a time (older runs are read as you scroll down). **since previous**
says what changed from this agent's run before, by kind: `declarations` (the card without its
signatures, or a committed proposal), `key` (the keys that signed the card), `answers`,
`verdict`. `~ signed again` is a card signed again over the same declarations under the same
key (a restart, another replica): shown, never a change.

- **enter** open the run offline, **space** mark it with ● (mark two, then **c** to compare)
- **v** only one verdict, **o** only runs that changed (not those only signed again), **t** go to
  a date, **a** pick an agent
- **r** replay it live now, **w** watch the agent, **x** export, **d** delete
"""


class AgentFilter(OptionList):
    HELP = """
## Agents

Agents with recorded runs, most recent first. Type in the field above to find one by name or
URL. **enter** or **space** shows only its runs (the first row, all agents, shows every run);
**tab** goes to the runs.
"""
    # Space means "this one" here as it does in the runs table; without it, space in the sidebar
    # silently marked whatever run the table had selected.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Show its runs"),
        Binding("space", "select", "Show its runs", show=False),
    ]


class HistoryScreen(Screen[None]):
    """Recorded runs at any depth: filter, jump, open, replay, watch, export, compare two, delete."""

    CSS_PATH = "history.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="history.back"),
        Binding("space", "mark", "Mark", id="history.mark"),
        Binding("c", "compare", "Compare marked", id="history.compare"),
        Binding("v", "verdict", "Verdict", id="history.verdict"),
        Binding("o", "changed", "Changed only", id="history.changed"),
        Binding("t", "date", "Go to date", id="history.date"),
        Binding("a", "agents", "Agents", id="history.agents"),
        Binding("r", "replay", "Replay", id="history.replay"),
        Binding("w", "watch", "Watch", id="history.watch"),
        Binding("x", "export", "Export", id="history.export"),
        Binding("d", "delete", "Delete", id="history.delete"),
    ]

    def __init__(self, agent: str | None = None) -> None:
        super().__init__()
        self.filter = RunFilter(agent=agent)
        self.rows: list[RunRow] = []
        self.marked: list[int] = []
        self.agents: list[Any] = []
        self.shown_agents: list[Any] = []
        self.more = False  # older runs may be there to read
        self.loaded = False  # the first page has been read
        self.error: str | None = None
        self.wide = True
        self.sidebar_asked = False  # `a` on a narrow terminal
        self._generation = 0  # a page read for an earlier filter is dropped
        self._loading = False
        self._polling = False
        self._mark: Any = None
        self._names: dict[str, str] = {}
        self._where: dict[str, str] = {}
        self._agent_width = AGENT_WIDTHS[0]

    @property
    def agent(self) -> str | None:
        return self.filter.agent

    def compose(self) -> ComposeResult:
        with Vertical(id="history"):
            yield Static(id="history-title")
            yield Input(
                id="history-date",
                placeholder="go to a date: 2026-01-31, 2026-01-31T12:00, 7d (empty: the newest runs)",
            )
            with Horizontal(id="history-body"):
                with Vertical(id="agents-pane"):
                    yield Input(id="agent-find", placeholder="find an agent")
                    yield AgentFilter(id="agents")
                yield RunTable(self._cells, self._columns, id="runs")
            yield Static(id="history-error")
        yield ExplorerFooter()

    def on_mount(self) -> None:
        self.query_one("#history-date", Input).display = False
        self.query_one("#history-error", Static).display = False
        self._layout(self.app.size.width)
        self._title()
        self.reload()
        self.set_interval(POLL_EVERY, self._poll)
        self.query_one(RunTable).focus()

    def on_screen_resume(self) -> None:
        self._poll()  # back from a replay or a delete elsewhere: look at once

    def on_resize(self, event: Any) -> None:
        self._layout(event.size.width)

    def _layout(self, width: int) -> None:
        self.wide = width >= SIDEBAR_FROM
        self.query_one("#agents-pane").display = self.wide or self.sidebar_asked

    # ---- reading ---------------------------------------------------------------------------------
    def reload(self) -> None:
        """Read the first page again for the current filter (and the agents, and the mark)."""
        self._generation += 1
        self._loading = True
        self._read_first(self._generation, self.filter, max(PAGE, len(self.rows)) if self.loaded else PAGE)

    @work(thread=True, group="history-read")
    def _read_first(self, generation: int, which: RunFilter, limit: int) -> None:
        context = context_of(self)
        try:
            mark = context.mark()
            agents = context.agents()
            rows = context.page(which, None, limit)
        except ExplorerError as exc:
            self.app.call_from_thread(self._failed, generation, str(exc))
            return
        self.app.call_from_thread(self._first_read, generation, rows, agents, mark, limit)

    def _failed(self, generation: int, error: str) -> None:
        if generation != self._generation or not self.is_mounted:
            return
        self._loading = False
        self.loaded = True
        self.error = error
        self.rows, self.more = [], False
        self._show_rows()

    def _first_read(
        self, generation: int, rows: list[RunRow], agents: list[Any], mark: Any, limit: int
    ) -> None:
        if generation != self._generation or not self.is_mounted:
            return
        self._loading = False
        self.loaded = True
        self.error = None
        self._mark = mark
        self._set_agents(agents)
        table = self.query_one(RunTable)
        current = table.current
        self.rows, self.more = rows, len(rows) == limit
        self.marked = [m for m in self.marked if any(r.run_id == m for r in rows)]
        index = next((i for i, r in enumerate(rows) if current is not None and r.run_id == current.run_id), 0)
        self._show_rows(cursor=index)
        self._check_pending(rows)

    def on_row_table_near_end(self, event: RowTable.NearEnd) -> None:
        event.stop()
        if self.more and not self._loading and self.rows:
            self._loading = True
            self._read_older(self._generation, self.filter, self.rows[-1].run_id)

    @work(thread=True, group="history-read")
    def _read_older(self, generation: int, which: RunFilter, before: int) -> None:
        try:
            rows = context_of(self).page(which, before, PAGE)
        except ExplorerError as exc:
            self.app.call_from_thread(self._failed, generation, str(exc))
            return
        self.app.call_from_thread(self._older_read, generation, before, rows)

    def _older_read(self, generation: int, before: int, rows: list[RunRow]) -> None:
        if generation != self._generation or not self.is_mounted:
            return
        self._loading = False
        if not self.rows or self.rows[-1].run_id != before:
            return  # the list changed meanwhile (runs forgotten elsewhere): the next look reads again
        self.rows = self.rows + rows
        self.more = len(rows) == PAGE
        self._show_rows(keep=True)
        self._check_pending(rows)

    def _poll(self) -> None:
        if self.loaded and not self._polling and not self._loading:
            self._polling = True
            self._read_mark(self._generation)

    @work(thread=True, group="history-mark")
    def _read_mark(self, generation: int) -> None:
        context = context_of(self)
        try:
            mark = context.mark()
            if mark == self._mark:
                self.app.call_from_thread(self._unchanged)
                return
            agents = context.agents()
            newest = context.page(self.filter, None, PAGE) if self.filter.until is None else None
        except ExplorerError:
            self.app.call_from_thread(self._unchanged)
            return
        self.app.call_from_thread(self._changed_elsewhere, generation, mark, agents, newest)

    def _unchanged(self) -> None:
        self._polling = False

    def _changed_elsewhere(
        self, generation: int, mark: Any, agents: list[Any], newest: list[RunRow] | None
    ) -> None:
        """Another runner (or this one, from another screen) recorded or forgot runs."""
        self._polling = False
        if generation != self._generation or not self.is_mounted or self._loading:
            return
        forgotten = self._mark is None or mark.forgotten != self._mark.forgotten
        self._mark = mark
        self._set_agents(agents)
        if forgotten or not self.rows:
            self.reload()  # runs may be gone anywhere in the list: read what is shown again
            return
        if newest is None:
            return  # a list that ends at a date: runs recorded now come after it
        top = self.rows[0].run_id
        new = [row for row in newest if row.run_id > top]
        if not new:
            return
        table = self.query_one(RunTable)
        if len(new) == len(newest):  # more new runs than a page: start again from the newest
            self.rows, self.more = newest, True
            self._show_rows(cursor=0)
        else:
            at_top = table.cursor_row == 0
            self.rows = new + self.rows
            self._show_rows(cursor=0 if at_top else table.cursor_row + len(new))
        self._check_pending(new)

    def _check_pending(self, rows: list[RunRow]) -> None:
        pending = [r.run_id for r in rows if r.standing == CHECKING]
        if pending:  # signed runs: their signatures are checked off the event loop
            self.run_worker(lambda: self._check(pending), thread=True, group="marks")

    def _check(self, run_ids: list[int]) -> None:
        marks = context_of(self).check_signed(run_ids)
        self.app.call_from_thread(self._apply_marks, marks)

    def _apply_marks(self, marks: dict[int, str]) -> None:
        if not self.is_mounted:
            return
        self.rows = [r._replace(standing=marks.get(r.run_id, r.standing)) for r in self.rows]
        self._show_rows(keep=True)

    # ---- drawing ---------------------------------------------------------------------------------
    def _columns(self, width: int) -> list[Column]:
        # "≠ declarations+answers" whole at 80 columns beside a whole card name, "≠ answers · signed
        # again" from 100, three kinds of change where the terminal has room.
        since = Column("since previous", 22 if width < 100 else 24 if width < 130 else 30)
        tail = [Column("time (UTC)", 16), Column("card", 8), Column("answers", 8), Column("standing", 20)]
        head = [Column("run", 8), Column("verdict", 15)]
        if self.filter.agent is not None:
            return [*head, since, *tail]
        low, high = AGENT_WIDTHS
        # Room for the time too when the agent keeps a useful width; else the agent comes first.
        agent = width - (8 + 15 + since.width + 16 + 5 * 2)
        if agent < 26:
            agent = width - (8 + 15 + since.width + 4 * 2)
        self._agent_width = max(low, min(high, agent))
        return [*head, Column("agent", self._agent_width), since, *tail]

    def _cells(self, row: RunRow) -> list[Text]:
        mark = "●" if row.run_id in self.marked else " "
        cells = [
            Text(f"{mark} #{row.run_id}"),
            Text(f"{VERDICT_MARKS.get(row.verdict, '?')} {row.verdict}"),
            Text(row.since),
            Text(short_time(row.started_at)),
            Text(model.short_digest(row.card_sha256, 8)),
            Text(model.short_digest(row.answers_sha256, 8)),
            Text(row.standing),
        ]
        if self.filter.agent is None:
            name = row.name or self._names.get(row.agent) or row.agent
            cells.insert(2, Text(agent_cell(name, self._where.get(row.agent), self._agent_width)))
        return cells

    def _set_agents(self, agents: list[Any]) -> None:
        """The agents (sidebar), and for each name more than one agent has, what tells them apart."""
        self.agents = agents
        by_name: dict[str, list[str]] = {}
        for agent in agents:
            by_name.setdefault((agent.name or agent.agent).casefold(), []).append(agent.agent)
        self._names = {a.agent: a.name or a.agent for a in agents}
        self._where = {}
        for keys in by_name.values():
            if len(keys) > 1:
                self._where.update(short_where(keys))
        self._fill_agents()

    def _fill_agents(self) -> None:
        wanted = self.query_one("#agent-find", Input).value.strip().casefold()
        matching = [
            a
            for a in self.agents
            if not wanted or wanted in (a.name or "").casefold() or wanted in a.agent.casefold()
        ]
        self.shown_agents = matching[:AGENTS_SHOWN]
        options = [Option(Content.styled(f"all agents ({len(self.agents)})", "bold"), id="all")]
        for i, agent in enumerate(self.shown_agents):
            mark = VERDICT_MARKS.get(agent.last_verdict, "?")
            count = f"\n  {model.plural(agent.runs, 'run')} · {mark} {agent.last_verdict}"
            options.append(
                Option(
                    Content.assemble(
                        (safe.clip(agent.name or agent.agent, 26), "bold"),
                        (count, "dim"),
                        "\n  ",
                        (safe.clip(self._where_of(agent.agent), 24), "dim"),
                    ),
                    id=f"agent-{i}",
                )
            )
        if len(matching) > len(self.shown_agents):
            more = len(matching) - len(self.shown_agents)
            options.append(
                Option(
                    Content.styled(f"… {more} more: type above to narrow", "dim"), id="more", disabled=True
                )
            )
        sidebar = self.query_one(AgentFilter)
        highlighted = sidebar.highlighted
        sidebar.set_options(options)
        sidebar.highlighted = highlighted if highlighted is not None and highlighted < len(options) else 0

    def _where_of(self, key: str) -> str:
        return where_labels([key]).get(key, key)

    def _show_rows(self, *, cursor: int | None = None, keep: bool = False) -> None:
        table = self.query_one(RunTable)
        table.set_rows(self.rows, cursor=None if keep else cursor)
        error = self.query_one("#history-error", Static)
        if self.error is not None:
            error.update(Content.assemble(("✗ ", "bold"), safe.text(self.error, 500)))
        error.display = self.error is not None
        self._title()

    def _title(self) -> None:
        which = self.filter
        if which.agent is None:
            subject: Content = Content("every agent")
        else:
            name = self._names.get(which.agent) or which.agent
            where = safe.visible(self._where_of(which.agent), 80)
            subject = Content.assemble(safe.text(name, 80), (f"  {where}", "dim"))
        parts = [
            "every verdict" if which.verdict is None else f"only {which.verdict}",
            CHANGED_ONLY if which.changed else "every run",
        ]
        if which.until is not None:
            parts.append(f"recorded before {which.until.strftime('%Y-%m-%d %H:%M')} UTC")
        if not self.loaded:
            shown = "reading…"
        elif not self.rows:
            shown = "no runs match" if which != RunFilter(agent=which.agent) else "no runs recorded yet"
        else:
            shown = model.plural(len(self.rows), "run") + (" shown, older below" if self.more else "")
        marked = ", ".join("#" + str(m) for m in self.marked) or "none"
        self.query_one("#history-title", Static).update(
            Content.assemble(
                ("History  ", "bold"),
                subject,
                (f"\n{' · '.join(parts)} · {shown} · marked: {marked}", "dim"),
            )
        )

    def current(self) -> RunRow | None:
        row = self.query_one(RunTable).current
        return row if isinstance(row, RunRow) else None

    # ---- filters ---------------------------------------------------------------------------------
    def _refilter(self, which: RunFilter) -> None:
        if which == self.filter:
            return
        agent_changed = which.agent != self.filter.agent
        self.filter = which
        self.rows, self.more, self.loaded = [], False, False
        self.query_one(RunTable).set_rows(self.rows, cursor=0)
        if agent_changed:
            self.query_one(RunTable).set_columns(self._columns)  # the agent column comes or goes
        self._title()
        self.reload()

    def action_verdict(self) -> None:
        following = VERDICTS[(VERDICTS.index(self.filter.verdict) + 1) % len(VERDICTS)]
        self._refilter(self.filter._replace(verdict=following))

    def action_changed(self) -> None:
        self._refilter(self.filter._replace(changed=not self.filter.changed))

    def action_date(self) -> None:
        field = self.query_one("#history-date", Input)
        field.display = True
        field.focus()

    def action_agents(self) -> None:
        self.sidebar_asked = True
        self.query_one("#agents-pane").display = True
        self.query_one("#agent-find", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "agent-find":
            self._fill_agents()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "agent-find":
            self.query_one(AgentFilter).focus()
        elif event.input.id == "history-date":
            self._go_to_date(event.value)

    def _go_to_date(self, text: str) -> None:
        from explorer.core.when import WhenError, parse_when

        field = self.query_one("#history-date", Input)
        until = None
        if text.strip():
            try:
                until = parse_when(text, context_of(self).clock(), end_of_day=True)
            except WhenError as exc:
                self.notify(str(exc), severity="error", markup=False)
                return
        field.display = False
        self.query_one(RunTable).focus()
        self._refilter(self.filter._replace(until=until))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if option_id == "more":
            return
        agent = None if option_id == "all" else self.shown_agents[int(option_id[6:])].agent
        if not self.wide:
            self.sidebar_asked = False
            self.query_one("#agents-pane").display = False
        self.query_one(RunTable).focus()
        self._refilter(self.filter._replace(agent=agent))

    # ---- actions on runs (each reads or deletes in a worker thread: `explorer.tui.stored`) -------
    def on_row_table_selected(self, event: RowTable.Selected) -> None:
        event.stop()
        self._open_current()

    def _open_current(self) -> None:
        row = self.current()
        if row is not None:
            open_run(self, row.run_id)

    def action_mark(self) -> None:
        row = self.current()
        if row is None:
            return
        if row.run_id in self.marked:
            self.marked.remove(row.run_id)
        else:
            self.marked.append(row.run_id)
            self.marked = self.marked[-2:]
        self.query_one(RunTable).refresh_rows()
        self._title()

    def action_compare(self) -> None:
        from explorer.tui.screens.compare import CompareScreen

        if len(self.marked) != 2:
            self.notify("mark two runs with space, then press c", severity="warning")
            return
        first, second = sorted(self.marked)
        with_runs(
            self,
            [first, second],
            lambda runs: self.app.push_screen(CompareScreen(runs[0], first, runs[1], second)),
        )

    def _with_current(self, then: Any) -> None:
        """Load the selected run in a worker, then `then(run, row)`."""
        row = self.current()
        if row is None:
            self.notify("no run selected", severity="warning")
            return
        with_runs(self, [row.run_id], lambda runs: then(runs[0], row))

    def action_replay(self) -> None:
        def replay(run: Any, row: RunRow) -> None:
            target = run.report.get("target") or row.target
            explorer_of(self).start_interview(str(target), previous=(run, row.run_id))

        self._with_current(replay)

    def action_watch(self) -> None:
        from explorer.tui.screens.watch import WatchScreen

        self._with_current(
            lambda run, row: self.app.push_screen(
                WatchScreen(str(run.report.get("target") or row.target), first=run)
            )
        )

    def action_export(self) -> None:
        from explorer.tui.screens.export import ExportScreen

        self._with_current(lambda run, row: self.app.push_screen(ExportScreen(run, row.run_id)))

    def action_delete(self) -> None:
        from explorer.tui.screens.confirm import ConfirmScreen

        row = self.current()
        if row is None:
            return

        def deleted() -> None:
            self.notify(f"deleted run #{row.run_id}", markup=False)
            self.reload()

        def answered(yes: bool | None) -> None:
            if not yes:
                self.notify("nothing deleted")
                return
            forget_run(self, row.run_id, deleted)

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
        """Esc closes an open field first (the date, the agent search on a narrow terminal)."""
        date = self.query_one("#history-date", Input)
        if date.display:
            date.display = False
            self.query_one(RunTable).focus()
            return
        if self.sidebar_asked and not self.wide:
            self.sidebar_asked = False
            self.query_one("#agents-pane").display = False
            self.query_one(RunTable).focus()
            return
        self.dismiss()

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            PaletteCommand("open: selected run", "open the selected run offline", self._open_current),
            PaletteCommand("mark: selected run", "mark it for comparison (two at most)", self.action_mark),
            PaletteCommand("compare: marked runs", "the two marked runs side by side", self.action_compare),
            PaletteCommand("filter: runs by verdict", "cycle through the verdicts", self.action_verdict),
            PaletteCommand(
                "filter: only runs that changed",
                "declarations, key, answers or verdict differ from their agent's run before; a card "
                "only signed again is no change (toggle)",
                self.action_changed,
            ),
            PaletteCommand(
                "go: to a date", "list the runs recorded before a date or an age", self.action_date
            ),
            PaletteCommand("filter: runs by agent", "find an agent by name or URL", self.action_agents),
            PaletteCommand("replay: selected run", "interview its target again now", self.action_replay),
            PaletteCommand(
                "watch: selected agent", "replay on an interval with a timeline", self.action_watch
            ),
            PaletteCommand("export: selected run", "write it as JSON, Markdown or HTML", self.action_export),
            PaletteCommand(
                "delete: selected run", "remove it from the history (asks first)", self.action_delete
            ),
        ]
