"""Where each reference agent listens: the same port in every `demo` session, derived from its name.

The history keys an agent by its card URL, so an agent that moved to a new ephemeral port every
session showed up as a new agent each time (three "Stonework Books (Drifting)" in the history,
the fleet view and the load screen's recent agents). `demo` therefore gives each reference agent
a stable port: the SHA-256 of its name picks a slot in a fixed range, collisions between names
are settled by probing the next slot in the order of the names (every name of `VARIANTS` takes
part, so `demo --only drifting` puts drifting where the full fleet does). The range sits below
the kernel's ephemeral ports (32768 and up on Linux), where nothing else picks ports at random.

When a stable port is taken (another `demo` session, or another program), that agent listens on
a free port instead and the fleet says so (`Fleet.moved`). Tests and the `fleet` fixture use
free ports (a `Fleet` is built with `stable=False` unless asked), and
`INTERVIEW_EXPLORER_DEMO_PORTS=free` makes `demo` itself use free ports, so test runs side by
side never meet; `INTERVIEW_EXPLORER_DEMO_PORTS=BASE` moves the range to start at BASE.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

BASE = 29_000
SIZE = 1_000
ENV = "INTERVIEW_EXPLORER_DEMO_PORTS"


class PortsError(ValueError):
    """The environment names a range that cannot be used."""


def configured_base() -> int | None:
    """The start of the stable range (`ENV` may move it), or None when `ENV` asks for free ports."""
    value = os.environ.get(ENV, "").strip().lower()
    if not value:
        return BASE
    if value == "free":
        return None
    try:
        base = int(value)
    except ValueError:
        raise PortsError(f"{ENV} must be 'free' or the first port of the range, not {value!r}") from None
    if not 1024 <= base <= 65535 - SIZE:
        raise PortsError(f"{ENV}: the range must start between 1024 and {65535 - SIZE}, not {base}")
    return base


def slot(name: str) -> int:
    """A name's preferred slot in the range (0 to SIZE - 1)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big") % SIZE


def stable_ports(names: Iterable[str], base: int = BASE) -> dict[str, int]:
    """Every name's port in the range starting at `base`: its slot, or the next free slot when an
    earlier name (in sorted order) holds it. The same names always give the same ports."""
    taken: set[int] = set()
    out: dict[str, int] = {}
    for name in sorted(set(names)):
        position = slot(name)
        while position in taken:
            position = (position + 1) % SIZE
        taken.add(position)
        out[name] = base + position
    return out
