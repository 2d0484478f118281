"""Everything the screens need from outside the terminal, behind one small object.

Screens never import the procedure, the history or the exporters themselves: they ask the
`AppContext` (reached with `explorer.tui.app.context_of(self)`), which imports those modules on
first use (startup pays only for what the first screen draws), turns their failures into
readable messages (`ExplorerError`), and carries what must be injected for deterministic tests
and snapshots: the clock, the home directory, the export directory and the watch interval.
`launch.py` builds it from the command line and the config file.

The context is a facade: its fields are the session's settings, and its methods hand each
request to the part that does the work, so each part can be read on its own:

- `planner.Planner`: what a typed target means, with which credentials, and running interviews;
- `runs.RunReader`: the stored runs as they read here, under your keys, remembered per session;
- `exporter`: a run as a file.

What is left here is the session itself: its history store (opened once, on first use, and
closed with the session), recording a run, the reference agents it runs or adopts, and the
config entries it lists and saves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.core.when import utc_now
from explorer.tui import exporter
from explorer.tui.demo_agents import DemoAgent, demo_agents, demo_credentials, demo_keys, start_fleet
from explorer.tui.errors import ExplorerError
from explorer.tui.export_folder import remember, usual_folder
from explorer.tui.planner import Planner
from explorer.tui.runs import RecentAgent, RunFilter, RunReader, RunRow

if TYPE_CHECKING:
    from explorer.core.run import Run

Clock = Callable[[], datetime]
_EARLY_LOAD_WAIT = 10.0  # seconds the first screen waits for the launch's run read by a child


def _run_key(run_id: int) -> str:
    """What a stored run read early is known by (`EarlyInterview.target`): never a target."""
    return f"run #{run_id}"


@dataclass(eq=False)
class AppContext:
    """The explorer's services and settings for one TUI session."""

    home: Path | None = None
    # What the session was launched with, by setting name (`explorer.interview.planning.typed`): keys,
    # headers, role, runner, ... The config file's settings come with `config`.
    settings: dict[str, Any] = field(default_factory=dict)
    keymap: Mapping[str, str] = field(default_factory=dict)
    config: Any = None  # the user's Config: configured agents (name -> url, headers, keys), global keys
    clock: Clock = utc_now
    demo: Sequence[DemoAgent] = ()
    demo_skipped: Mapping[str, str] = field(default_factory=dict)  # reference agents not started: why
    demo_moved: Mapping[str, str] = field(default_factory=dict)  # ...not on their usual port: where, why
    demo_credentials: Mapping[str, Any] = field(default_factory=dict)  # guarded agents by card URL
    export_dir: Path = field(default_factory=usual_folder)  # never the current directory (a clone)
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
    _early: Any = None  # explorer.tui.early.EarlyInterview: the launch target's, until claimed
    _prerecorded: Any = None  # (run, run id, why not): the early child recorded that run already
    _planner: Planner = field(init=False, repr=False)
    _runs: RunReader = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._planner = Planner(self)
        self._runs = RunReader(self)

    # ---- the interview (explorer.tui.planner) ------------------------------------------------
    def plan(self, target: str) -> tuple[str, Any]:
        """The URL to interview and the procedure's Options for a target (`Planner.plan`)."""
        return self._planner.plan(target)

    def target_problem(self, target: str) -> str | None:
        """Why `target` cannot name an agent, or None (`Planner.target_problem`)."""
        return self._planner.target_problem(target)

    def sign_in(self, urls: Sequence[str], typed: Any) -> None:
        """Use credentials typed in the sign-in dialog for the agent at `urls`, for the rest of
        the session, in memory only (`Planner.sign_in`)."""
        self._planner.sign_in(urls, typed)

    def trust(self, keys: Sequence[Any]) -> None:
        """Trust these keys (JWKS objects, files or URLs) for every interview of the session."""
        self.settings["keys"] = tuple(self.settings.get("keys", ())) + tuple(keys)

    async def interview(self, target: str, progress: Callable[[Any], None] | None = None) -> Run:
        """Plan and run one interview, signed when the config says so (`Planner.interview`); the
        launch target's first interview is the one `start_early` began (`explorer.tui.early`)."""
        early, self._early = self._early, None
        if early is not None and early.target == target:
            return self._recorded_by(early, await early.claim(progress))
        if early is not None:
            early.cancel()  # another target was asked first: that one is no longer wanted
        return await self._planner.interview(target, progress)

    def early_run(self, target: str, wanted: Callable[[Run], bool], *, wait: float = 0.0) -> Run | None:
        """The run of `start_early`'s interview of `target` if it has finished already, or
        within `wait` seconds, and is `wanted` (it is then this caller's, and no `interview`
        continues it), else None."""
        early = self._early
        if early is None or early.target != target:
            return None
        if wait > 0:
            early.wait(wait)
        run = early.finished_run(wanted)
        if run is not None:
            self._early = None
            self._recorded_by(early, run)
        return run

    def _recorded_by(self, early: Any, run: Run) -> Run:
        """Remember that the early interview's child recorded `run` (and as what), so `record`
        hands that out instead of recording the run twice."""
        if early.recorded is not None:
            self._prerecorded = (run, *early.recorded)
        return run

    def start_early(self, target: str) -> None:
        """Begin interviewing `target` now, on a thread of its own, before the TUI is built: the
        next `interview` of the same target continues it instead of asking again."""
        from explorer.tui.early import EarlyInterview

        try:
            interview = self._planner.planned(target)
        except ExplorerError:
            return  # nothing begun: the progress screen plans again and says why
        record = self._record_detached if self.use_history else None
        self._early = EarlyInterview(target, interview, carried=self.warnings, record=record).start()

    def sweep(
        self,
        targets: Sequence[str],
        concurrency: int,
        *,
        stopped: Callable[[], bool],
        on_error: Callable[[str, str], None],
        on_done: Callable[[str, Run | None, int | None], None],
    ) -> None:
        """Interview many targets, `concurrency` at once, recording each (`Planner.sweep`).
        Blocks on an event loop of its own: call it from a thread."""
        self._planner.sweep(targets, concurrency, stopped=stopped, on_error=on_error, on_done=on_done)

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

    def demo_url(self, name: str) -> str | None:
        """The URL of the reference agent called `name` (any case), if the demo is running."""
        wanted = name.strip().casefold()
        return next((agent.url for agent in self.demo if agent.name.casefold() == wanted), None)

    def close(self) -> None:
        """Forget typed credentials, stop what this session started (the reference agents) and
        close the history."""
        self._planner.forget_typed()
        early, self._early = self._early, None
        if early is not None:
            early.cancel()
        fleet, self._fleet = self._fleet, None
        if fleet is not None:
            fleet.stop()
        history, self._history = self._history, None
        if history is not None:
            history.close()

    # ---- the config ------------------------------------------------------------------------
    def configured_agents(self) -> list[str]:
        return sorted(self.config.agents) if self.config is not None else []

    def configured_credentials(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """Each configured agent's name, URL and the kinds of credential its entry carries."""
        from explorer.config.credentials import carried

        if self.config is None:
            return []
        return [(a.name, a.url, carried(a.settings)) for _, a in sorted(self.config.agents.items())]

    def choose_export_dir(self, folder: Path) -> None:
        """The folder the next export starts in, this session and the next (`tui/export_folder.py`)."""
        self.export_dir = folder.resolve()
        remember(self.home, self.export_dir)

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

    # ---- the history store -------------------------------------------------------------------
    def history(self) -> Any:
        """The History store, opened on first use (once, though the screens' worker threads may
        ask at the same moment); raises ExplorerError with the reason. Every read of the session
        goes through here."""
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
        """Record the run; None when history is off or failed (then `record_error` says why).
        The launch target's run, recorded already by the child that ran it, is not recorded
        again: its id (or why it could not be) is the child's (`explorer.tui.early`)."""
        self.record_error = None
        if not self.use_history:
            return None
        done, self._prerecorded = self._prerecorded, None
        run_id, error = done[1:] if done is not None and done[0] is run else self._store(run)
        if error is not None:
            self.record_error = error
            self.warnings.append(f"run not recorded: {error}")
        return run_id

    def _store(self, run: Run) -> tuple[int | None, str | None]:
        try:
            return int(self.history().record(run)), None
        except Exception as exc:  # HistoryError (full disk, locked, damaged) or ExplorerError
            return None, str(exc)

    def _record_detached(self, run: Run) -> tuple[int | None, str | None]:
        """`record` in the early interview's child process; nothing said (the parent's `record`
        says it)."""
        with self._own_store():
            return self._store(run)

    @contextmanager
    def _own_store(self) -> Iterator[None]:
        """In a forked child: a store of its own, opened on first use and closed after the block.
        One the parent opened before the fork is the parent's: dropped here, never used or closed."""
        self._history = None
        try:
            yield
        finally:
            history, self._history = self._history, None
            if history is not None:
                history.close()

    def forget(self, run_id: int) -> None:
        self.history().forget_run(run_id)

    # ---- reading stored runs (explorer.tui.runs): blocking, so from a worker thread ----------
    def rows(self, agent: str | None = None, limit: int = 200) -> list[RunRow]:
        """Runs newest first, each with the standing it earns here (`RunReader.rows`)."""
        return self._runs.rows(agent, limit)

    def page(self, which: RunFilter, before: int | None = None, limit: int = 200) -> list[RunRow]:
        """One keyset page of the history screen (`RunReader.page`)."""
        return self._runs.page(which, before, limit)

    def check_signed(self, run_ids: Sequence[int]) -> dict[int, str]:
        """The standing marks of signed runs, their signatures checked (`RunReader.check_signed`)."""
        return self._runs.check_signed(run_ids)

    def fleet(self) -> list[Any]:
        """Every agent with its latest run and churn, as it reads here (`RunReader.fleet`)."""
        return self._runs.fleet()

    def read_latest(self, run_ids: Sequence[int]) -> dict[int, tuple[str, str, str | None]]:
        """(verdict, standing, card signature status) of stored runs as read here
        (`RunReader.read_latest`)."""
        return self._runs.read_latest(run_ids)

    def agents(self) -> list[Any]:
        """The agents with runs, most recently run first (`RunReader.agents`)."""
        return self._runs.agents()

    def mark(self) -> Any:
        """The history's change fingerprint (`RunReader.mark`)."""
        return self._runs.mark()

    def recent_targets(self, limit: int = 8) -> list[RecentAgent]:
        """The load screen's recent agents (`RunReader.recent_targets`)."""
        return self._runs.recent_targets(limit)

    def load(self, run_id: int) -> Run:
        """A stored run, with the standing it earns here (`RunReader.load`); the launch's run,
        read by a child process while textual was imported (`start_early_load`), when it has it."""
        early = self._early
        if early is not None and early.target == _run_key(run_id):
            self._early = None
            early.wait(_EARLY_LOAD_WAIT)
            run = early.finished_run(lambda _run: True)
            if run is not None:
                self._runs.remember(run_id, run)
                return run
            early.cancel()  # failed (said again by the load here) or too slow: read it here
        return self._runs.load(run_id)

    def start_early_load(self, run_id: int) -> None:
        """Read stored run `run_id` now, in a child process where one can be forked, before the
        TUI is built: opening the history, reading the run and deriving its report again under
        your keys import the store and most of the core, work the first screen would otherwise
        do after textual's import (bench/startup.py). On a thread the reads would only share
        the interpreter with that import, so then nothing starts early."""
        from explorer.tui.early import EarlyInterview, can_fork

        if not can_fork():
            return

        async def read(_progress: Any) -> Run:
            return self._read_detached(run_id)

        self._early = EarlyInterview(_run_key(run_id), read).start()

    def _read_detached(self, run_id: int) -> Run:
        """`RunReader.read` in the launch's child."""
        with self._own_store():
            return self._runs.read(run_id)

    def looks_like_transcript(self, target: str) -> bool:
        """A `.json` file whose first bytes name `transcript_version` (cheap: no parsing)."""
        return self._runs.looks_like_transcript(target)

    def open_transcript(self, target: str) -> Run | None:
        """A JSON transcript file re-verified offline, or None when `target` is not one
        (`RunReader.open_transcript`)."""
        return self._runs.open_transcript(target)

    # ---- export and compare ----------------------------------------------------------------
    def export(self, run: Run, fmt: str, run_id: int | None = None, directory: Path | None = None) -> Path:
        """Write the run in `fmt` into `directory` (the export directory by default); returns
        the path, never overwriting a file (`exporter.write_export`)."""
        return exporter.write_export(run, fmt, directory or self.export_dir, run_id, self.clock)

    def export_file(self, run: Run, fmt: str, run_id: int | None = None) -> tuple[str, str, str]:
        """The export as (file name, text, media type), written nowhere (`exporter.export_file`)."""
        return exporter.export_file(run, fmt, run_id, self.clock)

    def export_formats(self, run: Run | None = None) -> list[tuple[str, str]]:
        """(key, label) of every export format that applies to `run` (`exporter.export_formats`)."""
        return exporter.export_formats(run)

    def compare(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> Any:
        """What changed from `a` to `b`, both as they read back (a live unsigned run's stated role
        is a label, as in the run it is compared with)."""
        from explorer.core.compare import compare_reports
        from explorer.evidence.standing import read_back_report

        return compare_reports(dict(read_back_report(a)), dict(read_back_report(b)))
