"""`interview-explorer verify`: the headless verifier for scripts and CI (CONTRACT.md).

It turns the command line and the config file into `procedure.Options`, runs the interview (or,
with `--offline`, re-evaluates a stored transcript), prints either the human summary or exactly
one JSON report on stdout, records the run in the history, and exits with the verdict's status:
0 conformant, 1 nonconformant, 2 usage error, 3 unreachable, 4 not_offered, 5 churn.

Progress and warnings go to stderr so `--json` output stays a single parseable object. Nothing
here imports textual; heavy modules are imported inside `run()` so `--help` stays instant.
A history problem is a warning, never a different exit status: the verdict is the result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from explorer.config import Config
    from explorer.core.run import Run
    from explorer.procedure import Options, Progress

EXIT_CODES: dict[str, int] = {
    "conformant": 0,
    "nonconformant": 1,
    "unreachable": 3,
    "not_offered": 4,
    "churn": 5,
}
USAGE_ERROR = 2

_COLOURS = {
    "conformant": "32",
    "churn": "33",
    "nonconformant": "31",
    "unreachable": "31",
    "not_offered": "36",
}


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line, exit status 2."""


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("the timeout must be more than 0 and at most 3600 seconds")
    return value


def _reruns(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value <= 5:
        raise argparse.ArgumentTypeError("--reruns must be between 0 and 5")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target", nargs="?", help="base URL, card URL, card file, OpenClasp reference or config agent name"
    )
    parser.add_argument("--json", action="store_true", help="print exactly the JSON report on stdout")
    parser.add_argument(
        "--as",
        dest="role",
        choices=["self", "independent", "platform"],
        default=None,
        help="who runs the interview: self (a claim, the default), independent or platform (evidence)",
    )
    parser.add_argument("--runner", default=None, help="name recorded as who ran the interview")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'Name: value'",
        help="header sent only to the agent's origin (repeatable); recorded as <redacted>",
    )
    parser.add_argument(
        "--keys",
        action="append",
        default=[],
        metavar="JWKS_FILE_OR_URL",
        help="trusted public keys for the card signature, looked up by kid (repeatable)",
    )
    parser.add_argument("--allow-jku", action="store_true", help="also fetch keys from the card's own jku")
    parser.add_argument(
        "--reruns",
        type=_reruns,
        default=1,
        metavar="N",
        help="re-runs after a conflict before calling it persistent (default 1)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=10.0,
        metavar="SECONDS",
        help="bound on every request, connect plus whole body (default 10)",
    )
    parser.add_argument("--no-history", action="store_true", help="do not record this run")
    parser.add_argument(
        "--home",
        default=None,
        metavar="DIR",
        help="where history and config live (or INTERVIEW_EXPLORER_HOME)",
    )
    parser.add_argument(
        "--public-only",
        action="store_true",
        help="https on port 443 to public addresses only, DNS pinned, no redirects",
    )
    parser.add_argument(
        "--openclasp",
        default=None,
        metavar="BASE_URL",
        help="OpenClasp base URL to resolve slugs and agent ids",
    )
    parser.add_argument(
        "--offline",
        default=None,
        metavar="TRANSCRIPT.json",
        help="re-evaluate a stored transcript instead of contacting the agent",
    )


def _err(message: str) -> None:
    print(f"interview-explorer verify: {message}", file=sys.stderr)


def _progress_printer(stream: TextIO) -> Any:
    from explorer.core.text import safe_text

    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")

    def show(p: Progress) -> None:
        # Messages quote URLs and names taken from the agent's documents: strip control and
        # bidi characters before they reach a terminal.
        where = f" {p.question}" if p.question and p.step not in ("ask", "probe") else ""
        print(f"[{p.attempt}] {p.step}{where}: {safe_text(p.message, limit=500)}", file=stream, flush=True)

    return show


def _headers(args: argparse.Namespace, agent_headers: dict[str, str]) -> tuple[tuple[str, str], ...]:
    from explorer.config import ConfigError, parse_header_option, resolve_header_value

    out: dict[str, str] = {}
    try:
        for name, ref in agent_headers.items():
            out[name] = resolve_header_value(ref)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    for text in args.header:
        try:
            name, value = parse_header_option(text)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        out[name] = value
    return tuple(out.items())


def _options(args: argparse.Namespace, config: Config) -> tuple[str, Options]:
    from explorer.net.keys import KeysError, load_keys_sync
    from explorer.procedure import Options

    target: str = args.target
    agent = config.agents.get(target)
    key_sources = list(config.keys)
    agent_headers: dict[str, str] = {}
    if agent is not None:
        print(f"interview-explorer verify: {target} is the configured agent {agent.url}", file=sys.stderr)
        target = agent.url
        agent_headers = dict(agent.headers)
        key_sources += list(agent.keys)
    key_sources += list(args.keys)
    headers = _headers(args, agent_headers)
    try:
        keys, notes = load_keys_sync(key_sources) if key_sources else ({"keys": []}, [])
    except KeysError as exc:
        raise UsageError(f"--keys: {exc}") from None
    for note in notes:
        _err(f"note: {note}")
    options = Options(
        keys=(keys,) if keys["keys"] else (),
        allow_jku=args.allow_jku,
        headers=headers,
        role=args.role or config.role or "self",
        runner=args.runner or config.runner,
        reruns=args.reruns,
        timeout=args.timeout,
        public_only=args.public_only,
        openclasp_base=args.openclasp,
    )
    return target, options


def _offline(path: str) -> Run:
    from explorer.core.run import Run
    from explorer.procedure import reverify_offline

    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--offline: no such file {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"--offline: cannot read {path} as JSON ({exc})") from None
    try:
        run = Run.from_transcript(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--offline: {path}: {exc}") from None
    return reverify_offline(run)


def _record(run: Run, home: str | None) -> None:
    try:
        from explorer.store.history import History
    except ImportError:
        return
    try:
        history = History.open(Path(home) if home else None)
        try:
            run_id = history.record(run)
        finally:
            history.close()
    except Exception as exc:  # noqa: BLE001 - history trouble must not change the verdict's exit status
        _err(f"warning: the run was not recorded in the history: {exc}")
        return
    print(f"interview-explorer verify: recorded as run {run_id}", file=sys.stderr)


def _colour_enabled(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _print_report(report: Any, as_json: bool) -> None:
    if as_json:
        # ASCII escapes keep the one JSON object intact whatever the terminal's encoding.
        sys.stdout.write(json.dumps(report, ensure_ascii=True) + "\n")
        return
    from explorer.core.report import summary_lines

    lines = summary_lines(report)
    verdict = str(report.get("verdict"))
    if lines and _colour_enabled(sys.stdout) and verdict in _COLOURS:
        lines[0] = lines[0].replace(verdict, f"\x1b[1;{_COLOURS[verdict]}m{verdict}\x1b[0m", 1)
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")  # an agent's name must not crash a latin-1 terminal
    sys.stdout.write("\n".join(lines) + "\n")


def run(args: argparse.Namespace) -> int:
    from explorer.config import ConfigError, load_config

    try:
        if args.offline:
            if args.target:
                raise UsageError("give either TARGET or --offline TRANSCRIPT.json, not both")
            result = _offline(args.offline)
        else:
            if not args.target:
                raise UsageError(
                    "a TARGET is required (a URL, a card file, an OpenClasp reference or an agent name)"
                )
            config = load_config(args.home)
            target, options = _options(args, config)
            from explorer.procedure import run_interview_sync

            result = run_interview_sync(target, options, _progress_printer(sys.stderr))
    except (UsageError, ConfigError) as exc:
        _err(str(exc))
        return USAGE_ERROR
    _print_report(result.report, args.json)
    if not args.offline and not args.no_history:
        _record(result, args.home)
    return EXIT_CODES.get(str(result.report.get("verdict")), USAGE_ERROR)
