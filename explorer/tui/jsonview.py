"""JSON values highlighted with pygments, as `Content` that is never parsed as markup.

A value from an agent is pretty-printed with `json.dumps` (which escapes C0 controls), every
pygments token is neutralised again (C1 controls and bidi overrides survive `json.dumps`) and
styled by token type with theme variables, so the colours follow the Textual theme. Huge
values are cut at a line and character budget with a marker saying how much was left out; the
caller offers the whole value in a separate, virtualised viewer.

`colour=False` gives the same text without pygments: widgets draw that first and colour it
after the first refresh, so the interview screen paints before pygments is even imported
(the startup benchmark measures exactly that first paint).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, NamedTuple

from textual.content import Content

from explorer.core.text import safe_text

MAX_LINES = 120
MAX_CHARS = 4_000


@cache
def _lexer() -> tuple[Any, tuple[tuple[Any, str], ...], Any]:
    """The JSON lexer, the token styles and the plain-text token type (imported on first use)."""
    from pygments.lexers.data import JsonLexer
    from pygments.token import Keyword, Name, Number, Punctuation, String, Token

    styles = (
        (Name.Tag, "bold $accent"),
        (String, "$text-success"),
        (Number, "$text-warning"),
        (Keyword, "italic $text-error"),
        (Punctuation, "$text-muted"),
    )
    return JsonLexer(), styles, Token.Text


def pretty(value: Any) -> str:
    """Indented JSON; values that are not JSON (never expected) are shown through repr."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return repr(value)


def _style_for(token: Any, styles: tuple[tuple[Any, str], ...]) -> str:
    for kind, style in styles:
        if token in kind:
            return style
    return ""


def neutralise(text: str) -> str:
    """Control, bidi and format characters made visible; newlines kept; never shortened."""
    return safe_text(text, limit=len(text) * 10 + 16, keep_newlines=True)


class Highlighted(NamedTuple):
    content: Content
    truncated: bool
    total_lines: int
    shown_lines: int


def highlight_text(
    text: str, *, colour: bool = True, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS
) -> Highlighted:
    """Highlight JSON text, truncating at `max_lines` lines or `max_chars` characters."""
    lines = text.split("\n")
    total = len(lines)
    shown = lines[:max_lines]
    clipped = "\n".join(shown)
    truncated = total > max_lines
    if len(clipped) > max_chars:
        clipped = clipped[:max_chars]
        truncated = True
    parts: list[tuple[str, str] | str] = []
    if not colour:
        parts.append(neutralise(clipped))
    else:
        lexer, styles, plain = _lexer()
        for token, value in lexer.get_tokens(clipped):
            if not value:
                continue
            safe = neutralise(value)
            style = _style_for(token, styles) if token is not plain else ""
            parts.append((safe, style) if style else safe)
    content = Content.assemble(*parts).rstrip("\n") if parts else Content("")
    shown_lines = clipped.count("\n") + 1
    if truncated:
        more = total - shown_lines
        note = f"\n… truncated: {more} more lines" if more > 0 else "\n… truncated"
        content = Content.assemble(content, (note + " (press v to view the whole value)", "bold reverse"))
    return Highlighted(content, truncated, total, shown_lines)


def highlight(value: Any, *, colour: bool = True, **limits: int) -> Highlighted:
    return highlight_text(pretty(value), colour=colour, **limits)
