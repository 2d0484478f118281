"""`interview-explorer demo`: start the reference agents on 127.0.0.1 (and open the TUI on them).

- `demo`: start the fleet and open the explorer on it (`explorer.tui.launch.run_demo`); where
  the TUI is not available, print the agents and serve until Ctrl+C.
- `demo --serve [--only NAME...] [--port N]`: headless. Prints one line per agent,
  `name<TAB>card URL<TAB>expected verdict`, on stdout, flushes, and serves until SIGINT or
  SIGTERM, then exits 0 with every port released. Never imports textual.
- `demo --list`: print the variants table (name, expected verdict, expected codes, description)
  without starting anything.

Exit status: 0 after a clean shutdown, 2 for a usage error (an unknown agent name, a port that
cannot be bound).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

from explorer.commands.common import add_home_argument, add_watch_every_argument, say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--serve", action="store_true",
                        help="serve headless: print 'name<TAB>card URL<TAB>expected verdict' per agent, "
                        "then serve until SIGINT/SIGTERM")
    parser.add_argument("--only", nargs="+", action="extend", metavar="NAME", default=None,
                        help="start only these agents (see --list)")
    parser.add_argument("--port", type=int, default=0,
                        help="port of the first agent; the others take the following ports "
                        "(default: ephemeral)")
    parser.add_argument("--list", action="store_true", help="list the reference agents and exit")
    add_watch_every_argument(parser)
    add_home_argument(parser)


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
    for agent in fleet.agents.values():
        if verbose:
            print(f"{agent.name:<18} {agent.card_url}  ({agent.variant.expected_verdict})")
        else:
            print(f"{agent.name}\t{agent.card_url}\t{agent.variant.expected_verdict}")
    sys.stdout.flush()


def _tui_launcher() -> Any:
    try:
        from explorer.tui.launch import run_demo
    except ImportError:
        return None
    return run_demo


def run(args: argparse.Namespace) -> int:
    if args.list:
        return _list()
    from explorer.demo.fleet import Fleet, FleetError

    with _stop_on_signal() as stop:
        try:
            fleet = Fleet(args.only, port=args.port).start()
        except FleetError as exc:
            say(str(exc), "demo")
            return 2
        try:
            if args.serve:
                return _serve(fleet, stop)
            launcher = _tui_launcher()
            if launcher is not None:
                return int(launcher(fleet, args))
            _print_agents(fleet, verbose=True)
            print("Serving the reference agents; press Ctrl+C to stop.", file=sys.stderr)
            _wait(stop)
            return 0
        finally:
            fleet.stop()


def _serve(fleet: Any, stop: threading.Event) -> int:
    _print_agents(fleet, verbose=False)
    print(f"demo: {len(fleet.agents)} agents listening after {fleet.startup_seconds:.3f} s; "
          "SIGINT or SIGTERM stops them", file=sys.stderr)
    while not stop.is_set() and not fleet.wait_ready(timeout=0.5):
        pass
    for name, reason in fleet.errors.items():
        print(f"demo: {name} failed to start: {reason}", file=sys.stderr)
    _wait(stop)
    return 0
