"""Per-client rate limiting of interview calls (the interview extension, section 4 rule 2, section 10).

A token bucket per client address: `calls` tokens, refilled continuously over `per_seconds`.
The default (600 calls a minute, bursts of 600) is generous: a full interview is 13 calls, so a
verifier, a test suite and a watching TUI all fit, while a loop hammering one agent gets 429 with
a `Retry-After` it can honour. Tests pass a tiny limit to see the 429 on the wire.

The table of clients is bounded: when it grows past `max_clients`, buckets that have refilled
completely (idle clients) are dropped, and if that is not enough the oldest are, so a flood of
source addresses cannot grow memory without bound. The clock is injectable for tests.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RateLimit:
    """The policy: `calls` per `per_seconds`, per client."""

    calls: int = 600
    per_seconds: float = 60.0
    max_clients: int = 4096

    def __post_init__(self) -> None:
        if self.calls < 1 or self.per_seconds <= 0:
            raise ValueError("a rate limit needs calls >= 1 and per_seconds > 0")


class RateLimiter:
    """Token buckets keyed by client; `check` spends one token or says how long to wait."""

    def __init__(self, limit: RateLimit | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit or RateLimit()
        self._clock = clock
        self._rate = self.limit.calls / self.limit.per_seconds
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, updated_at)

    def check(self, client: str) -> int | None:
        """None when the call may proceed (a token is spent), else whole seconds to wait (>= 1)."""
        now = self._clock()
        tokens, updated = self._buckets.get(client, (float(self.limit.calls), now))
        tokens = min(float(self.limit.calls), tokens + (now - updated) * self._rate)
        if tokens >= 1.0:
            self._buckets[client] = (tokens - 1.0, now)
            self._prune(now)
            return None
        self._buckets[client] = (tokens, now)
        return max(1, math.ceil((1.0 - tokens) / self._rate))

    def _prune(self, now: float) -> None:
        if len(self._buckets) <= self.limit.max_clients:
            return
        full = self.limit.per_seconds
        for client, (_tokens, updated) in list(self._buckets.items()):
            if now - updated >= full:
                del self._buckets[client]
        while len(self._buckets) > self.limit.max_clients:
            del self._buckets[next(iter(self._buckets))]
