"""The strict parser: each refusal with its reason and message, limits, and lossy integers.

Agents are untrusted, so what matters is that every hostile body ends in a StrictJsonError a
person can read (never a traceback, never a hang) and that nothing ambiguous is accepted.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.strict_json import (
    MAX_SAFE_INTEGER,
    REASONS,
    StrictJsonError,
    describe_type,
    lossy_integers,
    parse,
)
from tests.support.strategies import json_scalars, json_values


def _refusal(data: bytes | str, **limits: int) -> StrictJsonError:
    with pytest.raises(StrictJsonError) as info:
        parse(data, **limits)
    assert info.value.reason in REASONS
    assert str(info.value) == info.value.message
    return info.value


def test_ordinary_json_parses() -> None:
    body = b'{"name": "Agent \\u00e9", "skills": [{"id": "a", "tags": []}], "n": -0.5, "ok": true, "x": null}'
    assert parse(body) == {
        "name": "Agent \u00e9",
        "skills": [{"id": "a", "tags": []}],
        "n": -0.5,
        "ok": True,
        "x": None,
    }
    assert parse('  [1, 2.5e3, "\U0001f600"]\n') == [1, 2500.0, "\U0001f600"]
    assert parse(bytearray(b"7")) == 7


def test_integers_stay_exact() -> None:
    assert parse(b"12345678901234567890") == 12345678901234567890
    assert isinstance(parse(b"1"), int)
    assert isinstance(parse(b"1.0"), float)


def test_surrogate_pairs_decode_to_one_character() -> None:
    assert parse(b'"\\ud83d\\ude00"') == "\U0001f600"


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b'{"name": "a", "name": "b"}', "duplicate key 'name' in an object at the root"),
        (
            b'{"skills": [{"id": 1}, {"name": 1, "name": 1}]}',
            "duplicate key 'name' in an object at /skills/1",
        ),
        (b'{"a/b": {"~": {"k": 1, "k": 2}}}', "duplicate key 'k' in an object at /a~1b/~0"),
        (b'{"": 1, "": 1}', "duplicate key '' in an object at the root"),
    ],
)
def test_duplicate_keys(body: bytes, where: str) -> None:
    error = _refusal(body)
    assert error.reason == "duplicate_key"
    assert error.message == where


def test_keys_equal_only_after_unescaping_are_duplicates() -> None:
    assert _refusal(b'{"a": 1, "\\u0061": 2}').reason == "duplicate_key"


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers(literal: str) -> None:
    error = _refusal(f'{{"price": [{literal}]}}')
    assert error.reason == "non_finite"
    assert error.message == f"{literal} is not a JSON number"


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "1" + "0" * 400, "-" + "9" * 309, "9" * 5000])
def test_numbers_that_overflow_a_double(literal: str) -> None:
    error = _refusal(f'{{"n": {literal}}}'.encode())
    assert error.reason == "overflow"
    assert "does not fit in a double" in error.message
    assert len(error.message) < 100  # the literal is shortened, not echoed whole


def test_numbers_that_underflow_or_sit_at_the_edge_are_fine() -> None:
    assert parse(b"1e-400") == 0.0
    assert parse(b"1.7976931348623157e308") == 1.7976931348623157e308
    assert parse(("1" + "0" * 308).encode()) == 10**308


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b'"caf\xe9"', "byte 0xe9 at offset 4"),
        (b"\xff", "byte 0xff at offset 0"),
        (b'"\xed\xa0\x80"', "not valid UTF-8"),  # a surrogate encoded in UTF-8 (CESU)
        (b'\xfe\xff\x00"', "not valid UTF-8"),  # UTF-16 with its BOM
    ],
)
def test_bytes_that_are_not_utf8(body: bytes, fragment: str) -> None:
    error = _refusal(body)
    assert error.reason == "not_utf8"
    assert fragment in error.message


def test_byte_order_mark_is_refused() -> None:
    for body in (b"\xef\xbb\xbf{}", "\ufeff{}"):
        error = _refusal(body)
        assert error.reason == "not_utf8"
        assert "byte order mark" in error.message


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b'"\\ud800"', "at the root"),
        (b'{"a": ["ok", "x\\udc00y"]}', "at /a/1"),
        (b'{"k\\ud83d": 1}', "at /k\\ud83d"),  # shown escaped, never as a raw surrogate
        (b'["\\ude00\\ud83d"]', "at /0"),  # a pair in the wrong order is two lone halves
    ],
)
def test_lone_surrogate_escapes(body: bytes, where: str) -> None:
    error = _refusal(body)
    assert error.reason == "not_utf8"
    assert "lone surrogate" in error.message
    assert error.message.endswith(where)


def test_lone_surrogate_in_text_input() -> None:
    error = _refusal('"\ud800"')
    assert error.reason == "not_utf8"
    assert "U+D800" in error.message


@pytest.mark.parametrize(
    ("body", "position"),
    [
        (b'{"a": 1,}', "line 1, column 9"),
        (b"[1, 2", "line 1, column 6"),
        (b'{\n  "a": tru\n}', "line 2, column 8"),
        (b"{'a': 1}", "line 1, column 2"),
        (b"[01]", "line 1, column 3"),
        (b'"tab\there"', "line 1, column 5"),
        (b"{} {}", "line 1, column 4"),
        (b"\x00", "line 1, column 1"),
    ],
)
def test_syntax_errors_give_line_and_column(body: bytes, position: str) -> None:
    error = _refusal(body)
    assert error.reason == "syntax"
    assert error.message.startswith(f"invalid JSON at {position}: ")


@pytest.mark.parametrize("body", [b"", b"   \n\t", ""])
def test_empty_body(body: bytes | str) -> None:
    error = _refusal(body)
    assert error.reason == "syntax"
    assert "empty" in error.message


def test_wrong_input_type_is_a_strict_error() -> None:
    error = _refusal(12)  # type: ignore[arg-type]
    assert "expected bytes or text" in error.message


def test_size_limit() -> None:
    body = json.dumps({"pad": "x" * 1000}).encode()
    assert parse(body, max_bytes=len(body)) == {"pad": "x" * 1000}
    error = _refusal(body, max_bytes=len(body) - 1)
    assert error.reason == "too_large"
    assert f"{len(body) - 1}-byte limit" in error.message


def test_size_limit_counts_utf8_bytes_of_text() -> None:
    text = '"' + "\u00e9" * 10 + '"'  # 12 characters, 22 bytes
    assert _refusal(text, max_bytes=21).reason == "too_large"
    assert parse(text, max_bytes=22) == "\u00e9" * 10


def test_default_size_limit_is_8_mib() -> None:
    assert _refusal(b" " * (8 * 1024 * 1024) + b"1").reason == "too_large"


def test_depth_limit_boundary() -> None:
    assert parse("[" * 128 + "]" * 128) is not None
    error = _refusal("[" * 129 + "]" * 129)
    assert error.reason == "too_deep"
    assert "limit of 128 levels" in error.message
    assert parse('{"a":' * 5 + "1" + "}" * 5, max_depth=5) == {"a": {"a": {"a": {"a": {"a": 1}}}}}
    assert _refusal('{"a":' * 6 + "1" + "}" * 6, max_depth=5).reason == "too_deep"


def test_brackets_inside_strings_do_not_count() -> None:
    body = json.dumps(["[[[[{{{{" * 100, {"k[[[[": ']]]]\\"[[[['}])
    assert parse(body, max_depth=2)[1] == {"k[[[[": ']]]]\\"[[[['}


def _seconds(work: Callable[[], object], repeats: int = 3) -> float:
    """The CPU time this thread spends on `work`, the least of `repeats` tries.

    CPU time, not wall-clock time: a process the scheduler sets aside on a loaded machine
    accrues none while it waits, so a pause of any length between two instructions cannot be
    taken for a slow scan (a single wall-clock sample of a millisecond's work failed this test
    whenever the process waited more than the 50 ms slack for a core). The least of a few tries
    drops what a page fault or a cache flush by a neighbour adds to one of them.
    """
    best = math.inf
    for _ in range(repeats):
        started = time.thread_time()
        work()
        best = min(best, time.thread_time() - started)
    return best


def _linear_floor(size: int) -> float:
    """The CPU time this machine, now, takes to parse a flat array of `size` bytes.

    The refusals below are bounded against it rather than against a fixed number of seconds, so
    a loaded machine slows both sides alike: what the tests catch is a scan that is not linear
    (recursion, rescanning), which costs orders of magnitude more, not a slow machine.
    """
    body = "[" + "1," * (size // 2 - 1) + "1]"
    return _seconds(lambda: parse(body, max_bytes=16 * 1024 * 1024))


@pytest.mark.parametrize("depth", [10_000, 1_000_000])
def test_very_deep_nesting_is_refused_in_linear_time(depth: int) -> None:
    for body in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth, "[" * depth):
        floor = _linear_floor(len(body))
        reasons: list[str] = []
        took = _seconds(lambda b=body, r=reasons: r.append(_refusal(b, max_bytes=16 * 1024 * 1024).reason))
        assert reasons == ["too_deep"] * 3
        assert took < 10 * floor + 0.05, (took, floor)


def test_unterminated_escapes_do_not_make_the_depth_scan_quadratic() -> None:
    body = '["' + '\\"' * 400_000
    floor = _linear_floor(len(body))
    reasons: list[str] = []
    took = _seconds(lambda: reasons.append(_refusal(body).reason))
    assert reasons == ["syntax"] * 3
    assert took < 10 * floor + 0.05, (took, floor)


def test_lossy_integers_pointers() -> None:
    doc = parse(
        b'{"a": [1, 9007199254740992, -9007199254740993, true, 1e300], "b~/": 9007199254740991,'
        b' "c": {"d": 123456789012345678901234567890}, "e": -9007199254740991}'
    )
    assert lossy_integers(doc) == ["/a/1", "/a/2", "/c/d"]
    assert lossy_integers(doc, "/skills/0") == ["/skills/0/a/1", "/skills/0/a/2", "/skills/0/c/d"]
    assert lossy_integers({"x~y/z": [2**60]}) == ["/x~0y~1z/0"]
    assert lossy_integers(2**53) == [""]
    assert lossy_integers(2**53, "/n") == ["/n"]
    assert lossy_integers([MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, True, False, 9.9e99]) == []


def test_lossy_integers_handles_any_depth() -> None:
    doc: object = 2**60
    for _ in range(5000):
        doc = [doc]
    assert lossy_integers(doc) == ["/0" * 5000]


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ({}, "object"),
        ([], "array"),
        ("", "string"),
        (0, "number"),
        (1.5, "number"),
        (True, "boolean"),
        (None, "null"),
    ],
)
def test_describe_type(value: object, name: str) -> None:
    assert describe_type(value) == name


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_strict_errors(data: bytes) -> None:
    try:
        parse(data, max_depth=8)
    except StrictJsonError as error:
        assert error.reason in REASONS


# Fragments that each exercise one refusal, joined into mostly-invalid JSON-looking text.
_FRAGMENTS = list('{}[]",:0123456789.eE+- \n\\utrfalsnNIy') + [
    "\\u",
    "\\ud800",
    "\\udc00",
    "\ufeff",
    "\ud800",
    "1e400",
    "NaN",
    "Infinity",
    '"a"',
    '"a":1,',
    "\u00e9",
]
_json_ish = st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=500, deadline=None)
@given(_json_ish)
def test_arbitrary_json_ish_text_raises_only_strict_errors(text: str) -> None:
    for data in (text, text.encode("utf-8", "surrogatepass")):
        try:
            parse(data, max_depth=4)
        except StrictJsonError as error:
            assert error.reason in REASONS


_values = json_values(json_scalars(integers=st.integers(-(10**300), 10**300)), list_size=4, max_leaves=25)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=200, deadline=None)
@given(_values)
def test_what_json_dumps_writes_parses_back_exactly(value: object) -> None:
    assert parse(json.dumps(value)) == value
    assert parse(json.dumps(value, ensure_ascii=False).encode("utf-8")) == value


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="0123456789", min_size=1, max_size=130),
    st.one_of(st.none(), st.text(alphabet="0123456789", min_size=1, max_size=4)),
    st.one_of(st.none(), st.integers(min_value=-450, max_value=450)),
    st.booleans(),
)
def test_every_number_is_read_exactly_and_one_that_overflows_is_refused(
    digits: str, fraction: str | None, exponent: int | None, negative: bool
) -> None:
    """Numbers are parsed by the decoder's own C code unless one could overflow a double (a hundred
    digits in a row, or a three-digit positive exponent): either way the value is exact and an
    overflow is refused."""
    digits = digits.lstrip("0") or "0"
    literal = ("-" if negative else "") + digits
    literal += f".{fraction}" if fraction is not None else ""
    literal += f"e{exponent}" if exponent is not None else ""
    is_float = fraction is not None or exponent is not None
    expected: float | int = float(literal) if is_float else int(literal)
    too_big = math.isinf(expected) if is_float else len(digits) > 309 or abs(expected) > 1.8e308
    for text in (literal, f"[{literal}, 1]", f'{{"n": {literal}}}'):
        if too_big:
            with pytest.raises(StrictJsonError) as refused:
                parse(text)
            assert refused.value.reason == "overflow"
            continue
        value = parse(text)
        got = value if text == literal else value[0] if isinstance(value, list) else value["n"]
        assert type(got) is type(expected) and got == expected
