"""`interview-explorer verify`: the headless verifier for scripts and CI (CONTRACT.md).

It asks `explorer.interview.planning` for the target and `procedure.Options` (the command line over the
config file), runs the interview (or, with `--offline`, re-evaluates a stored transcript),
prints either the human summary or exactly one JSON report on stdout, records the run in the
history, and exits with the verdict's status:
0 conformant, 1 nonconformant, 2 usage error, 3 unreachable, 4 not_offered, 5 churn.

No run is silently lost: the history is opened (and a SQLite file proven writable) before the
agent is asked, so one that cannot be used is exit status 6 with nothing asked; a run that cannot
be recorded after its interview (the database went away) still has its verdict printed, and the
status is 6, so a CI job recording evidence never stays green while recording nothing.

Progress and warnings go to stderr so `--json` output stays a single parseable object. Nothing
here imports textual; heavy modules are imported inside `run()` so `--help` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from explorer.commands.common import (
    EXIT_UNKNOWN,
    EXIT_USAGE,
    UsageError,
    add_home_argument,
    add_quiet_argument,
    add_setting_arguments,
    config_of,
    deadline_hint,
    error,
    load_trusted_keys,
    met_deadline,
    met_timeout,
    plan_of,
    preload_keys,
    print_json,
    print_lines,
    recording_history,
    say,
    timeout_hint,
    verdict_exit,
)
from explorer.commands.evidence_options import (
    add_sign_key_argument,
    add_trust_runner_argument,
    sign_or_keep,
    signing_key,
)
from explorer.commands.verify_many import EXIT_INTERRUPTED, add_sweep_arguments, is_sweep

if TYPE_CHECKING:
    from explorer.config.file import Config
    from explorer.core.run import Run
    from explorer.evidence.runner_keys import RunnerKey
    from explorer.interview.options import Options
    from explorer.interview.procedure import Progress
    from explorer.store.base import HistoryStore

COMMAND = "verify"
_COLOURS = {
    "conformant": "32",
    "churn": "33",
    "nonconformant": "31",
    "unreachable": "31",
    "not_offered": "36",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        nargs="*",
        help="base URL, card URL, card file, OpenClasp reference or config agent name; more than one "
        "runs a sweep",
    )
    parser.add_argument("--json", action="store_true", help="print exactly the JSON report on stdout")
    add_quiet_argument(parser)
    add_setting_arguments(parser, COMMAND)
    parser.add_argument(
        "--offline",
        default=None,
        metavar="TRANSCRIPT.json",
        help="re-evaluate a stored transcript instead of contacting the agent",
    )
    add_sign_key_argument(parser)
    add_trust_runner_argument(parser)
    parser.add_argument("--no-history", action="store_true", help="do not record this run")
    add_home_argument(parser)
    add_sweep_arguments(parser)


class _ProgressLines:
    """What `verify` says on stderr while a run goes, without `-q`.

    A request's outcome (`ask: identity#1: HTTP 200 in 7 ms`, about twenty a run, forty with a
    churn check) is worth a glance while it happens and nothing afterwards: on a terminal it
    takes one status line, rewritten in place and cleared before the report; where stderr is a
    file or a pipe (a CI log) it is not written at all, as `git` and `curl` keep their progress
    to terminals. The notes (which card was read and how, what was not fetched and why, why a
    run stopped, a churn check's second attempt) are lines in both, as is everything `say` says.
    """

    def __init__(self, stream: TextIO) -> None:
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
        self.stream = stream
        self.terminal = stream.isatty()
        self.status_shown = False

    def __call__(self, p: Progress) -> None:
        from explorer.core.text import safe_text

        # Messages quote URLs and names taken from the agent's documents: strip control and
        # bidi characters before they reach a terminal.
        where = f" {p.question}" if p.question and p.step not in ("ask", "probe") else ""
        line = f"[{p.attempt}] {p.step}{where}: {safe_text(p.message, limit=500)}"
        if p.request or p.step == "done":  # the verdict itself is the report's first line
            if self.terminal:
                self.stream.write("\r\x1b[K" + line[: _terminal_width(self.stream) - 1])
                self.stream.flush()
                self.status_shown = True
            return
        self.clear()
        print(line, file=self.stream, flush=True)

    def clear(self) -> None:
        """Take the status line away (before anything else is written)."""
        if self.status_shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.status_shown = False


def _terminal_width(stream: TextIO) -> int:
    import shutil

    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return shutil.get_terminal_size().columns


def _options(
    args: argparse.Namespace,
    given: str,
    config: Config | None = None,
    load_keys: Callable[[Sequence[str], float, str], dict[str, Any]] = load_trusted_keys,
    *,
    check: bool = False,
) -> tuple[str, Options]:
    """The target and the interview's options, planned as every command and the TUI plan them
    (`explorer.interview.planning`), with the trusted key sources loaded here, up front: an unusable
    `--keys` is a usage error before anything is asked, and a sweep loads each source once."""
    config = config if config is not None else config_of(args)
    target, options = plan_of(args, config, COMMAND, target=given, check=check)
    return target, preload_keys(options, load_keys, COMMAND)


def _offline(path: str, args: argparse.Namespace) -> Run:
    """Re-verify a transcript file: everything shown derived from its bytes under your keys
    (`--keys`, `--allow-jku`, the config), the standing from its signature under the runner keys
    you trust. A malformed file is a UsageError (one sentence); a stated report that its bytes do
    not give is said on stderr, and what is shown is what the bytes give."""
    from explorer.commands.evidence_options import reader_trust
    from explorer.core.rederive import first_card_request
    from explorer.core.run import TranscriptError
    from explorer.core.text import safe_text
    from explorer.evidence.reading import read_run, read_transcript_file, stated_problem

    shown_path = safe_text(path, limit=300)
    try:
        transcript = read_transcript_file(Path(path).expanduser())
        problem = stated_problem(transcript.run)
    except TranscriptError as exc:
        raise UsageError(_unreadable(shown_path, exc)) from None
    card = first_card_request([e for e in transcript.run.exchanges if e.purpose == "card"])
    trust = reader_trust(args, config_of(args), COMMAND, card.url if card is not None else "")
    if problem is not None:
        say(
            f"warning: {shown_path} states a report its bytes do not give ({safe_text(problem, limit=500)}); "
            "what follows is what its bytes give",
            COMMAND,
        )
    try:
        return read_run(transcript.run, trust, transcript)
    except TranscriptError as exc:
        raise UsageError(_unreadable(shown_path, exc)) from None


def _unreadable(path: str, exc: Exception) -> str:
    from explorer.core.text import safe_text

    return f"--offline: cannot read {path} as a transcript: {safe_text(str(exc), limit=500)}"


def _interview(target: str, options: Options, quiet: bool) -> Run | None:
    """The live run, or None after Ctrl+C, said on stderr as a sweep says it (nothing recorded)."""
    import time

    from explorer.core.text import safe_text
    from explorer.interview.procedure import run_interview_sync

    began = time.perf_counter()
    progress = None if quiet else _ProgressLines(sys.stderr)
    try:
        try:
            return run_interview_sync(target, options, progress)
        finally:
            if progress is not None:
                progress.clear()
    except KeyboardInterrupt:
        seconds = time.perf_counter() - began
        say(f"{safe_text(target, limit=300)} not verified, stopped after {seconds:.1f} s (interrupted); "
            "nothing was recorded", COMMAND)  # fmt: skip
        return None


def _sign(result: Run, key: RunnerKey | None, target: str, quiet: bool) -> Run:
    """The run signed with the runner key (--sign-key or the config's), if one applies."""
    if key is None:
        return result
    signed = sign_or_keep(result, key, target)
    if signed.attestation is not None and not quiet:
        say(f"signed with runner key {key.keyid}", COMMAND)
    return signed


def _record(run: Run, history: HistoryStore, quiet: bool) -> bool:
    """Record the run in the history opened before it was asked; False (said on stderr) when that
    fails, whatever the reason: the verdict is printed already, the exit status becomes 6."""
    try:
        run_id = history.record(run)
    except Exception as exc:  # noqa: BLE001 - whatever stopped it, the run is not kept, and that is said
        say(f"the run was not recorded in the history: {exc} (exit status {EXIT_UNKNOWN})", COMMAND)
        return False
    if not quiet:
        say(f"recorded as run {run_id}", COMMAND)
    return True


def _colour_enabled(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _print_report(report: Any, as_json: bool) -> None:
    if as_json:
        print_json(report)
        return
    from explorer.core.report import summary_lines

    lines = _with_stacks(summary_lines(report), report)
    verdict = str(report.get("verdict"))
    if lines and _colour_enabled(sys.stdout) and verdict in _COLOURS:
        lines[0] = lines[0].replace(verdict, f"\x1b[1;{_COLOURS[verdict]}m{verdict}\x1b[0m", 1)
    print_lines(lines)


def _with_stacks(lines: list[str], report: Any) -> list[str]:
    """The summary with the client stacks that accept the card signature under its `signature:`
    line (and where they disagree, the members and the fix)."""
    from explorer.core.view import ReportView

    at = next((i for i, line in enumerate(lines) if line.startswith("signature: ")), None)
    if at is None:
        return lines
    at += 1
    while at < len(lines) and lines[at].startswith("  "):
        at += 1
    stacks = ReportView.of(report).card.signature.stacks_lines()
    return [*lines[:at], *(f"  {line}" for line in stacks), *lines[at:]]


def _history_error() -> type[Exception]:
    """The store's HistoryError, imported only when an exception is matched against it: a run
    that records nothing (`--no-history`, `--offline`) never imports the store."""
    from explorer.store.base import HistoryError

    return HistoryError


def preload(args: argparse.Namespace) -> None:
    """What a live interview runs on, imported at start-up (explorer.cli._settle_imports)."""
    if not args.offline and not is_sweep(args):
        import explorer.interview.procedure  # noqa: F401


def run(args: argparse.Namespace) -> int:
    if is_sweep(args):
        if args.offline:
            message = "--offline re-evaluates one transcript; it does not go with a sweep"
            return error(message, EXIT_USAGE, COMMAND)
        from explorer.commands.verify_many import run_sweep

        return run_sweep(args, lambda given, config, load_keys: _options(args, given, config, load_keys))
    timeout: float | None = None  # the live run's request timeout
    deadline: float | None = None  # and its deadline
    history: HistoryStore | None = None  # opened before the agent is asked, closed at the end
    try:
        try:
            if args.offline:
                if args.target:
                    raise UsageError("give either TARGET or --offline TRANSCRIPT.json, not both")
                if args.sign_key:
                    raise UsageError(
                        "--sign-key signs a live run; --offline re-checks one (use --trust-runner)"
                    )
                if args.role is not None or args.runner is not None:
                    raise UsageError(
                        "--as and --runner say who runs a live interview; --offline re-checks "
                        "a recorded one, whose runner only its signature can name"
                    )
                result = _offline(args.offline, args)
            else:
                if not args.target:
                    raise UsageError(
                        "a TARGET is required (a URL, a card file, an OpenClasp reference or an agent name)"
                    )
                target, options = _options(args, args.target[0], check=True)
                from explorer.interview.procedure import run_deadline

                timeout, deadline = options.timeout, run_deadline(options)
                key = signing_key(args.sign_key, config_of(args), options.role, options.runner, COMMAND)
                if not args.no_history:
                    history = recording_history(args)
                interviewed = _interview(target, options, args.quiet)
                if interviewed is None:
                    return EXIT_INTERRUPTED
                result = _sign(interviewed, key, target, args.quiet)
        except UsageError as exc:
            say(str(exc), COMMAND)
            return EXIT_USAGE
        except _history_error() as exc:  # an except clause's type is looked up only when something was raised
            say(f"the history cannot be used, so nothing was asked: {exc}", COMMAND)
            return EXIT_UNKNOWN
        _print_report(result.report, args.json)
        if timeout is not None and met_timeout(result.report):
            say(timeout_hint(timeout), COMMAND)
        if deadline is not None and met_deadline(result.report):
            say(deadline_hint(deadline), COMMAND)
        recorded = history is None or _record(result, history, args.quiet)
        if not args.offline and (args.junit or args.transcripts):
            from explorer.commands.verify_many import write_single_outputs

            write_single_outputs(result, args)
        return verdict_exit(str(result.report.get("verdict"))) if recorded else EXIT_UNKNOWN
    finally:
        if history is not None:
            history.close()
