"""Per-origin bounds for a sweep: however many interviews are in flight, one agent's origin never
sees more than a few requests at once.

A sweep runs `--jobs N` interviews concurrently, and a list may hold many agents of one host (a
platform serving agents under paths of one origin, or the same agent listed twice). Each
interview already sends up to eight requests at once (a round of questions plus the probes), so
the bound is on requests, per origin (`scheme://host:port`, what a server sees as one site):
`HostGate(limit)` hands out at most `limit` slots per origin and queues the rest, first come
first served. Waiting for a slot is not part of a request's timeout, which bounds the agent's
answer, not our own queue.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from explorer.net.origins import origin

DEFAULT_PER_ORIGIN = 8


class HostGate:
    """At most `limit` requests in flight per origin (one event loop)."""

    def __init__(self, limit: int = DEFAULT_PER_ORIGIN) -> None:
        if limit < 1:
            raise ValueError("a per-origin bound must be at least 1")
        self.limit = limit
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._users: dict[str, int] = {}

    @asynccontextmanager
    async def hold(self, url: str) -> AsyncIterator[None]:
        key = origin(url) or url
        semaphore = self._slots.get(key)
        if semaphore is None:
            semaphore = self._slots[key] = asyncio.Semaphore(self.limit)
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with semaphore:
                yield
        finally:
            # Forget an origin nobody waits for, so a sweep of thousands keeps no table of them.
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key]
                del self._slots[key]
