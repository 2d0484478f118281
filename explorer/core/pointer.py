"""RFC 6901 JSON Pointers: parse, resolve, build, and enumerate.

An interview answer names the card member it claims to project with a pointer the agent wrote,
so parsing is strict (a malformed pointer is the agent's error, reported as `source_invalid`)
while resolving never raises: a well-formed pointer that names nothing is a different finding
(`pointer_unresolved`), so `resolve` answers with a `Resolution` instead of an exception.
A member whose value is `null` is found, with value `None`; only `found` tells the two apart.

Everything here is iterative, never recursive: the documents come from strangers and may be as
deep as the strict parser allows, and `members` must not depend on Python's recursion limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ABSENT",
    "PointerError",
    "Resolution",
    "escape",
    "join",
    "members",
    "parse",
    "printable",
    "resolve",
    "unescape",
]

# RFC 6901 section 4: an array index is "0" or digits without a leading zero (ASCII only;
# str.isdigit would also accept other scripts' digits).
_INDEX = re.compile(r"(?:0|[1-9][0-9]*)", re.ASCII)
# "~" must be followed by "0" or "1"; anything else (including a trailing "~") is malformed.
_BAD_TILDE = re.compile(r"~(?![01])")
# Characters that must not reach a message verbatim: controls, DEL, lone surrogates.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


class PointerError(Exception):
    """A pointer that is not valid RFC 6901 syntax (not a pointer that names nothing)."""


class _Absent:
    """The type of `ABSENT`: a value that no JSON document can contain."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Resolution:
    """The outcome of resolving a pointer: `found` and, when found, the `value` (else ABSENT)."""

    found: bool
    value: Any = ABSENT


_NOT_FOUND = Resolution(False, ABSENT)


def escape(token: str) -> str:
    """Escape one reference token: "~" becomes "~0", then "/" becomes "~1"."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """Undo `escape` for one token ("~1" before "~0", as RFC 6901 section 4 requires)."""
    return token.replace("~1", "/").replace("~0", "~")


def join(*tokens: str | int) -> str:
    """Build a pointer from raw (unescaped) tokens; ints are array indexes. No tokens -> ""."""
    parts = []
    for token in tokens:
        if isinstance(token, bool) or not isinstance(token, (str, int)):
            raise TypeError(f"pointer tokens are str or int, not {type(token).__name__}")
        parts.append("/" + escape(token if isinstance(token, str) else str(token)))
    return "".join(parts)


def printable(pointer: str, limit: int = 200) -> str:
    """A pointer made safe for a message: control characters and lone surrogates written as
    \\uXXXX, and anything past `limit` characters cut with "...". Not a pointer any more."""
    shown = pointer if len(pointer) <= limit else pointer[:limit]
    shown = _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", shown)
    return shown if len(pointer) <= limit else shown + "..."


def parse(pointer: str) -> tuple[str, ...]:
    """Split a pointer into unescaped tokens; "" is the whole document, () tokens."""
    if not isinstance(pointer, str):
        raise PointerError(f"a JSON Pointer is a string, not {type(pointer).__name__}")
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise PointerError(f"a JSON Pointer must be empty or start with '/': {pointer[:80]!r}")
    if "~" not in pointer:  # nothing escaped: the common case, and the hot one on a large card
        return tuple(pointer[1:].split("/"))
    bad = _BAD_TILDE.search(pointer)
    if bad is not None:
        raise PointerError(
            f"'~' must be followed by '0' or '1' (at offset {bad.start()}) in {pointer[:80]!r}"
        )
    return tuple(unescape(token) for token in pointer[1:].split("/"))


def _step(node: Any, token: str) -> Resolution:
    if type(node) is dict or isinstance(node, Mapping):
        if token in node:
            return Resolution(True, node[token])
        return _NOT_FOUND
    if type(node) is list or (isinstance(node, Sequence) and not isinstance(node, (str, bytes, bytearray))):
        # "-" names the element after the last one: it never resolves to a value.
        if not (token.isdigit() and token.isascii() and (token[0] != "0" or token == "0")):
            return _NOT_FOUND  # not an RFC 6901 index; "-" names the element after the last
        index = int(token)
        if index < len(node):
            return Resolution(True, node[index])
        return _NOT_FOUND
    return _NOT_FOUND  # descending into a scalar


def resolve(doc: Any, pointer: str) -> Resolution:
    """Resolve `pointer` in `doc`. Raises PointerError only when the pointer itself is malformed."""
    node = doc
    for token in parse(pointer):
        if type(node) is dict:  # the common step, without building a Resolution
            if token not in node:
                return _NOT_FOUND
            node = node[token]
            continue
        result = _step(node, token)
        if not result.found:
            return _NOT_FOUND
        node = result.value
    return Resolution(True, node)


def _children(node: Any) -> Iterator[tuple[str, Any]] | None:
    if isinstance(node, Mapping):
        return ((escape(str(key)), value) for key, value in node.items())
    if isinstance(node, (list, tuple)):
        return ((str(index), value) for index, value in enumerate(node))
    return None


def members(doc: Any) -> Iterator[tuple[str, Any]]:
    """Yield (pointer, value) for every member and element below the root, in document order.

    Pre-order: a container is yielded before its contents. Iterative, so depth is no limit.
    """
    root = _children(doc)
    if root is None:
        return
    stack: list[tuple[str, Iterator[tuple[str, Any]]]] = [("", root)]
    while stack:
        prefix, children = stack[-1]
        for token, value in children:
            pointer = f"{prefix}/{token}"
            yield pointer, value
            inner = _children(value)
            if inner is not None:
                stack.append((pointer, inner))
            break
        else:
            stack.pop()
