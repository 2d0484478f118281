"""Origins and public-address checks for URLs the explorer did not choose.

Two decisions hang on "where does this URL point": whether a user's secret headers may be sent
(only to the origin they were given for) and, in public-only mode, whether a host may be
contacted at all (the OpenClasp extension's transport rules: HTTPS on port 443, public addresses only, DNS
pinned). Both live here, apart from the HTTP client, so they can be tested without a socket.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

# Re-exported for the net layer's callers; the one definition is in the core.
from explorer.core.urls import origin as origin
from explorer.core.urls import site_of as site_of


def is_loopback_host(url: str) -> bool:
    """True for localhost and loopback literals: the only hosts plain HTTP is trusted on."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Blocked(Exception):
    """The URL may not be fetched in public-only mode; the message says why."""


@dataclass(frozen=True)
class PinnedTarget:
    """A checked public-only target: connect to `address`, present `hostname` in Host and SNI."""

    hostname: str
    address: str
    port: int


def check_public_url(url: str) -> tuple[str, int]:
    """The static part of the public-only rule: https, port 443. Returns (hostname, port)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Blocked(f"not a valid URL: {exc}") from None
    if parts.scheme.lower() != "https":
        raise Blocked(f"public-only mode allows https only, not {parts.scheme or 'no scheme'!r}")
    host = parts.hostname
    if not host:
        raise Blocked("the URL has no host")
    if (port or 443) != 443:
        raise Blocked(f"public-only mode allows port 443 only, not {port}")
    return host, 443


def check_address(address: str) -> None:
    """Refuse anything that is not a globally routable address (loopback, private, link-local...)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        raise Blocked(f"resolved to something that is not an IP address: {address!r}") from None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if not ip.is_global:
        raise Blocked(f"{address} is not a public address")


async def resolve_public(url: str) -> PinnedTarget:
    """Resolve the URL's host once and check every address; the first one is the pin.

    Every address must be public, not just the first: a name that mixes public and private
    records is a rebinding attempt, and which record a later lookup returns is not ours to pick.
    """
    host, port = check_public_url(url)
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Blocked(f"cannot resolve {host}: {exc}") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise Blocked(f"{host} resolved to no address")
    for address in addresses:
        check_address(address)
    return PinnedTarget(hostname=host, address=addresses[0], port=port)
