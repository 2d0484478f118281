"""The Textual application: navigation between screens, app-wide keys, help, copy, keymap.

Kept deliberately small: each screen owns its layout, bindings and commands, and everything
outside the terminal goes through `AppContext`. The app only knows how to get from one screen
to the next (load -> progress -> interview -> history/compare/watch), the keys that work
everywhere (F1 help, quit, history, palette), and the two cross-cutting services, copy and
notifications. Bindings carry ids (`app.help`, `interview.findings`, ...) so the `[keymap]` table
of the config file can rebind any of them; ctrl+m/i/h/j are never bound because terminals send
them as Enter, Tab, Backspace and newline. Keys themselves pass through the app once more than
Textual makes them (`on_event`): a key that moves focus moves it as it is read, and keys typed
while a screen mounts wait for it, so a burst of keys (a paste, a password manager, a browser's
WebSocket frame) lands where each key was aimed.

Screens and widgets reach this app and its context with `explorer_of(self)` and
`context_of(self)`: Textual types `self.app` as any App, and these say, once and checked, that
it is this one, so no screen needs a `type: ignore` to use it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.dom import DOMNode
from textual.screen import Screen

from explorer.tui import collector, safe
from explorer.tui.context import AppContext, DemoAgent
from explorer.tui.errors import ExplorerError
from explorer.tui.palette import ExplorerCommands, PaletteCommand

if TYPE_CHECKING:
    from textual.actions import ActionParseResult

    from explorer.core.run import Run
    from explorer.tui.screens.load import LoadScreen


# The actions that only move focus: `ExplorerApp.on_event` runs them as the key is read, so the
# keys read after them reach the widget they move to. Textual binds the first two to tab and
# shift+tab on every screen; the load screen binds ctrl+l to the target.
FOCUS_MOVES = frozenset({"app.focus_next", "app.focus_previous", "focus_target"})
HELD_KEY_CHECK = 0.01  # seconds between looks at a mounting screen while keys typed meanwhile wait
EARLY_GRACE = 0.1  # seconds the first screen waits for the launch target's interview to finish


class Start(NamedTuple):
    """What the first screen shows: the load screen, a live interview, a stored run, or a run
    already in hand (a transcript, a picture)."""

    target: str | None = None
    run_id: int | None = None
    run: Run | None = None
    origin: str = ""
    fleet: tuple[str, ...] | None = None  # `--from FILE`: open the fleet view sweeping these targets


def _harmless_markup(text: str) -> bool:
    """Whether `text` parses as markup that only styles (no `@` action anywhere)."""
    if "[@" in text or "@click" in text:
        return False
    try:
        Content.from_markup(text)
    except Exception:  # noqa: BLE001 - any markup error: show the words as they are
        return False
    return True


class ExplorerApp(App[int]):
    """Interview Explorer."""

    TITLE = "Interview Explorer"
    # Textual does not load the CSS_PATH of the default screen, and either of these two can be it.
    CSS_PATH = ["app.tcss", "screens/load.tcss", "screens/interview.tcss"]
    COMMANDS: ClassVar[set[Any]] = {ExplorerCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "toggle_help", "Help", id="app.help", priority=True),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("f2", "history", "History", id="app.history", show=False),
        Binding("f3", "fleet", "Fleet", id="app.fleet", show=False),
    ]

    def __init__(self, context: AppContext | None = None, start: Start | None = None) -> None:
        super().__init__()
        self.context = context or AppContext()
        self.start = start or Start()
        self.actions_run: list[str] = []  # actions triggered through `run_action`, for audits
        self.last_progress: Any = None  # the progress screen of the latest interview (its log and steps)
        self._held: list[events.Key | events.Paste] | None = None  # typed while a screen mounts

    # ---- startup -------------------------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        """The interview itself when started on a stored run (nothing else to draw first); the
        fleet view when started on a list of targets."""
        if self.start.fleet is not None:
            from explorer.tui.screens.fleet import FleetScreen

            return FleetScreen(list(self.start.fleet))
        if self.start.run is not None:
            from explorer.tui.screens.interview import InterviewScreen

            return InterviewScreen(self.start.run, run_id=self.start.run_id, origin=self.start.origin)
        if self.start.run_id is not None:
            try:
                run = self.context.load(self.start.run_id)
            except ExplorerError as exc:
                self.context.warnings.append(str(exc))
            else:
                from explorer.tui.screens.interview import InterviewScreen

                return InterviewScreen(run, run_id=self.start.run_id, origin="from history (offline)")
        if self.start.target:
            screen = self._early_run_screen(self.start.target)
            if screen is not None:
                return screen
        from explorer.tui.screens.load import LoadScreen

        return LoadScreen()

    def _early_run_screen(self, target: str) -> Screen | None:
        """The interview screen of the launch target, when its interview (begun before textual
        was imported, `explorer.tui.early`) has finished with a card to show: recorded and drawn
        first, with no load or progress screen built and torn down before it. Else None, and the
        progress screen takes the interview over as usual (a run without a card is explained on
        the load screen there).

        An interview still running gets `EARLY_GRACE` to finish: the load and progress screens
        would take longer than that to build, paint and tear down, on the same core the run's
        recording and screen then wait for (bench/open_to_verdict.py: a verdict drawn at 310 ms
        in every round, against 325 to 380 ms without the wait, when the child finished just
        after the first screen was chosen). An agent slower than that sees its progress screen
        this much later. The history is not opened here: a child records its own run."""
        from explorer.core.view import ReportView
        from explorer.tui.screens.interview import InterviewScreen
        from explorer.tui.screens.progress import no_card_reason

        wanted = lambda run: no_card_reason(ReportView.of(run.report)) is None  # noqa: E731
        run = self.context.early_run(target, wanted, wait=EARLY_GRACE)
        if run is None:
            return None

        run_id = self.context.record(run)
        self.start = self.start._replace(target=None, run=run, run_id=run_id)  # nothing left to start
        return InterviewScreen(run, run_id=run_id, origin="live", unrecorded=self.context.record_error)

    def on_mount(self) -> None:
        self._apply_keymap()
        self.flush_warnings()
        if self.start.target and self.start.run_id is None and self.start.run is None:
            self.start_interview(self.start.target)

    def _apply_keymap(self) -> None:
        keymap = dict(self.context.keymap)
        if not keymap:
            return
        known = self._binding_ids()
        unknown = sorted(k for k in keymap if k not in known)
        if unknown:
            self.notify(
                "keymap: unknown binding ids ignored: " + ", ".join(safe.visible(u, 60) for u in unknown),
                severity="warning",
                markup=False,
            )
        self.set_keymap({k: v for k, v in keymap.items() if k in known})

    def _binding_ids(self) -> set[str]:
        from explorer.tui.screens import all_screens

        ids: set[str] = set()
        for owner in (type(self), *all_screens()):
            for binding in getattr(owner, "BINDINGS", []):
                if isinstance(binding, Binding) and binding.id:
                    ids.add(binding.id)
        return ids

    # ---- navigation ------------------------------------------------------------------------------
    def start_interview(
        self, target: str, *, previous: tuple[Run, int | None] | None = None, transcript: bool = True
    ) -> None:
        """Run an interview in a worker behind a progress screen, then show it."""
        from explorer.tui.screens.progress import Outcome, ProgressScreen

        target = target.strip()
        if not target:
            return  # an empty target does nothing
        if target.isdigit() and previous is None:
            self.open_stored(int(target))
            return
        if previous is None and transcript and self._opened_transcript(target):
            return
        problem = self.context.target_problem(target) if previous is None else None
        if problem is not None:  # a typo is said where the user typed it, nothing is fetched
            load = self._load_screen()
            if load is not None and self.screen is load:
                load.show_error(target, problem)
            else:
                self._notify_error(problem)
            return

        def done(outcome: Outcome | None) -> None:
            if outcome is None or outcome.error is not None:
                collector.resume()  # nothing to draw: the collector is back on (the run's screen
                # turns it back on itself once drawn, `InterviewScreen.on_mount`)
            if outcome is None:
                self.notify("interview cancelled", severity="warning")
                return
            load = self._load_screen()
            if outcome.error is not None:
                if load is not None:
                    load.show_error(outcome.target, outcome.error)
                    if self.screen is not load:
                        self._notify_error(outcome.error)
                else:
                    self._notify_error(outcome.error)
                return
            assert outcome.run is not None
            if load is not None:
                load.clear_error()
            self.show_run(outcome.run, outcome.run_id, origin="live", unrecorded=outcome.unrecorded)
            if previous is not None:
                self._announce_replay(previous, outcome.run)

        self.last_progress = ProgressScreen(target)
        self.push_screen(self.last_progress, done)

    def flush_warnings(self) -> None:
        """Say, once each, what went wrong outside the screens (history trouble, bad keymap)."""
        for warning in self.context.warnings:
            self.notify(safe.visible(warning, 600, single_line=False), severity="warning", markup=False)
        self.context.warnings.clear()

    def _notify_error(self, message: str) -> None:
        text = safe.visible(message, 600, single_line=False)
        self.notify(text, title="could not interview", severity="error", markup=False)

    def _announce_replay(self, previous: tuple[Run, int | None], run: Run) -> None:
        """What changed since the replayed run, in the words of `compare_reports`."""
        before, before_id = previous
        summary = self.context.compare(before.report, run.report).summary()
        label = f"run #{before_id}" if before_id is not None else "the previous run"
        verdicts = f"{before.report.get('verdict')} -> {run.report.get('verdict')}"
        self.notify(
            f"replayed {label}: {verdicts}; {safe.visible(summary, 400)}", title="replay", markup=False
        )

    def show_run(self, run: Run, run_id: int | None, origin: str = "", unrecorded: str | None = None) -> None:
        from explorer.tui.screens.interview import InterviewScreen

        self.push_screen(InterviewScreen(run, run_id=run_id, origin=origin, unrecorded=unrecorded))

    def _opened_transcript(self, target: str) -> bool:
        """Open a JSON transcript file offline (re-verified in a thread: a large one takes a
        second); False when the target does not look like one."""
        if not self.context.looks_like_transcript(target):
            return False

        def work() -> None:
            from explorer.tui.launch import TRANSCRIPT_ORIGIN

            try:
                run = self.context.open_transcript(target)
            except ExplorerError as exc:
                self.call_from_thread(self._notify_error, str(exc))
                return
            if run is None:  # not a transcript after all: interview it as a card file
                self.call_from_thread(self.start_interview, target, previous=None, transcript=False)
                return
            self.call_from_thread(self.show_run, run, None, TRANSCRIPT_ORIGIN)

        self.notify("re-verifying the transcript offline (nothing is fetched)", markup=False)
        self.run_worker(work, thread=True, exclusive=True, group="transcript", name="open-transcript")
        return True

    def open_stored(self, run_id: int) -> None:
        try:
            run = self.context.load(run_id)
        except ExplorerError as exc:
            load = self._load_screen()
            if load is not None:
                load.show_error(str(run_id), str(exc))
            self.notify(str(exc), severity="error", markup=False)
            return
        self.show_run(run, run_id, origin="from history (offline)")

    def _load_screen(self) -> LoadScreen | None:
        from explorer.tui.screens.load import LoadScreen

        for screen in self.screen_stack:
            if isinstance(screen, LoadScreen):
                return screen
        return None

    def action_history(self) -> None:
        from explorer.tui.screens.history import HistoryScreen

        if isinstance(self.screen, HistoryScreen):
            return
        self.push_screen(HistoryScreen())

    def action_fleet(self) -> None:
        from explorer.tui.screens.fleet import FleetScreen

        if isinstance(self.screen, FleetScreen):
            return
        self.push_screen(FleetScreen())

    def action_toggle_help(self) -> None:
        """F1: the help dialog for the screen on show (`screens.help`), or closes it."""
        from explorer.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        else:
            self.push_screen(HelpScreen(self.screen))

    def go_home(self) -> None:
        """Back to the load screen (installing it if the app started on a stored run)."""
        from explorer.tui.screens.load import LoadScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, LoadScreen):
            self.pop_screen()
        if not isinstance(self.screen, LoadScreen):
            self.push_screen(LoadScreen())

    # ---- services --------------------------------------------------------------------------------
    def copy_text(self, text: str, what: str) -> None:
        """Copy `text` (explorer.tui.clipboard: the terminal's clipboard, or a browser download)."""
        from explorer.tui.clipboard import copy

        copy(self, text, what)

    # ---- palette -----------------------------------------------------------------------------------
    def palette_commands(self, screen: Screen) -> Iterable[PaletteCommand]:
        for agent in self.context.demo:
            yield PaletteCommand(
                f"open: {agent.name}",
                f"interview the reference agent {agent.name} (expected {agent.expected_verdict})",
                self._opener(agent),
            )
        yield PaletteCommand("show: history", "list recorded runs per agent", self.action_history)
        yield PaletteCommand(
            "show: fleet", "every agent's latest verdict, signature and churn", self.action_fleet
        )
        yield PaletteCommand("show: load screen", "type a target or pick an agent", self.go_home)
        yield PaletteCommand(
            "show: help", "help for the focused widget and the keys", self.action_toggle_help
        )
        # The palette holds only our provider, so Textual's system commands (quit above all) are
        # offered here too, under the same names.
        for command in self.get_system_commands(screen):
            yield PaletteCommand(command.title, command.help, command.callback)

    def _opener(self, agent: DemoAgent) -> Any:
        return lambda: self.start_interview(agent.url)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("theme: change", "pick a Textual theme", self.action_change_theme)
        yield SystemCommand("app: quit", "quit Interview Explorer", self.action_quit)
        yield SystemCommand("screenshot: save SVG", "save an SVG of this screen", self._save_screenshot)

    # Not `_screenshot`: Textual's App keeps an attribute of that name, which hides a method.
    def _save_screenshot(self) -> None:
        if self.is_web:  # served to a browser: a download, never a file on the server
            self.deliver_screenshot()
            return
        path = self.save_screenshot(path=str(self.context.export_dir))
        self.notify(f"screenshot saved to {path}", markup=False)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast, from any screen or widget, with control characters made visible.

        `markup` is honoured, with Textual's default, so Textual's own messages keep their
        formatting (the ctrl+c hint's bold key). Ours quote exceptions and agent text and pass
        `markup=False` at every call site (tests/test_tui_errors.py checks each one), so neither
        markup nor terminal escapes pass from an agent (docs/PROTOCOL.md section 8). As a second
        guard, markup that does not parse or that would carry an action (`[@click=...]`) is
        shown as plain text: a toast styles words, it never runs anything.
        """
        shown = safe.visible(message, 2_000, single_line=False)
        if markup:
            markup = _harmless_markup(shown)
        title = safe.visible(title, 200)
        super().notify(shown, title=title, severity=severity, timeout=timeout, markup=markup)

    # ---- keys land where they are aimed ------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        """Every key and paste reaches the widget that has focus once the keys before it are done.

        Textual hands each key (and each paste) to the widget focused when the app reads it, and
        that widget handles it later, in its own queue; a key that moves focus (tab, a letter typed
        on a list that types the target) used to move it only then, and a screen just pushed has
        no focus until it has mounted (the interview screen: until its opened pane is built).
        Keys read in the same burst (a paste, a password manager's
        auto-type, a fast typist, one WebSocket frame of a browser session) went to the old
        widget or nowhere: a client secret typed after tab landed in the client id field, shown
        in clear, and a name typed on the load screen's list reached the field shuffled
        ("drinftig"), so Enter started nothing. So here, as each key is read: keys typed while a
        screen mounts wait for it (`_hold`); a widget that sends typing elsewhere says where
        (`typing_goes_to`) and focus moves there first; and a key whose binding only moves focus
        (`FOCUS_MOVES`: tab, shift+tab, the load screen's ctrl+l, or the keys a keymap gives
        them) moves it at once."""
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded and self.screen_stack:
            if self._held is not None or not _takes_keys(self.screen):
                self._hold(event)
                return
            if isinstance(event, events.Key) and not self.app_focus:
                self.app_focus = True  # Textual's own first step for a key: focus back where it was
            if await self._aim(event):
                return
        await super().on_event(event)

    def _hold(self, event: events.Key | events.Paste) -> None:
        """Keep a key until the screen on show has mounted (and taken focus), then hand the kept
        keys on in order; keys read meanwhile queue behind them."""
        if self._held is None:
            self._held = []
            self.set_timer(HELD_KEY_CHECK, self._let_go)
        self._held.append(event)

    async def _let_go(self) -> None:
        if self.screen_stack and not _takes_keys(self.screen):
            self.set_timer(HELD_KEY_CHECK, self._let_go)
            return
        held, self._held = self._held or [], None
        for event in held:
            await self.on_event(event)  # held again, behind these, if one of them opens a screen

    async def _aim(self, event: events.Key | events.Paste) -> bool:
        """Move focus now if this key or paste moves it; True when the key was the move itself."""
        screen = self.screen
        focused = screen.focused
        typing_goes_to = getattr(focused, "typing_goes_to", None)
        if typing_goes_to is not None:
            target = typing_goes_to(event)
            if target is not None and target is not focused:
                screen.set_focus(target)
            return False
        if not isinstance(event, events.Key) or event.is_printable:
            return False
        active = screen.active_bindings.get(event.key)
        if active is None or not active.enabled or active.binding.priority:
            return False  # a priority binding runs here anyway, in Textual's own order
        if active.binding.action not in FOCUS_MOVES:
            return False
        return await self.run_action(active.binding.action, active.node)

    # ---- audit: the hostile-agent test checks no action runs from agent text ----------------------
    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        self.actions_run.append(str(action))
        return await super().run_action(action, default_namespace, namespaces)


def _takes_keys(screen: Screen) -> bool:
    """Whether keys may reach `screen` now: once it has mounted, and, for a screen that builds
    what takes its keys after its first frame (the interview screen's opened pane), once that
    is built and focused (its `ready`)."""
    return screen.is_mounted and bool(getattr(screen, "ready", True))


def explorer_of(node: DOMNode) -> ExplorerApp:
    """The explorer's app that a screen or widget runs in, typed (Textual's `node.app` is any App):
    `explorer_of(self).start_interview(target)`."""
    app = node.app
    if not isinstance(app, ExplorerApp):
        raise TypeError(f"{type(node).__name__} runs in {type(app).__name__}, not in the explorer's app")
    return app


def context_of(node: DOMNode) -> AppContext:
    """The session's `AppContext`, for a screen or widget: `context_of(self).load(run_id)`."""
    return explorer_of(node).context
