"""Untrusted text -> something Textual draws as text and nothing else.

Every string an agent sends (names, descriptions, values, URLs, finding details quoting them)
reaches the screen through this module. Textual parses plain `str` given to Static, Label,
OptionList, DataTable or notify as markup, so `[@click=app.quit]` in a card name would become a
live action and a stray `[/]` would crash the app (docs/PROTOCOL.md section 8). The helpers here
return `Content` objects built without markup, after terminal control characters and bidi
overrides are made visible as escapes and the length is capped.

The neutralising rule is `explorer.core.text.safe_text`, shared with the exports and the headless
output, so a hostile name reads the same everywhere.
"""

from __future__ import annotations

from textual.content import Content

from explorer.core.text import safe_text

DEFAULT_LIMIT = 2_000


def escape_char(ch: str) -> str:
    """The visible form of one character (`\\x1b`, `<U+202E>`), or the character itself."""
    return ch if " " <= ch <= "~" else safe_text(ch, limit=16)


def visible(value: object, limit: int = DEFAULT_LIMIT, *, single_line: bool = True) -> str:
    """Neutralised plain text, capped at `limit` characters; newlines kept unless `single_line`."""
    if value is None:
        return ""
    return safe_text(value, limit=limit, keep_newlines=not single_line)


def clip(value: object, width: int) -> str:
    """Neutralised single-line text cut to `width` characters with a trailing `…` (for cells)."""
    shown = visible(value, max(width, 1) * 4 + 16)
    return shown if len(shown) <= width else shown[: max(width - 1, 0)] + "…"


def middle(value: object, width: int) -> str:
    """Neutralised single-line text cut in the middle to `width` characters (`http://host:port/…/card.json`):
    both ends of a URL say the most."""
    shown = visible(value)
    if len(shown) <= width:
        return shown
    if width < 5:
        return shown[: max(width, 0)]
    head = (width - 1) // 2 + (width - 1) % 2
    return shown[:head] + "…" + shown[len(shown) - (width - 1 - head) :]


def text(value: object, limit: int = DEFAULT_LIMIT, style: str = "", *, single_line: bool = True) -> Content:
    """Agent text as a `Content`, never parsed as markup."""
    plain = visible(value, limit, single_line=single_line)
    return Content.styled(plain, style) if style else Content(plain)
