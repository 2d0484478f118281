"""A pause of Python's cyclic garbage collector while large acyclic trees are built and read.

Verifying a large agent builds a few hundred thousand small objects (parsed JSON, findings,
report entries). None of them forms a reference cycle, so reference counting frees all of them,
but each allocation still counts towards the cyclic collector's thresholds, and its full passes
rescan every live object: on a 5,000-skill card they took about a third of the verification
time. `paused()` turns the collector off for the block and back on after it (if it was on); it
nests and is shared by threads (a counter), so the collector comes back on once the last block
ends. Nothing else changes: cycles made inside the block are collected after it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (reference counting still frees memory)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
