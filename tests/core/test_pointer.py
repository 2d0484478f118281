"""RFC 6901 pointers: strict parsing, resolution (found / absent / null), building, enumeration.

The verifier resolves pointers written by agents against signed documents. A malformed pointer
and a pointer that names nothing are different findings, and a member whose value is null is
neither, so these tests pin the three apart, including the RFC's own examples.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.pointer import (
    ABSENT,
    PointerError,
    Resolution,
    escape,
    join,
    members,
    parse,
    printable,
    resolve,
    unescape,
)
from tests.support.strategies import json_scalars, json_values

# RFC 6901 section 5.
RFC_DOC = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", RFC_DOC),
        ("/foo", ["bar", "baz"]),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ('/k"l', 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ],
)
def test_rfc6901_examples(pointer: str, expected: object) -> None:
    assert resolve(RFC_DOC, pointer) == Resolution(True, expected)


def test_parse_tokens() -> None:
    assert parse("") == ()
    assert parse("/") == ("",)
    assert parse("//") == ("", "")
    assert parse("/a~1b/~0/~01") == ("a/b", "~", "~1")
    assert parse("/skills/0/tags") == ("skills", "0", "tags")


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("skills", "must be empty or start with '/'"),
        ("#/skills", "must be empty or start with '/'"),
        ("/a~2", "'~' must be followed by '0' or '1'"),
        ("/a~", "'~' must be followed by '0' or '1'"),
        ("/~/x", "'~' must be followed by '0' or '1'"),
    ],
)
def test_malformed_pointers(pointer: str, message: str) -> None:
    with pytest.raises(PointerError, match=message):
        parse(pointer)
    with pytest.raises(PointerError):
        resolve({}, pointer)


@pytest.mark.parametrize("pointer", [None, 0, ["/a"], b"/a"])
def test_non_string_pointers(pointer: object) -> None:
    with pytest.raises(PointerError, match="is a string"):
        parse(pointer)  # type: ignore[arg-type]


def test_null_member_is_found_and_missing_member_is_absent() -> None:
    doc = {"description": None}
    assert resolve(doc, "/description") == Resolution(True, None)
    missing = resolve(doc, "/name")
    assert missing.found is False
    assert missing.value is ABSENT
    assert not ABSENT
    assert repr(ABSENT) == "ABSENT"


DOC = {"skills": [{"id": "a", "tags": ["x", "y"]}, {"id": "b"}], "n": 3, "s": "text", "z": None}


@pytest.mark.parametrize(
    "pointer",
    [
        "/missing",
        "/skills/2",  # out of range
        "/skills/-",  # "-" never resolves
        "/skills/01",  # leading zero
        "/skills/00",
        "/skills/+1",
        "/skills/-1",
        "/skills/ 1",
        "/skills/1.0",
        "/skills/\u0661",  # ARABIC-INDIC DIGIT ONE is a digit to str.isdigit, not to RFC 6901
        "/skills/",
        "/skills/id",
        "/n/0",  # into a number
        "/s/0",  # into a string: no indexing characters
        "/z/x",  # into null
        "/skills/0/tags/0/x",
        "/Skills",  # case matters
    ],
)
def test_absent(pointer: str) -> None:
    assert resolve(DOC, pointer) == Resolution(False, ABSENT)


def test_found_in_arrays_and_tuples() -> None:
    assert resolve(DOC, "/skills/0/tags/1").value == "y"
    assert resolve(DOC, "/skills/10").found is False
    assert resolve((["deep"],), "/0/0") == Resolution(True, "deep")
    assert resolve(list(range(11)), "/10").value == 10


def test_scalar_root() -> None:
    assert resolve(5, "") == Resolution(True, 5)
    assert resolve(5, "/0").found is False


def test_escape_and_join() -> None:
    assert escape("a/b~c") == "a~1b~0c"
    assert escape("~1") == "~01"
    assert unescape("~01") == "~1"
    assert join() == ""
    assert join("skills", 0, "tags") == "/skills/0/tags"
    assert join("a/b", "~", "") == "/a~1b/~0/"
    with pytest.raises(TypeError):
        join(True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        join(1.5)  # type: ignore[arg-type]


def test_members_in_document_order() -> None:
    doc = {"b": [1, {"c": None}], "a/~": {}, "": "e"}
    assert list(members(doc)) == [
        ("/b", [1, {"c": None}]),
        ("/b/0", 1),
        ("/b/1", {"c": None}),
        ("/b/1/c", None),
        ("/a~1~0", {}),
        ("/", "e"),
    ]
    assert list(members(7)) == []
    assert list(members([])) == []


def test_members_has_no_recursion_limit() -> None:
    # Far past Python's recursion limit; not deeper, since the pointers' total length is quadratic.
    doc: object = "bottom"
    for _ in range(5_000):
        doc = {"k": [doc]}
    deepest, value = list(members(doc))[-1]
    assert value == "bottom"
    assert deepest == "/k/0" * 5_000
    assert resolve(doc, deepest) == Resolution(True, "bottom")


def test_printable_is_safe_for_messages() -> None:
    assert printable("/skills/0") == "/skills/0"
    assert printable("/a\nb\ud800") == "/a\\u000ab\\ud800"
    assert printable("/" + "x" * 500, limit=10) == "/xxxxxxxxx..."
    assert printable("/caf\u00e9") == "/caf\u00e9"


_tokens = st.text(alphabet=st.sampled_from("~/01a-é "), max_size=6) | st.text(max_size=6)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=300, deadline=None)
@given(st.lists(_tokens | st.integers(min_value=0, max_value=10**6), max_size=6))
def test_join_parse_round_trip(tokens: list[str | int]) -> None:
    pointer = join(*tokens)
    assert parse(pointer) == tuple(str(t) for t in tokens)
    for token in tokens:
        if isinstance(token, str):
            assert unescape(escape(token)) == token


_documents = json_values(
    json_scalars(floats=None, text=st.text(max_size=4)), keys=_tokens, list_size=4, max_leaves=25
)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=200, deadline=None)
@given(_documents)
def test_every_member_resolves_to_itself(doc: object) -> None:
    seen = list(members(doc))
    for pointer, value in seen:
        result = resolve(doc, pointer)
        assert result.found
        assert result.value is value
    assert len({p for p, _ in seen}) == len(seen)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("/~01-2a"), max_size=12) | st.text(max_size=12))
def test_arbitrary_strings_raise_only_pointer_errors(pointer: str) -> None:
    try:
        result = resolve(DOC, pointer)
    except PointerError:
        return
    assert isinstance(result.found, bool)
