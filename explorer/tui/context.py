"""Everything the screens need from outside the terminal, behind one small object.

Screens never import the procedure, the history or the exporters themselves: they ask the
`AppContext`, which imports those modules on first use (startup pays only for what the first
screen draws), turns their failures into readable messages, and carries what must be injected
for deterministic tests and snapshots: the clock, the home directory, the export directory and
the watch interval. `launch.py` builds it from the command line and the config file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from explorer.tui.demo_agents import DemoAgent, demo_agents, demo_credentials, demo_keys, start_fleet

if TYPE_CHECKING:
    from explorer.core.run import Run

Clock = Callable[[], datetime]
CHECKING = "… signed, checking"  # a signed run's standing mark until its signature is checked


def system_clock() -> datetime:
    return datetime.now(UTC)


class RunRow(NamedTuple):
    """One history row as the screens use it (a stable shape over `RunSummary`)."""

    run_id: int
    agent: str  # the card URL (the history's key for an agent)
    name: str
    started_at: str
    verdict: str
    card_sha256: str | None
    answers_sha256: str | None
    changed: bool = False  # card or answers differ from this agent's previous run
    standing: str = ""  # the mark the run earns here: "evidence · signed", "claim · unsigned", ...
    since: str = ""  # what changed since the agent's run before: "first", "= same", "≠ card+answers"

    @property
    def target(self) -> str:
        """What to type to interview this agent again: its card URL."""
        return self.agent

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "verdict": self.verdict,
            "card_sha256": self.card_sha256,
            "answers_sha256": self.answers_sha256,
        }


class RunFilter(NamedTuple):
    """Which runs the history screen lists: one agent's or every agent's, one verdict or every
    one, only the runs that changed, only those recorded before a moment (a jump to a date)."""

    agent: str | None = None
    verdict: str | None = None
    changed: bool = False
    until: datetime | None = None

    def query(self, before: int | None, limit: int) -> Any:
        from explorer.store.base import RunQuery

        return RunQuery(
            agents=None if self.agent is None else (self.agent,),
            until=self.until,
            verdicts=() if self.verdict is None else (self.verdict,),
            changed=self.changed,
            before=before,
            limit=limit,
        )


def changes_since(before: Any, run: Any) -> str:
    """What differs between an agent's run and its run before (`RunSummary`s) in words, the
    history's "since previous run" column: `first`, `= same`, `≠ card+answers+verdict`."""
    if before is None:
        return "first"
    changed = [
        word
        for word, key in (("card", "card_sha256"), ("answers", "answers_sha256"), ("verdict", "verdict"))
        if getattr(run, key) != getattr(before, key)
    ]
    return ("≠ " + "+".join(changed)) if changed else "= same"


class RecentAgent(NamedTuple):
    """One entry of the load screen's recent agents: its latest run, and the other URLs where
    the same agent (card name and signing key id) answered before."""

    row: RunRow
    others: tuple[str, ...] = ()

    @property
    def target(self) -> str:
        return self.row.target


class ExplorerError(Exception):
    """A failure the user should read in place (never a traceback)."""


@dataclass(eq=False)
class AppContext:
    """The explorer's services and settings for one TUI session."""

    home: Path | None = None
    # What the session was launched with, by setting name (`explorer.interview.planning.typed`): keys,
    # headers, role, runner, ... The config file's settings come with `config`.
    settings: dict[str, Any] = field(default_factory=dict)
    keymap: Mapping[str, str] = field(default_factory=dict)
    config: Any = None  # the user's Config: configured agents (name -> url, headers, keys), global keys
    clock: Clock = system_clock
    demo: Sequence[DemoAgent] = ()
    demo_skipped: Mapping[str, str] = field(default_factory=dict)  # reference agents not started: why
    demo_moved: Mapping[str, str] = field(default_factory=dict)  # ...not on their usual port: where, why
    demo_credentials: Mapping[str, Any] = field(default_factory=dict)  # guarded agents by card URL
    export_dir: Path = field(default_factory=Path.cwd)
    watch_interval: float = 30.0
    use_history: bool = True
    cursor_blink: bool = True  # off for snapshots and screenshots
    # The fleet reads each latest run again from its bytes under your keys. Off only for pictures,
    # whose stored runs are normalised copies without their exchanges (nothing to derive from).
    read_stored: bool = True
    exit_when_ready: bool = False  # the startup benchmark: quit once the first interview is painted
    warnings: list[str] = field(default_factory=list)
    record_error: str | None = None  # why the latest run could not be recorded
    history_choice: Any = None  # explorer.config.history_choice.HistoryChoice; None: the home's SQLite file
    _history: Any = None
    _opening: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _fleet: Any = None  # reference agents this session started itself (stopped by `close`)
    _trusted: Any = None  # thumbprint -> key of the runner keys trusted here (loaded on first use)
    _sign_key: Any = None  # the config's sign_key, loaded on first signed run (False: unusable)
    _readers: dict[str, Any] = field(default_factory=dict)  # agent -> ReaderTrust, loaded on first use
    _marks: dict[int, str] = field(default_factory=dict)  # run id -> standing mark, once checked
    _standings: dict[int, str] = field(default_factory=dict)  # run id -> claim | evidence, once checked
    # Credentials typed into the sign-in dialog, by agent URL: memory only, forgotten on close.
    _typed: dict[str, Any] = field(default_factory=dict, repr=False)
    _kids: dict[int, str | None] = field(default_factory=dict)  # run id -> key id of its card's signature
    # run id -> (verdict, standing, card signature status) as read here, under your keys
    _read_here: dict[int, tuple[str, str, str | None]] = field(default_factory=dict)

    # ---- the interview -------------------------------------------------------------------
    def plan(self, target: str) -> tuple[str, Any]:
        """The URL to interview and the procedure's Options for a target (`explorer.interview.planning`,
        as every command plans): a configured agent, by name or URL, brings its headers (their
        `env:` references resolved now, never stored) and keys; the launch settings win. Under
        `demo`, a reference agent's name (`drifting`) stands for its URL, unless the config
        names an agent the same.
        Otherwise a card name the history knows for exactly one agent stands for that agent's
        card URL, as in `history NAME`.
        Raises ExplorerError when a referenced environment variable is unset.
        """
        from explorer.interview.planning import PlanError, plan

        if self.config is None or self.config.agent(target) is None:
            target = self._demo_target(target)
            target = self.recorded_agent(target) or target
        try:
            given = dict(self.settings)
            demo = self.demo_credentials.get(target)
            if demo is not None:  # a guarded reference agent: its demo credentials, as typed
                given.update(demo.settings())
            typed = self.typed_credentials(target)
            if typed is None:
                return self._plan_stored(target, given)
            # Typed values win over every reference (which is then not read: the variable a
            # saved entry names is usually unset in this session), as a replay's recorded values
            # do: they are already resolved.
            return plan(target, _without_credentials(given), _config_without_credentials(self.config, target),
                        resolved=typed.settings())
        except PlanError as exc:
            raise ExplorerError(str(exc)) from None

    def _plan_stored(self, target: str, given: dict[str, Any]) -> tuple[str, Any]:
        """`plan` with the stored credentials; when one of their references cannot be read (the
        variable a saved entry names is not exported in this session), the interview goes ahead
        without them and a warning says so: the agent then asks, and the sign-in dialog (a)
        takes the secret."""
        from explorer.interview.planning import PlanError, plan

        try:
            return plan(target, given, self.config)
        except PlanError as exc:
            try:
                planned = plan(target, _without_credentials(given),
                               _config_without_credentials(self.config, target))
            except PlanError:
                raise exc from None
            self.warnings.append(f"{exc}; interviewing without credentials (if the agent asks for "
                                 "them, press a on its interview to type the secret)")
            return planned

    def sign_in(self, urls: Sequence[str], typed: Any) -> None:
        """Use credentials typed in the sign-in dialog (`explorer.config.credentials.TypedSecrets`) for
        the agent at `urls` (its target and its card URL) for the rest of the session. They stay
        in this object: never written, never put in the environment, forgotten by `close`."""
        for url in urls:
            if url:
                self._typed[_url_key(url)] = typed

    def typed_credentials(self, target: str) -> Any:
        """The credentials typed this session for a target (by its URL, or the URL a configured
        agent's name stands for), or None."""
        agent = self.config.agent(target) if self.config is not None else None
        for url in (target, agent.url if agent is not None else ""):
            found = self._typed.get(_url_key(url)) if url else None
            if found is not None:
                return found
        return None

    def recorded_agent(self, name: str) -> str | None:
        """The card URL of the one recorded agent a bare name means (its card name, any case;
        `History.match_agents`), or None (a URL or file, a reference agent's name, none, several)."""
        from explorer.demo.variants import VARIANTS

        text = name.strip()
        if not text or "/" in text or ":" in text or not self.use_history:
            return None
        if text.casefold() in VARIANTS:
            return None  # a reference agent lives at a new port each demo: start the demo instead
        try:
            found = self.history().match_agents(text)
        except ExplorerError:
            return None
        return found[0] if len(found) == 1 else None

    def target_problem(self, target: str) -> str | None:
        """Why `target` cannot name an agent (`explorer.interview.targets`), or None: a URL, a card file, a
        configured agent, an OpenClasp reference, or, in this session, a running reference agent."""
        from explorer.demo.variants import VARIANTS
        from explorer.interview.targets import target_problem

        wanted = target.strip().casefold()
        if self.demo_url(target) is not None or any(n.casefold() == wanted for n in self.demo_skipped):
            return None  # a skipped reference agent: planning says why it is not running
        if self.recorded_agent(target) is not None:
            return None
        agents = list(self.config.agents) if self.config is not None else []
        configured = getattr(self.config, "settings", None) or {}
        base = self.settings.get("openclasp_base") or configured.get("openclasp_base")
        return target_problem(target, agents=agents, demo=VARIANTS, openclasp_base=base)

    def trust(self, keys: Sequence[Any]) -> None:
        """Trust these keys (JWKS objects, files or URLs) for every interview of the session."""
        self.settings["keys"] = tuple(self.settings.get("keys", ())) + tuple(keys)

    def _demo_target(self, target: str) -> str:
        """A reference agent's name as its URL; ExplorerError when that agent could not start."""
        url = self.demo_url(target)
        if url is not None:
            return url
        wanted = target.strip().casefold()
        skipped = next((name for name in self.demo_skipped if name.casefold() == wanted), None)
        if skipped is not None:
            raise ExplorerError(f"the reference agent {skipped} is not running: {self.demo_skipped[skipped]}")
        return target

    async def interview(self, target: str, progress: Callable[[Any], None] | None = None) -> Run:
        from explorer.interview.procedure import run_interview

        url, options = self.plan(target)
        run = await run_interview(url, options, progress)
        return await self._signed(run, options)

    def sweep(
        self,
        targets: Sequence[str],
        concurrency: int,
        *,
        stopped: Callable[[], bool],
        on_error: Callable[[str, str], None],
        on_done: Callable[[str, Run | None, int | None], None],
    ) -> None:
        """Interview `targets` (as typed), `concurrency` at once, each planned as `plan` plans it
        and its run recorded. `on_error(target, message)` for a target that cannot be planned;
        `on_done(target, run or None when unreachable, run id)` as each finishes. No new target
        starts once `stopped()`. Blocks on an event loop of its own: call it from a thread."""
        import asyncio

        from explorer.interview.planning import unbound_credentials
        from explorer.interview.sweep import Job, sweep

        unbound = unbound_credentials(self.settings, len(targets))
        if unbound is not None:  # the launch's credentials are bound to no agent of the list
            for given in targets:
                on_error(given, unbound)
            return
        jobs = []
        for position, given in enumerate(targets):
            try:
                url, options = self.plan(given)
            except ExplorerError as exc:
                on_error(given, str(exc))
                continue
            jobs.append(Job(position, url, options))
        by_url = {job.target: targets[job.position] for job in jobs}

        def finished(done: Any) -> None:
            target = by_url.get(done.job.target, done.job.target)
            on_done(target, done.run, None if done.run is None else self.record(done.run))

        asyncio.run(sweep((j for j in jobs if not stopped()), finished, concurrency=concurrency))

    async def _signed(self, run: Run, options: Any) -> Run:
        """The live run signed with the config's `sign_key` when it runs as an independent party
        or a platform under a runner name (as `verify --sign-key` does); else as it is."""
        key = self._signing_key(options)
        if key is None:
            return run
        import asyncio

        from explorer.evidence.signing import SigningError, sign_run

        try:
            return await asyncio.to_thread(sign_run, run, key)
        except SigningError as exc:
            self.warnings.append(f"run not signed: {exc}")
            return run

    def _signing_key(self, options: Any) -> Any:
        path = getattr(self.config, "sign_key", None)
        if not path or options.role not in ("independent", "platform") or not options.runner:
            return None
        if self._sign_key is None:
            from explorer.evidence.runner_keys import RunnerKeyError, config_path_of, load

            try:
                self._sign_key = load(config_path_of(self.config, path))
            except RunnerKeyError as exc:
                self.warnings.append(f"runs are not signed: {exc}")
                self._sign_key = False
        return self._sign_key or None

    # ---- the reference agents --------------------------------------------------------------
    def adopt_fleet(self, fleet: Any, *, owned: bool = True) -> None:
        """Use a running fleet: list its agents, trust its keys, explain the ones that could not
        start; `owned` (this session started it) also stops it on close."""
        if owned:
            self._fleet = fleet
        self.demo = tuple(demo_agents(fleet))
        self.demo_skipped = dict(getattr(fleet, "skipped", {}))
        self.demo_moved = dict(getattr(fleet, "moved", {}))
        self.trust(demo_keys(fleet))
        self.demo_credentials = demo_credentials(fleet)

    def start_demo(self) -> None:
        """Start the reference agents in this session (blocks for about a third of a second)."""
        self.adopt_fleet(start_fleet(self.home))

    def close(self) -> None:
        """Stop what this session started (the reference agents) and close the history."""
        self._typed.clear()
        fleet, self._fleet = self._fleet, None
        if fleet is not None:
            fleet.stop()
        history, self._history = self._history, None
        if history is not None:
            history.close()

    def configured_agents(self) -> list[str]:
        return sorted(self.config.agents) if self.config is not None else []

    def configured_credentials(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """Each configured agent's name, URL and the kinds of credential its entry carries."""
        from explorer.config.credentials import carried

        if self.config is None:
            return []
        return [(a.name, a.url, carried(a.settings)) for _, a in sorted(self.config.agents.items())]

    def save_agent(self, name: str, entry: str) -> Path:
        """Add a config agent entry (TOML text holding only `env:`/`file:` references) and reload
        the config; ExplorerError when the name is taken or the file cannot be written."""
        from explorer.config.file import ConfigError, append_agent, config_path, load_config

        path = config_path(self.home)
        try:
            append_agent(path, name, entry)
            self.config = load_config(self.home)
        except (ConfigError, OSError) as exc:
            raise ExplorerError(str(exc)) from None
        return path

    def demo_url(self, name: str) -> str | None:
        """The URL of the reference agent called `name` (any case), if the demo is running."""
        wanted = name.strip().casefold()
        return next((agent.url for agent in self.demo if agent.name.casefold() == wanted), None)

    # ---- history ---------------------------------------------------------------------------
    def history(self) -> Any:
        """The History store, opened on first use (once, though the screens' worker threads may
        ask at the same moment); raises ExplorerError with the reason."""
        with self._opening:
            if self._history is None:
                from explorer.config.history_choice import HistoryChoice

                choice = self.history_choice or HistoryChoice(None)
                try:
                    self._history = choice.open(self.home, clock=self.clock)
                except Exception as exc:  # a broken database must read as a message, not a crash
                    raise ExplorerError(f"cannot open history: {exc}") from None
            return self._history

    def record(self, run: Run) -> int | None:
        """Record the run; None when history is off or failed (then `record_error` says why)."""
        self.record_error = None
        if not self.use_history:
            return None
        try:
            return int(self.history().record(run))
        except Exception as exc:  # HistoryError (full disk, locked, damaged) or ExplorerError
            self.record_error = str(exc)
            self.warnings.append(f"run not recorded: {exc}")
        return None

    def rows(self, agent: str | None = None, limit: int = 200) -> list[RunRow]:
        """Runs newest first (of one agent, or of all), each with the standing it earns here;
        ExplorerError when history cannot be read. An unsigned run is a claim by the contract's
        rule, read from its summary; a signed one shows CHECKING until `check_signed` (which
        loads it and checks its signature, some milliseconds each) has run for it."""
        from explorer.evidence.standing import read_back
        from explorer.tui.model import standing_mark

        with self._reading():
            summaries = self.history().runs(agent=agent, limit=limit)
            signed = self.history().signed([s.id for s in summaries])
            unsigned = read_back(self.history(), [s for s in summaries if s.id not in signed], {})
        return [
            _row(s, self._marks.get(s.id, CHECKING) if s.id in signed else standing_mark(unsigned[s.id]))
            for s in summaries
        ]

    def page(self, which: RunFilter, before: int | None = None, limit: int = 200) -> list[RunRow]:
        """One page of the history screen: the newest `limit` runs `which` selects, older than run
        `before` (keyset paging: the store answers each page from an index, never OFFSET), each
        with what changed since its agent's run before it and the standing it earns here (a
        signed run shows CHECKING until `check_signed`). A blocking read: call it off the event
        loop. ExplorerError when the history cannot be read."""
        from explorer.evidence.standing import read_back
        from explorer.tui.model import standing_mark

        with self._reading():
            history = self.history()
            summaries = list(history.query(which.query(before, limit)))
            ids = [s.id for s in summaries]
            previous = history.previous(ids)
            signed = history.signed(ids)
            unsigned = read_back(history, [s for s in summaries if s.id not in signed], {})
        return [
            _row(
                s,
                self._marks.get(s.id, CHECKING) if s.id in signed else standing_mark(unsigned[s.id]),
                changes_since(previous.get(s.id), s),
            )
            for s in summaries
        ]

    def check_signed(self, run_ids: Sequence[int]) -> dict[int, str]:
        """The standing marks of signed runs (their signature checked under the trusted runner
        keys), remembered for the session: a stored run never changes. Safe in a thread."""
        self.read_latest([run_id for run_id in run_ids if run_id not in self._marks])
        return {run_id: self._marks.get(run_id, "? unreadable") for run_id in run_ids}

    # ---- signed evidence -------------------------------------------------------------------
    def trusted_runners(self) -> Mapping[str, bytes]:
        """The runner keys whose signed results read as evidence here: the config's
        `trusted_runners` files and the public half of its own `sign_key` (URLs are not fetched
        by the TUI; `verify --offline --trust-runner URL` does that)."""
        if self._trusted is None:
            from explorer.evidence.runner_keys import config_path_of, trusted_from_files

            config = self.config
            sources = list(getattr(config, "trusted_runners", ()) or ())
            for url in (s for s in sources if "://" in s):
                self.warnings.append(f"trusted runner keys at {url}: not fetched by the screens")
            paths = [config_path_of(config, s) for s in sources if "://" not in s]
            own = getattr(config, "sign_key", None)
            self._trusted, notes = trusted_from_files(paths, config_path_of(config, own) if own else None)
            self.warnings.extend(notes)
        return dict(self._trusted)

    def reader_trust(self, agent: str = "") -> Any:
        """Your trust roots for reading a recorded run of `agent` (`explorer.evidence.reading.ReaderTrust`):
        the card keys of the launch settings and the config (key files and key sets; URLs are not
        fetched by the screens), `--allow-jku`, and the trusted runner keys. Never a run's own."""
        if agent not in self._readers:
            from explorer.evidence.reading import ReaderTrust
            from explorer.interview.planning import PlanError, values
            from explorer.net.keys import KeysError, load_keys_sync, user_keys

            try:
                found = values(agent, self.settings, self.config, secrets=False)
            except PlanError as exc:
                raise ExplorerError(str(exc)) from None
            items = tuple(found.get("keys", ()))
            files = [k for k in items if isinstance(k, str) and "://" not in k]
            for url in (k for k in items if isinstance(k, str) and "://" in k):
                self.warnings.append(f"trusted keys at {url}: not fetched by the screens")
            try:
                loaded, notes = load_keys_sync(files)
                keys, dropped = user_keys(items, loaded)
            except KeysError as exc:
                raise ExplorerError(f"trusted keys: {exc}") from None
            self.warnings.extend((*notes, *dropped))
            self._readers[agent] = ReaderTrust(keys, bool(found.get("allow_jku")), self.trusted_runners())
        return self._readers[agent]

    def assessed(self, run: Run) -> Run:
        """A stored run as read here (`explorer.evidence.reading`): its report derived again from its bytes
        under your keys, its standing under the runner keys you trust."""
        from explorer.evidence.reading import read_run
        from explorer.store.sqlite import agent_of

        return read_run(run, self.reader_trust(agent_of(run.recorded_report)))

    def looks_like_transcript(self, target: str) -> bool:
        """A `.json` file whose first bytes name `transcript_version` (cheap: no parsing)."""
        path = Path(target).expanduser()
        if path.suffix.lower() != ".json" or not path.is_file():
            return False
        try:
            with path.open("rb") as fh:
                return b'"transcript_version"' in fh.read(4096)
        except OSError:
            return False

    def open_transcript(self, target: str) -> Run | None:
        """A JSON transcript file named as a target, re-verified offline (nothing is fetched):
        everything shown derived from its bytes under your keys, the standing from its signature.
        None when `target` is not a transcript file; ExplorerError (one sentence) when it is one
        that cannot be read, is malformed, or states a report its bytes do not give (then what
        is shown is what its bytes give, and a warning says so)."""
        from explorer.core.rederive import first_card_request
        from explorer.core.run import TranscriptError
        from explorer.evidence.reading import read_run, read_transcript_file, stated_problem

        path = Path(target).expanduser()
        if path.suffix.lower() != ".json" or not path.is_file():
            return None
        try:
            transcript = read_transcript_file(path)
        except TranscriptError as exc:
            if not self.looks_like_transcript(target):
                return None  # a card file (or not JSON at all): the live path reads it and says what is wrong
            raise ExplorerError(f"{path} is not a usable transcript: {exc}") from None
        run = transcript.run
        card = first_card_request([e for e in run.exchanges if e.purpose == "card"])
        try:
            problem = stated_problem(run)
            shown = read_run(run, self.reader_trust(card.url if card is not None else ""), transcript)
        except TranscriptError as exc:
            raise ExplorerError(f"{path} is not a usable transcript: {exc}") from None
        if problem is not None:
            self.warnings.append(f"{path} states a report its bytes do not give ({problem}); shown is what "
                                 "its bytes give")
        return shown

    def fleet(self) -> list[Any]:
        """Every agent with its latest run and churn (history `FleetSummary`), for the fleet view.

        Each latest run as it reads here, not as it was recorded: once read (`read_latest`, or
        opening it) its verdict, standing and card signature are the ones its bytes give under
        your keys. Until then an unsigned run is a claim read back and a signed one "unchecked",
        and a card signature that depends on keys (anything but unsigned) is "unchecked" too."""
        with self._reading():
            entries = list(self.history().fleet())
            signed = self.history().signed([e.last_run_id for e in entries])
        return [self._fleet_row(e, e.last_run_id in signed) for e in entries]

    def _fleet_row(self, entry: Any, signed: bool) -> Any:
        read = self._read_here.get(entry.last_run_id)
        if read is not None:
            verdict, standing, signature = read
            return entry._replace(verdict=verdict, standing=standing, signature=signature)
        from explorer.tui.fleet_model import UNCHECKED

        standing = self._standings.get(entry.last_run_id, UNCHECKED) if signed else "claim"
        as_recorded = not self.read_stored or entry.signature in (None, "unsigned")  # no key changes those
        signature = entry.signature if as_recorded else UNCHECKED
        return entry._replace(standing=standing, signature=signature)

    def read_latest(self, run_ids: Sequence[int]) -> dict[int, tuple[str, str, str | None]]:
        """(verdict, standing, card signature status) of each stored run as read here: its
        report derived again from its bytes under your keys, its standing under the runner keys
        you trust. Some milliseconds a run, remembered for the session (a stored run never
        changes): call it off the event loop, for the rows in view."""
        for run_id in run_ids:
            if run_id not in self._read_here:
                try:
                    self.load(run_id)
                except ExplorerError:
                    self._read_here[run_id] = ("unreadable", "claim", "unreadable")
        return {run_id: self._read_here[run_id] for run_id in run_ids}

    def agents(self) -> list[Any]:
        """The agents with runs (history `AgentSummary`), most recently run first."""
        with self._reading():
            return list(self.history().agents())

    def mark(self) -> Any:
        """The history's change fingerprint (`HistoryStore.mark`, one small aggregate on either
        backend): when it differs from the last one read, a runner (this one, another process,
        another machine) recorded or forgot runs. A blocking read: call it off the event loop."""
        with self._reading():
            return self.history().mark()

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except ExplorerError:
            raise
        except Exception as exc:
            raise ExplorerError(f"cannot read the history: {exc}") from None

    def load(self, run_id: int) -> Run:
        """A stored run, with the standing it earns here (the signature checked again)."""
        try:
            run = self.assessed(self.history().load(run_id))
        except ExplorerError:
            raise
        except Exception as exc:
            raise ExplorerError(f"cannot load run {run_id}: {exc}") from None
        from explorer.core import view

        checked = view.ReportView.of(run.report)
        if run.attestation is not None:
            self._marks[run_id] = checked.standing_mark()  # the lists show it from now on
            self._standings[run_id] = checked.standing  # and the fleet view its standing
        standing = "evidence" if checked.standing == "evidence" and checked.role != "self" else "claim"
        signed = isinstance(checked.card.raw.get("signature"), Mapping)
        signature = checked.card.signature.status if signed else None
        self._read_here[run_id] = (checked.verdict, standing, signature)
        return run

    def forget(self, run_id: int) -> None:
        self.history().forget_run(run_id)

    def recent_targets(self, limit: int = 8) -> list[RecentAgent]:
        """The latest run of each recently interviewed agent, newest first, for the load screen.

        A target that never gave a card (a mistyped URL, a port nothing listens on) is left out:
        it is no agent to come back to. Runs of one agent at several URLs (the same card name
        and the same signing key id, as a reference agent of an older session on another port)
        are one entry, at its newest URL, naming the others; two cards of one name signed by
        different keys, or unsigned, stay apart (one may be an impostor)."""
        try:
            rows = self.rows(limit=200)
        except Exception:
            return []
        answered = {row.target for row in rows if row.card_sha256}
        latest: list[RunRow] = []
        seen: set[str] = set()
        for row in rows:
            if row.target and row.target not in seen and row.target in answered:
                seen.add(row.target)
                latest.append(row)
        names: dict[str, int] = {}
        for row in latest:
            names[row.name.casefold()] = names.get(row.name.casefold(), 0) + 1
        out: list[RecentAgent] = []
        grouped: dict[tuple[str, str], int] = {}
        for row in latest:
            kid = self._signing_kid(row.run_id) if row.name and names[row.name.casefold()] > 1 else None
            key = (row.name.casefold(), kid) if kid else None
            if key is not None and key in grouped:
                first = out[grouped[key]]
                out[grouped[key]] = first._replace(others=(*first.others, row.target))
                continue
            if key is not None:
                grouped[key] = len(out)
            out.append(RecentAgent(row))
        return out[:limit]

    def _signing_kid(self, run_id: int) -> str | None:
        """The key id that signed the card of a stored run (remembered: a stored run never changes)."""
        if run_id not in self._kids:
            try:
                signature = self.history().load(run_id).report.get("card", {}).get("signature", {})
                kid = signature.get("kid") if isinstance(signature, Mapping) else None
            except Exception:  # an unreadable run is simply not grouped
                kid = None
            self._kids[run_id] = kid if isinstance(kid, str) and kid else None
        return self._kids[run_id]

    # ---- export and compare ----------------------------------------------------------------
    def export(self, run: Run, fmt: str, run_id: int | None = None, directory: Path | None = None) -> Path:
        """Write the run in `fmt` (a key of EXPORT_FORMATS) into `directory`; returns the path. A
        file of that name is never overwritten: the new one gets a number (`...-run3-2.md`)."""
        from explorer.store.export import ExportError, write_export

        folder = directory or self.export_dir
        try:
            return write_export(run, fmt, folder / self._export_name(run, fmt, run_id), number=True)
        except ExportError as exc:
            raise ExplorerError(str(exc)) from None

    def export_file(self, run: Run, fmt: str, run_id: int | None = None) -> tuple[str, str, str]:
        """The export as (file name, text, media type), written nowhere: what a browser session
        delivers as a download. ExplorerError when the format does not apply."""
        from explorer.store.export import ALL_FORMATS, ExportError
        from explorer.store.export import export as export_text

        name = self._export_name(run, fmt, run_id)
        try:
            return name, export_text(run, fmt), ALL_FORMATS[fmt].media_type
        except ExportError as exc:
            raise ExplorerError(str(exc)) from None

    def _export_name(self, run: Run, fmt: str, run_id: int | None) -> str:
        """`{agent}-run{id}{suffix}`: the agent's name slugged, so agent text chooses no path."""
        from explorer.store.export import ALL_FORMATS
        from explorer.tui.model import agent_name

        spec = ALL_FORMATS.get(fmt)
        if spec is None:
            raise ExplorerError(f"unknown export format {fmt!r}")
        stem = _slug(agent_name(run.report)) or "agent"
        tail = f"run{run_id}" if run_id is not None else self.clock().strftime("%Y%m%dT%H%M%SZ")
        return f"{stem}-{tail}{spec.suffix}"

    def export_formats(self, run: Run | None = None) -> list[tuple[str, str]]:
        """(key, label) of every export format, in the store's order; for a signed run, also its
        attestation alone (the runner's DSSE envelope)."""
        from explorer.store.export import ATTESTATION_FORMAT, EXPORT_FORMATS

        formats = [(key, spec.label) for key, spec in EXPORT_FORMATS.items()]
        if run is not None and run.attestation is not None:
            formats.append((ATTESTATION_FORMAT.name, ATTESTATION_FORMAT.label))
        return formats

    def compare(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> Any:
        """What changed from `a` to `b`, both as they read back (a live unsigned run's stated role
        is a label, as in the run it is compared with)."""
        from explorer.core.compare import compare_reports
        from explorer.evidence.standing import read_back_report

        return compare_reports(dict(read_back_report(a)), dict(read_back_report(b)))


def _url_key(url: str) -> str:
    return url.strip().rstrip("/")


def _without_credentials(settings: Mapping[str, Any]) -> dict[str, Any]:
    from explorer.config.settings import AUTH

    return {name: value for name, value in settings.items() if name not in AUTH}


def _config_without_credentials(config: Any, target: str) -> Any:
    """The config with no credential setting at its top level or in the entry `target` names."""
    if config is None:
        return None
    from dataclasses import replace

    agents = dict(config.agents)
    agent = config.agent(target)
    if agent is not None:
        agents[agent.name] = replace(agent, settings=_without_credentials(agent.settings))
    return replace(config, settings=_without_credentials(config.settings), agents=agents)


def _row(summary: Any, standing: str = "", since: str = "") -> RunRow:
    """A history `RunSummary` as the screens' `RunRow`."""
    return RunRow(
        run_id=summary.id,
        agent=summary.agent,
        name=summary.name or "",
        started_at=summary.recorded_at,
        verdict=summary.verdict,
        card_sha256=summary.card_sha256,
        answers_sha256=summary.answers_sha256,
        changed=summary.changed,
        standing=standing,
        since=since,
    )


def _slug(text: str) -> str:
    out = "".join(ch.lower() if ch.isascii() and ch.isalnum() else "-" for ch in text)
    return "-".join(part for part in out.split("-") if part)[:40]
