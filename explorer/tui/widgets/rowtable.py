"""A table that draws only the rows in view: the fleet and history lists at any length.

Textual's DataTable measures every cell of every row when rows are added (about a quarter of a
millisecond a row), so ten thousand agents froze the fleet view for seconds on every repaint and
every sort. This table holds the rows as they are (the screen's own objects) and a function that
turns one row into its cells; only the rows on screen are ever turned into cells, and each drawn
line is kept until the rows or the width change. Replacing, sorting or appending rows costs what
building the Python list costs, nothing more.

Columns have fixed widths (cells are cut to them with `…`); a screen may pass a function of the
table's width instead of a list, asked again whenever the width changes, so a narrow terminal
keeps every column that matters in view and a wide one gives the agent names room. Cells are
`rich.text.Text` built by the screen from `explorer.tui.safe` output: nothing here parses markup.

Keys: up/down, page up/down, home/end move the cursor, left/right scroll sideways a column at a
time (a column is drawn whole or not at all), enter selects.
Messages: `Highlighted` when the cursor moves, `Selected` on enter (or a click on the cursor's
row), `NearEnd` when the last rows come into view (the history screen fetches its next page).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

PADDING = 1  # cells of space each side of a cell's text
NEAR_END = 20  # rows from the end at which `NearEnd` is posted
_CACHE_LIMIT = 2_000  # drawn lines kept before the cache starts over


class Column(NamedTuple):
    label: str
    width: int  # cells, without the padding


Columns = Sequence[Column] | Callable[[int], Sequence[Column]]


class RowTable(ScrollView, can_focus=True):
    """Rows of any objects; `cells(row)` says what each shows, asked only for rows in view."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "rowtable--header",
        "rowtable--cursor",
        "rowtable--even-row",
    }
    DEFAULT_CSS = """
    RowTable {
        background: $surface;
        color: $foreground;
        height: 1fr;
        & > .rowtable--header {
            text-style: bold;
            background: $panel;
            color: $foreground;
        }
        &:ansi > .rowtable--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
        & > .rowtable--even-row {
            background: $surface-lighten-1 50%;
        }
        &:dark > .rowtable--even-row {
            background: $surface-darken-1 40%;
        }
        & > .rowtable--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        &:focus {
            background-tint: $foreground 5%;
            & > .rowtable--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Select", show=False),
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("left", "scroll_left", "Scroll left", show=False),
        Binding("right", "scroll_right", "Scroll right", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True, repaint=False)

    class Highlighted(Message):
        def __init__(self, table: RowTable, row: int) -> None:
            super().__init__()
            self.table = table
            self.row = row

        @property
        def control(self) -> RowTable:
            return self.table

    class Selected(Highlighted):
        """Enter on a row, or a click on the row under the cursor."""

    class NearEnd(Message):
        """The last rows are in view: a screen that pages its rows fetches the next page."""

        def __init__(self, table: RowTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> RowTable:
            return self.table

    def __init__(
        self,
        cells: Callable[[Any], Sequence[Text]],
        columns: Columns = (),
        *,
        zebra_stripes: bool = True,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's name for it
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._cells = cells
        self._columns = columns
        self.columns: list[Column] = [] if callable(columns) else list(columns)
        self.rows: Sequence[Any] = ()
        self.zebra_stripes = zebra_stripes
        self._widths: list[int] = []
        self._cell_cache: dict[int, tuple[Text, ...]] = {}
        self._line_cache: dict[tuple[Any, ...], Strip] = {}
        self._near_end_posted = -1  # the row count at which NearEnd was last posted

    # ---- data --------------------------------------------------------------------------------
    def set_columns(self, columns: Columns) -> None:
        """New columns: a list, or a function of the table's width giving them."""
        self._columns = columns
        self._relayout()

    def set_rows(self, rows: Sequence[Any], *, cursor: int | None = None) -> None:
        """Show `rows` (kept as given, never copied); the cursor stays at its index (or goes to
        `cursor`), within the new rows."""
        self.rows = rows
        self._cell_cache.clear()
        self._line_cache.clear()
        self._near_end_posted = -1
        self._update_virtual_size()
        wanted = self.cursor_row if cursor is None else cursor
        self.move_cursor(wanted, scroll=cursor is not None)
        self.refresh()

    def refresh_rows(self) -> None:
        """The rows' contents changed in place (same list): draw them again."""
        self._cell_cache.clear()
        self._line_cache.clear()
        self.refresh()

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def get_row_at(self, index: int) -> tuple[Text, ...]:
        """The cells of row `index` (as drawn)."""
        cells = self._cell_cache.get(index)
        if cells is None:
            cells = tuple(self._cells(self.rows[index]))
            if len(self._cell_cache) > _CACHE_LIMIT:
                self._cell_cache.clear()
            self._cell_cache[index] = cells
        return cells

    @property
    def current(self) -> Any:
        """The row under the cursor, or None when there are no rows."""
        return self.rows[self.cursor_row] if 0 <= self.cursor_row < len(self.rows) else None

    # ---- cursor ------------------------------------------------------------------------------
    def move_cursor(self, row: int, *, scroll: bool = True) -> None:
        row = max(0, min(row, len(self.rows) - 1)) if self.rows else 0
        if row != self.cursor_row:
            self.cursor_row = row
            self._line_cache.clear()
            self.refresh()
            self.post_message(self.Highlighted(self, row))
        if scroll:
            self._scroll_to_cursor()
        self._check_near_end()

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def _scroll_to_cursor(self) -> None:
        page = self._page()
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False, force=True)
        elif self.cursor_row >= top + page:
            self.scroll_to(y=self.cursor_row - page + 1, animate=False, force=True)

    def _check_near_end(self) -> None:
        count = len(self.rows)
        last_in_view = round(self.scroll_y) + self._page()
        near = max(self.cursor_row, last_in_view) >= count - NEAR_END
        if count and near and self._near_end_posted != count:
            self._near_end_posted = count
            self.post_message(self.NearEnd(self))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._check_near_end()

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - self._page())

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + self._page())

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(len(self.rows) - 1)

    def action_scroll_right(self) -> None:
        """Right brings in the next column whole: the view starts at the next column's left edge
        (a column cut at the right edge is not drawn, `_whole_columns_end`)."""
        here = round(self.scroll_x)
        later = [start for start in self._column_starts() if start > here]
        if later:
            self.scroll_to(x=min(later[0], self.max_scroll_x), animate=False)

    def action_scroll_left(self) -> None:
        """Left goes back a column: the view starts at the previous column's left edge."""
        here = round(self.scroll_x)
        earlier = [start for start in self._column_starts() if start < here]
        self.scroll_to(x=earlier[-1] if earlier else 0, animate=False)

    def _column_starts(self) -> list[int]:
        starts, end = [], 0
        for column_width in self._widths:
            starts.append(end)
            end += column_width + 2 * PADDING
        return starts

    def action_select(self) -> None:
        if self.rows:
            self.post_message(self.Selected(self, self.cursor_row))

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return
        row = round(self.scroll_y) + offset.y - 1
        if not 0 <= row < len(self.rows):
            return
        event.stop()
        if row == self.cursor_row:
            self.post_message(self.Selected(self, row))
        else:
            self.move_cursor(row)

    def on_focus(self) -> None:
        self._line_cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._line_cache.clear()
        self.refresh()

    # ---- layout ------------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        self._relayout()

    def _relayout(self) -> None:
        # The vertical scrollbar's width is always kept free, so the columns do not change (nor a
        # horizontal scrollbar appear) when the rows start to overflow.
        room = max(0, self.size.width - self.styles.scrollbar_size_vertical)
        columns = self._columns
        self.columns = list(columns(room) if callable(columns) else columns)
        self._widths = [c.width for c in self.columns]
        self._cell_cache.clear()
        self._line_cache.clear()
        self._update_virtual_size()
        self.refresh()

    def _update_virtual_size(self) -> None:
        width = sum(w + 2 * PADDING for w in self._widths)
        self.virtual_size = Size(width, len(self.rows) + 1)

    @property
    def widths(self) -> list[int]:
        """Each column's drawn width (without padding), for the current size."""
        return list(self._widths)

    # ---- drawing -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width or self.size.width
        scroll_x, scroll_y = round(self.scroll_x), round(self.scroll_y)
        base = self.rich_style
        if not self._widths and self._columns:
            self._relayout()
        if y == 0:
            key: tuple[Any, ...] = ("header", width, scroll_x, self.has_focus)
            line = self._line_cache.get(key)
            if line is None:
                style = self.get_component_rich_style("rowtable--header")
                labels = [Text(c.label) for c in self.columns]
                line = self._strip(labels, base + style, scroll_x, width)
            self._remember(key, line)
            return line
        index = scroll_y + y - 1
        if not 0 <= index < len(self.rows):
            return Strip.blank(width, base)
        cursor = index == self.cursor_row
        key = (index, cursor, width, scroll_x, self.has_focus)
        line = self._line_cache.get(key)
        if line is None:
            style = base
            if self.zebra_stripes and index % 2:
                style += self.get_component_rich_style("rowtable--even-row")
            if cursor:
                style += self.get_component_rich_style("rowtable--cursor")
            line = self._strip(self.get_row_at(index), style, scroll_x, width)
            self._remember(key, line)
        return line

    def _remember(self, key: tuple[Any, ...], line: Strip) -> None:
        if len(self._line_cache) > _CACHE_LIMIT:
            self._line_cache.clear()
        self._line_cache[key] = line

    def _strip(self, cells: Sequence[Text], style: Style, scroll_x: int, width: int) -> Strip:
        segments: list[Segment] = []
        pad = " " * PADDING
        for cell, cell_width in zip(cells, self._widths, strict=False):
            text = cell.copy() if isinstance(cell, Text) else Text(str(cell))
            text.truncate(cell_width, overflow="ellipsis", pad=True)
            segments.append(Segment(pad, style))
            segments.extend(
                Segment(seg.text, style + seg.style if seg.style else style)
                for seg in text.render(self.app.console)
                if seg.text
            )
            segments.append(Segment(pad, style))
        strip = Strip(segments)
        return strip.crop(scroll_x, self._whole_columns_end(scroll_x, width)).extend_cell_length(width, style)

    def _whole_columns_end(self, scroll_x: int, width: int) -> int:
        """Where drawing stops: at the end of the last column that fits whole in the view, so a
        column is shown whole or not at all (at 80 columns the history's "time (UTC)" column was
        drawn as its first letter, a column headed "t"); scrolling right brings it in whole.
        A column wider than the view, or the only one in it, is drawn cut as before."""
        edge = scroll_x + width
        end = 0
        for column_width in self._widths:
            right = end + column_width + 2 * PADDING
            if right > edge:
                return end if end > scroll_x else edge
            end = right
        return edge
