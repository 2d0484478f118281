"""Per-host bounds for a sweep: however many interviews are in flight, one host never sees more
than a few requests at once.

A sweep runs `--jobs N` interviews concurrently, and a list may hold many agents of one host (a
platform serving agents under paths of one origin, or the same agent listed twice). Each
interview already sends up to eight requests at once (a round of questions plus the probes), so
the bound is on requests: `HostGate(limit)` hands out at most `limit` slots per host and queues
the rest, first come first served. Waiting for a slot is not part of a request's timeout, which
bounds the agent's answer, not our own queue.

A host is what a connection reaches, an IP address and a port, not how a URL spells it:
`127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`, `localhost` and `[::ffff:127.0.0.1]` all
reach 127.0.0.1, and a list of spellings must not multiply the bound. So each URL's host is
resolved as the connection resolves it (`getaddrinfo`, which reads those IPv4 shorthands as the
C library does), IPv4-mapped IPv6 addresses count as their IPv4 address, and the bound is per
(address, port). A name with several addresses holds a slot on every one of them: which one a
connection ends up on is the client's choice, and `localhost` (127.0.0.1 and ::1) must share
its bound with `127.0.0.1`. Slots are always taken in one order, so two requests never each
hold what the other waits for.

Finding the host costs a request one dictionary look-up: what each URL authority
(`scheme://netloc`) reaches is worked out once per gate (one sweep) and kept. An address written
in its usual form (every member of the benchmark's crowd) is read without asking the resolver,
and a name is resolved by one lookup that concurrent requests share. A name that cannot be
resolved in the request's timeout is bounded by its text; the request then fails on its own, or
goes through a proxy that can resolve it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

DEFAULT_PER_HOST = 8
_DEFAULT_PORTS = {"http": 80, "https": 443}

Host = tuple[str, int]
"""An address as `ipaddress` writes it (IPv4-mapped IPv6 as IPv4), and a port."""

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""The addresses a name resolves to for a TCP connection to `port`."""


async def resolve_addresses(name: str, port: int) -> list[str]:
    """The system resolver's addresses for `name`, as a connection to it would try them."""
    infos = await asyncio.get_running_loop().getaddrinfo(name, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _address(text: str) -> str | None:
    """`text` as one address in its usual form, or None when it is not an address."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


class HostGate:
    """At most `limit` requests in flight per host, an address and port (one event loop)."""

    def __init__(self, limit: int = DEFAULT_PER_HOST, *, resolver: Resolver = resolve_addresses) -> None:
        if limit < 1:
            raise ValueError("a per-host bound must be at least 1")
        self.limit = limit
        self._resolver = resolver
        self._slots: dict[Host, asyncio.Semaphore] = {}
        self._users: dict[Host, int] = {}
        # What each URL authority (`scheme://netloc`) reaches, and the lookups of names in flight.
        self._authorities: dict[str, tuple[Host, ...]] = {}
        self._lookups: dict[Host, asyncio.Future[tuple[Host, ...]]] = {}

    async def hosts_of(self, url: str, *, timeout: float = 10.0) -> tuple[Host, ...]:
        """The hosts a request to `url` may reach, in the order their slots are taken."""
        cut = url.find("/", url.find("//") + 2)
        authority = url if cut < 0 else url[:cut]
        known = self._authorities.get(authority)
        if known is None:
            known = self._authorities[authority] = await self._hosts_of(url, timeout)
        return known

    async def _hosts_of(self, url: str, timeout: float) -> tuple[Host, ...]:
        try:
            parts = urlsplit(url)
            name, port = parts.hostname, parts.port
        except ValueError:
            return ((url, 0),)  # the request fails on its own; its text is its bound
        if not name:
            return ((url, 0),)
        if port is None:
            port = _DEFAULT_PORTS.get(parts.scheme.lower(), 0)
        address = _address(name)
        if address is not None:
            return ((address, port),)
        lookup = self._lookups.get((name, port))
        if lookup is None:
            lookup = self._lookups[(name, port)] = asyncio.ensure_future(self._resolve(name, port, timeout))
        # Shielded: a request cancelled while it waits must not cancel the lookup others share.
        return await asyncio.shield(lookup)

    async def _resolve(self, name: str, port: int, timeout: float) -> tuple[Host, ...]:
        try:
            async with asyncio.timeout(timeout):
                found = await self._resolver(name, port)
        except (OSError, ValueError, TimeoutError):  # ValueError: a name no resolver takes (a NUL)
            found = []
        hosts = {(address, port) for text in found if (address := _address(text)) is not None}
        return tuple(sorted(hosts)) or ((name, port),)

    @asynccontextmanager
    async def hold(self, url: str, *, timeout: float = 10.0) -> AsyncIterator[None]:
        """Hold a slot on every host `url` may reach; `timeout` bounds resolving its name."""
        hosts = await self.hosts_of(url, timeout=timeout)
        semaphores = []
        for host in hosts:
            semaphore = self._slots.get(host)
            if semaphore is None:
                semaphore = self._slots[host] = asyncio.Semaphore(self.limit)
            self._users[host] = self._users.get(host, 0) + 1
            semaphores.append(semaphore)
        held = 0
        try:
            for semaphore in semaphores:
                await semaphore.acquire()
                held += 1
            yield
        finally:
            for semaphore in semaphores[:held]:
                semaphore.release()
            # Forget a host nobody waits for, so a sweep of thousands keeps no table of them.
            for host in hosts:
                self._users[host] -= 1
                if not self._users[host]:
                    del self._users[host]
                    del self._slots[host]
