"""When the TUI lets Python's cyclic garbage collector run, so a large run never stalls the screen.

A full collection walks every live container object, holding the interpreter lock while it does:
with the `huge` reference agent's run on screen (a few hundred thousand parsed-JSON objects and
the widgets drawing them) each one froze the app's loop for 100-300 ms, several times between
pressing enter and seeing every tab (bench/tui_responsiveness.py). Reference counting frees the
run's trees without the collector (they form no cycles), so the collector is kept out of the way:

- `settle()` before the first frame: everything imported and built so far lives as long as the
  process, so it is frozen (`gc.freeze`, out of every collection's sight). The launcher and the
  benchmark both call it, so the benchmark measures the app a user runs.
- `pause()` when a live interview starts, `resume(hold=True)` once its screen has been drawn: the
  collector is off while the run is fetched, verified and put on screen, then what is alive then
  (the run and its screen) is frozen before the collector comes back, so no later collection
  walks it either. Cycles that became garbage meanwhile are frozen with it, so `release()` (when
  that screen goes away) unfreezes everything: the next full collection frees them. What is
  frozen is thus bounded by one screen's lifetime and never accumulates across interviews.
  `resume()` without `hold` (cancelled, failed) just turns the collector back on.

All of it runs on the app's thread; the interview's worker thread only inherits the setting
(`gc.disable` is process-wide, as `explorer.core.nogc` relies on).
"""

from __future__ import annotations

import gc

__all__ = ["held", "pause", "paused", "release", "resume", "settle"]

_paused = False
_held = False


def settle() -> None:
    """Freeze what exists now (modules, the app before its first frame): it lives for good."""
    gc.freeze()


def pause() -> None:
    """Turn the collector off for a live interview (no-op when already paused or disabled)."""
    global _paused
    if not _paused and gc.isenabled():
        gc.disable()
        _paused = True


def resume(*, hold: bool = False) -> None:
    """Turn the collector back on after `pause()`; with `hold`, freeze what is alive first."""
    global _paused, _held
    if not _paused:
        return
    if hold:
        gc.freeze()
        _held = True
    _paused = False
    gc.enable()


def release() -> None:
    """Let the collector see everything again (the held screen has gone): frozen garbage is
    freed by the next full collection, so nothing accumulates across interviews."""
    global _held
    if _held:
        _held = False
        gc.unfreeze()


def paused() -> bool:
    """True while a live interview has the collector off."""
    return _paused


def held() -> bool:
    """True while a live run's screen is frozen out of the collector's sight."""
    return _held
