"""The JSON values the property tests draw from (Hypothesis strategies), built in one place.

A JSON value is a scalar (null, a boolean, a number, a string) or a list or object of JSON values,
so every property test that feeds documents to the code draws from `json_values(...)`: the same
recursion, with the leaves and sizes each test chooses. The choices differ on purpose (the
canonical form needs numbers an IEEE double holds exactly, the strict parser integers of any size,
the answer checker object keys from the answers' own vocabulary), so they stay arguments here and
each test keeps its own domain; what is shared is the shape, and the names of the usual leaves.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

# Integers an IEEE 754 double holds exactly: what I-JSON (RFC 7493) and RFC 8785 promise to carry.
SAFE_INTEGERS = st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
# Floats JSON can write: no NaN, no infinity.
FINITE_FLOATS = st.floats(allow_nan=False, allow_infinity=False)


def json_scalars(
    *,
    integers: SearchStrategy[int] | None = None,
    floats: SearchStrategy[float] | None = FINITE_FLOATS,
    text: SearchStrategy[str] | None = None,
    also: SearchStrategy[Any] | None = None,
) -> SearchStrategy[Any]:
    """null, booleans, `integers` (any by default), `floats` (None: no floats), `text` (any by
    default), and `also`: values that matter to the code under test (member names, pointers)."""
    leaves: list[SearchStrategy[Any]] = [st.none(), st.booleans()]
    leaves.append(st.integers() if integers is None else integers)
    if floats is not None:
        leaves.append(floats)
    leaves.append(st.text() if text is None else text)
    if also is not None:
        leaves.append(also)
    return st.one_of(*leaves)


def json_values(
    scalars: SearchStrategy[Any] | None = None,
    *,
    keys: SearchStrategy[str] | None = None,
    list_size: int = 4,
    object_size: int | None = None,
    max_leaves: int = 25,
) -> SearchStrategy[Any]:
    """JSON documents: `scalars` (`json_scalars()` by default) nested in lists of at most
    `list_size` items and objects of at most `object_size` members (`list_size` unless given)
    whose names come from `keys` (any text by default), with at most `max_leaves` scalars."""
    leaves = json_scalars() if scalars is None else scalars
    names = st.text() if keys is None else keys
    members = list_size if object_size is None else object_size
    return st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=list_size) | st.dictionaries(names, children, max_size=members)
        ),
        max_leaves=max_leaves,
    )
