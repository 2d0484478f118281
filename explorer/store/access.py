"""What every history command shares: `--home`, opening the history, run ids, errors and exit codes.

The history commands (`history`, `show`, `replay`, `compare`, `watch`, `export`, `forget`) are
small modules under `explorer.commands`; the few things they must do identically live here, so a
bad run id or an unreadable database gives the same message and the same exit status everywhere.
Nothing here imports textual.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from explorer.store.history import History, HistoryError

EXIT_OK = 0
EXIT_DIFFERENT = 1
EXIT_USAGE = 2
EXIT_UNKNOWN = 3  # unknown run id or agent, or an unreadable history

# verify's exit statuses (CONTRACT.md), which replay and watch reuse.
VERDICT_EXIT: dict[str, int] = {
    "conformant": 0,
    "nonconformant": 1,
    "unreachable": 3,
    "not_offered": 4,
    "churn": 5,
}


def add_home_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--home",
        metavar="DIR",
        default=None,
        help="where the history lives (default: INTERVIEW_EXPLORER_HOME or the user data dir)",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError("expected more than 0 and at most 86400 seconds")
    return value


def add_interview_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a live interview that a recorded run cannot supply (secrets, extra keys)."""
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'Name: value'",
        help="header sent only to the agent's origin (repeatable); recorded as <redacted>",
    )
    parser.add_argument(
        "--keys",
        action="append",
        default=[],
        metavar="JWKS_FILE_OR_URL",
        help="more trusted public keys, looked up by kid (repeatable)",
    )
    parser.add_argument("--allow-jku", action="store_true", help="also fetch keys from the card's own jku")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="bound on every request (default 10)",
    )
    parser.add_argument(
        "--openclasp",
        default=None,
        metavar="BASE_URL",
        help="OpenClasp base URL to resolve slugs and agent ids",
    )
    parser.add_argument("--no-history", action="store_true", help="do not record the new runs")


def parse_headers(texts: list[str]) -> tuple[tuple[str, str], ...]:
    """`--header 'Name: value'` options as pairs; ValueError with a readable message."""
    from explorer.config import parse_header_option

    return tuple(parse_header_option(text) for text in texts)


def seconds_argument(text: str) -> float:
    """argparse type for a positive number of seconds."""
    return _seconds(text)


def run_id_argument(text: str) -> int:
    """argparse type for a run id: a positive integer, or a usage error (exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a run id is a number (see `history`), not {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a run id is a positive number, not {text!r}")
    return value


def error(message: str, status: int, stream: TextIO | None = None) -> int:
    """Print `interview-explorer: message` on stderr and return the exit status."""
    print(f"interview-explorer: {message}", file=stream or sys.stderr)
    return status


def open_history(args: argparse.Namespace) -> History:
    """The history named by `--home` (or the default one); HistoryError when it cannot be used."""
    return History.open(getattr(args, "home", None))


def verdict_exit(verdict: str) -> int:
    """verify's exit status for a verdict; an unknown verdict counts as unreachable."""
    return VERDICT_EXIT.get(verdict, VERDICT_EXIT["unreachable"])


__all__ = [
    "EXIT_DIFFERENT",
    "EXIT_OK",
    "EXIT_UNKNOWN",
    "EXIT_USAGE",
    "VERDICT_EXIT",
    "HistoryError",
    "add_home_argument",
    "add_interview_arguments",
    "parse_headers",
    "seconds_argument",
    "error",
    "open_history",
    "run_id_argument",
    "verdict_exit",
]
