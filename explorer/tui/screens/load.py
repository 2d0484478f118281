"""The first screen: type a target, or pick a reference agent or a recent one.

A target is a base URL, a card URL, a card file, an OpenClasp reference, or a history run id.
The input suggests from history and the demo agents. The reference agents are listed with the
verdict each is expected to get, so a newcomer knows what "drifting" should show before opening
it. When a target cannot be interviewed (unreachable, not JSON, not a card), the reason is shown
here, under the input, where the user is already looking; it never escapes as a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.suggester import SuggestFromList
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from explorer.tui import safe
from explorer.tui.app import context_of, explorer_of
from explorer.tui.context import DemoAgent
from explorer.tui.palette import PaletteCommand
from explorer.tui.runs import RecentAgent, probe_recents
from explorer.tui.widgets.footer import ExplorerFooter


def demo_prompt(agent: DemoAgent) -> Content:
    return Content.assemble(
        safe.text(agent.name, 40, "bold"),
        ("  expected: ", "dim"),
        (agent.expected_verdict, "bold"),
        "\n  ",
        safe.text(agent.description, 200, "italic"),
    )


def recent_prompt(recent: RecentAgent) -> Content:
    """An agent's latest run that answered, at the address offered; when it also answered at
    other addresses (an older session's port), how many, and where the latest of them was; when
    the offered address no longer answers, why it is thought so."""
    row = recent.row
    elsewhere: tuple[str, str] = ("", "")
    if recent.others:
        more = f" and {len(recent.others) - 1} more" if len(recent.others) > 1 else ""
        elsewhere = (f"  (the same agent also answered at {host_port(recent.others[0])}{more})", "dim")
    silent = Content("")
    if recent.silent:
        silent = Content.assemble("\n  ", ("✗ no longer answers: ", "bold"), safe.text(recent.silent, 120))
    return Content.assemble(
        (safe.clip(row.name or row.agent or row.target, 60), "bold"),
        ("  last: ", "dim"),
        (row.verdict or "?", "bold"),
        ("  ", ""),
        (safe.clip(row.started_at, 30), "dim"),
        ("  run #", "dim"),
        (str(row.run_id), "dim"),
        "\n  ",
        safe.text(row.target, 200, "dim"),
        elsewhere,
        silent,
    )


def host_port(url: str) -> str:
    """`127.0.0.1:29123` of a URL (what tells two URLs of one agent apart), else the URL."""
    from urllib.parse import urlsplit

    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        netloc = ""
    return safe.clip(netloc or url, 60)


def configured_prompt(name: str, url: str, credentials: tuple[str, ...]) -> Content:
    """A configured agent, with the kinds of credential its entry carries (never their values)."""
    carried = ("credentials: " + ", ".join(credentials), "bold") if credentials else ("no credentials", "dim")
    return Content.assemble(safe.text(name, 60, "bold"), "  ", carried, "\n  ", safe.text(url, 200, "dim"))


def demo_notes(skipped: Mapping[str, str], moved: Mapping[str, str]) -> list[Content]:
    """What to say above the reference agents about the ones not started, and the ones not on
    their usual port, in a line or two whatever their number: with another `demo` running every
    agent moves, and a line each (35 of them, two rows each at 80 columns) pushed the list off
    the screen, where Down and Tab reached it unseen. The agents skipped for one reason (a2a-sdk
    missing) share a line; the moved ones are counted, named only when one moved."""
    lines: list[Content] = []
    by_reason: dict[str, list[str]] = {}
    for name, why in sorted(skipped.items()):
        by_reason.setdefault(why, []).append(name)
    for why, names in by_reason.items():
        lines.append(Content.assemble((f"{', '.join(names)} not started: ", "bold"), safe.text(why, 200)))
    if len(moved) == 1:
        [(name, where)] = moved.items()
        lines.append(Content.assemble((f"{name}: ", "bold"), safe.text(where, 200)))
    elif moved:
        lines.append(
            Content.assemble(
                (f"{len(moved)} reference agents moved to other ports", "bold"),
                " (their usual ones are taken: another demo running?)",
            )
        )
    return lines


START_DEMO_ID = "demo-start"
TYPED_FIRST = "-typed-first"  # the class of the widget typing goes to first (`LoadScreen.AUTO_FOCUS`)


def start_demo_option() -> Option:
    return Option(
        Content.assemble(
            ("▶ start the reference agents", "bold"),
            ("  well-behaved and misbehaving A2A agents on 127.0.0.1, each with its expected verdict", "dim"),
        ),
        id=START_DEMO_ID,
    )


def starting_demo_option() -> Option:
    return Option(
        Content.styled("starting the reference agents…", "italic"), id="demo-starting", disabled=True
    )


class TargetInput(Input):
    HELP = """
## Target

Type what to interview and press **enter**:

- a base URL (`https://agent.example`): the card is looked up at `/.well-known/agent-card.json`,
  then `/.well-known/agent.json`;
- a card URL or a local card file;
- the name of an agent in your config file (its URL, headers and keys come with it), or of a
  reference agent under `interview-explorer demo` (`drifting`);
- an OpenClasp reference (profile URL, card URL, slug or agent id);
- a history run id (digits) to open a recorded run offline.

Suggestions come from history and the reference agents (**right** accepts one). **down** goes
to the list below (the reference agents, or "start the reference agents").
"""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("down", "to_list", "To the list", show=False)]

    def take_typing(self) -> None:
        """Ready the field for what was typed on a list (`AgentList.typing_goes_to`): the text
        is replaced by it, and nothing is selected when focus arrives (focus would select all,
        and each key would replace the one before)."""
        self.select_on_focus = False  # for this focus only: restored on blur
        self.value = ""
        self.cursor_position = 0

    def on_blur(self) -> None:
        self.select_on_focus = True

    def action_to_list(self) -> None:
        """Down from the target goes to the first list on show, its first row highlighted."""
        for listing in self.screen.query(AgentList):
            if listing.display and listing.option_count:
                listing.focus()
                return


class AgentList(OptionList):
    HELP = """
## Agents

**enter** interviews the highlighted agent. Reference agents run on 127.0.0.1 and each is
listed with the verdict it is built to get; when they are not running yet, **enter** on
"start the reference agents" starts them in this session (they stop when you quit), as does
**ctrl+r** anywhere on this screen.
"""

    def set_options(self, options: Any) -> Any:
        """Every list starts with its first row highlighted, so enter works as soon as it has focus."""
        result = super().set_options(options)
        self.highlighted = 0 if self.option_count else None
        return result

    def typing_goes_to(self, event: events.Key | events.Paste) -> Widget | None:
        """Typing (or pasting) on a list types the target: someone who types a name as soon as the
        agents are listed finds it in the field, and enter interviews it, instead of the keys
        being lost and enter opening the highlighted agent. The app moves focus to the field
        as it reads this key (`ExplorerApp.on_event`), so this key and every key after it reach
        the field itself, in the order typed."""
        if isinstance(event, events.Paste):
            typed = bool(event.text.strip())
        else:
            typed = bool(event.is_printable and event.character and not event.character.isspace())
        if not typed:
            return None
        target = self.screen.query_one("#target", TargetInput)
        target.take_typing()
        return target


class LoadScreen(Screen[None]):
    """Target input, demo agents with expected verdicts, recent agents, errors in place."""

    CSS_PATH = "load.tcss"
    # Where typing goes from the first frame: the reference agents' list when they run, else the
    # target. Set as the screen is composed, so no key typed while it mounts lands before focus
    # does (a focus() in on_mount came later, and took focus away from a field being typed in).
    AUTO_FOCUS = f".{TYPED_FIRST}"
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+l", "focus_target", "Target", id="load.target"),
        Binding("ctrl+r", "start_demo", "Reference agents", id="load.start_demo"),
        Binding("f2", "app.history", "History", id="load.history"),
        Binding("f3", "app.fleet", "Fleet", id="load.fleet"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.recent: list[RecentAgent] = []
        self.starting = False
        self.target_first = False  # focus the target once mounted (`show_target`)

    def compose(self) -> ComposeResult:
        # Served to a browser, typing goes to the field from the first frame, which shows it: the
        # list looked focused there (its typing goes to the field) while the keys went elsewhere.
        list_first = bool(context_of(self).demo) and not self.app.is_web
        with Vertical(id="load"):
            yield Static(Content.styled("Interview Explorer", "bold"), id="title")
            yield Static(
                Content.styled(
                    "Ask an A2A agent the five interview questions and diff every answer against its "
                    "signed card and terms.",
                    "dim",
                ),
                id="tagline",
            )
            with Horizontal(id="target-row"):
                yield TargetInput(
                    placeholder="URL, card file, OpenClasp reference or run id",
                    id="target",
                    classes="" if list_first else TYPED_FIRST,
                )
                yield Button("Interview", id="go", variant="primary")
            yield Static(id="load-error")
            yield Static(Content.styled("Reference agents", "bold"), classes="section", id="demo-title")
            yield Static(id="demo-note")
            yield AgentList(id="demo", classes=TYPED_FIRST if list_first else "")
            yield Static(Content.styled("Recent agents", "bold"), classes="section", id="recent-title")
            yield AgentList(id="recent")
            yield Static(
                Content.styled("Configured agents", "bold"), classes="section", id="configured-title"
            )
            yield AgentList(id="configured")
        yield ExplorerFooter()

    def on_mount(self) -> None:
        context = context_of(self)
        self.query_one("#target", Input).cursor_blink = context.cursor_blink
        self.query_one("#load-error").display = False
        self.query_one("#demo-note").display = False
        self.refresh_recent()
        self.refresh_configured()
        if context.demo:
            self.show_demo_agents(focus=False)  # the list has focus already (AUTO_FOCUS)
        else:
            self.query_one("#demo", OptionList).set_options([start_demo_option()])
        if self.target_first:
            self.action_focus_target()
        elif self.focused is None:  # composed while the app had no focus (a browser tab in the background)
            self.set_focus(self.query_one(f".{TYPED_FIRST}"))

    def show_demo_agents(self, *, focus: bool = True) -> None:
        """List the running reference agents, the first highlighted (and, with `focus`,
        focused), and say which ones could not be started and why (sdk-built needs a2a-sdk,
        from the test extra)."""
        context = context_of(self)
        demo = list(context.demo)
        note = self.query_one("#demo-note", Static)
        lines = demo_notes(context.demo_skipped, context.demo_moved)
        note.update(Content("\n").join(lines))
        note.display = bool(lines)
        listing = self.query_one("#demo", OptionList)
        listing.set_options([Option(demo_prompt(agent), id=f"demo-{i}") for i, agent in enumerate(demo)])
        listing.highlighted = 0  # enter opens the first agent; the arrows walk from there
        if focus:
            listing.focus()
        self.refresh_recent()  # their names become suggestions

    # ---- starting the reference agents from here ---------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """ctrl+r is offered (and shown) only while the reference agents are not running."""
        if action == "start_demo":
            return not context_of(self).demo
        return True

    def action_start_demo(self) -> None:
        if context_of(self).demo or self.starting:
            return
        self.starting = True
        listing = self.query_one("#demo", OptionList)
        listing.set_options([starting_demo_option()])
        self.run_worker(self._start_demo, thread=True, exclusive=True, group="demo", name="start-demo")

    def _start_demo(self) -> None:
        try:
            context_of(self).start_demo()
        except Exception as exc:  # a port or a builder failed: say so where the user looks
            self.app.call_from_thread(self._demo_failed, str(exc))
            return
        self.app.call_from_thread(self._demo_started)

    def _demo_started(self) -> None:
        self.starting = False
        self.refresh_bindings()  # ctrl+r leaves the footer once the agents run
        if self.is_attached:  # else the app is closing, and close() stops the agents
            self.show_demo_agents()
            count = len(context_of(self).demo)
            self.notify(f"{count} reference agents on 127.0.0.1", title="demo", markup=False)

    def _demo_failed(self, reason: str) -> None:
        self.starting = False
        self.query_one("#demo", OptionList).set_options([start_demo_option()])
        self.show_error("the reference agents", reason)

    def on_screen_resume(self) -> None:
        self.refresh_recent()
        self.refresh_configured()
        # Back from an interview, the last target is selected: typing the next one replaces it.
        self.query_one("#target", Input).select_all()

    def refresh_configured(self) -> None:
        """The config file's agents, each saying which credentials its entry carries."""
        agents = context_of(self).configured_credentials()
        listing = self.query_one("#configured", OptionList)
        listing.set_options(
            [Option(configured_prompt(*agent), id=f"configured-{agent[0]}") for agent in agents]
        )
        listing.display = bool(agents)
        self.query_one("#configured-title").display = bool(agents)

    def refresh_recent(self) -> None:
        context = context_of(self)
        self.recent = context.recent_targets() if context.use_history else []
        recent = self.query_one("#recent", OptionList)
        recent.set_options(
            [Option(recent_prompt(recent), id=f"recent-{i}") for i, recent in enumerate(self.recent)]
        )
        recent.display = bool(self.recent)
        self.query_one("#recent-title").display = bool(self.recent)
        words = [*context.configured_agents(), *(row.target for row in self.recent)]
        words += [agent.name for agent in context.demo] + [agent.url for agent in context.demo]
        self.query_one("#target", Input).suggester = SuggestFromList(words, case_sensitive=False)
        if self.recent and context.read_stored:  # pictures show the recents as recorded
            asked = list(self.recent)
            self.run_worker(
                lambda: self._probe_recent(asked),
                thread=True,
                exclusive=True,
                group="recent-probe",
                name="probe-recent",
            )

    def _probe_recent(self, asked: list[RecentAgent]) -> None:
        """In a worker: whether the recent agents' offered addresses still answer (`probe_recents`)."""
        probed = probe_recents(asked)
        if probed != asked:
            self.app.call_from_thread(self._probed, asked, probed)

    def _probed(self, asked: list[RecentAgent], probed: list[RecentAgent]) -> None:
        """The entries whose address no longer answers say so, unless the list was read again."""
        if not self.is_attached or self.recent != asked:
            return
        listing = self.query_one("#recent", OptionList)
        for index, (before, after) in enumerate(zip(asked, probed, strict=True)):
            if after != before:
                listing.replace_option_prompt_at_index(index, recent_prompt(after))
        self.recent = probed

    # ---- errors in place -----------------------------------------------------------------------
    def show_error(self, target: str, message: str) -> None:
        error = self.query_one("#load-error", Static)
        error.update(
            Content.assemble(
                ("✗ could not interview ", "bold"),
                safe.text(target, 200, "bold"),
                "\n  ",
                safe.text(message, 1500, single_line=False),
            )
        )
        error.display = True

    def clear_error(self) -> None:
        self.query_one("#load-error", Static).display = False

    # ---- actions -------------------------------------------------------------------------------
    def _go(self, target: str) -> None:
        target = target.strip()
        self.clear_error()
        if not target:
            return  # an empty target does nothing; the placeholder says what to type
        explorer_of(self).start_interview(target)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._go(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "go":
            self._go(self.query_one("#target", Input).value)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        context = context_of(self)
        option_id = event.option.id or ""
        if option_id == START_DEMO_ID:
            self.action_start_demo()
        elif option_id.startswith("demo-"):
            agent = context.demo[int(option_id[5:])]
            self.query_one("#target", Input).value = agent.url
            self._go(agent.url)
        elif option_id.startswith("configured-"):
            name = option_id[len("configured-") :]
            self.query_one("#target", Input).value = name
            self._go(name)
        elif option_id.startswith("recent-"):
            row = self.recent[int(option_id[7:])]
            self.query_one("#target", Input).value = row.target
            self._go(row.target)

    def show_target(self) -> None:
        """ctrl+l from another screen (the interview): the target, its text selected, once this
        screen is on show; a screen still mounting focuses it as it mounts (`on_mount`)."""
        if self.is_mounted:
            self.action_focus_target()
        else:
            self.target_first = True

    def action_focus_target(self) -> None:
        """The target, its text selected: what is typed next replaces the last target (focus
        alone keeps the old text when the field had focus already, and typing appends to it)."""
        target = self.query_one("#target", Input)
        self.set_focus(target)  # at once: run as the key is read (FOCUS_MOVES)
        target.select_all()

    def palette_commands(self) -> list[PaletteCommand]:
        commands = [
            PaletteCommand("open: target…", "type a URL, card file or reference", self.action_focus_target)
        ]
        if not context_of(self).demo:
            commands.append(
                PaletteCommand(
                    "demo: start the reference agents",
                    "serve the well-behaved and misbehaving reference agents on 127.0.0.1",
                    self.action_start_demo,
                )
            )
        return commands
