"""The only code that talks HTTP: fetching, discovery, keys, the wire form of calls.

Plain `http://` goes over h11 on asyncio streams (`plain.py`); https, proxies and unusual URLs
over httpx, imported only then.

httpx's package `__init__` imports its own command-line client (`httpx._main`) whenever click,
rich and pygments happen to be installed, and they always are here because textual needs rich.
That would put rich (the TUI's rendering library) and about a hundred milliseconds of imports on
every headless `verify` of an https agent. The explorer never uses httpx's CLI, so before httpx
is first imported its CLI module is marked unavailable; httpx guards that import with `except
ImportError` and falls back to a stub by design. Nothing else about httpx changes.
"""

import sys

if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
