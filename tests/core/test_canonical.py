"""RFC 8785 canonicalization: the upstream vectors, the RFC's number table, the ES6 number file.

Every verdict the explorer gives rests on these bytes being exactly what another JCS
implementation produces, so the tests compare against published data, not against our own output.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core import strict_json
from explorer.core.canonical import CanonicalError, canonical_text, canonicalize, digest, sha256_hex
from tests.support.paths import VECTORS
from tests.support.strategies import SAFE_INTEGERS, json_scalars, json_values

JCS = VECTORS / "jcs"
VECTOR_NAMES = sorted(p.stem for p in (JCS / "input").glob("*.json"))
ES6_FILE = JCS / "es6testfile-first100k.txt.gz"
ES6_SHA256 = "22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7"


def _double(hex_bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(hex_bits.rjust(16, "0")))[0]


def test_the_vector_directory_is_complete() -> None:
    assert VECTOR_NAMES == ["arrays", "french", "structures", "unicode", "values", "weird"]


@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_upstream_vector(name: str) -> None:
    value = json.loads((JCS / "input" / f"{name}.json").read_text(encoding="utf-8"))
    expected = (JCS / "output" / f"{name}.json").read_bytes()
    assert canonicalize(value) == expected
    assert (JCS / "outhex" / f"{name}.txt").read_text().split() == [f"{b:02x}" for b in expected]


@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_upstream_vector_through_the_strict_parser(name: str) -> None:
    """The path production takes: agent bytes -> strict parse -> JCS."""
    value = strict_json.parse((JCS / "input" / f"{name}.json").read_bytes())
    assert canonicalize(value) == (JCS / "output" / f"{name}.json").read_bytes()


# RFC 8785 Appendix B: IEEE-754 bit patterns and their required JSON text.
RFC_NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), RFC_NUMBERS)
def test_rfc8785_number_table(bits: str, expected: str) -> None:
    assert canonicalize(_double(bits)) == expected.encode()
    assert canonicalize([_double(bits)]) == f"[{expected}]".encode()


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"])
def test_rfc8785_table_nan_and_infinity_are_refused(bits: str) -> None:
    with pytest.raises(CanonicalError, match="not a JSON number"):
        canonicalize({"n": _double(bits)})


def test_es6_number_file_checksum() -> None:
    assert hashlib.sha256(gzip.decompress(ES6_FILE.read_bytes())).hexdigest() == ES6_SHA256


@pytest.mark.slow  # 100,000 number lines
def test_es6_number_file_all_lines() -> None:
    lines = gzip.decompress(ES6_FILE.read_bytes()).decode("ascii").splitlines()
    assert len(lines) == 100_000
    failures = []
    for line in lines:
        bits, expected = line.split(",")
        value = _double(bits)
        if not math.isfinite(value):
            continue
        got = canonicalize(value).decode()
        if got != expected:
            failures.append((bits, expected, got))
    assert failures == []


def test_object_keys_sort_by_utf16_code_units() -> None:
    # U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FB33 even though its code point is higher.
    value = {"\ufb33": 1, "\U0001f600": 2, "a": 3, "": 4}
    assert canonical_text(value) == '{"":4,"a":3,"\U0001f600":2,"\ufb33":1}'


def test_strings_are_escaped_minimally() -> None:
    assert canonical_text('\u0000\u001f"\\/\u007f\u00e9\n') == '"\\u0000\\u001f\\"\\\\/\u007f\u00e9\\n"'


def test_negative_zero_is_zero() -> None:
    assert canonicalize(-0.0) == b"0"
    assert canonicalize({"a": -0.0}) == canonicalize({"a": 0})


def test_integers_serialise_as_doubles() -> None:
    """Documented behaviour: integers beyond 2^53 are rounded, which is why lossy_integers exists."""
    assert canonicalize(2**53 + 1) == b"9007199254740992"
    assert canonicalize(2**53 + 1) == canonicalize(2**53)
    assert canonicalize(2**64) == b"18446744073709552000"
    assert canonicalize(10**21) == b"1e+21"
    assert canonicalize(1.0) == canonicalize(1) == b"1"


def test_tuples_are_arrays() -> None:
    assert canonicalize((1, "a", None, True)) == b'[1,"a",null,true]'


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({1: "a"}, "key is int"),
        ({None: "a"}, "key is NoneType"),
        ({"a": {True: 1}}, r"key is bool, not a string, at /a"),
        ("\ud800", "lone surrogate at the root"),
        ({"x": ["ok", "\udc00"]}, "lone surrogate at /x/1"),
        ({"\ud83d": 1}, "key holds a lone surrogate"),
        ([float("nan")], "nan is not a JSON number at /0"),
        ({"a~/b": float("-inf")}, "at /a~0~1b"),
        (10**400, "too large for a double"),
        ({"b": b"bytes"}, "bytes is not a JSON value at /b"),
        ({1, 2}, "set is not a JSON value"),
    ],
)
def test_values_without_a_canonical_form(value: object, message: str) -> None:
    with pytest.raises(CanonicalError, match=message):
        canonicalize(value)


def test_cycles_are_refused_not_looped() -> None:
    cycle: list[object] = []
    cycle.append({"again": cycle})
    with pytest.raises(CanonicalError, match="contains itself at /0/again"):
        canonicalize(cycle)


def test_shared_but_acyclic_values_are_fine() -> None:
    shared = {"k": [1]}
    assert canonicalize([shared, shared]) == b'[{"k":[1]},{"k":[1]}]'


def test_digest_format() -> None:
    value = {"b": [1, 2], "a": "x"}
    expected = hashlib.sha256(b'{"a":"x","b":[1,2]}').hexdigest()
    assert sha256_hex(b'{"a":"x","b":[1,2]}') == expected
    assert digest(value) == "sha256:" + expected
    assert digest({"a": "x", "b": [1, 2]}) == digest(value)
    assert len(digest(None)) == len("sha256:") + 64


_json_values = json_values(json_scalars(integers=SAFE_INTEGERS), list_size=5, max_leaves=30)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=200, deadline=None)
@given(_json_values)
def test_canonical_form_is_a_fixed_point_through_the_strict_parser(value: object) -> None:
    once = canonicalize(value)
    again = canonicalize(strict_json.parse(once))
    assert again == once
    assert canonical_text(value) == once.decode("utf-8")


# --- the fast path (the C encoder) must agree with the reference path (`jcs`) wherever it is taken

_wide_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8) | st.sampled_from(
    ["\ufb33", "\U0001f600", "\ue000", "\uffff", "1", "-1", "1.5", "true", "null", 'a"b', "\u2028", "\x7f"]
)
_any_json = json_values(
    json_scalars(integers=st.integers(min_value=-(2**70), max_value=2**70), text=_wide_text),
    keys=_wide_text,
    list_size=4,
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(_any_json)
def test_the_fast_path_writes_what_jcs_writes(value: object) -> None:
    import jcs

    from explorer.core.canonical import _fast_text

    fast = _fast_text(value)
    if fast is not None:
        assert fast.encode("utf-8") == jcs.canonicalize(value)
    assert canonicalize(value) == jcs.canonicalize(value)


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1.5},
        [2**53 + 1],
        {"\ufb33": 1, "\U0001f600": 2},  # the one pair of characters sorted differently by UTF-16
        {1: "a"},
        {"k": (1, 2)},
        -0.0,
    ],
)
def test_the_fast_path_steps_aside_where_rfc8785_and_the_encoder_could_differ(value: object) -> None:
    from explorer.core.canonical import _fast_text

    assert _fast_text(value) is None


def test_the_fast_path_takes_plain_documents_and_numeric_looking_string_keys() -> None:
    from explorer.core.canonical import _fast_text

    value = {"1": [1, -2, 123456789012345], "true": None, "é\U0001f600": "\u2028", "s": 'a"\\\x01'}
    expected = '{"1":[1,-2,123456789012345],"s":"a\\"\\\\\\u0001","true":null,"é\U0001f600":"\u2028"}'
    assert _fast_text(value) == expected
    assert canonicalize(value) == _fast_text(value).encode("utf-8")  # type: ignore[union-attr]


_NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([0.0, -0.0, 1.0, 1e16, 1e21, 1e-7, 1e-6, 5e-324, 2.0**53 + 2, 10**15, True, False, None]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_NUMBERS, min_size=1, max_size=30))
def test_a_list_of_numbers_is_written_in_one_go_exactly_as_the_reference_writes_it(items: list) -> None:
    """Lists of numbers skip the pure-Python path (the C encoder, then the few number forms where
    Python's repr and ECMAScript differ rewritten); the bytes are the reference `jcs` package's."""
    import jcs

    assert canonicalize(items) == jcs.canonicalize(items)
    assert canonical_text(items) == jcs.canonicalize(items).decode()


def test_a_list_of_numbers_with_no_canonical_form_is_still_refused() -> None:
    for bad in ([1.0, math.nan], [math.inf], [10**400]):
        with pytest.raises(CanonicalError):
            canonicalize(bad)
