"""Strict JSON parsing for bytes that came from an agent.

Python's `json` module is lenient in ways that matter to a verifier: it keeps the last of two
duplicate keys (so a card could show one value to a signer and another to a reader), accepts
`NaN` and `Infinity`, turns `1e400` into `inf`, decodes a `\\ud800` escape into a lone surrogate
that later cannot be encoded, and recurses on nesting until it hits the interpreter's limit.
`parse` wraps it and rejects each of those with a `StrictJsonError` carrying a stable `reason`
(one of REASONS) and a message a person can act on. Nothing else ever escapes `parse`.

Depth is checked before parsing, by scanning the text with regular expressions rather than by
recursing, so a million-deep `[[[[...` is refused in milliseconds. Integers are kept exact
(Python ints), but JCS compares numbers as IEEE doubles, so `lossy_integers` lists every integer
beyond +-(2^53-1), where two different integers can canonicalize to the same bytes.
"""

from __future__ import annotations

import json
import math
import re
from array import array
from itertools import accumulate
from typing import Any

from explorer.core.pointer import escape, printable

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "REASONS",
    "StrictJsonError",
    "describe_type",
    "lossy_integers",
    "parse",
]

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_DEPTH = 128
MAX_SAFE_INTEGER = 2**53 - 1

REASONS: frozenset[str] = frozenset(
    {"not_utf8", "syntax", "duplicate_key", "non_finite", "overflow", "too_deep", "too_large"}
)

# A JSON string token, escapes included (DOTALL: a backslash escapes any character). The closing
# quote is optional and the quantifiers possessive, so a match that starts always succeeds
# without backtracking: an unterminated string runs to the end of the text, in linear time.
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
# Outside strings, keep only brackets, as signed bytes: an opening one +1, a closing one -1 (0xff).
_DEPTH_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
# Only text with a \uD800-\uDFFF escape can produce a lone surrogate, so only then is it searched.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# A number that could overflow a double: a three-digit positive exponent, or a hundred digits in
# a row (found as a run of marks in the text's digit mask: a plain substring search, in C).
_BIG_EXPONENT = re.compile(rb"[eE]\+?[0-9]{3}")
_DIGIT_MASK = bytes.maketrans(b"0123456789", b"1111111111")
_LONG_DIGIT_RUN = b"1" * 100


class StrictJsonError(Exception):
    """JSON that the explorer refuses to interpret; `reason` is machine-readable, str() is for people."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason

    def __str__(self) -> str:
        return self.message


class _Overflow(Exception):
    def __init__(self, literal: str) -> None:
        self.literal = literal


class _NonFinite(Exception):
    def __init__(self, literal: str) -> None:
        self.literal = literal


def describe_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages ("object", "array", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _parse_int(literal: str) -> int:
    # A double holds at most ~1.8e308 (309 digits); longer literals also trip Python's
    # int-from-str digit limit, so they are refused before converting.
    if len(literal.lstrip("-")) > 309:
        raise _Overflow(literal)
    value = int(literal)
    try:
        float(value)
    except OverflowError:
        raise _Overflow(literal) from None
    return value


def _parse_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _Overflow(literal)
    return value


def _parse_constant(literal: str) -> Any:
    raise _NonFinite(literal)


def _to_text(data: bytes | str, max_bytes: int) -> str:
    if isinstance(data, str):
        if len(data) > max_bytes:
            raise StrictJsonError(f"the body is larger than the {max_bytes}-byte limit", "too_large")
        try:
            size = len(data.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise StrictJsonError(
                f"the text holds a lone surrogate (U+{ord(data[exc.start]):04X}) at offset {exc.start}, "
                "which is not UTF-8",
                "not_utf8",
            ) from None
        if size > max_bytes:
            raise StrictJsonError(f"the body is larger than the {max_bytes}-byte limit", "too_large")
        text = data
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if len(raw) > max_bytes:
            raise StrictJsonError(f"the body is larger than the {max_bytes}-byte limit", "too_large")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJsonError(
                f"the body is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
                "not_utf8",
            ) from None
    else:
        raise StrictJsonError(f"expected bytes or text to parse, got {type(data).__name__}", "syntax")
    if text.startswith("\ufeff"):
        raise StrictJsonError(
            "the body starts with a byte order mark (U+FEFF); JSON must be UTF-8 without one", "not_utf8"
        )
    return text


def _outside_strings(text: str) -> str:
    """The text with every string token cut out (tokenised left to right as the parser does; an
    unterminated string swallows the rest, which the parser cannot get past either)."""
    return _STRING.sub("", text) if '"' in text else text


def _max_depth(outside: bytes) -> int:
    """The deepest bracket nesting of text outside string tokens, computed without recursion: the
    parser stops at the first error, so the depth it could reach is never more than the deepest
    running sum of brackets up to there."""
    if outside.count(b"[") + outside.count(b"{") == 0:
        return 0
    steps = array("b", outside.translate(_DEPTH_STEP, _NOT_BRACKET))
    if not steps:
        return 0
    # The running sum is the depth; summed in C, so millions of brackets take milliseconds.
    return max(0, max(accumulate(steps)))


def _lone_surrogate(value: Any) -> tuple[str, str] | None:
    """The pointer and text of the first string (key or value) holding a lone surrogate."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return path, node
        elif isinstance(node, dict):
            items = list(node.items())
            for key, child in reversed(items):
                child_path = f"{path}/{escape(key)}"
                if _SURROGATE.search(key):
                    return child_path, key
                stack.append((child_path, child))
        elif isinstance(node, list):
            for index in range(len(node) - 1, -1, -1):
                stack.append((f"{path}/{index}", node[index]))
    return None


def _where(path: str) -> str:
    return f"at {printable(path)}" if path else "at the root"


def _path_of(root: Any, target: Any) -> str:
    """Where the object `target` (by identity) sits in `root`, as a pointer."""
    stack: list[tuple[str, Any]] = [("", root)]
    while stack:
        path, node = stack.pop()
        if node is target:
            return path
        if isinstance(node, dict):
            stack.extend((f"{path}/{escape(k)}", v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{path}/{i}", v) for i, v in enumerate(node))
    return ""


def parse(
    data: bytes | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
    """Parse one JSON text strictly. Raises StrictJsonError (and nothing else) on refusal."""
    text = _to_text(data, max_bytes)
    if not text.strip(" \t\n\r"):
        raise StrictJsonError("the body is empty: there is no JSON value in it", "syntax")
    outside = _outside_strings(text).encode("utf-8", "surrogatepass")
    depth = _max_depth(outside)
    if depth > max_depth:
        raise StrictJsonError(
            f"nesting is {depth} levels deep, over the limit of {max_depth} levels", "too_deep"
        )

    duplicate: list[tuple[str, dict[str, Any]]] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)  # built in C; a repeated key makes it shorter than the pairs
        if len(obj) != len(pairs) and not duplicate:
            seen: set[str] = set()
            for key, _value in pairs:
                if key in seen:
                    duplicate.append((key, obj))
                    break
                seen.add(key)
        return obj

    # Only a number with a hundred digits in a row or a positive exponent of three digits can
    # overflow a double; text without one is parsed with the decoder's own (C) number parsing,
    # which is exact for every other literal, and a long array of numbers costs no Python call each.
    risky = _BIG_EXPONENT.search(outside) or _LONG_DIGIT_RUN in outside.translate(_DIGIT_MASK)
    # None is the decoder's own default: its C number parsing, with no Python call per number.
    parse_int = _parse_int if risky else None
    parse_float = _parse_float if risky else None
    try:
        value = json.loads(
            text,
            object_pairs_hook=pairs_hook,
            parse_constant=_parse_constant,
            parse_int=parse_int,
            parse_float=parse_float,
        )
    except json.JSONDecodeError as exc:
        raise StrictJsonError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", "syntax"
        ) from None
    except _Overflow as exc:
        raise StrictJsonError(
            f"the number {_short(exc.literal)} does not fit in a double", "overflow"
        ) from None
    except _NonFinite as exc:
        raise StrictJsonError(f"{exc.literal} is not a JSON number", "non_finite") from None
    except RecursionError:
        raise StrictJsonError(f"nesting is too deep to parse (limit {max_depth})", "too_deep") from None
    except (ValueError, TypeError, MemoryError, OverflowError) as exc:
        raise StrictJsonError(f"invalid JSON: {_short(str(exc), 120)}", "syntax") from None

    if duplicate:
        key, obj = duplicate[0]
        raise StrictJsonError(
            f"duplicate key {_short(key)!r} in an object {_where(_path_of(value, obj))}",
            "duplicate_key",
        )
    if _SURROGATE_ESCAPE.search(text):
        lone = _lone_surrogate(value)
        if lone is not None:
            path, _ = lone
            raise StrictJsonError(
                f"a \\u escape decodes to a lone surrogate, which is not UTF-8, {_where(path)}",
                "not_utf8",
            )
    return value


def lossy_integers(value: Any, base: str = "") -> list[str]:
    """Pointers (prefixed with `base`) of every integer outside +-(2^53-1), in document order.

    Booleans are not integers here. Iterative, so any depth is fine. Almost every value holds
    none, so a first pass only looks (no pointer strings built); the pointers are made only
    when there is one to name.
    """
    if not _has_lossy_integer(value):
        return []
    found: list[str] = []
    stack: list[tuple[str, Any]] = [(base, value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, int) and not isinstance(node, bool):
            if abs(node) > MAX_SAFE_INTEGER:
                found.append(path)
        elif isinstance(node, dict):
            stack.extend((f"{path}/{escape(str(k))}", v) for k, v in reversed(list(node.items())))
        elif isinstance(node, (list, tuple)):
            stack.extend((f"{path}/{i}", node[i]) for i in range(len(node) - 1, -1, -1))
    return found


def _has_lossy_integer(value: Any) -> bool:
    """Whether an integer outside +-(2^53-1) is anywhere in `value` (booleans are not)."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        if node is None or isinstance(node, str | bool | float):
            continue
        if isinstance(node, int):
            if abs(node) > MAX_SAFE_INTEGER:
                return True
        elif isinstance(node, dict):
            extend(node.values())
        elif isinstance(node, list | tuple):
            extend(node)
    return False
