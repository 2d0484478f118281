"""`interview-explorer serve [TARGET] [--host ADDR] [--port N] [--max-sessions N]`: the explorer in a browser.

The same explorer as `interview-explorer TARGET` (same options, screens and keys), served with
textual-serve's protocol by `explorer.web`: every browser tab is an explorer process of its own.
stdout gets exactly one line, the URL to open, holding a fresh token; nothing is opened. stderr
says what is served and how to stop it; every later message (sessions starting and ending,
refused requests) goes to stderr too, so a script can read the URL with `head -1`.

Before the URL is printed, one session is built without running (`explorer.tui.served --check`):
a TARGET or option the explorer cannot use is reported here, exit status 2, as the terminal
explorer would report it. So is an address that cannot be bound, or one reachable from other
machines without `--expose` (`explorer.web.binding`). SIGINT or SIGTERM ends every session and
the server, exit status 0. `demo --browser` serves the same way with the reference agents
(`serve_explorer`).

Each session runs the explorer's own code only: its interpreter is isolated (`python -I`, see
`explorer.web.session_process.session_command`) and starts in a private folder made for this run,
so nothing in the folder `serve` was started in, and no `PYTHON*` variable, is ever imported. What
was given relative to that folder (a card file, `--keys`, `--history`, `--home`, `--from`, a
`file:` secret) is handed to the sessions as the absolute path it names (`anchored_options`).

This module imports neither textual nor the TUI: the server runs without them, and each session
process imports them itself.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from explorer.commands.common import add_explorer_arguments, say

DEFAULT_MAX_SESSIONS = 4
MAX_SESSIONS_LIMIT = 64
CHECK_TIMEOUT = 60.0
SESSION_MODULE = "explorer.tui.served"
SECRET_FILE_OPTIONS = ("bearer", "api_key", "oauth2_client_secret")  # env:VAR or file:PATH


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_explorer_arguments(parser)
    add_serving_arguments(parser)


def add_serving_arguments(parser: argparse.ArgumentParser, *, prefix: str = "") -> None:
    """`--host`, `--port`, `--max-sessions`, `--expose`, `--public-origin` (with `prefix`, only the
    loopback ones: `demo --browser` names its port `--browser-port`)."""
    from explorer.web.binding import DEFAULT_HOST, EXPOSE_FLAG

    parser.add_argument(
        f"--{prefix}port",
        dest="web_port",
        type=int,
        default=0,
        metavar="N",
        help="the port to serve on (default: any free port, shown in the URL)",
    )
    parser.add_argument(
        "--max-sessions",
        type=_session_count,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help=f"browser tabs served at once, each an explorer process (default {DEFAULT_MAX_SESSIONS})",
    )
    if prefix:
        return
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        metavar="ADDR",
        help=f"the IP address to listen on (default {DEFAULT_HOST}; any address that is not "
        f"loopback also needs {EXPOSE_FLAG})",
    )
    parser.add_argument(
        EXPOSE_FLAG,
        action="store_true",
        help="acknowledge that --host makes the explorer reachable from other machines "
        "(put it behind a reverse proxy with TLS and authentication)",
    )
    parser.add_argument(
        "--public-origin",
        default=None,
        metavar="URL",
        help="the origin browsers use when a reverse proxy is in front "
        "(https://explorer.example.org); its Host and Origin are accepted too",
    )


def _session_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= MAX_SESSIONS_LIMIT:
        raise argparse.ArgumentTypeError(f"between 1 and {MAX_SESSIONS_LIMIT} sessions")
    return value


def explorer_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options a session's explorer is built from: those `add_explorer_arguments` declares."""
    probe = argparse.ArgumentParser(add_help=False)
    add_explorer_arguments(probe)
    return {action.dest: getattr(args, action.dest, None) for action in probe._actions}


def run(args: argparse.Namespace) -> int:
    from explorer.web.binding import plan_binding
    from explorer.web.handover import Launch

    try:
        binding = plan_binding(args.host, args.web_port, expose=args.expose, public_origin=args.public_origin)
    except ValueError as exc:
        say(str(exc), "serve")
        return 2
    return serve_explorer(Launch(options=explorer_options(args)), binding, args.max_sessions, home=args.home)


def serve_explorer(launch: Any, binding: Any, max_sessions: int, *, home: str | None) -> int:
    """Check the launch, bind, print the URL, serve until SIGINT/SIGTERM. Returns the exit status."""
    from dataclasses import replace

    from explorer.config.file import ConfigError, load_config
    from explorer.web.server import bind
    from explorer.web.session_process import session_command

    try:
        config = load_config(home)
    except ConfigError as exc:
        say(str(exc), "serve")
        return 2
    launch = replace(launch, options=anchored_options(launch.options, config))
    environment = _session_environment(launch, config)
    argv = session_command(SESSION_MODULE)
    private = tempfile.TemporaryDirectory(prefix="interview-explorer-serve-", ignore_cleanup_errors=True)
    with private as folder:
        problem = _check(argv, environment, folder)
        if problem is not None:
            print(problem, file=sys.stderr)
            return 2
        try:
            sock = bind(binding.host, binding.port)
        except OSError as exc:
            say(f"cannot listen on {binding.host} port {binding.port}: {exc.strerror or exc}", "serve")
            return 2
        stdout = sys.stdout
        try:
            with _messages_on_stderr():
                asyncio.run(_serve(sock, binding, max_sessions, argv, environment, folder))
        finally:
            sys.stdout = stdout  # `_announce` sent later output to stderr
            sock.close()
    return 0


def anchored_options(options: Mapping[str, Any], config: Any) -> dict[str, Any]:
    """The explorer's options with every path given relative to this process's working folder made
    absolute, since a session runs in a folder of its own: `--home`, `--from`, a SQLite `--history`,
    the files among `--keys`, a `file:` secret, and a TARGET that is a file here (not a configured
    agent's name). URLs, names and anything that is not a path stay as typed."""
    out = dict(options)
    for name in ("home", "from_"):
        if isinstance(out.get(name), str) and out[name] not in ("", "-"):
            out[name] = _absolute(out[name])
    if isinstance(out.get("history"), str):
        out["history"] = _anchored_history(out["history"])
    if isinstance(out.get("keys"), (list, tuple)):
        out["keys"] = [_absolute(k) if isinstance(k, str) and not _is_web(k) else k for k in out["keys"]]
    for name in SECRET_FILE_OPTIONS:
        value = out.get(name)
        if isinstance(value, str) and value.startswith("file:") and len(value) > len("file:"):
            out[name] = "file:" + _absolute(value[len("file:") :])
    target = out.get("target")
    if isinstance(target, str) and target and not _is_web(target) and Path(target).expanduser().is_file():
        agent = config.agent(target)
        if agent is None or agent.name != target:
            out["target"] = _absolute(target)
    return out


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().absolute())


def _is_web(text: str) -> bool:
    return "://" in text


def _anchored_history(text: str) -> str:
    """A SQLite history's file as an absolute path; any other history (or one that cannot be read,
    which the session's check reports) as typed."""
    from explorer.store.location import StoreUrlError, parse_location

    try:
        location = parse_location(text)
    except StoreUrlError:
        return text
    if location.kind != "sqlite" or location.path is None or location.path.is_absolute():
        return text
    return str(location.path.absolute())


def _session_environment(launch: Any, config: Any) -> dict[str, str]:
    from explorer.home import HOME_ENV
    from explorer.web.environment import referenced_variables, session_environment

    agents = [agent.settings for agent in config.agents.values()]
    referenced = referenced_variables(config.settings, agents, *launch.references())
    environment = session_environment(os.environ, referenced, launch.environment())
    if environment.get(HOME_ENV):  # read from the session's own folder, it would be another one
        environment[HOME_ENV] = _absolute(environment[HOME_ENV])
    return environment


def _check(argv: tuple[str, ...], environment: dict[str, str], folder: str) -> str | None:
    """Build one session's app without running it; the launcher's message if that fails."""
    try:
        done = subprocess.run(
            [*argv, "--check"],
            env=environment,
            stdin=subprocess.DEVNULL,
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"interview-explorer serve: the explorer could not be started: {exc}"
    if done.returncode == 0:
        return None
    return done.stderr.strip() or f"interview-explorer serve: the explorer exited with {done.returncode}"


@contextlib.contextmanager
def _messages_on_stderr() -> Any:
    """The server's own messages, one line each with `serve:` in front, on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("serve: %(message)s"))
    loggers = [logging.getLogger(name) for name in ("explorer.web", "textual-serve")]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


async def _serve(
    sock: Any,
    binding: Any,
    max_sessions: int,
    argv: tuple[str, ...],
    environment: dict[str, str],
    folder: str,
) -> None:
    from explorer.web.guard import Guard
    from explorer.web.server import ExplorerServer, serve

    guard = Guard.fresh(binding.addresses(sock.getsockname()[1]))
    server = ExplorerServer(
        guard,
        max_sessions=max_sessions,
        argv=argv,
        environment=environment,
        cwd=folder,
        on_session=lambda event, _session: _tell_sessions(event, server),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
    try:
        await serve(sock, server, lambda: _announce(guard, binding, max_sessions), stop)
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)


def _announce(guard: Any, binding: Any, max_sessions: int) -> None:
    """The URL on stdout (its only line), then what to know on stderr; later output goes to stderr."""
    print(guard.url, flush=True)
    if binding.warning:
        print(f"serve: {binding.warning}", file=sys.stderr)
    print(
        "serve: open the address above in a browser (it holds this run's token; anyone with it can "
        "use the explorer as you)",
        file=sys.stderr,
    )
    print(
        f"serve: at most {max_sessions} browser tabs at a time; Ctrl+C stops the server and every session",
        file=sys.stderr,
        flush=True,
    )
    sys.stdout = sys.stderr  # nothing else reaches stdout: it holds the URL alone


def _tell_sessions(event: str, server: Any) -> None:
    print(
        f"serve: a session {event} ({len(server.live)} of {server.max_sessions} open)",
        file=sys.stderr,
        flush=True,
    )
