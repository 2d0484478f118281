"""Second line of defence against secrets reaching disk or an exported transcript.

The fetcher already records every header the user marked secret as `<redacted>`. The store and
the exporters do not rely on that alone: anything that leaves memory (a history row, a JSON,
Markdown or HTML transcript) passes its headers through `redact_headers` again, which replaces
the value of every header whose name looks like a credential. Matching is by name, not value,
so it is cheap, predictable, and never guesses at what a token looks like.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from explorer.core.run import REDACTED

Headers = tuple[tuple[str, str], ...]

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
_SECRET_PARTS = ("auth", "token", "secret", "password", "passwd", "api-key", "apikey", "session", "cookie")


@functools.lru_cache(maxsize=512)  # header names repeat on every exchange of every run
def is_secret_header(name: str) -> bool:
    """True when a header's name says it carries a credential."""
    lname = name.strip().lower()
    return lname in _SECRET_NAMES or any(part in lname for part in _SECRET_PARTS)


def redact_headers(headers: Iterable[tuple[str, str]]) -> Headers:
    """The same headers in the same order, with every credential's value replaced."""
    return tuple((name, REDACTED if is_secret_header(name) else value) for name, value in headers)
