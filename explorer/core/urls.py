"""URL origins as pure string functions.

"Is this the same origin" decides where secret headers may go (explorer/net) and whether an
OpenClasp card read from one URL is the one the platform names (explorer/core/openclasp), so it
lives in the core, where both layers can call the one definition: the default port is made
explicit, so `https://x` and `https://x:443` are the same origin.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str | None:
    """`scheme://host:port` with the default port made explicit, or None for a non-HTTP URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port or _DEFAULT_PORTS[scheme]}"


def site_of(url: str) -> str:
    """`scheme://netloc` exactly as the URL writes them, the base for a sibling path on that host."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def same_origin(a: str, b: str) -> bool:
    oa = origin(a)
    return oa is not None and oa == origin(b)
