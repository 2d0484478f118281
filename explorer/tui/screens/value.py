"""The whole of a value, for the ones too long to show in the detail panel.

A read-only TextArea is virtualised (only visible lines are drawn), so a megabyte of JSON
scrolls smoothly. It draws plain text, never markup; the text is neutralised first so that
terminal control characters from the agent cannot reach the terminal.

Every line is cut at the width of the box, whatever the terminal's width, and cut again when
the box changes width, so the whole value is read by scrolling down alone: lines cut at a fixed
160 columns, wider than the box, put the middle of a long value off to the right, where the
arrows did not take the view (right walks the cursor to the end of a short line, then down).
The cutting is ours, not the TextArea's soft wrap, which measured a megabyte line by line and
took half as long again to open the hostile agent's 1.4 MB description. Line numbers are left
out: a cut line has none of its own.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.cells import cell_len, chop_cells
from textual import events
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


def hard_wrap(text: str, width: int) -> str:
    """Cut every line wider than `width` cells into continuation lines (wide characters count
    two; a line of plain ASCII, nearly every one, is cut by slicing)."""
    width = max(1, width)
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width and (line.isascii() or cell_len(line) <= width):
            out.append(line)
        elif line.isascii():
            out.extend(line[i : i + width] for i in range(0, len(line), width))
        else:
            out.extend(chop_cells(line, width))
    return "\n".join(out)


class WholeText(TextArea):
    """A read-only TextArea holding `whole`, its lines cut to the width it has (see the module
    docstring), cut again whenever that width changes."""

    def __init__(self, whole: str, **kw: Any) -> None:
        super().__init__("", read_only=True, soft_wrap=False, show_line_numbers=False, **kw)
        self.whole = whole
        self.cut_at = 0  # the width the lines were last cut to

    def room(self) -> int:
        """Cells a line may take: the box less the vertical scrollbar (counted whether shown or
        not, so that a long value does not make its own lines too wide) and the cursor's cell."""
        return self.content_region.width - self.styles.scrollbar_size_vertical - 1

    def on_resize(self, _event: events.Resize) -> None:
        room = self.room()
        if room > 0 and room != self.cut_at:
            self.cut_at = room
            self.load_text(hard_wrap(self.whole, room))


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
    return neutralise("\n".join(sections))


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
            yield WholeText(self.text, id="whole")
        yield ExplorerFooter()

    def on_mount(self) -> None:
        whole = self.query_one("#whole", TextArea)
        whole.cursor_blink = context_of(self).cursor_blink
        whole.focus()

    def action_close(self) -> None:
        self.dismiss()
