"""Agent-supplied values made safe to print on a terminal or in the TUI.

Every name, description, detail and value an agent sends may be hostile: an ESC byte can start
an ANSI sequence that recolours, moves the cursor, retitles the window or (OSC 52) writes the
clipboard; a carriage return or a line separator can overwrite what was printed before it;
bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069) and zero-width format characters
make text read differently from what it is ("Trojan Source"). `safe_text` replaces each such
character with a visible escape (`\\x1b`, `\\r`, `<U+202E>`) instead of dropping it, so a user
sees that something was there, and caps the length with a visible suffix so one 8 MiB string
cannot flood a screen.

Only characters are replaced, never whole sequences: after its ESC is escaped, the rest of an
ANSI sequence is plain printable text and harmless. Printable ASCII, the common case, is copied
in runs without a per-character check; the output is built only up to `limit`, so huge inputs
cost no more than short ones. Markup escaping (Rich/Textual `[...]`) is the renderer's job and
not done here: the TUI renders with `Content`/`Text`, never as markup.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

DEFAULT_LIMIT = 2000

_SUSPECT = re.compile(r"[^\x20-\x7e]")  # anything but printable ASCII gets a closer look
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Control, format (bidi marks, zero-width, tags), surrogates, line and paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    try:
        if isinstance(value, BaseException):
            return str(value)
        return json.dumps(value, ensure_ascii=False)
    except Exception:  # not JSON (or a hostile __str__): fall back to repr
        pass
    try:
        return repr(value)
    except Exception:  # a hostile __repr__ must not take the printer down
        return f"<unprintable {type(value).__name__}>"


def _render(char: str, keep_newlines: bool) -> str:
    """The visible form of one character that is not printable ASCII."""
    if char == "\n" and keep_newlines:
        return char
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    if unicodedata.category(char) in _UNSAFE_CATEGORIES:
        return f"<U+{code:04X}>"
    return char


def is_safe_char(char: str, *, keep_newlines: bool = False) -> bool:
    """True when `safe_text` leaves this character as it is."""
    return _render(char, keep_newlines) == char


def safe_text(value: Any, *, limit: int = DEFAULT_LIMIT, keep_newlines: bool = False) -> str:
    """Printable text for any agent-supplied value: escapes controls, bidi and format characters.

    Strings are used as they are, bytes are decoded as UTF-8 (bad bytes as `\\xNN`), anything else
    is shown as JSON. At most `limit` characters of escaped text are kept; if input is left over,
    a suffix `... (N more characters)` says how much (N counts input characters not shown).
    """
    if limit < 0:
        raise ValueError("limit must not be negative")
    text = _as_text(value)
    out: list[str] = []
    used = 0
    pos = 0
    end_of_text = len(text)
    while pos < end_of_text:
        match = _SUSPECT.search(text, pos)
        run_end = match.start() if match is not None else end_of_text
        if run_end > pos:
            take = min(limit - used, run_end - pos)
            out.append(text[pos : pos + take])
            used += take
            pos += take
            if pos < run_end:
                break
        if match is None:
            break
        piece = _render(text[pos], keep_newlines)
        if used + len(piece) > limit:
            break
        out.append(piece)
        used += len(piece)
        pos += 1
    shown = "".join(out)
    left = end_of_text - pos
    return f"{shown}... ({left} more characters)" if left else shown
