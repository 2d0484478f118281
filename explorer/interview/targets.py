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
# `scheme:` then slashes: a URL of another scheme or a mistyped one. Two letters at least, so a
# Windows drive (`C:/cards/x.json`) is a path.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(/*)(.*)$", re.DOTALL)
_COLONLESS = re.compile(r"^(https?)//+(.+)$", re.IGNORECASE | re.DOTALL)


def _is_url(target: str) -> bool:
    try:
        parts = urlsplit(target)
    except ValueError:  # "http://[::1": an http(s) URL all the same, refused by `url_problem`
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def url_problem(target: str) -> str | None:
    """Why an http(s) target cannot be used (an unclosed IPv6 bracket, a port outside 0-65535,
    a password in it), or None; also for every target of a sweep. A target is recorded (history,
    transcripts, JUnit, the report), so one with a password is refused without repeating it."""
    text = target.strip()
    if text.partition(":")[0].lower() not in ("http", "https"):
        return None
    shown = repr(text if len(text) <= 80 else text[:79] + "…")
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises for a port outside 0-65535
    except ValueError as exc:
        return f"{shown} is not a valid URL ({exc})"
    if parts.password is not None:
        return (
            "a target URL carries a password (user:password@), which would be recorded with it; "
            "pass credentials with --header, --bearer or --api-key"
        )
    return None


def _close(word: str, names: Iterable[str]) -> list[str]:
    import difflib  # only for a word that named nothing

    return difflib.get_close_matches(word, list(names), n=3, cutoff=0.7)


def _scheme_problem(text: str, shown: str) -> str | None:
    """What is wrong with a target that starts like a URL but is not an http(s) one (`htp://host`,
    `http:/host`, `ftp://host`), with the URL probably meant; None for anything else."""
    colonless = _COLONLESS.match(text)
    if colonless is not None:  # `http//host`: the colon left out
        return f"{shown!r} is not a URL; did you mean {colonless.group(1).lower()}://{colonless.group(2)} ?"
    match = _SCHEME.match(text)
    if match is None:
        return None
    scheme, slashes, rest = match.group(1).lower(), match.group(2), match.group(3)
    if not rest or (not slashes and scheme not in ("http", "https")):
        return None  # `host:port` and `name:` are not URLs of a scheme
    if scheme == "file":
        return f"{shown!r} is a file URL; give a card file by its path: /{rest.lstrip('/')}"
    meant = scheme if scheme in ("http", "https") else next(iter(_close(scheme, ("http", "https"))), None)
    if meant is None:
        return f"{shown!r} is not an http(s) URL; a target URL starts with http:// or https://"
    return f"{shown!r} is not an http(s) URL; did you mean {meant}://{rest} ?"


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
    bad = url_problem(text)
    if bad is not None:
        return bad
    if _is_url(text) or text in agents:
        return None
    path = Path(text).expanduser()
    if text.lower().endswith(".json") and ":/" not in text and not path.exists():
        shown = text if len(text) <= 80 else text[:79] + "…"  # a card file that is not there, never a host
        return f"no such card file {shown!r}; {WHAT_A_TARGET_IS}"
    if _HOST.match(text):
        return None
    if openclasp_base and "/" not in text:
        return None  # a bare slug or id, resolved at the OpenClasp base
    if path.is_file():
        return None
    shown = text if len(text) <= 80 else text[:79] + "…"
    if _HOST_PORT.match(text):
        return f"{shown!r} is not a URL; did you mean http://{text} ?"
    if path.exists():
        return f"{shown!r} is not a card file (it is a directory); {WHAT_A_TARGET_IS}"
    scheme = _scheme_problem(text, shown)
    if scheme is not None:
        return scheme
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
        hints += [
            f"did you mean the reference agent {name} (see `interview-explorer demo --list`)?"
            for name in _close(text, demo)
        ]
    if not hints and not openclasp_base and _OPENCLASP_PATH.search(text) is None and "." not in text:
        hints.append("for an OpenClasp slug or id, give --openclasp BASE_URL")
    message = f"{shown!r} is not a URL, a card file or a configured agent; {WHAT_A_TARGET_IS}"
    return message + "".join(f"; {hint}" for hint in hints)


_PATH_START = ("/", "~", "./", "../", ".\\", "..\\", "\\")


def list_line_problem(line: str, position: int, agents: Iterable[str] = ()) -> str | None:
    """Why a line of a target list (`--from`) may not be used without `--allow-files`, or None.

    A list holds URLs (and names of configured agents): it often comes from someone else, and a
    line naming a file (`/etc/passwd`, `~/.ssh/id_rsa`) would be read as a card and copied into
    the transcript and the history. A line that looks like a path, or names one that exists, is
    refused; the person who means to read card files from a list says so with `--allow-files`."""
    text = line.strip()
    if _is_url(text) or text in set(agents):
        return None
    looks_like_a_path = text.startswith(_PATH_START) or text.lower().startswith("file:")
    try:
        exists = Path(text).expanduser().exists()
    except (OSError, ValueError, RuntimeError):  # an unknown ~user, a NUL byte, a name too long
        exists = False
    if not (looks_like_a_path or exists):
        return None
    shown = text if len(text) <= 80 else text[:79] + "…"
    return (
        f"target {position} of the list, {shown!r}, is a file path: a target list holds URLs and configured "
        "agent names (a list from someone else must not make the explorer read your files into its "
        "records); give --allow-files to read card files from a list"
    )


def list_files_problem(lines: Iterable[str], agents: Iterable[str] = ()) -> str | None:
    """The first line of a target list that is a file path (`list_line_problem`), or None."""
    names = list(agents)
    for position, line in enumerate(lines, start=1):
        problem = list_line_problem(line, position, names)
        if problem is not None:
            return problem
    return None


def close_names(word: str, names: Iterable[str]) -> list[str]:
    """The names `word` was probably meant to be (`stedy` -> `steady`), at most three, closest
    first: what `history`, `show` and `forget` suggest for an agent with no runs."""
    return _close(word, names)


def command_suggestion(word: str, commands: Iterable[str]) -> str | None:
    """The command `word` was probably meant to be (`verfiy` -> `verify`), or None."""
    close = _close(word, commands)
    return close[0] if close else None
