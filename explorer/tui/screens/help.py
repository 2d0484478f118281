"""F1: what the focused part of the screen shows, and every key that works there, in full.

Textual's help panel docks beside the screen, a third of its width: on an 80x24 terminal it cut
its own text mid-sentence (the help above the key list has half the panel's height, without a
scrollbar) and squeezed the screen beneath until its header wrapped mid-word. This dialog takes
the whole terminal instead and scrolls: the focused widget's help (its `HELP` markdown, or the
nearest ancestor's), then the keys of the screen beneath, the ones its footer had no room for
included, then the keys of the focused widget. F1 or escape closes it; the screen beneath is
left exactly as it was.
"""

from __future__ import annotations

from textwrap import dedent
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Markdown, Static

from explorer.tui.widgets.footer import ExplorerFooter

GENERAL = """
## Interview Explorer

Press **ctrl+p** for every command by name, **ctrl+q** to quit. Move between the parts of a
screen with **tab** and **shift+tab**; F1 explains the part that has focus.
"""


def widget_help(focused: Widget | None, screen: Screen[Any]) -> str:
    """The help of the focused widget or its nearest ancestor that has one, else the screen's."""
    for node in focused.ancestors_with_self if focused is not None else (screen,):
        text = getattr(node, "HELP", None)
        if isinstance(node, (Widget, Screen)) and text:
            return dedent(str(text)).strip()
    return dedent(GENERAL).strip()


def key_rows(screen: Screen[Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(the screen's and app's keys, the focused widget's keys) as (key, what it does), each
    action once, hidden bindings included (a narrow footer leaves some of them out)."""
    app = screen.app
    groups: dict[str, list[tuple[str, str]]] = {"screen": [], "app": [], "widget": []}
    seen: set[str] = set()
    for namespace, binding, enabled, _tooltip in screen.active_bindings.values():
        if not enabled or not binding.description or binding.action in seen:
            continue
        seen.add(binding.action)
        group = "screen" if namespace is screen else "app" if namespace is app else "widget"
        groups[group].append((app.get_key_display(binding), binding.description))
    return groups["screen"] + groups["app"], groups["widget"]


def key_table(title: str, rows: list[tuple[str, str]]) -> Content:
    width = max((len(key) for key, _ in rows), default=0)
    lines = [Content.styled(title, "bold")]
    lines += [Content.assemble((f"  {key:>{width}}  ", "bold"), what) for key, what in rows]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """Help for the screen beneath: the focused widget's words and every key, scrollable."""

    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="help.close"),
    ]

    def __init__(self, beneath: Screen[Any]) -> None:
        super().__init__()
        self.beneath = beneath
        self.help_text = widget_help(beneath.focused, beneath)
        self.keys = key_rows(beneath)

    def compose(self) -> ComposeResult:
        own, widget = self.keys
        with VerticalScroll(id="help-box"):
            yield Markdown(self.help_text, id="help-text")
            yield Static(key_table("Keys on this screen", own), id="help-keys")
            if widget:
                yield Static(key_table("Keys of the part with focus", widget), id="help-widget-keys")
            yield Static(
                Content.styled("ctrl+p lists every command by name; F1 or escape closes this help", "dim"),
                id="help-tail",
            )
        yield ExplorerFooter()

    def on_mount(self) -> None:
        self.query_one("#help-box").focus()

    def action_close(self) -> None:
        self.dismiss()
