"""What the headless commands share: options, config and keys, the history, messages, exit statuses.

Every command (`verify`, `card`, `history`, `show`, `replay`, `compare`, `watch`, `export`,
`forget`) is a small module under `explorer.commands`; what they must do identically lives here
once, so an option means the same thing, a bad `--keys` or run id gives the same message, and a
verdict maps to the same exit status everywhere:

- options: `--home`, and the interview settings each command offers, declared once in
  `explorer.config.settings` (`--as`, `--runner`, `--header`, `--keys`, `--allow-jku`, `--timeout`, ...);
- what those options become: the config file, then `explorer.interview.planning`'s target and options
  (a configured agent's URL, headers and key sources), the trusted keys (loaded once, notes on
  stderr), the history;
- output: one-line messages on stderr, JSON and text on stdout that survive any terminal encoding.

A user's mistake is a `UsageError` (exit status 2), raised here and reported by the command in
one line. Only the standard library is imported at module level: `--help` stays instant and the
network, storage and key modules load only on the paths that need them. Nothing here imports
textual.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.config.file import Config
    from explorer.core.run import Run
    from explorer.interview.options import Options
    from explorer.store.base import HistoryStore, RunSummary

EXIT_OK = 0
EXIT_DIFFERENT = 1
EXIT_USAGE = 2
# No such run or agent in the history, or a history that cannot be used: refused before anything
# is asked, or a run that could not be recorded after its interview (its verdict printed all the
# same). Its own status, not 3: `replay` and `watch` exit with verify's statuses too, where 3 means
# the agent was unreachable.
EXIT_UNKNOWN = 6
WRITE_PROBE_WAIT = 15.0  # seconds a history busy with another writer is waited for (the store's own wait)

# verify's exit statuses (CONTRACT.md), which replay and watch reuse.
VERDICT_EXIT: dict[str, int] = {
    "conformant": 0,
    "nonconformant": 1,
    "unreachable": 3,
    "not_offered": 4,
    "churn": 5,
}


class UsageError(Exception):
    """A problem with what the user asked for: printed as one line, exit status 2."""


# --- messages and output ------------------------------------------------------------------------


def say(message: str, command: str | None = None) -> None:
    """One line on stderr: `interview-explorer[ COMMAND]: message`."""
    prefix = f"interview-explorer {command}" if command else "interview-explorer"
    print(f"{prefix}: {message}", file=sys.stderr)


def error(message: str, status: int, command: str | None = None) -> int:
    """Say `message` on stderr and return the exit status, for `return error(...)`."""
    say(message, command)
    return status


def print_lines(lines: Iterable[str]) -> None:
    """Text for people on stdout; a character the terminal cannot encode is replaced, never fatal."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")  # an agent's name must not crash a latin-1 terminal
    sys.stdout.write("".join(f"{line}\n" for line in lines))


def print_json(value: Any, *, indent: int | None = None) -> None:
    """One JSON value on stdout; ASCII escapes keep it intact whatever the terminal's encoding.

    Without indentation the text is written in pieces (the same bytes as one `json.dumps`), so
    a large agent's report is never held twice in memory as one string."""
    if indent is not None:
        sys.stdout.write(json.dumps(value, indent=indent, ensure_ascii=True) + "\n")
        return
    for chunk in json_chunks(value):
        sys.stdout.write(chunk)
    sys.stdout.write("\n")


_DUMPS = json.JSONEncoder(ensure_ascii=True).encode  # json.dumps(value, ensure_ascii=True), in C
_BATCH = 256  # array elements written per piece


def json_chunks(value: Any, depth: int = 4) -> Iterator[str]:
    """`json.dumps(value, ensure_ascii=True)` in pieces: objects and arrays down to `depth`
    levels are opened member by member (long arrays `_BATCH` elements at a time), anything
    deeper in one piece. Four levels reach what grows with the agent (a question's
    projections, the card's members) and keep a small report to a few hundred pieces. An object
    with a key that is not a string is written in one piece, so the text is always exactly what
    `json.dumps` writes."""
    if depth and isinstance(value, dict) and value and all(isinstance(key, str) for key in value):
        separator = "{"
        for key, item in value.items():
            yield separator + _DUMPS(key) + ": "
            yield from json_chunks(item, depth - 1)
            separator = ", "
        yield "}"
    elif depth and isinstance(value, list) and len(value) > _BATCH:
        separator = "["
        for start in range(0, len(value), _BATCH):
            yield separator + _DUMPS(value[start : start + _BATCH])[1:-1]
            separator = ", "
        yield "]"
    elif depth and isinstance(value, list) and value:
        separator = "["
        for item in value:
            yield separator
            yield from json_chunks(item, depth - 1)
            separator = ", "
        yield "]"
    else:
        yield _DUMPS(value)


def verdict_exit(verdict: str) -> int:
    """verify's exit status for a verdict; an unknown verdict counts as unreachable."""
    return VERDICT_EXIT.get(verdict, VERDICT_EXIT["unreachable"])


def met_timeout(report: Any) -> bool:
    """Whether a report has a `timeout` finding: a request got no complete answer in time."""
    from explorer.core.view import ReportView

    return any(f.code == "timeout" for f in ReportView.of(report).findings)


def timeout_hint(timeout: float) -> str:
    """The line said after a request met its timeout: the limit it had and the option that sets it
    (a message that only says "timeout" leaves a newcomer to guess both)."""
    from explorer.interview.options import Options

    return (f"no complete answer came within the request timeout, {timeout:g} s; a slow agent may "
            f"need a longer one: --timeout SECONDS (default {Options().timeout:g} s)")  # fmt: skip


def met_deadline(report: Any) -> bool:
    """Whether a report has a `deadline` finding: the run's deadline cut it short."""
    from explorer.core.view import ReportView

    return any(f.code == "deadline" for f in ReportView.of(report).findings)


def deadline_hint(seconds: float | None = None) -> str:
    """The line said after the run's deadline cut it short: the bound it had and the option."""
    had = f", {seconds:g} s," if seconds is not None else ""
    return (
        f"the run's deadline{had} cut it short before the interview was finished; a slow agent "
        "may need a longer one: --deadline SECONDS (default six times --timeout)"
    )


# --- argparse types and options -----------------------------------------------------------------


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    """`-q`/`--quiet`, the same for `verify`, `replay` and `watch`: no progress on stderr."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress on stderr (what is being asked, 'recorded as run N'); warnings and errors still",
    )


def add_watch_every_argument(parser: argparse.ArgumentParser) -> None:
    """`--watch-every SECONDS` for the TUI's watch screen (else the config's, else 30 s)."""
    from explorer.config.file import MAX_WATCH_EVERY
    from explorer.config.settings import seconds_type

    parser.add_argument(
        "--watch-every",
        type=seconds_type(MAX_WATCH_EVERY),
        default=None,
        metavar="SECONDS",
        help="seconds between replays when the explorer watches an agent (default: the config's "
        "watch_every, else 30)",
    )


def run_id_argument(text: str) -> int:
    """argparse type for a run id: a positive integer, or a usage error (exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a run id is a number (see `history`), not {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a run id is a positive number, not {text!r}")
    return value


LATEST = "latest"  # the RUN selector for the newest run in the history (`export latest`)


def run_selector_argument(text: str) -> int | str:
    """argparse type for RUN where `latest` may stand for the newest run (`show`, `export`,
    `compare`): a run id, or `LATEST`; a usage error (exit 2) for anything else."""
    if text.strip() == LATEST:
        return LATEST
    if not text.strip().lstrip("+-").isdigit():
        raise argparse.ArgumentTypeError(
            f"a run is a run id (a number, see `history`) or `{LATEST}`, not {text!r}"
        )
    return run_id_argument(text)


def add_home_argument(
    parser: argparse.ArgumentParser, what: str = "history and config live", *, history: bool = True
) -> None:
    """`--home DIR`, and (for every command that reads or writes history) `--history URL`."""
    parser.add_argument(
        "--home",
        metavar="DIR",
        default=None,
        help=f"where {what} (default: INTERVIEW_EXPLORER_HOME or the user data dir)",
    )
    if history:
        add_history_argument(parser)


def add_history_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--history",
        metavar="URL",
        default=None,
        help="the history to use: sqlite:///PATH or a path, or postgresql://USER@HOST:PORT/DB (the "
        "postgres extra; a password only as env:VAR / file:PATH or libpq's PGPASSWORD) (default: "
        "INTERVIEW_EXPLORER_HISTORY, the config's history, else the file in the home)",
    )


def choose_history_of(args: argparse.Namespace) -> Any:
    """The history the command line, the environment or the config names (`explorer.config.history_choice`),
    kept on `args` so it is read once; UsageError when it cannot be used."""
    chosen = getattr(args, "history_choice", None)
    if chosen is None:
        from explorer.config.history_choice import HistoryChoiceError, choose_history

        try:
            chosen = choose_history(getattr(args, "history", None), getattr(args, "home", None))
        except HistoryChoiceError as exc:
            raise UsageError(str(exc)) from None
        args.history_choice = chosen
    return chosen


def add_setting_arguments(
    parser: argparse.ArgumentParser, command: str, *, helps: dict[str, str] | None = None
) -> None:
    """The interview settings `command` offers (`explorer.config.settings.GROUPS`), as options."""
    from explorer.config.settings import add_arguments

    add_arguments(parser, command, helps=helps)


def add_explorer_arguments(parser: argparse.ArgumentParser) -> None:
    """What the explorer opens with, in a terminal or served to a browser: TARGET and its options."""
    parser.add_argument("target", nargs="?", help="URL, card file, OpenClasp reference or history run id")
    add_home_argument(parser)
    add_setting_arguments(parser, "tui")
    add_watch_every_argument(parser)
    parser.add_argument(
        "--from",
        dest="from_",
        default=None,
        metavar="FILE",
        help="open the fleet view and sweep the targets listed in FILE (one per line)",
    )
    parser.add_argument(
        "--allow-files",
        action="store_true",
        help="let --from list card files too (a list holds URLs and configured agent names only)",
    )


# --- what the options become --------------------------------------------------------------------


_NOTES_SAID: set[str] = set()


def config_of(args: argparse.Namespace) -> Config:
    """The config file of `--home` (or the default one); UsageError when it cannot be used."""
    from explorer.config.file import ConfigError, load_config

    try:
        config = load_config(getattr(args, "home", None))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    note = config.ignored_note()
    if note and note not in _NOTES_SAID:  # once per process, however often a command reads the config
        _NOTES_SAID.add(note)
        say(note)
    return config


def plan_of(
    args: argparse.Namespace,
    config: Config,
    command: str,
    *,
    target: str | None = None,
    secrets: bool = True,
    check: bool = False,
) -> tuple[str, Options]:
    """The target and options of the interview the command line asks for (`explorer.interview.planning`);
    a configured agent named by its name is said on stderr; UsageError for a bad `--header` or an
    unset variable a configured header names. `secrets=False` leaves credentials out (`card`).
    `check` makes a target that cannot name an agent (a typo, `host:port` without a scheme) a
    UsageError saying what a target can be (`explorer.interview.targets`), before anything is fetched."""
    from explorer.interview.planning import PlanError, plan, typed

    wanted = args.target if target is None else target
    try:
        url, options = plan(wanted, typed(args), config, secrets=secrets)
    except PlanError as exc:
        raise UsageError(str(exc)) from None
    if check:
        from explorer.interview.targets import target_problem

        base = options.openclasp_base
        problem = target_problem(wanted, agents=config.agents, demo=_DemoNames(), openclasp_base=base)
        if problem is not None:
            raise UsageError(problem)
    if url != wanted:
        say(f"{wanted} is the configured agent {url}", command)
    return url, options


def typed_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What the command line set, by setting name (`explorer.interview.planning.typed`); UsageError for a
    value that cannot be used."""
    from explorer.interview.planning import PlanError, typed

    try:
        return typed(args)
    except PlanError as exc:
        raise UsageError(str(exc)) from None


def load_trusted_keys(
    sources: Sequence[str],
    timeout: float,
    command: str,
    what: str = "trusted keys (from --keys or the config file's keys)",
) -> dict[str, Any]:
    """The public keys of every source as one JWKS (`{"keys": []}` for none), notes on stderr.

    Loaded before anything else is fetched, so an unusable source is a UsageError up front.
    """
    if not sources:
        return {"keys": []}
    from explorer.net.http import Limits
    from explorer.net.keys import KeysError, load_keys_sync

    try:
        keys, notes = load_keys_sync(sources, Limits(timeout=timeout))
    except KeysError as exc:
        # `what` names every place the sources came from (for `--keys`, the flag and the config
        # file's `keys`), so a stale config entry is not blamed on a flag never passed.
        raise UsageError(f"{what}: {exc}") from None
    for note in notes:
        say(f"note: {note}", command)
    return keys


KeyLoader = Callable[[Sequence[str], float, str], dict[str, Any]]


def preload_keys(options: Options, load_keys: KeyLoader, command: str) -> Options:
    """The options with their key sources (files, URLs) loaded now: an unusable `--keys` is a
    usage error before anything is asked, and with a cached loader a sweep loads each source once."""
    from dataclasses import replace

    sources = [k for k in options.keys if isinstance(k, str)]
    if not sources:
        return options
    keys = load_keys(sources, options.timeout, command)
    loaded = tuple(k for k in options.keys if not isinstance(k, str))
    return replace(options, keys=loaded + ((keys,) if keys["keys"] else ()))


def cached_key_loader(loader: KeyLoader) -> KeyLoader:
    """Load each distinct list of key sources once for the whole sweep."""
    cache: dict[tuple[str, ...], dict[str, Any]] = {}

    def load(sources: Sequence[str], timeout: float, command: str) -> dict[str, Any]:
        key = tuple(sources)
        if key not in cache:
            cache[key] = loader(sources, timeout, command)
        return cache[key]

    return load


def open_history(args: argparse.Namespace, *, existing: bool = False) -> HistoryStore:
    """The history `--history`, INTERVIEW_EXPLORER_HISTORY or the config names, else the one in
    `--home` (or the default home); HistoryError when it cannot be used, UsageError when its URL
    cannot be (`cli.main` checks that before any command runs).

    `existing` is for commands that only read or delete runs: a history file named explicitly
    that is not there is a HistoryError (a mistyped path), never a new empty file created to
    say "no runs recorded yet". The default history in the home is created as ever."""
    from explorer.store.base import HistoryError

    choice = choose_history_of(args)
    location = choice.location
    if existing and location is not None and location.path is not None and not location.path.exists():
        raise HistoryError(
            f"no history at {location.shown} ({choice.source}): the file does not exist; check the "
            "path (a history file is created where a run is first recorded)"
        )
    return choice.open(getattr(args, "home", None))


def recording_history(args: argparse.Namespace, *, existing: bool = False) -> HistoryStore:
    """The history a command will record its runs into, opened before anything is asked: one that
    cannot be used (not an Interview Explorer history, written by a newer version, a database that
    cannot be reached, a file or folder that cannot be written) is a HistoryError now, exit status
    6, rather than a run lost after its interview. UsageError when its URL cannot be used;
    `existing` as for `open_history` (`replay` reads a recorded run first)."""
    history = open_history(args, existing=existing)
    try:
        _check_writable(history)
    except BaseException:
        history.close()
        raise
    return history


def _check_writable(history: HistoryStore) -> None:
    """A history that can be read but not written opens as if nothing were wrong and refuses only the
    first run recorded. A SQLite file (read-only, immutable, on a read-only mount): one write, rolled
    back, finds it out first; a history busy with another writer is writable, and left alone. A
    PostgreSQL history checks itself (`PostgresHistory.check_writable`)."""
    import sqlite3

    from explorer.store.base import HistoryError

    server_check = getattr(history, "check_writable", None)  # PostgreSQL: privileges, read-only transactions
    if callable(server_check):
        server_check()
        return
    path = getattr(history, "path", None)
    if history.kind != "sqlite" or not isinstance(path, Path):
        return
    try:
        probe = sqlite3.connect(path, isolation_level=None, timeout=WRITE_PROBE_WAIT)
    except sqlite3.Error as exc:
        raise HistoryError(f"the history at {path} cannot be opened for writing: {exc}") from None
    try:
        version = probe.execute("PRAGMA user_version").fetchone()[0]
        probe.execute("BEGIN IMMEDIATE")
        probe.execute(f"PRAGMA user_version={int(version)}")  # the same value: a write that changes nothing
        probe.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise HistoryError(
                f"the history at {path} cannot be written ({exc}); nothing was asked. Make it writable, "
                "or choose another with --history or --home"
            ) from None
    except sqlite3.Error as exc:
        raise HistoryError(f"the history at {path} cannot be written ({exc}); nothing was asked") from None
    finally:
        probe.close()


def agents_named(history: HistoryStore, text: str, config: Config | None) -> list[str]:
    """The recorded agents `text` names, as `verify` reads a target: a configured agent's name
    stands for its URL; otherwise a card URL, a base URL, a card name, or a reference agent's name
    (`History.match_agents`)."""
    agent = config.agent(text) if config is not None else None
    if agent is not None:
        found = history.match_agents(agent.url)
        if found:
            return found
    return history.match_agents(text)


def no_runs_message(history: HistoryStore, text: str, config: Config | None) -> str:
    """The sentence for an agent TEXT with no runs, with what TEXT was probably meant to be, as
    `verify` suggests a target: a recorded card name, a reference agent's short name (`stedy` ->
    `steady`, for the card "... (steady)") or a configured agent's name close to it."""
    import re

    from explorer.core.text import safe_text
    from explorer.interview.targets import close_names

    names: list[str] = list(config.agents) if config is not None else []
    for agent in history.agents():
        if isinstance(agent.name, str):
            names.append(agent.name)
            short = re.search(r"\(([^()]+)\)\s*$", agent.name)
            if short:  # matched in any case, so said as a person types it
                names.append(short.group(1).casefold())
    shown = {name.casefold(): name for name in reversed(names)}  # any case; the first spelling kept
    message = f"no runs recorded for {safe_text(text, limit=200)}"
    meant = [shown[name] for name in close_names(text.strip().casefold(), shown)]
    if meant:
        message += "; did you mean " + " or ".join(safe_text(name, limit=80) for name in meant) + "?"
    return message


def newest_run_of(args: argparse.Namespace, text: str) -> int:
    """The id of the newest recorded run of the agent `text` names (`agents_named`); HistoryError
    when it names none, UsageError for an unusable config."""
    from explorer.store.base import HistoryError

    config = config_of(args)
    with open_history(args, existing=True) as history:
        runs = [r for agent in agents_named(history, text, config) for r in history.runs(agent, limit=1)]
        if not runs:
            raise HistoryError(no_runs_message(history, text, config))
    return max(r.id for r in runs)


def resolved_run_id(history: HistoryStore, selected: int | str) -> int:
    """The run id a RUN argument selects (`run_selector_argument`): `latest` is the newest run in
    the history; HistoryError when there is none."""
    if selected != LATEST:
        return int(selected)
    from explorer.store.base import HistoryError

    newest = history.last_run_id()
    if not newest:
        raise HistoryError("no runs recorded yet, so there is no latest run")
    return newest


def read_runs(args: argparse.Namespace, *run_ids: int | str) -> list[tuple[RunSummary, Run]]:
    """The history's summary line and stored run for each id (or `latest`), in order;
    HistoryError for an unknown id or an unreadable history."""
    with open_history(args, existing=True) as history:
        ids = [resolved_run_id(history, selected) for selected in run_ids]
        return [(history.summary(run_id), history.load(run_id)) for run_id in ids]


class _DemoNames:
    """The reference agents' names, loaded only when a target that names nothing is explained
    (a URL or a file, nearly every target, never needs them)."""

    def __iter__(self) -> Iterator[str]:
        from explorer.demo.variants import VARIANTS

        return iter(VARIANTS)
