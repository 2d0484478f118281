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
    """True for `localhost` and loopback literals: the only hosts a secret goes to over plain HTTP.

    Not `*.localhost`: RFC 6761 asks resolvers to keep those on the machine, but a resolver may
    send them upstream, and a plain-HTTP token URL there would carry a client secret in clear."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    return host == "localhost" or is_loopback_address(url)


def is_loopback_address(url: str) -> bool:
    """True when the URL's host is a loopback address written as one (127.0.0.0/8, ::1, or
    ::ffff:127.x): what a trust root (`--keys`, `--trust-runner`) may be fetched from over
    plain HTTP. By address, not by name: no resolver is asked to say where a name points."""
    try:
        host = (urlsplit(url).hostname or "").lower()
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


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


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052: the IPv4 address in the last 32 bits
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: for local use only
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # RFC 4291, deprecated: ::a.b.c.d
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765: ::ffff:0:a.b.c.d
_SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")  # RFC 3879, deprecated


def _embedded(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses an IPv6 address carries (mapped, translated, NAT64, 6to4, Teredo), or
    None for a form that is never public (IPv4-compatible, local-use NAT64, site-local).

    Python's `is_global` judges these by the IPv6 range alone, so `64:ff9b::7f00:1` (NAT64 for
    127.0.0.1) or `2002:a00:1::` (6to4 for 10.0.0.1) would pass as public while a NAT64 or 6to4
    gateway delivers them to a loopback or private IPv4 address."""
    if ip in _IPV4_COMPATIBLE or ip in _NAT64_LOCAL or ip in _SITE_LOCAL:
        return None
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip in _IPV4_TRANSLATED or ip in _NAT64:
        return [low]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    return []


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Globally routable unicast. Python's `is_global` calls every multicast group global (even
    link-local 224.0.0.1 and ff02::1, and the organisation-local 239/8), but a group is no host
    to fetch a card from, and the local scopes never leave the network they are on."""
    return ip.is_global and not ip.is_multicast


def check_address(address: str) -> None:
    """Refuse anything that is not a globally routable unicast address (loopback, private,
    link-local, multicast...), also when an IPv6 form carries such an IPv4 address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        raise Blocked(f"resolved to something that is not an IP address: {address!r}") from None
    if isinstance(ip, ipaddress.IPv6Address) and not (ip.is_loopback or ip.is_unspecified or ip.is_multicast):
        inner = _embedded(ip)
        if inner is None:
            raise Blocked(f"{address} is not a public address (a deprecated or local-use IPv6 form)")
        for v4 in inner:
            if not _public(v4):
                raise Blocked(f"{address} is not a public address (it carries {v4})")
        if ip.ipv4_mapped is not None:
            return
    if not _public(ip):
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
