"""The environment a browser session's process starts with: named variables only, never a copy.

textual-serve hands every session the server's whole environment, so a cloud key or CI token
exported in the shell that started `serve` would sit in a process a browser drives. Here a
session gets only:

- the variables the explorer's own settings name by reference (`env:VAR` anywhere in the config
  file, global or per agent, or in the options `serve` was given), which its interviews read;
- what the platform needs to start Python and find the user's folders (`PYTHON_NEEDS`);
- the locale (`LANG`, `LANGUAGE`, every `LC_*`, `TZ`);
- where the explorer's requests go (`NETWORK`: the proxy and CA-bundle variables the explorer
  in a terminal would honour, so an agent reachable from the terminal is reachable from the
  browser), and the explorer's home (`INTERVIEW_EXPLORER_HOME`);
- anything the caller adds (`extra`: the reference agents' demo credentials, the Textual driver
  settings), which wins over the server's value.

Everything else, whatever its name, stays with the server. No variable Python itself reads
(`PYTHONPATH`, `PYTHONHOME`, `PYTHONSTARTUP`, ..., every `PYTHON*` name) reaches a session, even
when a setting references it: a session runs the explorer's own code only, and its interpreter is
started isolated besides (`explorer.web.session_process.session_command`), so that neither its
environment nor the folder `serve` was started in can add to its import path. Pure: the server's
environment comes in as a mapping.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from explorer.home import HOME_ENV

PYTHON_NEEDS = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "TMPDIR",
        "TEMP",
        "TMP",
        "VIRTUAL_ENV",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "XDG_RUNTIME_DIR",
        # Windows: Python itself needs SYSTEMROOT; platformdirs reads the profile folders.
        "SYSTEMROOT",
        "WINDIR",
        "APPDATA",
        "LOCALAPPDATA",
        "USERPROFILE",
    }
)
LOCALE = frozenset({"LANG", "LANGUAGE", "TZ"})
LOCALE_PREFIX = "LC_"
NETWORK = frozenset(
    {
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    }
)
EXPLORER = frozenset({HOME_ENV})
INTERPRETER_PREFIX = "PYTHON"  # what CPython reads from its environment: never passed


def session_environment(
    server: Mapping[str, str], referenced: Iterable[str], extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of one session's process: the server's variables this module lets through,
    the `referenced` ones, then `extra`; never a variable the interpreter reads."""
    wanted = set(referenced)
    out = {name: value for name, value in server.items() if name in wanted or _needed(name)}
    out.update(extra or {})
    return {name: value for name, value in out.items() if not name.upper().startswith(INTERPRETER_PREFIX)}


def _needed(name: str) -> bool:
    return (
        name in PYTHON_NEEDS
        or name in LOCALE
        or name.startswith(LOCALE_PREFIX)
        or name in NETWORK
        or name in EXPLORER
    )


def referenced_variables(*values: Any) -> set[str]:
    """Every variable an `env:VAR` reference names anywhere inside `values` (strings, mappings,
    sequences, nested): the config's settings, its agents' settings, the options given."""
    found: set[str] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            kind, sep, rest = value.partition(":")
            if sep and kind == "env" and rest:
                found.add(rest)
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(value)
    return found
