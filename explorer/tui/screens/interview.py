"""The interview screen: one run, five questions, every projection and finding.

Layout: the header (agent, card, layout, signature badge, verdict, standing), then tabs for
the five questions plus findings. Each question tab label carries its state in words
("usage (1 mismatch)"). The screen opens on the first problem, already selected, so a user who
opens a drifting agent sees the conflicting member and both canonical strings without a
keystroke. When no answer conflicts but something else decided the verdict (a root cause such
as `interview_not_implemented`, an invalid card signature, an unreachable agent's statuses, a
card that does not offer the interview: `model.verdict_reason`), a reason tab comes first and
the screen opens on it, never on "identity: all match" or on empty panes. `n` walks to the next
problem, `f` lists every finding (a root cause with the findings it explains beneath it), and
selecting a finding jumps to its projection. A question the agent did not answer lists what its
declared documents say instead, marked "declared, not answered" (`widgets.question`), and `d`
opens everything the card declares (`screens.card`), interviewed or not. Copy, whole-value view,
export, replay, watch and history are keys here and "verb: object" commands in the palette.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import OptionList, Static, TabbedContent, TabPane

from explorer.core.report import first_attempt_conflicts
from explorer.core.view import VERDICT_MARKS, Projection, ReportView
from explorer.tui import collector, model
from explorer.tui.app import context_of, explorer_of
from explorer.tui.errors import ExplorerError
from explorer.tui.palette import PaletteCommand
from explorer.tui.widgets.findings import FindingsList
from explorer.tui.widgets.first_attempt import FirstAttempt
from explorer.tui.widgets.footer import ExplorerFooter
from explorer.tui.widgets.header import InterviewHeader
from explorer.tui.widgets.projections import DECLARED, NOT_ANSWERED
from explorer.tui.widgets.question import QuestionPane
from explorer.tui.widgets.reason import ReasonPane

if TYPE_CHECKING:
    from explorer.core.run import Run


class InterviewScreen(Screen[None]):
    """One run, drawn from its report; works the same live and offline."""

    CSS_PATH = "interview.tcss"
    # Focus lands on the opened question's list (or the reason) before the first paint.
    AUTO_FOCUS = "ProjectionList, ReasonPane"
    BINDINGS: ClassVar[list[BindingType]] = [
        # Most useful first: a narrow footer keeps the first ones (`widgets.footer`).
        Binding("escape", "back", "Back", id="interview.back"),
        Binding("a", "sign_in", "Sign in", id="interview.sign_in"),
        Binding("u", "churned", "Churned", id="interview.churned"),
        Binding("d", "card", "Card", id="interview.card"),
        Binding("n", "next_problem", "Next problem", id="interview.next_problem"),
        Binding("f", "findings", "Findings", id="interview.findings"),
        Binding("p", "probes", "Probes", id="interview.probes"),
        Binding("1", "tab('identity')", "identity", show=False, id="interview.tab_identity"),
        Binding("2", "tab('capabilities')", "capabilities", show=False, id="interview.tab_capabilities"),
        Binding("3", "tab('usage')", "usage", show=False, id="interview.tab_usage"),
        Binding("4", "tab('terms')", "terms", show=False, id="interview.tab_terms"),
        Binding("5", "tab('refusals')", "refusals", show=False, id="interview.tab_refusals"),
        Binding("c", "copy_pointer", "Copy pointer", id="interview.copy_pointer"),
        Binding("y", "copy_value", "Copy value", show=False, id="interview.copy_value"),
        Binding("v", "view_whole", "Whole value", id="interview.view_whole"),
        Binding("x", "export", "Export", id="interview.export"),
        Binding("r", "replay", "Replay", id="interview.replay"),
        Binding("w", "watch", "Watch", id="interview.watch"),
        Binding("h", "app.history", "History", id="interview.history"),
        # As on the load screen: the target field, to type the next agent (typed letters would
        # otherwise run this screen's one-letter keys: `h` opened History).
        Binding("ctrl+l", "target", "Target", show=False, id="interview.target"),
    ]

    def __init__(
        self, run: Run, *, run_id: int | None = None, origin: str = "", unrecorded: str | None = None
    ) -> None:
        super().__init__()
        self.run = run
        self.report = run.report
        self.report_view = ReportView.of(run.report)  # the report read once, typed, for every widget
        self.run_id = run_id
        self.origin = origin
        self.unrecorded = unrecorded
        self._panes: dict[str, QuestionPane] = {}
        # A churn shows the clean re-run in the question tabs, and what churned in a tab of its own.
        self.churned = bool(first_attempt_conflicts(self.report)) and self.report_view.verdict == "churn"
        self.reason: model.VerdictReason | None = None  # what decided the verdict, when no answer conflicts
        self.reason_pane: ReasonPane | None = None
        self.ready = False  # the opened pane is mounted and focused (`_open_first_pane`)

    def compose(self) -> ComposeResult:
        yield InterviewHeader(
            self.report_view, run_id=self.run_id, origin=self.origin, unrecorded=self.unrecorded, id="header"
        )
        if self._auth_required():
            from explorer.tui.screens.auth import auth_banner

            yield Static(auth_banner(self.run), id="auth-note")
        problem = model.first_problem(self.report_view)
        if problem is None:
            self.reason = model.verdict_reason(self.report_view, self.run.exchanges)
        self.initial = problem[0] if problem else model.REASON_TAB if self.reason else "identity"
        with TabbedContent(initial=f"tab-{self.initial}", id="tabs"):
            if self.reason is not None:  # first: it is what decided the verdict
                reason_id = model.REASON_TAB
                self.reason_pane = ReasonPane(self.report_view, self.reason, id=f"pane-{reason_id}")
                yield TabPane(Content(self._reason_labels()[0]), id=f"tab-{reason_id}")
            for name in model.QUESTIONS:  # each question's pane is built when first shown
                yield TabPane(Content(model.question_state(self.report_view, name).label), id=f"tab-{name}")
            count = len(self.report_view.findings)
            yield TabPane(Content(f"findings ({count})"), id="tab-findings")
            conflicts = first_attempt_conflicts(self.report)
            if self.churned:  # the tabs show the clean re-run
                with TabPane(Content(f"churned ({len(conflicts)})"), id="tab-first-attempt"):
                    yield FirstAttempt(self.report_view, id="first-attempt")
        yield ExplorerFooter()

    def _reason_labels(self) -> tuple[str, str, str]:
        """The reason tab's (full, short, tight) label: the verdict's mark, and what decided it."""
        mark = VERDICT_MARKS.get(self.report_view.verdict, "?")
        summary = self.reason.summary if self.reason is not None else ""
        return (f"{mark} why ({summary})", f"{mark} why", f"{mark} why")

    @property
    def opened(self) -> QuestionPane | ReasonPane | None:
        """The pane the screen opened on (None until it is built)."""
        return self.reason_pane if self.initial == model.REASON_TAB else self._panes.get(self.initial)

    def _tab_label_sets(self) -> dict[str, tuple[str, str, str]]:
        """Every tab's (full, short, tight) label, by pane id."""
        sets: dict[str, tuple[str, str, str]] = {}
        if self.reason is not None:
            sets[f"tab-{model.REASON_TAB}"] = self._reason_labels()
        for name in model.QUESTIONS:
            state = model.question_state(self.report_view, name)
            sets[f"tab-{name}"] = (state.label, state.short_label(), state.short_label(tight=True))
        count = len(self.report_view.findings)
        sets["tab-findings"] = (f"findings ({count})", f"findings {count}", f"find {count}")
        churned = len(first_attempt_conflicts(self.report))
        if self.churned:
            sets["tab-first-attempt"] = (f"churned ({churned})", f"churned {churned}", f"churn {churned}")
        return sets

    def _fit_tabs(self, width: int) -> None:
        """Labels that fit the width, so the tab strip is never cut at both ends (80 columns
        takes the short ones)."""
        sets = self._tab_label_sets()
        full, short, tight = ([s[i] for s in sets.values()] for i in range(3))
        chosen = model.tab_labels(full, short, tight, width=width)
        tabs = self.query_one(TabbedContent)
        for pane_id, label in zip(sets, chosen, strict=True):
            tab = tabs.get_tab(pane_id)
            if tab.label_text != label:
                tab.label = Content(label)

    def on_resize(self, event: events.Resize) -> None:
        self._fit_tabs(event.size.width)

    def on_mount(self) -> None:
        self._fit_tabs(self.app.size.width)
        self.call_after_refresh(self._open_first_pane)

    async def _open_first_pane(self) -> None:
        """The opened tab's pane, mounted once the first frame (the header with the verdict, the
        tab strip) is on screen: building and drawing a pane of projections and highlighted JSON
        took about 20 ms of the 250 ms from launch to the verdict (bench/open_to_verdict.py),
        and the verdict is what the screen is opened for; the pane follows a frame later."""
        if self.initial == model.REASON_TAB and self.reason_pane is not None:
            await self.query_one(f"#tab-{model.REASON_TAB}", TabPane).mount(self.reason_pane)
        elif self.initial in model.QUESTIONS:
            await self.pane(self.initial)
        if self.focused is None:  # as AUTO_FOCUS does for what is there when a screen is shown
            self.set_focus(next((w for w in self.query(self.AUTO_FOCUS or "*") if w.focusable), None))
        self.ready = True
        if context_of(self).exit_when_ready:  # the startup benchmark: the whole first screen drawn
            self.call_after_refresh(self.app.exit)
        # A live run arrived with the collector paused: once drawn, it and its screen are frozen
        # out of the collector's sight until this screen goes (`explorer.tui.collector`).
        self.call_after_refresh(collector.resume, hold=True)

    def on_unmount(self) -> None:
        collector.release()

    def on_screen_resume(self) -> None:
        explorer_of(self).flush_warnings()  # e.g. why this run was not recorded

    async def pane(self, name: str) -> QuestionPane:
        """The question's pane, built on first use (lazy tabs keep the first paint cheap)."""
        # Registered before the await, so two callers racing (a tab event and a jump) never
        # mount the same pane twice.
        pane = self._panes.get(name)
        if pane is None:
            pane = self._panes[name] = QuestionPane(self.report_view, name, id=f"pane-{name}")
            self._building()
            await self.query_one(f"#tab-{name}", TabPane).mount(pane)
        return pane

    def _building(self) -> None:
        """A pane is being built: the collector stays off until it is drawn, and when this is a
        live run's held screen, the pane is then frozen with it (`explorer.tui.collector`)."""
        if collector.paused():
            return  # a live run still arriving: its screen's own `resume` (on_mount) covers this
        collector.pause()
        self.call_after_refresh(collector.resume, hold=collector.held())

    async def findings_list(self) -> FindingsList:
        """The findings list, built on first use like the question panes."""
        for found in self.query("#findings").results(FindingsList):
            return found
        listing = FindingsList(id="findings")
        self._building()
        await self.query_one("#tab-findings", TabPane).mount(listing)
        listing.show(self.report_view.findings, self.report_view.extensions)
        return listing

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        name = (event.pane.id or "").removeprefix("tab-")
        if name in model.QUESTIONS:
            await self.pane(name)
        elif name == "findings":
            await self.findings_list()

    # ---- what is selected -------------------------------------------------------------------------
    @property
    def active_question(self) -> str | None:
        active = self.query_one(TabbedContent).active
        name = active.removeprefix("tab-")
        return name if name in model.QUESTIONS else None

    def selected_projection(self) -> Projection | None:
        name = self.active_question
        if name is None:
            return None
        panes = list(self.query(f"#pane-{name}").results(QuestionPane))
        return panes[0].selected if panes else None

    # ---- navigation -------------------------------------------------------------------------------
    async def show_projection(self, name: str, position: int | None) -> None:
        self.query_one(TabbedContent).active = f"tab-{name}"
        (await self.pane(name)).select(position)

    async def action_tab(self, name: str) -> None:
        await self.show_projection(name, None)

    def action_reason(self) -> None:
        """The reason tab: what decided the verdict when no answer conflicts (offered only then)."""
        if self.reason_pane is None:
            return
        self.query_one(TabbedContent).active = f"tab-{model.REASON_TAB}"
        self.set_focus(self.reason_pane)  # at once: see QuestionPane.select

    async def action_findings(self) -> None:
        self.query_one(TabbedContent).active = "tab-findings"
        self.set_focus(await self.findings_list())  # at once: see QuestionPane.select

    async def action_probes(self) -> None:
        """The refusals tab, and over it every closure probe whole: what was sent, what came back
        (the tab's summary has room for them only on a tall terminal)."""
        from explorer.tui.screens.value import ValueScreen

        await self.show_projection("refusals", None)
        probes = model.probes_text(self.report_view)
        title = "how each was answered, and what it sent"
        self.app.push_screen(ValueScreen(title, probes, heading="closure probes"))

    async def action_churned(self, index: int | None = None) -> None:
        """The churned tab (what the first attempt found), a conflict selected and focused."""
        if not self.churned:
            self.notify("nothing churned: this run has no first-attempt conflicts", markup=False)
            return
        self.query_one(TabbedContent).active = "tab-first-attempt"
        listing = self.query_one(FirstAttempt)
        listing.select(index if index is not None else listing.selected or 0)
        self.set_focus(listing)  # at once: see QuestionPane.select

    async def action_next_problem(self) -> None:
        """The next problem after the one selected: each projection of the run that does not
        match, in question order, then each conflict of a churn's first attempt; round again."""
        problems = model.problems(self.report_view)
        stops = [(model.QUESTIONS.index(name), name, position) for name, position in problems]
        if self.churned:
            after = len(model.QUESTIONS)
            stops += [(after, "churned", i) for i in range(len(first_attempt_conflicts(self.report)))]
        if not stops:
            self.notify("every projection matches its signed member", markup=False)
            return
        here = (-1, "", -1)
        active = self.query_one(TabbedContent).active.removeprefix("tab-")
        if active in model.QUESTIONS:
            highlighted = (await self.pane(active)).query_one(OptionList).highlighted
            here = (model.QUESTIONS.index(active), active, highlighted if highlighted is not None else -1)
        elif active == "first-attempt":
            selected = self.query_one(FirstAttempt).selected
            here = (len(model.QUESTIONS), "churned", selected if selected is not None else -1)
        later = [s for s in stops if (s[0], s[2]) > (here[0], here[2])]
        _order, name, position = (later or stops)[0]
        if name == "churned":
            await self.action_churned(position)
        else:
            await self.show_projection(name, position)

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if not isinstance(event.option_list, FindingsList):
            return
        option_id = event.option.id or ""
        if not option_id.startswith("f"):
            return
        item = self.report_view.findings[int(option_id[1:])]
        target = model.finding_target(self.report_view, item)
        if target is None:
            self.notify("this finding is about the card as a whole; see the header", markup=False)
            return
        await self.show_projection(*target)

    def action_target(self) -> None:
        """ctrl+l: back to the load screen with its target field focused, its text selected."""
        from explorer.tui.screens.load import LoadScreen

        app = explorer_of(self)
        app.go_home()
        if isinstance(app.screen, LoadScreen):
            app.screen.show_target()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.dismiss()
        else:
            explorer_of(self).go_home()

    # ---- copy and view ------------------------------------------------------------------------------
    def action_copy_pointer(self) -> None:
        projection = self.selected_projection()
        if projection is None:
            self.notify("select a projection first", severity="warning")
            return
        explorer_of(self).copy_text(projection.member or "", "pointer")

    def action_copy_value(self) -> None:
        projection = self.selected_projection()
        if projection is None:
            self.notify("select a projection first", severity="warning")
            return
        text = projection.canonical() or ""
        explorer_of(self).copy_text(text, "value")

    def action_view_whole(self) -> None:
        from explorer.tui.jsonview import neutralise, pretty
        from explorer.tui.screens.value import ValueScreen, whole_text

        projection = self.selected_projection()
        if projection is None:
            self.notify("select a projection first", severity="warning")
            return
        if projection.status == DECLARED:  # no answer: the declared value alone
            text = neutralise(f"{NOT_ANSWERED}\n{pretty(projection.value)}")
            self.app.push_screen(ValueScreen(projection.member or "", text, heading="declared value"))
            return
        self.app.push_screen(ValueScreen(projection.member or "", whole_text(projection)))

    def action_card(self) -> None:
        """Everything the card declares, section by section (interviewed or not)."""
        from explorer.tui.screens.card import CardScreen

        self.app.push_screen(CardScreen(self.report_view, model.served_card(self.run.exchanges)))

    # ---- export, replay, watch -----------------------------------------------------------------------
    def action_export(self, fmt: str | None = None) -> None:
        if fmt is None:
            from explorer.tui.screens.export import ExportScreen

            self.app.push_screen(ExportScreen(self.run, self.run_id))
            return
        from explorer.tui.screens.export import export_run

        try:
            said = export_run(explorer_of(self), self.run, fmt, self.run_id)
        except ExplorerError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        except Exception as exc:
            self.notify(f"export failed: {exc}", severity="error", markup=False)
            return
        self.notify(said, title="export", markup=False)

    def _target(self) -> str | None:
        target = self.report_view.target or self.report_view.card.url
        if not target:
            self.notify("this run does not say which target it interviewed", severity="error")
            return None
        return target

    def _auth_required(self) -> bool:
        """The agent refused the questions for want of credentials, or refused the ones given."""
        return any(f.code in ("auth_required", "auth_failed") for f in self.report_view.findings)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "sign_in":
            return self._auth_required()
        if action == "churned":
            return self.churned
        return True

    def action_sign_in(self) -> None:
        from explorer.tui.screens.auth import SignIn, SignInScreen, card_security

        target = self._target()
        if target is None or not self._auth_required():
            return
        card = self.report_view.card
        default = _slug(card.name or target)

        def signed_in(result: SignIn | None) -> None:
            if result is None:
                return
            context = context_of(self)
            context.sign_in([target, card.url or ""], result.secrets)
            words = "signed in for this session (the secret stays in memory); interviewing again"
            if result.saved:
                words += (
                    f"\nsaved a config entry to {result.saved}; before the next session export "
                    + ", ".join(result.exports)
                )
            self.notify(words, title="sign in", markup=False)
            self.action_replay()

        agent = self.report_view.agent_name
        self.app.push_screen(SignInScreen(card_security(self.run), target, default, agent), signed_in)

    def action_replay(self) -> None:
        target = self._target()
        if target is not None:
            explorer_of(self).start_interview(target, previous=(self.run, self.run_id))

    def action_watch(self) -> None:
        from explorer.tui.screens.watch import WatchScreen

        target = self._target()
        if target is not None:
            self.app.push_screen(WatchScreen(target, first=self.run))

    def palette_commands(self) -> list[PaletteCommand]:
        commands: list[PaletteCommand] = []
        if self.reason is not None:
            commands.append(
                PaletteCommand(
                    "show: why this verdict", f"what decided it: {self.reason.summary}", self.action_reason
                )
            )
        commands += [
            PaletteCommand(
                "show: findings", "list every finding; enter jumps to its projection", self.action_findings
            ),
            PaletteCommand(
                "show: next problem", "select the next mismatching projection", self.action_next_problem
            ),
            PaletteCommand(
                "show: probes", "the refusals boundary and the closure probes", self.action_probes
            ),
            PaletteCommand(
                "show: card",
                "everything the card declares: interfaces, security, skills, extensions, terms, signature",
                self.action_card,
            ),
        ]
        if self.churned:
            commands.append(
                PaletteCommand(
                    "show: churned",
                    "what the first attempt found, gone on the re-run (churn)",
                    self.action_churned,
                )
            )
        for name in model.QUESTIONS:
            commands.append(
                PaletteCommand(f"show: {name}", f"the {name} answer", _bind(self.action_tab, name))
            )
        commands += [
            PaletteCommand(
                "copy: pointer", "copy the selected projection's pointer", self.action_copy_pointer
            ),
            PaletteCommand("copy: value", "copy the selected value (canonical JSON)", self.action_copy_value),
            PaletteCommand(
                "view: whole value", "show the selected value and source in full", self.action_view_whole
            ),
        ]
        for fmt, label in context_of(self).export_formats(self.run):
            commands.append(
                PaletteCommand(
                    f"export: run as {label}",
                    f"write this run as {label} to a file",
                    _bind(self.action_export, fmt),
                )
            )
        if self._auth_required():
            commands.append(
                PaletteCommand(
                    "sign in: this agent",
                    "type its secret (kept in memory for this session) and interview it again; "
                    "optionally save a config entry with env: references",
                    self.action_sign_in,
                )
            )
        commands += [
            PaletteCommand("replay: this run", "interview the same target again now", self.action_replay),
            PaletteCommand(
                "watch: this agent", "replay on an interval and show a timeline", self.action_watch
            ),
        ]
        return commands


def _slug(text: str) -> str:
    """A config-friendly agent name from a card name or URL."""
    words = "".join(c.lower() if c.isalnum() else " " for c in text).split()
    skip = {"http", "https", "127", "0", "1", "well", "known", "agent", "card", "json"}
    kept = [w for w in words if w not in skip] or words
    return "-".join(kept)[:40] or "agent"


def _bind(method: Any, argument: str) -> Any:
    return lambda: method(argument)
