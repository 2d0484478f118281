"""Whether a typed target can name an agent at all, and what the person probably meant if not.

A target is a base URL, a card URL, a card file, an OpenClasp reference, or the name of an agent
in the config file. Anything else used to reach discovery and come back as `unreachable` (exit
3), with the same cause told twice: a typo (`verify stedy`) read as a verdict about an agent.
`target_problem` catches that before anything is fetched, so the command can make it a usage
error (exit 2) that lists what a target can be and, when one is close, suggests it: a configured
agent, a reference agent of `interview-explorer demo` (with how to reach one), or the URL a
`host:port` was probably meant to be. `command_suggestion` does the same for a mistyped command.

Only the standard library: the check runs before `--help`-speed commands import anything heavy.
A file's existence is the only thing looked at outside the arguments.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

WHAT_A_TARGET_IS = (
    "a target is a base URL (https://agent.example), a card URL (.../agent-card.json), a card file, "
    "an OpenClasp reference (.../a/SLUG, or a slug or id with --openclasp BASE_URL), or the name of "
    "an agent in the config file"
)
_HOST = re.compile(r"^[A-Za-z0-9.-]+\.[A-Za-z]{2,}(:\d+)?(/.*)?$")  # discovery prefixes https://
_HOST_PORT = re.compile(r"^(localhost|\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f:]+\])(:\d+)?(/.*)?$")
_OPENCLASP_PATH = re.compile(r"/(a|agents)/[^/]+")


def _is_url(target: str) -> bool:
    parts = urlsplit(target)
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def _close(word: str, names: Iterable[str]) -> list[str]:
    return difflib.get_close_matches(word, list(names), n=3, cutoff=0.7)


def target_problem(
    target: str,
    *,
    agents: Iterable[str] = (),
    demo: Iterable[str] = (),
    openclasp_base: str | None = None,
) -> str | None:
    """None when `target` can name an agent; otherwise one message saying why not, what a target
    can be, and what the person may have meant. `agents` are the configured agents' names (a
    name among them is fine), `demo` the reference agents' names (only suggested: they are
    reached by their URLs)."""
    text = target.strip()
    agents = list(agents)
    if not text:
        return f"the target is empty; {WHAT_A_TARGET_IS}"
    if _is_url(text) or text in agents or _HOST.match(text):
        return None
    if openclasp_base and "/" not in text:
        return None  # a bare slug or id, resolved at the OpenClasp base
    path = Path(text).expanduser()
    if path.is_file():
        return None
    shown = text if len(text) <= 80 else text[:79] + "…"
    if _HOST_PORT.match(text):
        return f"{shown!r} is not a URL; did you mean http://{text} ?"
    if path.exists():
        return f"{shown!r} is not a card file (it is a directory); {WHAT_A_TARGET_IS}"
    if "/" in text or text.endswith(".json"):
        return f"no such card file {shown!r}; {WHAT_A_TARGET_IS}"
    hints = []
    if text in set(demo):
        hints.append(
            f"{text} is a reference agent: `interview-explorer demo --serve --only {text}` prints its "
            "card URL to verify"
        )
    else:
        hints += [f"did you mean the configured agent {name}?" for name in _close(text, agents)]
        hints += [f"did you mean the reference agent {name} (see `interview-explorer demo --list`)?"
                  for name in _close(text, demo)]
    if not hints and not openclasp_base and _OPENCLASP_PATH.search(text) is None and "." not in text:
        hints.append("for an OpenClasp slug or id, give --openclasp BASE_URL")
    message = f"{shown!r} is not a URL, a card file or a configured agent; {WHAT_A_TARGET_IS}"
    return message + "".join(f"; {hint}" for hint in hints)


def command_suggestion(word: str, commands: Iterable[str]) -> str | None:
    """The command `word` was probably meant to be (`verfiy` -> `verify`), or None."""
    close = _close(word, commands)
    return close[0] if close else None
