"""`interview-explorer history [AGENT...]`: recorded runs, newest first, at any depth.

`history import FILE...` merges transcripts made elsewhere (`explorer.commands.history_import`);
`history copy --to URL` / `--from URL` moves a whole history (`explorer.commands.history_copy`).

One line per run: id, time, verdict, standing, the card and answers digests (first 12 hex
digits), what changed, and the agent. The standing is the one each run earns here: a signed run
is evidence only under a trusted runner key (`--trust-runner`, the config's `trusted_runners`,
your own `sign_key`), an unsigned one is a claim whatever role it states. A `*` marks a run that
changed against the previous run of the same agent, and CHANGE says how (CONTRACT "Signatures
are proofs"): its `declarations` (the card without its signatures), its signing `key`, its
`answers` or its `verdict`. A run whose card was only signed again (other signature bytes over the
same declarations, under the same key: a restart, another replica) is shown `signed again`,
marked `~`, and is not a change. AGENT is a card URL, a base URL (every agent under it) or a card
name. With `--json`, each run's `kinds` lists the same (`resigned` for signed again).

The filters are the store's query (`explorer.store.base.RunQuery`): `--since`/`--until` (an ISO
date or date-time, or an age such as `7d`), `--verdict V` (repeatable), `--changed`, and
`--before RUN_ID` to page backwards by keyset. Runs stream from the store a page at a time:
`--json` writes one JSON object per line (NDJSON) and, without `--limit`, every matching run,
holding only one page in memory however long the history is.

Exit status: 0 listed (also when nothing matches), 2 usage error, 6 an AGENT with no runs or an
unreadable history.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

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
    print_lines,
    run_id_argument,
)
from explorer.commands.evidence_options import add_trust_runner_argument, trusted_runners

if TYPE_CHECKING:
    from explorer.store.base import HistoryStore, RunQuery, RunSummary

TEXT_LIMIT = 100  # runs listed as text when no --limit is given
_BATCH = 200  # runs whose standing is read back at once (a signed one is loaded to check it)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from explorer.core.verdict import VERDICTS
    from explorer.core.when import WHEN_HELP

    parser.add_argument(
        "agent",
        nargs="*",
        metavar="AGENT",
        help="only these agents (card URL, base URL, card name, configured agent or reference agent "
        "name); or `import FILE...` to record JSON transcripts made elsewhere (re-verified offline "
        "first; a directory means its *.json); or `copy --to URL` / `copy --from URL` to copy a "
        "whole history between stores (resumable, proved at the end)",
    )
    parser.add_argument("--since", metavar="WHEN", help=f"runs recorded at or after WHEN ({WHEN_HELP})")
    parser.add_argument(
        "--until", metavar="WHEN", help="runs recorded before WHEN (a date alone: up to its end)"
    )
    parser.add_argument(
        "--verdict",
        action="append",
        default=[],
        choices=VERDICTS,
        metavar="V",
        help=f"only runs with this verdict (repeatable): {', '.join(VERDICTS)}",
    )
    parser.add_argument(
        "--changed",
        action="store_true",
        help="only runs whose declarations, signing key, answers or verdict differ from the agent's "
        "previous run (a card only signed again is not a change)",
    )
    parser.add_argument(
        "--before",
        type=run_id_argument,
        metavar="RUN_ID",
        help="only runs older than RUN_ID (the next page after the last id shown)",
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per run and line (NDJSON), newest first"
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help=f"at most N runs (default {TEXT_LIMIT} as text; every matching run with --json)",
    )
    parser.add_argument("--to", dest="copy_to", metavar="URL", help="with `copy`: the history to copy into")
    parser.add_argument(
        "--from", dest="copy_from", metavar="URL", help="with `copy`: the history to copy from"
    )
    add_trust_runner_argument(parser)
    add_home_argument(parser)


def _short(digest: str | None) -> str:
    return (digest or "-")[:12]


def _query(args: argparse.Namespace, agents: tuple[str, ...] | None, limit: int | None) -> RunQuery:
    from explorer.core.when import WhenError, parse_when, utc_now
    from explorer.store.base import RunQuery

    now = utc_now()
    try:
        since = parse_when(args.since, now) if args.since else None
        until = parse_when(args.until, now, end_of_day=True) if args.until else None
    except WhenError as exc:
        raise UsageError(f"--since/--until: {exc}") from None
    return RunQuery(
        agents=agents,
        since=since,
        until=until,
        verdicts=tuple(args.verdict),
        changed=args.changed,
        before=args.before,
        limit=limit,
    )


def run(args: argparse.Namespace) -> int:
    from explorer.store.base import HistoryError

    if args.agent and args.agent[0] == "import":
        from explorer.commands.history_import import run_import

        return run_import(args, args.agent[1:])
    if args.agent and args.agent[0] == "copy":
        from explorer.commands.history_copy import run_copy

        return run_copy(args, args.agent[1:])
    if args.copy_to or args.copy_from:
        return error("--to and --from go with `history copy`", EXIT_USAGE)
    if args.limit is not None and args.limit <= 0:
        return error("--limit must be a positive number", EXIT_USAGE)
    limit = args.limit if args.limit is not None or args.json else TEXT_LIMIT
    try:
        config = config_of(args)
        trusted = trusted_runners(args.trust_runner, config, 10.0, "history")
        _query(args, None, limit)  # a bad WHEN is a usage error before the history is opened
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    try:
        with open_history(args, existing=True) as history:
            agents: tuple[str, ...] | None = None
            if args.agent:
                found: list[str] = []
                for text in args.agent:
                    named = agents_named(history, text, config)
                    if not named:
                        return error(no_runs_message(history, text, config), EXIT_UNKNOWN)
                    found += named
                agents = tuple(dict.fromkeys(found))
            query = _query(args, agents, None if limit is None else limit + 1)
            listed = _with_standing(history, history.query(query), trusted)
            if args.json:
                _write_ndjson(itertools.islice(listed, limit))
                return EXIT_OK
            return _print_table(listed, limit, args, agents is not None or _filtered(args))
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE)
    except HistoryError as exc:
        return error(str(exc), EXIT_UNKNOWN)


def _filtered(args: argparse.Namespace) -> bool:
    return bool(args.since or args.until or args.verdict or args.changed or args.before)


def _with_standing(
    history: HistoryStore, runs: Iterable[RunSummary], trusted: Any
) -> Iterator[tuple[RunSummary, dict[str, Any]]]:
    """Each run with the standing it earns here (signed and trusted, or a claim), not the one
    recorded; read back a batch at a time, so a stream never waits for the whole history."""
    from explorer.evidence.standing import read_back

    source = iter(runs)
    while batch := list(itertools.islice(source, _BATCH)):
        read = read_back(history, batch, trusted)
        for summary in batch:
            yield summary._replace(standing=read[summary.id]["standing"]), read[summary.id]


def _write_ndjson(listed: Iterable[tuple[RunSummary, dict[str, Any]]]) -> None:
    out = sys.stdout
    for n, (summary, read) in enumerate(listed, 1):
        line = {**summary.to_json(), "run_attestation": read["run_attestation"]}
        out.write(json.dumps(line, ensure_ascii=True) + "\n")
        if n % _BATCH == 0:
            out.flush()
    out.flush()


def _print_table(
    listed: Iterable[tuple[RunSummary, dict[str, Any]]],
    limit: int | None,
    args: argparse.Namespace,
    narrowed: bool,
) -> int:
    shown = 0
    changed = resigned = False
    last_id = None
    more = False
    for summary, read in listed:
        if limit is not None and shown == limit:
            more = True
            break
        if shown == 0:
            print_lines([_HEADER])
        print_lines([_line(summary, read)])
        shown += 1
        changed = changed or summary.changed
        resigned = resigned or "resigned" in summary.kinds
        last_id = summary.id
    if not shown:
        if narrowed:
            print("no recorded runs match")
        else:
            print("no runs recorded yet (every `verify` is recorded unless --no-history)")
        return EXIT_OK
    if changed:
        print_lines(
            [
                "* changed since that agent's previous run; CHANGE says what: its declarations (the card "
                "without its signatures), its signing key, its answers or its verdict"
            ]
        )
    if resigned:
        from explorer.core.compare import RESIGNED_WORDS

        print_lines([f"~ signed again: {RESIGNED_WORDS}"])
    if more:
        print_lines([f"older runs: the same command with --before {last_id}"])
    return EXIT_OK


_STANDING = 26  # "claim · altered transcript", the longest standing mark
_CHANGE = 12  # "declarations", "signed again": one kind fits; several push the agent right
_HEADER = (
    f"{'ID':>6}  {'RECORDED (UTC)':<24}  {'VERDICT':<13}  {'STANDING':<{_STANDING}}  {'CARD':<12}  "
    f"{'ANSWERS':<12}  {'CHANGE':<{_CHANGE}}  AGENT"
)


def change_text(kinds: tuple[str, ...]) -> str:
    """A run's change kinds as the CHANGE column shows them: the changes by name (`key`,
    `declarations,answers`), else `signed again` for a card only signed again, else `-`."""
    from explorer.core.compare import CHANGE_KINDS, KIND_WORDS, RESIGNED

    changes = [kind for kind in CHANGE_KINDS if kind in kinds]
    if changes:
        return ",".join(changes)
    return KIND_WORDS[RESIGNED] if RESIGNED in kinds else "-"


def _line(r: RunSummary, read: dict[str, Any]) -> str:
    """One run; its standing as earned here, with why a claim is one (`claim · unsigned`)."""
    from explorer.core.text import safe_text
    from explorer.core.view import ReportView

    marker = "*" if r.changed else "~" if "resigned" in r.kinds else " "
    name = f"{safe_text(r.name, limit=60)} " if r.name else ""
    digests = f"{_short(r.card_sha256):<12}  {_short(r.answers_sha256):<12}"
    standing = ReportView.of(read).standing_mark()
    return (
        f"{r.id:>6}{marker} {r.recorded_at:<24}  {safe_text(r.verdict, limit=13):<13}  "
        f"{standing:<{_STANDING}}  {digests}  {change_text(r.kinds):<{_CHANGE}}  {name}"
        f"{safe_text(r.agent, limit=200)}"
    )
