"""Finding a secret in bytes an agent sent back, however it re-encoded it, and replacing it.

The explorer records everything it sends and receives (`explorer.net.http.Fetcher`), and an agent
may echo what it was sent: a header value, a bearer token, an API key, an OAuth client secret,
an issued access token. An echo is rarely verbatim: JSON lets any character be written as
`\\uXXXX` (any hex case, surrogate pairs beyond the BMP), `/` as `\\/`, `"` and `\\` as `\\"` and
`\\\\`, and a document nested in a string escapes its escapes again; URLs percent-encode any byte
(any hex case, `%25` for `%` again and again) and forms write a space as `+`; the two nest either
way. So a secret is not looked for as bytes but in a canonical form of the data:

- a run of backslashes followed by `u` and four hex digits (a surrogate pair as one) is the
  character it names; followed by `b f n r t`, the control character; followed by any other
  ASCII character, that character; before anything else, nothing (backslashes are escapes,
  however deeply nested, so a backslash in a secret is dropped from its canonical form too);
- `%` (or `%25`, any number of times) and two hex digits is that byte;
- `+` is a space (so is a space);
- repeated until nothing changes (a percent-encoded JSON escape, a JSON-escaped percent sign).

The secret itself is put in the same canonical form, so every encoding of it has the same
canonical bytes as the secret; and every stage of decoding is searched, the raw bytes first, so
a character put in front of a secret written as is (to change how the data decodes) does not hide
it. One put right against an encoded secret, so that the two decode as one unit (`%` before
`000%C2%A0`), does: that is deliberate obfuscation, like hashing, and out of reach. Each
decoded byte remembers the span of original bytes it came from, so a match is replaced in the
original, whole: every encoded character of the secret becomes part of one `<redacted>`. The
canonical form is lossy on purpose (`a+b` and `a b` meet), so a few bytes that merely look like an
encoding of a secret are replaced too; a secret is never left because of how it was written.

Values of fewer than `MIN_LENGTH` characters cannot be told from ordinary text (a two-letter
secret occurs in every document), so the explorer refuses them as credentials, and one it is
handed anyway (an access token a token endpoint issued) is replaced only where it stands alone:
a whole JSON string, a whole form or query value, a whole header value.

What cannot be recognised is not: a secret an agent hashes, encrypts, base64-encodes, spells
backwards or splits is kept as the agent sent it (SECURITY.md says so).

Pure: bytes in, bytes out, so every recorded byte can pass through one `Scrubber`.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import re
from collections.abc import Iterable

MIN_LENGTH = 4
REDACTED = b"<redacted>"  # the same text as explorer.core.run.REDACTED (kept free of imports)
_MAX_PASSES = 6

# One unit of encoded text (see the module docstring): a run of backslashes and what follows it
# (a `\\u` escape, a surrogate pair, one ASCII character, or nothing before other bytes), a
# percent-escape (`%25` repeated is `%` again), or `+`.
_UNIT = re.compile(
    rb"\\+(?:u(?:([dD][89abAB][0-9a-fA-F]{2})(?:\\+u([dD][c-fC-F][0-9a-fA-F]{2}))?|([0-9a-fA-F]{4}))"
    rb"|([\x00-\x7f]))?"
    rb"|%(?:25)*([0-9a-fA-F]{2})"
    rb"|\+"
)
_SPECIAL = (b"\\", b"%", b"+")
_SHORT_ESCAPES = {ord("b"): b"\b", ord("f"): b"\f", ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t"}
# Around a short secret standing alone, in canonical form: a JSON string's quotes, a form or
# query value's `=` and `&`, or the edges of a header value.
_BEFORE = frozenset(b'"=')
_AFTER = frozenset(b'"&#;')
# Escape units one recorded body may hold before it is searched no further: past this, searching
# would cost more than the run (a hostile agent's 8 MiB of `\\"`), so the body is not kept.
MAX_UNITS = 250_000
TOO_DENSE = b"<redacted: a body too dense with escapes to search for secrets is not kept>"


def _decode(match: re.Match[bytes]) -> bytes:
    high, low, code, char, byte = match.groups()
    if char is not None:
        return _SHORT_ESCAPES.get(char[0]) or char
    if byte is not None:
        return bytes((int(byte, 16),))
    if code is not None:
        return chr(int(code, 16)).encode("utf-8", "surrogatepass")
    if high is not None:
        first = int(high, 16)
        if low is None:
            return chr(first).encode("utf-8", "surrogatepass")
        return chr(0x10000 + ((first - 0xD800) << 10) + (int(low, 16) - 0xDC00)).encode("utf-8")
    return b" " if match.group(0) == b"+" else b""  # backslashes before anything else: dropped


class _Pass:
    """One decoding pass: its output, and (made only when a match must be mapped back, which is
    rare) per output segment the input span it came from.

    Segment i covers output [out[i], out[i+1]) and input [start[i], end[i]); a literal segment
    (`same[i]`) maps byte for byte, a decoded one as a whole."""

    def __init__(self, data: bytes) -> None:
        self._input = data
        self.data = _UNIT.sub(_decode, data)
        self.changed = self.data != data
        self.out: list[int] = []
        self.start: list[int] = []
        self.end: list[int] = []
        self.same: list[bool] = []

    def _map(self) -> None:
        data, written = self._input, 0
        at = 0
        for match in _UNIT.finditer(data):
            if match.start() > at:
                written = self._segment(written, match.start() - at, at, match.start(), True)
            written = self._segment(written, len(_decode(match)), match.start(), match.end(), False)
            at = match.end()
        if at < len(data):
            self._segment(written, len(data) - at, at, len(data), True)

    def _segment(self, written: int, size: int, start: int, end: int, same: bool) -> int:
        if size:
            self.out.append(written)
            self.start.append(start)
            self.end.append(end)
            self.same.append(same)
        return written + size

    def back(self, begin: int, stop: int) -> tuple[int, int]:
        """The input span that output [begin, stop) came from, whole units included."""
        if not self.out:
            self._map()
        i = bisect.bisect_right(self.out, begin) - 1
        j = bisect.bisect_right(self.out, stop - 1) - 1
        first = self.start[i] + (begin - self.out[i]) if self.same[i] else self.start[i]
        last = self.start[j] + (stop - self.out[j]) if self.same[j] else self.end[j]
        return first, last


def canonical(data: bytes) -> tuple[bytes, list[_Pass]]:
    """The canonical form of `data` and the passes that made it (to map a match back)."""
    passes: list[_Pass] = []
    while len(passes) < _MAX_PASSES and any(mark in data for mark in _SPECIAL):
        step = _Pass(data)
        if not step.changed:
            break
        passes.append(step)
        data = step.data
    return data, passes


# One `name=value` pair of a header made of them (`Cookie: sid=S; lang=L`, `X-Session: token=T`):
# a token-character name, `=`, and the value up to the next `;`, `,` or `&`.
_PAIR = re.compile(r"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*([^;,&]*)")


def credential_parts(value: str) -> list[str]:
    """A header value and the credential after its auth scheme (`Bearer T` holds `T`), when it
    has one: what must be long enough to be kept out of the records (`too_short`; planning
    refuses a credential header whose parts are shorter)."""
    scheme, _, credential = value.strip().partition(" ")
    credential = credential.strip()
    return [value, credential] if credential and " " not in credential else [value]


def secret_parts(value: str) -> list[str]:
    """The secrets a header value holds: its `credential_parts`, for HTTP Basic the decoded
    `user:password` and the password, and the value of each `name=value` pair it is made of
    (`Cookie: sid=S; lang=L` holds `S` and `L`, a double-quoted value without its quotes): an
    agent that echoes `S` alone echoes a secret, not the way the header writes it. A pair value
    under `MIN_LENGTH` (`lang=en`) is sent, and not looked for in what comes back."""
    parts = credential_parts(value)
    if len(parts) == 2 and value.strip().partition(" ")[0].lower() == "basic":
        try:
            decoded = base64.b64decode(parts[1], validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            decoded = ""
        if decoded:
            parts.append(decoded)
            password = decoded.partition(":")[2]
            if password:
                parts.append(password)
    for pair in _pair_values(value):
        if pair not in parts:
            parts.append(pair)
    return parts


def _pair_values(value: str) -> list[str]:
    """The values of the `name=value` pairs a header value is made of (separated by `;`, `,` or
    `&`); none when a piece is not such a pair (`Bearer abc=`: a name holds no space)."""
    found = []
    for piece in re.split(r"[;,&]", value):
        if not piece.strip():
            continue
        pair = _PAIR.fullmatch(piece)
        if pair is None:
            continue
        inner = pair.group(2).strip()
        if len(inner) >= 2 and inner[0] == inner[-1] == '"':
            inner = inner[1:-1]
        if inner:
            found.append(inner)
    return found


_SECRET_NAMES = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "api-key",
        "apikey",
        "x-auth-token",
        "x-access-token",
        "x-csrf-token",
        "x-amz-security-token",
    }
)
# Any header whose name contains one of these is treated as a credential too.
_SECRET_NAME_PARTS = (
    "auth",
    "token",
    "secret",
    "password",
    "passwd",
    "api-key",
    "apikey",
    "session",
    "cookie",
)


@functools.lru_cache(maxsize=512)  # header names repeat on every exchange of every run
def is_secret_header(name: str) -> bool:
    """True when a header's name says it carries a credential (whoever set it, it is recorded as
    `<redacted>`; and a value this short under such a name is refused: `too_short`)."""
    lname = name.strip().lower()
    return lname in _SECRET_NAMES or any(part in lname for part in _SECRET_NAME_PARTS)


def too_short(value: str) -> bool:
    """True for a value the scrubber could only find where it stands alone."""
    return len(canonical(value.encode("utf-8", "surrogatepass"))[0]) < MIN_LENGTH


class Scrubber:
    """Secret values, and every recorded byte cleaned of them (see the module docstring)."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._anywhere: list[bytes] = []
        self._alone: list[bytes] = []
        self.add(values)

    def __bool__(self) -> bool:
        return bool(self._anywhere or self._alone)

    def add(self, values: Iterable[str]) -> None:
        """Never record these values (nor any encoding of them) from now on."""
        for value in values:
            if not value:
                continue
            raw = value.encode("utf-8", "surrogatepass")
            needle, passes = canonical(raw)
            if not needle:
                continue
            # Every stage of the value's own decoding is looked for at every stage of the data's:
            # a character an agent puts in front (`\` before a secret that starts with `n`, `%`
            # before one that starts with two hex digits) changes how the data decodes, but the
            # secret is still there, as written, one stage earlier.
            forms = [raw, *(step.data for step in passes)]
            if len(needle) >= MIN_LENGTH:
                self._anywhere.extend(f for f in dict.fromkeys(forms) if f not in self._anywhere)
            elif needle not in self._alone:
                self._alone.append(needle)

    def clean(self, data: bytes) -> bytes:
        """`data` with every occurrence of a secret, however encoded, replaced by `<redacted>`."""
        if not data or not self:
            return data
        if sum(data.count(mark) for mark in _SPECIAL) > MAX_UNITS:
            return TOO_DENSE
        _, passes = canonical(data)
        stages = [data, *(step.data for step in passes)]
        spans: list[tuple[int, int]] = []
        for depth, text in enumerate(stages):
            found = [span for needle in self._anywhere for span in _find(text, needle)]
            if depth == len(stages) - 1:
                found += [span for needle in self._alone for span in _find_alone(text, needle)]
            for step in reversed(passes[:depth]):
                found = [step.back(begin, stop) for begin, stop in found]
            spans += found
        return _replace(data, spans) if spans else data

    def clean_text(self, text: str) -> str:
        if not text or not self:
            return text
        cleaned = self.clean(text.encode("utf-8", "surrogateescape"))
        return cleaned.decode("utf-8", "surrogateescape")


def _find(text: bytes, needle: bytes) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    at = text.find(needle)
    while at >= 0:
        found.append((at, at + len(needle)))
        at = text.find(needle, at + 1)
    return found


def _find_alone(text: bytes, needle: bytes) -> list[tuple[int, int]]:
    return [
        (begin, stop)
        for begin, stop in _find(text, needle)
        if (begin == 0 or text[begin - 1] in _BEFORE) and (stop == len(text) or text[stop] in _AFTER)
    ]


def _replace(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    """`data` with each span (merged where they overlap) replaced by one `<redacted>`."""
    out = bytearray()
    at = 0
    for begin, stop in _merged(spans):
        out += data[at:begin] + REDACTED
        at = stop
    out += data[at:]
    return bytes(out)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for begin, stop in sorted(spans):
        if merged and begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([begin, stop])
    return [(a, b) for a, b in merged]
