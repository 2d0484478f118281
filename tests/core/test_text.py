"""safe_text: nothing an agent sends can drive the terminal or disguise itself, and length is capped."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.core.text import is_safe_char, safe_text

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)]
_SUFFIX = re.compile(r"\.\.\. \((\d+) more characters\)\Z")


def _dangerous(char: str, keep_newlines: bool = False) -> bool:
    if char == "\n" and keep_newlines:
        return False
    code = ord(char)
    return code < 0x20 or 0x7F <= code <= 0x9F or unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp")


def test_plain_text_is_unchanged() -> None:
    assert safe_text("Stonework Analytics — reconcile 7 statements, 日本語, émoji 🙂") == (
        "Stonework Analytics — reconcile 7 statements, 日本語, émoji 🙂"
    )


def test_ansi_escape_sequences_become_visible() -> None:
    hostile = "ok\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07"
    out = safe_text(hostile)
    assert "\x1b" not in out and "\x07" not in out
    assert out == "ok\\x1b[2J\\x1b]0;pwned\\x07\\x1b]52;c;ZXZpbA==\\x07"


def test_c1_controls_and_del_are_escaped() -> None:
    assert safe_text("a\x9b31mb\x7f\x85") == "a\\x9b31mb\\x7f\\x85"


def test_carriage_return_and_tab_are_named() -> None:
    assert safe_text("paid\r\tunpaid") == "paid\\r\\tunpaid"


def test_newlines_are_escaped_unless_kept() -> None:
    assert safe_text("a\nb") == "a\\nb"
    assert safe_text("a\nb\r\n", keep_newlines=True) == "a\nb\\r\n"


@pytest.mark.parametrize("char", BIDI)
def test_bidi_controls_become_markers(char: str) -> None:
    out = safe_text(f"user{char}txt.exe")
    assert char not in out
    assert f"<U+{ord(char):04X}>" in out


@pytest.mark.parametrize(
    "char", ["\u200b", "\u200d", "\ufeff", "\u00ad", "\u2060", "\U000e0041", "\u2028", "\u2029", "\ud800"]
)
def test_invisible_format_characters_and_separators_are_marked(char: str) -> None:
    out = safe_text(f"a{char}b")
    assert char not in out and out.startswith("a") and out.endswith("b")
    assert len(out) > 2


def test_length_is_capped_with_a_visible_suffix() -> None:
    out = safe_text("x" * 5000, limit=100)
    assert out == "x" * 100 + "... (4900 more characters)"


def test_an_escape_is_never_cut_in_half() -> None:
    out = safe_text("abc\x1b", limit=5)
    assert out == "abc... (1 more characters)"


def test_short_input_at_the_limit_has_no_suffix() -> None:
    assert safe_text("x" * 10, limit=10) == "x" * 10
    assert safe_text("", limit=0) == ""
    assert safe_text("a", limit=0) == "... (1 more characters)"


def test_huge_input_is_cheap() -> None:
    out = safe_text("\x1b" * 8_000_000, limit=40)
    assert out.endswith("(7999990 more characters)")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "null"),
        (True, "true"),
        (12, "12"),
        ({"name": "A\x1b"}, '{"name": "A\\u001b"}'),  # JSON escapes controls itself
        ([1, "\u202e"], '[1, "<U+202E>"]'),
        (b"ok\xff\x1b", "ok\\xff\\x1b"),
        (ValueError("bad\rthing"), "bad\\rthing"),
    ],
)
def test_any_value_becomes_text(value: Any, expected: str) -> None:
    assert safe_text(value) == expected


def test_hostile_objects_do_not_crash_the_printer() -> None:
    class Nasty:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert safe_text(Nasty()) == "<unprintable Nasty>"
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert isinstance(safe_text(deep, limit=10), str)


def test_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError):
        safe_text("x", limit=-1)


def test_is_safe_char() -> None:
    assert is_safe_char("a") and is_safe_char("é") and not is_safe_char("\u202e")
    assert is_safe_char("\n", keep_newlines=True) and not is_safe_char("\n")


@given(st.text(), st.integers(0, 300), st.booleans())
def test_output_never_has_a_control_or_bidi_character(text: str, limit: int, keep: bool) -> None:
    out = safe_text(text, limit=limit, keep_newlines=keep)
    assert not any(_dangerous(c, keep) for c in out)


@given(st.text(), st.integers(0, 300))
def test_output_never_exceeds_limit_plus_suffix(text: str, limit: int) -> None:
    out = safe_text(text, limit=limit)
    match = _SUFFIX.search(out)
    body = out[: match.start()] if match else out
    assert len(body) <= limit
    if match:
        assert 0 < int(match.group(1)) <= len(text)
    else:
        assert safe_text(text, limit=10**9) == out  # nothing was cut


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
def test_printable_ascii_is_identity(text: str) -> None:
    assert safe_text(text, limit=10**6) == text
