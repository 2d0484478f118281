"""`interview-explorer history [AGENT] [--json]`: recorded runs, newest first.

`history import FILE...` merges transcripts made elsewhere (see `explorer.commands.history_import`).

One line per run: id, time, verdict, standing, the card and answers digests (first 12 hex
digits) and the agent. The standing is the one each run earns here: a signed run is evidence only
under a trusted runner key (`--trust-runner`, the config's `trusted_runners`, your own
`sign_key`), an unsigned one is a claim whatever role it states. A `*` marks a run whose card or
answers digest differs from the previous run of the same agent, so churn is visible in the list
itself. AGENT is a card URL, a base URL (every agent under it) or a card name. `--json` prints
one JSON array and nothing else.

Exit status: 0 listed (also when the history is empty), 2 usage error, 6 no runs for AGENT or
an unreadable history.
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
    open_history,
    print_json,
    print_lines,
)
from explorer.commands.evidence_options import add_trust_runner_argument, trusted_runners

if TYPE_CHECKING:
    from explorer.store.history import RunSummary


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "agent",
        nargs="*",
        metavar="AGENT",
        help="only this agent (card URL, base URL, card name, configured agent or reference agent "
        "name); or `import FILE...` to record JSON "
        "transcripts made elsewhere (re-verified offline first; a directory means its *.json)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON array of runs")
    parser.add_argument("--limit", type=int, default=100, metavar="N", help="at most N runs (default 100)")
    add_trust_runner_argument(parser)
    add_home_argument(parser)


def _short(digest: str | None) -> str:
    return (digest or "-")[:12]


def run(args: argparse.Namespace) -> int:
    from explorer.core.text import safe_text
    from explorer.evidence import read_back
    from explorer.store.history import HistoryError

    if args.agent and args.agent[0] == "import":
        from explorer.commands.history_import import run_import

        return run_import(args, args.agent[1:])
    if len(args.agent) > 1:
        return error("give one AGENT (or `history import FILE...`)", EXIT_USAGE)
    args.agent = args.agent[0] if args.agent else None
    if args.limit <= 0:
        return error("--limit must be a positive number", EXIT_USAGE)
    try:
        config = config_of(args)
        trusted = trusted_runners(args.trust_runner, config, 10.0, "history")
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    try:
        with open_history(args) as history:
            if args.agent is None:
                runs = history.runs(limit=args.limit)
            else:
                agents = agents_named(history, args.agent, config)
                runs = sorted(
                    (r for agent in agents for r in history.runs(agent, limit=args.limit)),
                    key=lambda r: r.id,
                    reverse=True,
                )[: args.limit]
            read = read_back(history, runs, trusted)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN)
    # The standing each run earns here (signed and trusted, or a claim), not the one recorded.
    runs = [r._replace(standing=read[r.id]["standing"]) for r in runs]
    if args.json:
        print_json(
            [{**r.to_json(), "run_attestation": read[r.id]["run_attestation"]} for r in runs], indent=2
        )
    if args.agent is not None and not runs:
        return error(f"no runs recorded for {safe_text(args.agent, limit=200)}", EXIT_UNKNOWN)
    if args.json:
        return EXIT_OK
    if not runs:
        print("no runs recorded yet (every `verify` is recorded unless --no-history)")
        return EXIT_OK
    print_lines(_table(runs))
    return EXIT_OK


def _table(runs: list[RunSummary]) -> list[str]:
    from explorer.core.text import safe_text

    lines = [
        f"{'ID':>6}  {'RECORDED (UTC)':<24}  {'VERDICT':<13}  {'STANDING':<8}  {'CARD':<12}  "
        f"{'ANSWERS':<12}  AGENT"
    ]
    for r in runs:
        marker = "*" if r.changed else " "
        name = f"{safe_text(r.name, limit=60)} " if r.name else ""
        digests = f"{_short(r.card_sha256):<12}  {_short(r.answers_sha256):<12}"
        lines.append(
            f"{r.id:>6}{marker} {r.recorded_at:<24}  {safe_text(r.verdict, limit=13):<13}  "
            f"{safe_text(r.standing or '-', limit=8):<8}  {digests}  {name}{safe_text(r.agent, limit=200)}"
        )
    if any(r.changed for r in runs):
        lines.append("* the card or the answers changed since that agent's previous run")
    return lines
