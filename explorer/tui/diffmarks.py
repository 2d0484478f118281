"""Two canonical byte strings with the differing span marked so that no colour is needed.

The span is shown three ways at once: wrapped in « » inside the string, underlined and reversed,
and pointed at by a line of ^ carets under each wrapped row. The brackets and carets survive
NO_COLOR, colour blindness, a monochrome terminal and a screen reader reading the lines in
order. Rows are wrapped at a fixed cell width by this module (not by the terminal) so the caret
line always sits under the characters it marks, wide characters included. A very long string
is shown as a window around the span, with the offsets stated.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.cells import cell_len
from textual.content import Content

from explorer.tui.safe import escape_char

SPAN_STYLE = "reverse underline bold"
OPEN, CLOSE = "«", "»"


class _Cell(NamedTuple):
    text: str
    marked: bool  # gets a caret under it
    styled: bool  # part of the differing span


def _cells(text: str, span: tuple[int, int], window: tuple[int, int]) -> list[_Cell]:
    start, end = span
    lo, hi = window
    cells: list[_Cell] = []
    if lo > 0:
        cells.append(_Cell("…", False, False))
    empty = start >= end
    for index in range(lo, hi + 1):
        if index == start:
            cells.append(_Cell(OPEN, empty, False))
        if empty and index == start:
            cells.append(_Cell(CLOSE, True, False))
        if index == end and not empty:
            cells.append(_Cell(CLOSE, False, False))
        if index < hi:
            inside = start <= index < end
            cells.append(_Cell(escape_char(text[index]), inside, inside))
    if hi < len(text):
        cells.append(_Cell("…", False, False))
    return cells


def _window(length: int, span: tuple[int, int], context: int) -> tuple[int, int]:
    start, end = span
    if length <= 4 * context:
        return (0, length)
    lo = max(0, start - context)
    hi = min(length, max(end, start) + context)
    return (lo, min(hi, lo + 4 * context))


def marked_lines(
    label: str, text: str, span: tuple[int, int], *, width: int = 64, context: int = 120
) -> Content:
    """`label` + the string wrapped at `width` cells, each row with its caret row under it."""
    start, end = max(0, min(span[0], len(text))), max(0, min(span[1], len(text)))
    window = _window(len(text), (start, end), context)
    cells = _cells(text, (start, end), window)
    pad = " " * cell_len(label)
    rows: list[list[_Cell]] = [[]]
    used = 0
    for cell in cells:
        w = max(1, cell_len(cell.text))
        if used + w > width and rows[-1]:
            rows.append([])
            used = 0
        rows[-1].append(cell)
        used += w
    lines: list[Content] = []
    for number, row in enumerate(rows):
        prefix = label if number == 0 else pad
        parts: list[str | tuple[str, str]] = [(prefix, "bold")]
        for cell in row:
            parts.append((cell.text, SPAN_STYLE) if cell.styled else cell.text)
        lines.append(Content.assemble(*parts))
        if any(cell.marked for cell in row):
            carets = "".join(("^" if cell.marked else " ") * max(1, cell_len(cell.text)) for cell in row)
            lines.append(Content.assemble(pad, (carets.rstrip(), "bold")))
    shown = f"characters {window[0]}–{window[1]} of {len(text)}" if window != (0, len(text)) else ""
    if shown:
        lines.append(Content.assemble(pad, (f"(showing {shown}; press v for the whole value)", "italic")))
    return Content("\n").join(lines)


def span_words(span: tuple[int, int], length: int) -> str:
    start, end = span
    if start >= end:
        return f"insertion point at character {start} of {length}"
    return f"characters {start}–{end} of {length} differ"
