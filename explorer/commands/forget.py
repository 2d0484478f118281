"""`interview-explorer forget RUN|AGENT`: delete a recorded run, or every run of an agent.

A number is a run id; anything else names an agent (its card URL, a base URL with exactly one
agent under it, or its card name). An address names the agent whose latest run was there (when
another agent took the address over since, the one that answered there last), else every agent
seen there (CONTRACT "Signatures are proofs"); a card name names that agent even where another
one answers now. Documents no remaining run uses are deleted with it. In the
SQLite file, secure delete overwrites the freed pages, so forgotten data does not linger there;
PostgreSQL keeps deleted rows in its files until VACUUM, which the command says, with what to run.

Exit status: 0 forgotten, 2 usage error (an AGENT that names several agents), 6 no such run
or agent, or an unreadable history.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from explorer.commands.common import (
    EXIT_OK,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    UsageError,
    add_home_argument,
    agents_named,
    config_of,
    error,
    no_runs_message,
    open_history,
    say,
)

if TYPE_CHECKING:
    from explorer.store.base import HistoryStore


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "what",
        metavar="RUN|AGENT",
        help="a run id from `history`, or an agent (card URL, base URL, card name, configured or "
        "reference agent name)",
    )
    add_home_argument(parser)


def run(args: argparse.Namespace) -> int:
    from explorer.core.text import safe_text
    from explorer.store.base import HistoryError

    what = args.what.strip()
    try:
        config = config_of(args) if not what.isdigit() else None
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    try:
        with open_history(args, existing=True) as history:
            if what.isdigit():
                history.forget_run(int(what))
                print(f"forgot run {int(what)}")
                _note(history)
                return EXIT_OK
            agents = agents_named(history, what, config)
            if not agents:
                return error(no_runs_message(history, what, config), EXIT_UNKNOWN)
            if len(agents) > 1:
                names = ", ".join(safe_text(a, limit=200) for a in agents)
                return error(
                    f"{safe_text(what, limit=200)} names several agents ({names}); give one card URL",
                    EXIT_USAGE,
                )
            count = history.forget_agent(agents[0], _card_name(history, what, agents[0]))
            print(f"forgot {count} run{'s' if count != 1 else ''} of {safe_text(agents[0], limit=200)}")
            _note(history)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN)
    return EXIT_OK


def _card_name(history: HistoryStore, what: str, address: str) -> str | None:
    """The card name of the agent at `address` that `what` names by its card name (exactly, in any
    case, or a reference agent's short name, as `match_agents` reads it), or None when `what` is
    not such a name: then the address alone says which agent (the one living there)."""
    if "://" in what:
        return None
    wanted = what.casefold()
    for agent in history.agents():
        name = agent.name
        if agent.agent == address and isinstance(name, str) and wanted:
            if name == what or name.casefold() == wanted or name.casefold().endswith(f"({wanted})"):
                return name
    return None


def _note(history: HistoryStore) -> None:
    """Where the forgotten data still is, when the store keeps it for a while (PostgreSQL)."""
    if history.forget_note:
        say(f"note: {history.forget_note}", "forget")
