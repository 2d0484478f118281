"""RFC 8785 JSON Canonicalization Scheme (JCS) and the SHA-256 digests taken over it.

Every comparison the verifier makes (an answer's value against a card member, a proposal
against its committed digest, a card against its signature) is a comparison of JCS bytes, so
this module is the single place that produces them. The serialisation itself is delegated to
the `jcs` package (the RFC author's reference code); this module validates its input first,
because `jcs` is permissive in ways a verifier must not be, and maps every failure to one
exception, `CanonicalError`.

What `jcs` 0.2.1 does with the awkward values, checked against its source and by the tests:

- Integers are serialised through `float(value)`, as the RFC's I-JSON data model requires, so
  integers beyond +-(2^53-1) are ROUNDED to the nearest double: 2**53 + 1 canonicalizes to
  `9007199254740992`, 2**64 to `18446744073709552000`. Two different big integers can thus
  give equal bytes; `strict_json.lossy_integers` exists to flag them. Integers too large for a
  double at all (beyond ~1.8e308) raise `CanonicalError` here.
- `-0.0` (and `-0`) serialises as `0`, as RFC 8785 section 3.2.2.3 prescribes.
- NaN and the infinities are refused (`CanonicalError`).
- `jcs` would turn int/float/bool/None object keys into strings, JavaScript style; JSON
  object keys are strings, so any other key is refused here.
- Strings holding a lone surrogate cannot be encoded as UTF-8 and are refused.
- Tuples are serialised as arrays. Any other type is refused.

Output is UTF-8 bytes; `canonical_text` is the same as a str for display.

Speed. `jcs` is pure Python and the validation walk builds a pointer for every node, which made
a 5,000-skill card cost seconds. For the values that need none of its care, the C encoder of the
standard `json` module (keys sorted, no spaces, no ASCII escaping) already writes the RFC 8785
bytes, so `canonicalize` tries it first and keeps its text only when RFC 8785 and it provably
agree, which is read off its output (in C: the JSON decoder and two regular expressions):

- read back with the decoder, the text holds no number with a fraction or an exponent and no
  integer of 16 digits or more (floats, and integers near or beyond 2^53, need the ECMAScript
  number format: `jcs` writes them), and equals the value (a key the encoder made from an int,
  float, bool or None, which JSON would refuse, or a tuple, reads back different);
- no lone surrogate (refused, with its pointer, by the validation walk);
- not both a character above U+FFFF and one in U+E000-U+FFFF (the only pair of characters whose
  order by code point, Python's, differs from their order by UTF-16 code unit, RFC 8785's).

The encoder itself refuses cycles, NaN, the infinities and values that are not JSON. Any doubt
sends the value down the original path: the validation walk (which names the member at fault)
and `jcs`. Tests check both paths against the upstream vectors and against each other.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import jcs

from explorer.core.pointer import escape, printable

__all__ = ["CanonicalError", "canonical_text", "canonicalize", "digest", "sha256_hex"]

_SURROGATE = re.compile("[\ud800-\udfff]")


class CanonicalError(ValueError):
    """A value that has no RFC 8785 canonical form (not JSON, or not representable)."""


def _where(path: str) -> str:
    return f"at {printable(path)}" if path else "at the root"


def _check(value: Any) -> None:
    """Refuse, with the member's pointer, anything JCS cannot or should not serialise.

    Iterative, and tracks the containers on the current path so a cycle is an error, not a hang.
    """
    stack: list[tuple[str, Any, bool]] = [("", value, False)]
    open_ids: set[int] = set()
    while stack:
        path, node, leaving = stack.pop()
        if leaving:
            open_ids.discard(id(node))
            continue
        if node is None or isinstance(node, bool):
            continue
        if isinstance(node, str):
            if _SURROGATE.search(node):
                raise CanonicalError(f"a string holds a lone surrogate {_where(path)}")
        elif isinstance(node, int):
            try:
                float(node)
            except OverflowError:
                raise CanonicalError(f"an integer is too large for a double {_where(path)}") from None
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise CanonicalError(f"{node!r} is not a JSON number {_where(path)}")
        elif isinstance(node, (dict, list, tuple)):
            if id(node) in open_ids:
                raise CanonicalError(f"a container contains itself {_where(path)}")
            open_ids.add(id(node))
            stack.append((path, node, True))
            if isinstance(node, dict):
                for key, child in node.items():
                    if not isinstance(key, str):
                        raise CanonicalError(
                            f"an object key is {type(key).__name__}, not a string, {_where(path)}"
                        )
                    if _SURROGATE.search(key):
                        raise CanonicalError(f"an object key holds a lone surrogate {_where(path)}")
                    stack.append((f"{path}/{escape(key)}", child, False))
            else:
                stack.extend((f"{path}/{i}", child, False) for i, child in enumerate(node))
        else:
            raise CanonicalError(f"a {type(node).__name__} is not a JSON value {_where(path)}")


_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")).encode
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_HIGH_BMP = re.compile("[\ue000-\uffff]")


# Integers of at most 15 digits are exact as doubles and written the same by both encoders;
# from 16 digits on the ECMAScript number format may differ, so `jcs` (the slow path) writes them.
_EXACT_INT = 10**15


_SCALARS = frozenset({str, bool, type(None)})
_CONTAINERS = (dict, list)


def _plain(value: Any) -> bool:
    """Whether the C encoder writes `value` as RFC 8785 does: only exact dicts with string keys,
    lists, strings, booleans, None and integers below 10**15 (no floats, tuples or subclasses,
    which the slow path handles). One pass, no strings built: this runs on every answer, and a
    list is judged by the types it holds (a million numbers cost a few C calls, not a million
    steps of this loop)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is str or node is None or kind is bool:
            continue
        if kind is int:
            if -_EXACT_INT < node < _EXACT_INT:
                continue
            return False
        if kind is dict:
            for key in node:
                if type(key) is not str:
                    return False
            extend(node.values())
        elif kind is list:
            if not _plain_items(node, extend):
                return False
        else:
            return False
    return True


def _plain_items(items: list[Any], extend: Any) -> bool:
    """A list's scalars judged at once; its containers handed to `extend` to be walked."""
    kinds = set(map(type, items))
    if kinds <= _SCALARS:
        return True
    if int in kinds:
        ints = items if kinds == {int} else [x for x in items if type(x) is int]
        if min(ints) <= -_EXACT_INT or max(ints) >= _EXACT_INT:
            return False
    rest = kinds - _SCALARS - {int}
    if not rest:
        return True
    if not rest <= set(_CONTAINERS):
        return False
    extend(x for x in items if type(x) in _CONTAINERS)
    return True


def _fast_text(value: Any) -> str | None:
    """The canonical text by the C encoder, or None when it might differ from RFC 8785."""
    try:
        text = _ENCODE(value)  # first: it refuses a cycle, which `_plain` would walk forever
    except (TypeError, ValueError, OverflowError, RecursionError):
        return None
    if not _plain(value):
        return None
    if not text.isascii() and (_SURROGATE.search(text) or (_ASTRAL.search(text) and _HIGH_BMP.search(text))):
        return None  # a lone surrogate, or keys whose UTF-16 order may differ from code-point order
    return text


def _checked_bytes(value: Any) -> bytes:
    _check(value)
    try:
        return jcs.canonicalize(value)
    except RecursionError:
        raise CanonicalError("the value is nested too deeply to canonicalize") from None
    except (TypeError, ValueError, OverflowError, AttributeError) as exc:
        raise CanonicalError(f"cannot canonicalize: {exc}") from None


# A list of numbers (floats, or integers the fast path leaves to `jcs`) is written by the C encoder
# and its numbers then rewritten where Python's float repr and ECMAScript's number format differ:
# an integral float's ".0", "-0", and any exponent form or integer of 16 digits or more (rare, and
# handed to `jcs`'s own number formatter one by one). Lists of numbers are what makes a transcript
# large (a 30-million-element array), and `jcs` alone costs microseconds per number.
_NUMBER_KINDS = frozenset({int, float, bool, type(None)})
_INTEGRAL_FLOAT = re.compile(r"\.0(?=[,\]])")
_NEGATIVE_ZERO = re.compile(r"(?<=[\[,])-0(?=[,\]])")
_ES_FORMAT = re.compile(r"-?[0-9][0-9.]*e[-+]?[0-9]+|(?<![0-9.])-?[0-9]{16,}(?![0-9.e])")


def _number_list_text(value: Any) -> str | None:
    """RFC 8785 text of a list holding only numbers, booleans and null, or None (another value,
    or a number with no canonical form: the checked path says which)."""
    if type(value) is not list or not value or not set(map(type, value)) <= _NUMBER_KINDS:
        return None
    from jcs.ntoj import convert2Es6Format

    try:
        text = _ENCODE(value)
        text = _NEGATIVE_ZERO.sub("0", _INTEGRAL_FLOAT.sub("", text))
        return _ES_FORMAT.sub(lambda m: convert2Es6Format(float(m.group())), text)
    except (ValueError, OverflowError):  # NaN, an infinity, an integer beyond a double
        return None


def canonicalize(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of a JSON value."""
    text = _fast_text(value)
    if text is None:
        text = _number_list_text(value)
    return _checked_bytes(value) if text is None else text.encode("utf-8")


def canonical_text(value: Any) -> str:
    """The canonical form as text (for display and for diffing two canonical forms)."""
    text = _fast_text(value)
    if text is None:
        text = _number_list_text(value)
    return _checked_bytes(value).decode("utf-8") if text is None else text


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of some bytes."""
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """The string `sha256:<64 lowercase hex>` over the JCS bytes of a value."""
    return "sha256:" + sha256_hex(canonicalize(value))
