"""The `interview-explorer` entry point.

The first word picks a headless command (`card`, `verify`, `history`, ...); anything else, or
nothing, opens the TUI on an optional target. Each command lives in its own module under
`explorer.commands` and is imported only when chosen, so `verify` in a CI job never pays for
(or imports) textual. Only this module imports the TUI: on the TUI path, and for `demo`, which
gets the TUI's launcher from here (`args.tui_launcher`) instead of importing it itself.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from explorer import __version__
from explorer.commands.common import add_explorer_arguments
from explorer.core import nogc

# name -> (module under explorer.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "card": ("card", "show a card's layout, extensions and signatures (offline or one GET)"),
    "verify": ("verify", "interview an agent and diff its answers against its signed documents"),
    "demo": ("demo", "start the reference agents on loopback (and open the TUI on them)"),
    "serve": ("serve", "serve the explorer to a web browser on this machine (one URL with a token)"),
    "history": ("history", "list recorded runs, newest first"),
    "show": ("show", "print a recorded run's report (offline)"),
    "replay": ("replay", "run a recorded interview again now and report what changed"),
    "compare": ("compare", "compare two recorded runs per question and pointer"),
    "watch": ("watch", "replay an interview on a schedule and print what changed"),
    "export": ("export", "export a recorded run as a JSON, Markdown or HTML transcript"),
    "forget": ("forget", "delete a recorded run, or every run of an agent"),
    "envelope": ("envelope", "check an A2A message's OpenClasp trust envelope"),
    "keygen": ("keygen", "create a runner's Ed25519 key for signing results (prints its public JWKS)"),
}


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error said in one sentence and where to read more, not after the
    whole usage block (seventeen lines of options for `verify`, and the sentence last)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """With `only`, that command's parser, and only its module is imported. Without, the program's
    own parser for `--help` and `--version`: each command listed by name and help line, and no
    command's module imported (the listing needs none of their options)."""
    parser = _Parser(
        prog="interview-explorer",
        description=(
            "Interview A2A agents and prove whether what they say matches what they signed. "
            "With no command, opens the explorer (TUI) on TARGET."
        ),
    )
    parser.add_argument("--version", action="version", version=f"interview-explorer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        if only is not None and name != only:
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only is None:
            continue
        module = importlib.import_module(f"explorer.commands.{module_name}")
        module.add_arguments(p)
        p.set_defaults(_run=module.run, _preload=getattr(module, "preload", None))
        if name == "demo":
            p.set_defaults(tui_launcher=_demo_tui_launcher)
    return parser


def _demo_tui_launcher() -> Callable[..., int] | None:
    """`demo`'s way to open the explorer on its agents; None where textual cannot be imported."""
    try:
        from explorer.tui.launch import run_demo
    except ImportError:
        return None
    return run_demo


def _tui_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="interview-explorer",
        description="Open the explorer (TUI). Commands: " + ", ".join(COMMANDS) + " (see --help).",
    )
    add_explorer_arguments(parser)
    return parser


def _configured(word: str, args_list: Sequence[str]) -> bool:
    """Whether `word` names an agent in the config file (of `--home DIR`, if given)."""
    from explorer.config.file import ConfigError, load_config

    home = next((args_list[i + 1] for i, a in enumerate(args_list[:-1]) if a == "--home"), None)
    try:
        return load_config(home).agent(word) is not None
    except ConfigError:
        return False


def _mistyped_command(args_list: Sequence[str]) -> str | None:
    """A first word that is close to a command and names nothing else (`verfiy URL`): the
    message for it, so a typo is a usage error with "did you mean", not a TUI on a word."""
    from pathlib import Path

    from explorer.interview.targets import command_suggestion

    if not args_list or args_list[0].startswith("-") or args_list[0].isdigit():
        return None
    word = args_list[0]
    if "://" in word or Path(word).expanduser().exists():
        return None
    meant = command_suggestion(word, COMMANDS)
    if meant is None or _configured(word, args_list):
        return None
    listed = ", ".join(COMMANDS)
    return f"unknown command {word!r}; did you mean `interview-explorer {meant}`? (commands: {listed})"


EXIT_STDOUT_GONE = 141  # 128 + SIGPIPE, as a shell reports a command killed by a closed pipe


def _stdout_gone() -> int:
    """The reader of stdout went away (`verify --json | head -c 100`): no traceback, and not
    exit status 1, which would read as `nonconformant`. Later writes (the interpreter's flush at
    exit) go to /dev/null so they cannot fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured in-process)
        pass
    return EXIT_STDOUT_GONE


def _history_problem(args: argparse.Namespace) -> str | None:
    """Why the history the command would use cannot be (a usage error, said before anything
    runs), or None. Only for commands that read or write history (`--history`)."""
    if not hasattr(args, "history"):
        return None
    from explorer.commands.common import UsageError, choose_history_of

    try:
        choose_history_of(args)
    except UsageError as exc:
        return str(exc)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and (args_list[0] in COMMANDS or args_list[0] in ("-h", "--help", "--version")):
        with nogc.paused():  # start-up: see _settle_imports
            parser = _parser(args_list[0] if args_list[0] in COMMANDS else None)
            args, unknown = parser.parse_known_args(args_list)
            _settle_imports(args)
        if unknown:  # said by the command that was given them, not the program
            sub = f"interview-explorer {args_list[0]}" if args_list[0] in COMMANDS else "interview-explorer"
            print(f"{sub}: unrecognized arguments: {' '.join(unknown)} (see `{sub} --help`)", file=sys.stderr)
            return 2
        if getattr(args, "_run", None) is None:
            parser.print_help()
            return 2
        problem = _history_problem(args)
        if problem is not None:
            print(f"interview-explorer {args_list[0]}: {problem}", file=sys.stderr)
            return 2
        try:
            return int(args._run(args))
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            return _stdout_gone()
    mistyped = _mistyped_command(args_list)
    if mistyped is not None:
        print(f"interview-explorer: {mistyped}", file=sys.stderr)
        return 2
    args = _tui_parser().parse_args(args_list)
    problem = _history_problem(args)
    if problem is not None:
        print(f"interview-explorer: {problem}", file=sys.stderr)
        return 2
    from explorer.tui.launch import run_tui  # with _demo_tui_launcher, the only imports of the TUI

    return run_tui(args)


def _settle_imports(args: argparse.Namespace) -> None:
    """Import what the chosen command will run on, with the cyclic collector off, then freeze it.

    Modules and what they build at import live as long as the process and form no garbage, yet
    every object they allocate counts towards the collector's thresholds: about 40 passes, some
    full, walked them while `verify` started (8 ms of a 140 ms `verify --json` process here,
    bench/startup.py). So the command's module names its heavy imports (`preload(args)`, given
    the parsed arguments, so `--help` and an offline check import nothing they do not use),
    they are imported under `nogc.paused()`, and what exists then is frozen out of every later
    collection's sight, as the TUI does before its first frame (`explorer.tui.collector`)."""
    preload = getattr(args, "_preload", None)
    if preload is not None:
        preload(args)
    gc.freeze()


def _stop_on_ctrl_c() -> None:
    """Ctrl+C (SIGINT) stops every command, also when SIGINT was inherited ignored.

    A shell without job control starts background jobs with SIGINT ignored, and so do some CI
    runners, which then cancel a job with SIGINT; Python keeps an ignored SIGINT ignored, so
    `verify` and `watch` would run on to their timeouts. The explorer holds nothing a
    KeyboardInterrupt cannot unwind (a sweep writes its summary and JUnit file, the history is
    transactional), so it takes the default handling back. A handler someone installed on
    purpose (not SIG_IGN) is left alone.
    """
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def entry() -> None:
    """The console script and `python -m explorer`: run `main`, then leave quickly.

    The process ends right after `main` returns, so everything still alive is frozen out of the
    garbage collector's sight first: the interpreter's collections at exit would otherwise walk
    every object of httpx, joserfc and (in the TUI) textual once more, about 130 ms of a 0.86 s
    `verify --json` here (bench/verify_overhead.py). Output is flushed by then and files are
    closed, so nothing is lost. `main` itself stays side-effect free for in-process callers.
    """
    _stop_on_ctrl_c()
    status = main()
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    entry()
