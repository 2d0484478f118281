"""The whole of a value, for the ones too long to show in the detail panel.

A read-only TextArea is virtualised (only visible lines are drawn), so a megabyte of JSON
scrolls smoothly. It draws plain text, never markup; the text is neutralised first so that
terminal control characters from the agent cannot reach the terminal.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from explorer.core.view import Projection
from explorer.tui import safe
from explorer.tui.app import context_of
from explorer.tui.jsonview import neutralise, pretty
from explorer.tui.widgets.footer import ExplorerFooter

WRAP = 160


def hard_wrap(text: str, width: int = WRAP) -> str:
    """Cut every line longer than `width` into continuation lines (a 1 MB one-line string stays
    cheap to scroll; soft wrapping it would measure the whole line on every redraw)."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
        else:
            out.extend(line[i : i + width] for i in range(0, len(line), width))
    return "\n".join(out)


def whole_text(projection: Projection) -> str:
    """Both values in full, then both canonical strings (where they differ), as plain text."""
    found, source = projection.source()
    sections = [
        "answer value",
        pretty(projection.value),
        "",
        "signed source member",
        pretty(source) if found else "(nothing)",
    ]
    for label, stated in (
        ("answer canonical (RFC 8785)", projection.stated_canonical("value")),
        ("source canonical (RFC 8785)", projection.stated_canonical("source")),
    ):
        if stated is not None:
            sections += ["", label, stated]
    return hard_wrap(neutralise("\n".join(sections)))


class ValueScreen(ModalScreen[None]):
    """A full-screen, scrollable, read-only view of a long value."""

    CSS_PATH = "value.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="value.close"),
        Binding("q", "close", "Close", show=False, id="value.close_q"),
    ]

    def __init__(self, title: str, text: str, heading: str = "whole value") -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.heading = heading

    def compose(self) -> ComposeResult:
        with Vertical(id="value-box"):
            yield Static(Content.assemble((f"{self.heading}  ", "bold"), safe.text(self.title_text, 200)))
            yield TextArea(self.text, read_only=True, soft_wrap=False, show_line_numbers=True, id="whole")
        yield ExplorerFooter()

    def on_mount(self) -> None:
        whole = self.query_one("#whole", TextArea)
        whole.cursor_blink = context_of(self).cursor_blink
        whole.focus()

    def action_close(self) -> None:
        self.dismiss()
