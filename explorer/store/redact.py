"""Second line of defence against secrets reaching disk or an exported transcript.

The fetcher already records every header the user marked secret as `<redacted>`. The store and
the exporters do not rely on that alone: anything that leaves memory (a history row, a JSON,
Markdown or HTML transcript) passes its headers through `redact_headers` again, which replaces
the value of every header whose name looks like a credential. Matching is by name, not value
(`explorer.core.scrub.is_secret_header`, the same rule that decides which short header values
are refused), so it is cheap, predictable, and never guesses at what a token looks like.
"""

from __future__ import annotations

from collections.abc import Iterable

from explorer.core.run import REDACTED
from explorer.core.scrub import is_secret_header

Headers = tuple[tuple[str, str], ...]


def redact_headers(headers: Iterable[tuple[str, str]]) -> Headers:
    """The same headers in the same order, with every credential's value replaced."""
    return tuple((name, REDACTED if is_secret_header(name) else value) for name, value in headers)
