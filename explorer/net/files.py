"""Local files the user names (a card, a key set, a runner key), read with a fetch's size cap.

A file is read like an agent's answer: never whole, at most the cap and one byte more, so the
caller can say "too large" instead of holding whatever is there. It lives apart from discovery
so that reading a key file (opening a recorded run, checking its signature) does not bring the
HTTP client in with it.
"""

from __future__ import annotations

from pathlib import Path


def read_capped(path: Path, max_bytes: int) -> tuple[bytes, bool]:
    """At most `max_bytes` of a local file, and whether it holds more. OSError (no such file,
    unreadable) is the caller's to word."""
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    return data[:max_bytes], len(data) > max_bytes
