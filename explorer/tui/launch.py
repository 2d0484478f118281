"""From the command line to a running TUI: `run_tui(args)` and `run_demo(fleet, args)`.

The CLI imports this module only on the TUI path, and this module imports textual only inside
`build_app`, after the arguments and the config file have been checked: a bad `--header` or a
broken config prints one line and exits 2 without paying for the TUI. A TARGET made of digits
is a history run id (opened offline), a JSON transcript file is re-verified offline (its verdict
from its bytes, its standing from its signature); anything else is interviewed live.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.tui.context import AppContext, DemoAgent

if TYPE_CHECKING:
    from explorer.tui.app import ExplorerApp


DEFAULT_WATCH_EVERY = 30.0  # seconds between the watch screen's replays, unless told otherwise
TRANSCRIPT_ORIGIN = "transcript file (offline, nothing fetched)"


class LaunchError(Exception):
    """The arguments or the config cannot be used; the message says why."""


def build_context(args: argparse.Namespace, demo: Sequence[DemoAgent] = ()) -> AppContext:
    """Settings from the command line over the config file; raises LaunchError."""
    from explorer.config.file import ConfigError, load_config
    from explorer.interview.planning import PlanError, typed
    from explorer.tui.export_folder import starting_folder

    home = getattr(args, "home", None)
    try:
        config = load_config(home)
        settings = typed(args)  # the config's own settings come with `config`, by planning
    except (ConfigError, PlanError) as exc:
        raise LaunchError(str(exc)) from None
    context = AppContext(
        home=Path(home).expanduser() if home else None,
        settings=settings,
        config=config,
        keymap=dict(config.keymap),
        demo=tuple(demo),
        watch_interval=getattr(args, "watch_every", None) or config.watch_every or DEFAULT_WATCH_EVERY,
        history_choice=_history_choice(args),
        export_dir=starting_folder(Path(home).expanduser() if home else None),
    )
    note = config.ignored_note()
    if note:
        context.warnings.append(note)  # a toast on the first screen
    return context


def _history_choice(args: argparse.Namespace) -> Any:
    """The history `--history`, the environment or the config names (`explorer.config.history_choice`)."""
    chosen = getattr(args, "history_choice", None)
    if chosen is not None:
        return chosen
    from explorer.config.history_choice import HistoryChoiceError, choose_history

    try:
        return choose_history(getattr(args, "history", None), getattr(args, "home", None))
    except HistoryChoiceError as exc:
        raise LaunchError(str(exc)) from None


def build_app(
    args: argparse.Namespace,
    demo: Sequence[DemoAgent] = (),
    *,
    early: bool = False,
    **context_overrides: Any,
) -> ExplorerApp:
    """The app for these arguments (not running yet); raises LaunchError. With `early`, a live
    target's interview, or the reading of a stored run, starts now, before textual is imported
    (`explorer.tui.early`)."""
    context = build_context(args, demo)
    for name, value in context_overrides.items():
        if not hasattr(context, name):
            raise TypeError(f"AppContext has no setting {name!r}")
        setattr(context, name, value)
    target = (getattr(args, "target", None) or "").strip()
    listed = getattr(args, "from_", None)
    if listed is not None:
        from explorer.tui.app import ExplorerApp, Start

        if target:
            raise LaunchError("give either TARGET or --from FILE, not both")
        agents = list(getattr(context.config, "agents", None) or ())
        allow = bool(getattr(args, "allow_files", False))
        return ExplorerApp(context, Start(fleet=tuple(_targets_from(listed, allow, agents))))
    transcript = None
    if target and not target.isdigit():
        problem = context.target_problem(target)
        if problem is not None:
            raise LaunchError(problem)
        from explorer.tui.errors import ExplorerError

        try:
            transcript = context.open_transcript(target)  # a JSON transcript opens offline
        except ExplorerError as exc:
            raise LaunchError(str(exc)) from None
        if transcript is None and early:
            from explorer.tui import collector

            collector.pause()  # a live interview starts: as the progress screen would (tui/collector.py)
            context.start_early(target)
    if target.isdigit() and early:
        context.start_early_load(int(target))
    from explorer.tui.app import ExplorerApp, Start

    start = Start(run_id=int(target)) if target.isdigit() else Start(target=target or None)
    if transcript is not None:
        start = Start(run=transcript, origin=TRANSCRIPT_ORIGIN)
    return ExplorerApp(context, start)


def _targets_from(listed: str, allow_files: bool = False, agents: list[str] | None = None) -> list[str]:
    """The targets of `--from FILE|-`; LaunchError when the list cannot be read or is empty, or
    holds a file path without `--allow-files` (`explorer.interview.targets.list_files_problem`)."""
    from explorer.core.sweep import target_lines
    from explorer.interview.targets import list_files_problem

    if listed == "-":
        raise LaunchError("--from: the explorer reads the keyboard on stdin; give the list as a file")
    try:
        text = Path(listed).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LaunchError(f"--from: cannot read {listed} ({exc})") from None
    targets = target_lines(text)
    if not targets:
        raise LaunchError(f"--from: {listed} lists no targets (one per line, # comments skipped)")
    problem = None if allow_files else list_files_problem(targets, agents or ())
    if problem is not None:
        raise LaunchError(f"--from: {problem}")
    return targets


def run_app(app: ExplorerApp, **run_options: Any) -> int:
    """Run the app to its end; returns its exit status.

    Everything imported and built so far (textual, the stylesheet machinery, the run being
    shown) lives until the process ends, so it is moved out of the garbage collector's sight
    before the first frame, and again on the way out. Without that, a full collection during
    the first frame walks all of it (about 50 ms on a small machine) and the interpreter's
    collections at exit walk every widget too (about 300 ms, so quitting felt slow): the whole
    launch-to-first-paint-and-quit took 1.17 s instead of 0.83 s (bench/startup.py). Nothing
    here holds a file open across that point: history writes commit and exports are written
    and closed when they happen. (`explorer.tui.collector` says when else the collector runs.)
    """
    from explorer.tui import collector

    collector.settle()
    try:
        result = app.run(**run_options)
    finally:
        collector.settle()
    return int(result or 0)


def run_tui(args: argparse.Namespace) -> int:
    """`interview-explorer [TARGET]`: open the explorer; exit status 2 on a usage error."""
    try:
        app = build_app(args, early=True)
    except LaunchError as exc:
        print(f"interview-explorer: {exc}", file=sys.stderr)
        return 2
    try:
        return run_app(app)
    finally:
        app.context.close()  # stops the reference agents if the session started them


def demo_app(fleet: Any, args: argparse.Namespace, crowd: Any = None) -> ExplorerApp:
    """The app on a started fleet: its agents listed, its keys trusted, its skipped agents
    explained; with a started crowd (`demo --crowd N`), its keys trusted too and the fleet view
    first, sweeping the crowd. Raises LaunchError."""
    app = build_app(args)
    app.context.adopt_fleet(fleet, owned=False)  # `demo` started it and stops it
    if crowd is not None:
        from explorer.tui.app import Start
        from explorer.tui.demo_agents import demo_keys

        app.context.trust(demo_keys(crowd))
        app.start = Start(fleet=tuple(agent.card_url for agent in crowd.agents.values()))
    return app


def run_demo(fleet: Any, args: argparse.Namespace, crowd: Any = None) -> int:
    """`interview-explorer demo [--crowd N]`: the explorer on the started reference agents."""
    try:
        app = demo_app(fleet, args, crowd)
    except LaunchError as exc:
        print(f"interview-explorer: {exc}", file=sys.stderr)
        return 2
    return run_app(app)
