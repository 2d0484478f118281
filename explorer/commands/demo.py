"""`interview-explorer demo`: start the reference agents on 127.0.0.1 (and open the TUI on them).

- `demo`: start the fleet and open the explorer on it, with the launcher `explorer.cli` hands
  over as `args.tui_launcher` (this module never imports the TUI itself); where the TUI is not
  available, print the agents and serve until Ctrl+C.
- `demo --serve [--only NAME...] [--port N]`: headless. Prints one line per agent,
  `name<TAB>card URL<TAB>expected verdict`, on stdout (a guarded agent adds `<TAB>VAR=secret`,
  the environment variable that holds its demo credential, read with `--bearer env:VAR` etc.),
  flushes, and serves until SIGINT or SIGTERM, then exits 0 with every port released. Never
  imports textual.
- `demo --serve --crowd N [--seed S] [--crowd-only]`: also start N extra agents drawn from the
  variants with a seeded mix (`explorer.demo.crowd`), printed in the same three-column lines
  after the reference agents; `--crowd-only` leaves the reference agents out. Without
  `--serve`, the explorer opens on its fleet view, sweeping the crowd.
- With `--serve`, the agents' public card keys are written as one JWKS (`--keys-out FILE`, by
  default `demo-keys.jwks` in the explorer's home) and stderr shows a copy-paste `verify` line
  using it: without trusted keys every demo signature is only "unverifiable" headless, and
  `forged` would look conformant (`explorer.demo.keyfile`).
- `demo --browser [--browser-port N] [--max-sessions N]`: start the fleet (and `--crowd N`) and
  serve the explorer on it to a web browser, as `serve` does (`explorer.commands.serve`): stdout
  is the one URL to open, the agents are listed on stderr. Never imports textual either; every
  browser tab is an explorer process that adopts the agents from a handover
  (`explorer.web.handover`).
- Each reference agent listens on its own port, the same every session (`explorer.demo.ports`:
  derived from its name), so the history keeps one agent per agent; an agent whose port is
  taken listens on a free one and this says so. `--port N` puts them on N, N+1, ... instead,
  `--port 0` (or `INTERVIEW_EXPLORER_DEMO_PORTS=free`) on free ports.
- `demo --list`: print the variants table (name, expected verdict, expected codes, description)
  without starting anything.

Exit status: 0 after a clean shutdown, 2 for a usage error (an unknown agent name, a port that
cannot be bound).
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from explorer.commands.common import add_home_argument, add_watch_every_argument, say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--serve",
        action="store_true",
        help="serve headless: print 'name<TAB>card URL<TAB>expected verdict' per agent, "
        "then serve until SIGINT/SIGTERM",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        action="extend",
        metavar="NAME",
        default=None,
        help="start only these agents (see --list)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="port of the first agent; the others take the following ports; 0: free "
        "ports (default: each reference agent's own port, the same every session)",
    )
    parser.add_argument("--list", action="store_true", help="list the reference agents and exit")
    parser.add_argument(
        "--crowd",
        type=_crowd_size,
        default=0,
        metavar="N",
        help="also start N extra agents (a seeded mix of the variants, one process); "
        "the explorer opens on the fleet view sweeping them",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="the crowd's seed (default 0)")
    parser.add_argument(
        "--crowd-only", action="store_true", help="with --crowd: start the crowd without the reference agents"
    )
    parser.add_argument(
        "--browser",
        action="store_true",
        help="serve the explorer on the agents to a web browser on this machine "
        "(prints one URL with a token, as `serve` does)",
    )
    from explorer.commands.serve import add_serving_arguments

    add_serving_arguments(parser, prefix="browser-")
    parser.add_argument(
        "--keys-out",
        default=None,
        metavar="FILE",
        help="with --serve: where to write the agents' public keys as a JWKS for "
        "`verify --keys` (default: demo-keys.jwks in the explorer's home)",
    )
    add_watch_every_argument(parser)
    add_home_argument(parser)


def _crowd_size(text: str) -> int:
    from explorer.demo.crowd import MAX_CROWD

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= MAX_CROWD:
        raise argparse.ArgumentTypeError(f"a crowd has between 1 and {MAX_CROWD} agents")
    return value


def _list() -> int:
    from explorer.demo.variants import VARIANTS

    for variant in VARIANTS.values():
        codes = ",".join(sorted(variant.expected_codes | variant.expected_extension_codes)) or "-"
        print(f"{variant.name}\t{variant.expected_verdict}\t{codes}\t{variant.description}")
    return 0


@contextlib.contextmanager
def _stop_on_signal() -> Iterator[threading.Event]:
    """An event set by SIGINT or SIGTERM while the block runs (previous handlers restored after)."""
    stop = threading.Event()

    def handler(_signum: int, _frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _wait(stop: threading.Event) -> None:
    while not stop.wait(0.5):
        pass


def _print_agents(fleet: Any, *, verbose: bool) -> None:
    for name, reason in fleet.skipped.items():
        print(f"skipped {name}: {reason}", file=sys.stderr)
    for name, where in getattr(fleet, "moved", {}).items():
        print(f"demo: {name}: {where}", file=sys.stderr)
    guarded = []
    for agent in fleet.agents.values():
        env = getattr(agent, "env", {})  # a guarded agent's demo secret, as the explorer reads it
        if env:
            guarded.append(agent.name)
        if verbose:
            expected = agent.variant.expected_verdict + (" with its demo credential" if env else "")
            print(f"{agent.name:<18} {agent.card_url}  ({expected})")
            for name, value in env.items():
                print(f"{'':<18} export {name}={value}  # then: verify ... {_usage(agent)}")
        else:
            extra = "".join(f"\t{name}={value}" for name, value in env.items())
            print(f"{agent.name}\t{agent.card_url}\t{agent.variant.expected_verdict}{extra}")
    sys.stdout.flush()
    if guarded:
        # The agents' names are not followed by ": " here: that is how each agent's own verify line
        # starts, which scripts (and the tests) pick out of stderr.
        print(f"demo: guarded agents ({', '.join(guarded)}) are {GUARDED_NOTE}", file=sys.stderr)


# Said under the listing when it holds a guarded agent: its expected verdict is not what the URL
# alone gets, and a sweep of the printed URLs could not reproduce the list without this.
GUARDED_NOTE = (
    "conformant only with the agent's demo credential (the VAR=value after its line, given to "
    "verify as its options say); without it, as in a sweep of the URLs alone, unreachable "
    "(auth_required). A sweep (--from) needs each credential bound to its agent in the config: "
    '[agents.NAME] with the card URL as url and the options as settings (bearer = "env:VAR", ...)'
)


def _usage(agent: Any) -> str:
    """The verify options that use a guarded agent's demo credentials."""
    settings = agent.credentials.to_config() if agent.credentials is not None else {}
    return " ".join(f"--{key.replace('_', '-')} {value}" for key, value in settings.items())


def _tui_launcher(args: argparse.Namespace) -> Any:
    """The TUI's launcher `explorer.cli` handed over, or None (no TUI, or called without one)."""
    find = getattr(args, "tui_launcher", None)
    return find() if find is not None else None


def run(args: argparse.Namespace) -> int:
    if args.list:
        return _list()
    if args.crowd_only and not args.crowd:
        say("--crowd-only needs --crowd N", "demo")
        return 2
    if args.crowd_only and args.only:
        say("give either --only or --crowd-only, not both", "demo")
        return 2
    if args.browser and args.serve:
        say("give either --serve (headless) or --browser, not both", "demo")
        return 2
    from explorer.demo.fleet import Fleet, FleetError
    from explorer.demo.kept_keys import FOLDER
    from explorer.home import home_dir

    with _stop_on_signal() as stop:
        try:
            fleet = Fleet(
                [] if args.crowd_only else args.only,
                port=args.port or 0,
                stable=args.port is None,
                keys_in=home_dir(args.home) / FOLDER,
            ).start()
        except FleetError as exc:
            say(str(exc), "demo")
            return 2
        try:
            if args.serve:
                return _serve_with_crowd(fleet, stop, args)
            if args.browser:
                if args.crowd:
                    return _with_crowd(fleet, args, lambda crowd: _serve_browser(fleet, args, crowd))
                return _serve_browser(fleet, args)
            launcher = _tui_launcher(args)
            if launcher is not None and args.crowd:
                return _explore_crowd(launcher, fleet, args)
            if launcher is not None:
                return int(launcher(fleet, args))
            _print_agents(fleet, verbose=True)
            print("Serving the reference agents; press Ctrl+C to stop.", file=sys.stderr)
            _wait(stop)
            return 0
        finally:
            fleet.stop()


def _serve_with_crowd(fleet: Any, stop: threading.Event, args: argparse.Namespace) -> int:
    keys_out = _keys_path(args)
    if not args.crowd:
        return _serve(fleet, stop, keys_out=keys_out)
    return _with_crowd(fleet, args, lambda crowd: _serve(fleet, stop, crowd, keys_out))


def _explore_crowd(launcher: Any, fleet: Any, args: argparse.Namespace) -> int:
    """`demo --crowd N` with the TUI: the explorer opens on the fleet view, sweeping the crowd."""
    return _with_crowd(fleet, args, lambda crowd: int(launcher(fleet, args, crowd=crowd)))


def _with_crowd(fleet: Any, args: argparse.Namespace, use: Callable[[Any], int]) -> int:
    """Start the crowd (on the ports after the fleet's when --port is given), use it, stop it."""
    from explorer.demo.crowd import Crowd
    from explorer.demo.fleet import FleetError

    port = args.port + len(fleet.variants) if args.port else 0
    try:
        crowd = Crowd(args.crowd, seed=args.seed, port=port).start()
    except FleetError as exc:
        say(str(exc), "demo")
        return 2
    try:
        return use(crowd)
    finally:
        crowd.stop()


def _serve_browser(fleet: Any, args: argparse.Namespace, crowd: Any = None) -> int:
    """`demo --browser`: the agents on stderr, then the explorer served on them (`serve`'s way)."""
    from explorer.commands.serve import serve_explorer
    from explorer.web.binding import DEFAULT_HOST, plan_binding
    from explorer.web.handover import Launch, demo_handover

    with contextlib.redirect_stdout(sys.stderr):  # stdout holds the URL alone, as with `serve`
        _print_agents(fleet, verbose=True)
    options = {"home": args.home, "watch_every": args.watch_every}
    launch = Launch(options=options, demo=demo_handover(fleet, crowd))
    try:
        binding = plan_binding(DEFAULT_HOST, args.web_port)
    except ValueError as exc:
        say(str(exc), "demo")
        return 2
    return serve_explorer(launch, binding, args.max_sessions, home=args.home)


def _keys_path(args: argparse.Namespace) -> Path:
    if args.keys_out:
        return Path(args.keys_out).expanduser()
    from explorer.config.file import home_dir
    from explorer.demo.keyfile import FILE_NAME

    return home_dir(args.home) / FILE_NAME


def _tell_keys(fleet: Any, crowd: Any, path: Path) -> None:
    """Write the agents' public keys to `path` and say, on stderr, how `verify` uses them."""
    from explorer.demo.keyfile import public_jwks, write_jwks

    agents = [*fleet.agents.values(), *(crowd.agents.values() if crowd is not None else ())]
    try:
        write_jwks(path, public_jwks(agents))
    except OSError as exc:
        print(
            f"demo: the agents' public keys were not written to {path}: {exc.strerror or exc}; "
            "`verify` will call their signatures unverifiable",
            file=sys.stderr,
        )
        return
    example = next((a for a in agents if a.name == "forged"), agents[0] if agents else None)
    print(f"demo: the agents' public keys (JWKS) are in {path}; pass them to verify:", file=sys.stderr)
    if example is not None:
        line = f"interview-explorer verify {shlex.quote(example.card_url)} --keys {shlex.quote(str(path))}"
        print(f"demo:   {line}", file=sys.stderr)
    for agent in agents:
        if getattr(agent, "credentials", None) is None:
            continue
        exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in agent.env.items())
        line = (
            f"{exports} interview-explorer verify {shlex.quote(agent.card_url)} "
            f"--keys {shlex.quote(str(path))} {_usage(agent)}"
        )
        print(f"demo:   {agent.name}: {line}", file=sys.stderr)
    sys.stderr.flush()


def _serve(fleet: Any, stop: threading.Event, crowd: Any = None, keys_out: Path | None = None) -> int:
    _print_agents(fleet, verbose=False)
    count, seconds = len(fleet.agents), fleet.startup_seconds
    if crowd is not None:
        _print_agents(crowd, verbose=False)
        count, seconds = count + len(crowd.agents), seconds + crowd.startup_seconds
    print(
        f"demo: {count} agent{'' if count == 1 else 's'} listening after {seconds:.3f} s; "
        "SIGINT or SIGTERM stops them",
        file=sys.stderr,
    )
    if keys_out is not None:
        _tell_keys(fleet, crowd, keys_out)
    while not stop.is_set() and not fleet.wait_ready(timeout=0.5):
        pass
    for name, reason in fleet.errors.items():
        print(f"demo: {name} failed to start: {reason}", file=sys.stderr)
    _wait(stop)
    return 0
