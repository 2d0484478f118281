"""`verify` with many targets (CONTRACT.md "Many agents in one run"): the command side of a sweep.

`verify` hands over here when it is given more than one target, `--from FILE|-` or `--shard I/N`.
The list is read (blank lines and `#` comments skipped), sharded by position, and every target
is planned exactly as `verify` plans one (config agent names, headers, keys, role, runner,
timeouts) before anything is asked: a usage problem in any of them is exit status 2 up front,
not a surprise half way. Key sources shared by many targets (`--keys URL`) are loaded once.

Then `explorer.interview.sweep` runs the interviews, and each finished run is, in completion order:
printed (one NDJSON report with its `target` per line with `--json`, else one line of words),
recorded in the history in its own transaction (so a sweep killed half way keeps what finished),
written as a transcript (`--transcripts DIR`) and added to the JUnit file (`--junit FILE`), and
then dropped. A progress line (done/total, rate, verdict counts) is kept on stderr when stderr
is a terminal, and a one-line summary ends the sweep there. The exit status follows the
many-targets rule of `explorer.core.sweep`, except for a list that holds one target: that is a
single target and keeps verify's own statuses. No run is silently lost: the history is opened
(and a SQLite file proven writable) before the first agent is asked, so one that cannot be used
is exit status 6 with nothing asked; runs that could not be recorded (the database went away)
keep their lines, the summary says how many were not recorded, and the status is 6.

Only the standard library is imported at module level: `verify --help` imports this module for
its options and must stay instant.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.commands.common import (
    EXIT_UNKNOWN,
    EXIT_USAGE,
    KeyLoader,
    UsageError,
    cached_key_loader,
    config_of,
    deadline_hint,
    load_trusted_keys,
    met_deadline,
    met_timeout,
    recording_history,
    say,
    timeout_hint,
    typed_settings,
    verdict_exit,
)
from explorer.commands.evidence_options import sign_or_keep, signing_key

if TYPE_CHECKING:
    from explorer.config.file import Config
    from explorer.core.run import Run
    from explorer.core.sweep import Tally
    from explorer.evidence.runner_keys import RunnerKey
    from explorer.interview.options import Options
    from explorer.interview.sweep import Finished
    from explorer.store.base import HistoryStore
    from explorer.store.sweep_files import JUnitWriter

COMMAND = "verify"
MAX_JOBS = 256
EXIT_INTERRUPTED = 130

Planner = Callable[[str, "Config", KeyLoader], "tuple[str, Options]"]


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"--jobs must be between 1 and {MAX_JOBS}")
    return value


def _shard(text: str) -> tuple[int, int]:
    from explorer.core.sweep import ShardError, parse_shard

    try:
        return parse_shard(text)
    except ShardError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_list_arguments(parser: argparse.ArgumentParser) -> None:
    """`--from FILE|-` and `--jobs N`, shared by `verify` and `watch`."""
    parser.add_argument(
        "--from",
        dest="from_",
        default=None,
        metavar="FILE",
        help="targets one per line ('-' for stdin; blank lines and # comments skipped)",
    )
    parser.add_argument(
        "--jobs", type=_jobs, default=8, metavar="N", help="interviews in flight at once (default 8)"
    )
    parser.add_argument(
        "--allow-files",
        action="store_true",
        help="let --from list card files too (a list holds URLs and configured agent names only, "
        "so a list from someone else cannot make the explorer read your files)",
    )


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """`--from`, `--jobs`, `--shard`, `--junit`, `--transcripts`."""
    add_list_arguments(parser)
    parser.add_argument(
        "--shard",
        type=_shard,
        default=None,
        metavar="I/N",
        help="keep the targets at 0-based positions p with p mod N == I-1 (split a list over N machines)",
    )
    parser.add_argument("--junit", default=None, metavar="FILE", help="also write JUnit XML to FILE")
    parser.add_argument(
        "--transcripts",
        default=None,
        metavar="DIR",
        help="write each run's JSON transcript into DIR as it finishes (for `history import`)",
    )


def is_sweep(args: argparse.Namespace) -> bool:
    """True when `verify` was asked for many agents: several targets, `--from` or `--shard`."""
    return args.from_ is not None or args.shard is not None or len(args.target) > 1


def listed_targets(
    positional: Sequence[str], from_: str | None, *, allow_files: bool = False, agents: Sequence[str] = ()
) -> list[str]:
    """The positional targets, then the lines of `--from FILE|-`; UsageError when unreadable, or
    when a line is a file path and not `allow_files` (`explorer.interview.targets.list_files_problem`;
    `agents` are the configured agents' names, which a list may hold)."""
    from explorer.core.sweep import target_lines
    from explorer.interview.targets import list_files_problem

    targets = [t.strip() for t in positional if t.strip()]
    if from_ is None:
        return targets
    try:
        if from_ == "-":
            text = sys.stdin.read()
        else:
            text = Path(from_).expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"--from: no such file {from_}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--from: cannot read {from_} as UTF-8 text ({exc})") from None
    lines = target_lines(text)
    problem = None if allow_files else list_files_problem(lines, agents)
    if problem is not None:
        raise UsageError(f"--from: {problem}")
    return targets + lines


class _Outputs:
    """Everything done with a finished run, in completion order; holds no report."""

    def __init__(
        self,
        args: argparse.Namespace,
        total: int,
        key: RunnerKey | None = None,
        timeout: float | None = None,
        history: HistoryStore | None = None,
    ) -> None:
        from explorer.core.sweep import Tally
        from explorer.store.sweep_files import JUnitWriter

        self.args = args
        self.key = key  # the runner key every run is signed with (--sign-key), or None
        self.tally: Tally = Tally(total)
        self.began = time.perf_counter()
        self.junit: JUnitWriter | None = JUnitWriter(args.junit) if args.junit else None
        self.transcripts = Path(args.transcripts).expanduser() if args.transcripts else None
        self.history = history  # opened before the sweep (`recording_history`), or None: --no-history
        self.unrecorded = 0  # finished runs the history refused: said at the end, exit status 6
        self.terminal = sys.stderr.isatty()
        self._shown = 0.0
        self.timeout = timeout  # the request timeout the hint names
        self.cut = 0  # runs their deadline cut short
        self.timed_out = 0  # agents with a `timeout` finding, for one hint at the end
        reconfigure = getattr(sys.stdout, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")

    def __call__(self, done: Finished) -> None:
        if done.run is None:
            self._failed(done)
        else:
            self._finished(done.run, done.job.target, done.seconds)
        self._progress()

    def _failed(self, done: Finished) -> None:
        """An interview that raised: said on stderr, and still a complete (unreachable) report on
        stdout and a suite in the JUnit file, so a sweep's outputs stay one per target."""
        from explorer.core.text import safe_text
        from explorer.interview.procedure import failed_report

        self.tally.add("unreachable")
        say(f"{safe_text(done.job.target, limit=300)}: the interview failed: {done.error}", COMMAND)
        report = failed_report(done.job.target, done.job.options, str(done.error))
        if self.junit is not None:
            self.junit.add_report(report, name=done.job.target, seconds=done.seconds)
        if self.args.json:
            self._write_line(report)

    def _finished(self, run: Run, target: str, seconds: float) -> None:
        from explorer.store.sweep_files import SweepFileError, write_transcript

        if self.key is not None:
            run = sign_or_keep(run, self.key, target)
        report = run.report
        self.tally.add(str(report.get("verdict")))
        if met_timeout(report):
            self.timed_out += 1
        if met_deadline(report):
            self.cut += 1
        # Recorded and written before it is printed: a line on stdout means the run was asked for
        # keeping, and one the history refused is said beside it (and counted for the end).
        if self.history is not None:
            try:
                self.history.record(run)
            except Exception as exc:  # noqa: BLE001 - whatever stopped it, the run is not kept, and that is said
                self.unrecorded += 1
                say(f"{target}: the run was not recorded in the history: {exc}", COMMAND)
        if self.transcripts is not None:
            try:
                write_transcript(self.transcripts, run)
            except SweepFileError as exc:
                say(f"warning: {exc}", COMMAND)
        if self.junit is not None:
            self.junit.add(run, name=target, seconds=seconds)
        if self.args.json:
            self._write_line(report if "target" in report else {**report, "target": target})
        else:
            self._clear()
            sys.stdout.write(_line(report, target) + "\n")
            sys.stdout.flush()

    def _write_line(self, value: Any) -> None:
        self._clear()
        sys.stdout.write(json.dumps(value, ensure_ascii=True) + "\n")
        sys.stdout.flush()

    def _progress(self, force: bool = False) -> None:
        if not self.terminal or self.args.quiet:
            return
        now = time.perf_counter()
        if not force and now - self._shown < 0.1 and self.tally.done < self.tally.total:
            return
        self._shown = now
        sys.stderr.write("\r\x1b[K" + self.tally.progress(now - self.began))
        sys.stderr.flush()

    def _clear(self) -> None:
        if self.terminal and self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._shown = 0.0

    def close(self, interrupted: bool) -> None:
        """Finish the JUnit file, close the history, and say the one-line summary on stderr."""
        from explorer.store.sweep_files import SweepFileError

        self._clear()
        if self.junit is not None:
            try:
                self.junit.close()
            except SweepFileError as exc:
                say(str(exc), COMMAND)
        if self.history is not None:
            self.history.close()
        summary = self.tally.summary(time.perf_counter() - self.began)
        say(summary + (" (interrupted)" if interrupted else ""), COMMAND)
        if self.unrecorded:
            runs = f"{self.unrecorded} run{'s' if self.unrecorded != 1 else ''}"
            say(
                f"{runs} of {self.tally.done} {'were' if self.unrecorded != 1 else 'was'} not recorded in "
                f"the history (exit status {EXIT_UNKNOWN})",
                COMMAND,
            )
        if self.timed_out and self.timeout is not None:
            agents = f"{self.timed_out} agent{'s' if self.timed_out != 1 else ''}"
            say(f"{agents} met the timeout: {timeout_hint(self.timeout)}", COMMAND)
        if self.cut:
            agents = f"{self.cut} agent{'s' if self.cut != 1 else ''}"
            say(f"{agents}: {deadline_hint()}", COMMAND)


def _line(report: Any, target: str) -> str:
    """One agent of a sweep in words: verdict, target, card name, the error codes."""
    from explorer.core.text import safe_text
    from explorer.core.view import ReportView

    name = ReportView.of(report).card.name
    codes = sorted(
        {
            str(f.get("code"))
            for f in report.get("findings") or []
            if isinstance(f, dict) and f.get("severity") == "error"
        }
    )
    parts = [
        f"{safe_text(report.get('verdict'), limit=13):<13}",
        safe_text(report.get("target") or target, limit=300),
    ]
    if isinstance(name, str) and name:
        parts.append(f"({safe_text(name, limit=60)})")
    if codes:
        parts.append(safe_text(", ".join(codes), limit=300))
    return "  ".join(parts)


def run_sweep(args: argparse.Namespace, plan: Planner) -> int:
    """Plan every target, run the sweep, and return the many-targets exit status."""
    import asyncio

    from explorer.core.sweep import shard
    from explorer.interview.planning import unbound_credentials
    from explorer.interview.sweep import Job, sweep

    try:
        config = config_of(args)
        agents = list(config.agents)
        listed = listed_targets(args.target, args.from_, allow_files=args.allow_files, agents=agents)
        if not listed:
            raise UsageError("no targets: give them as arguments or one per line with --from FILE|-")
        _check_urls(listed)
        unbound = unbound_credentials(typed_settings(args), len(listed))
        if unbound is not None:
            raise UsageError(unbound)
        positions = list(enumerate(listed))
        if args.shard is not None:
            positions = shard(positions, *args.shard)
        load_keys = cached_key_loader(load_trusted_keys)
        jobs = [Job(p, *plan(given, config, load_keys)) for p, given in positions]
        first = jobs[0].options if jobs else None
        key = signing_key(args.sign_key, config, first.role, first.runner, COMMAND) if first else None
    except UsageError as exc:
        say(str(exc), COMMAND)
        return EXIT_USAGE
    from explorer.store.base import HistoryError
    from explorer.store.sweep_files import SweepFileError

    try:
        history = None if args.no_history else recording_history(args)
    except UsageError as exc:
        say(str(exc), COMMAND)
        return EXIT_USAGE
    except HistoryError as exc:
        say(f"the history cannot be used, so nothing was asked: {exc}", COMMAND)
        return EXIT_UNKNOWN
    try:
        outputs = _Outputs(args, len(jobs), key, first.timeout if first is not None else None, history)
    except SweepFileError as exc:  # an unwritable --junit is the user's to fix
        if history is not None:
            history.close()
        say(str(exc), COMMAND)
        return EXIT_USAGE
    interrupted = False
    try:
        asyncio.run(sweep(jobs, outputs, concurrency=args.jobs))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        outputs.close(interrupted)
    if interrupted:
        return EXIT_INTERRUPTED
    if outputs.unrecorded:
        return EXIT_UNKNOWN
    return _exit_status(outputs.tally, len(listed))


def _exit_status(tally: Tally, listed: int) -> int:
    """The many-targets rule; but a list of one target (`--from` a file of one line, or one
    target with `--shard`) is a single target, which keeps verify's own statuses (CONTRACT.md:
    `not_offered` is 4 there, not neutral)."""
    verdicts = [verdict for verdict, count in tally.counts.items() if count]
    if listed == 1 and tally.done == 1 and len(verdicts) == 1:
        return verdict_exit(verdicts[0])
    return tally.exit_status()


def _check_urls(listed: Sequence[str]) -> None:
    """A target URL that cannot be used (malformed, a password in it) is a usage error up front,
    as for one target, naming its line among the targets; other targets are left to the sweep."""
    from explorer.interview.targets import url_problem

    for position, given in enumerate(listed, start=1):
        problem = url_problem(given)
        if problem is not None:
            raise UsageError(f"target {position}: {problem}")


def write_single_outputs(run: Run, args: argparse.Namespace) -> None:
    """`--junit` and `--transcripts` for a single-target `verify`."""
    from explorer.store.sweep_files import JUnitWriter, SweepFileError, write_transcript

    try:
        if args.transcripts:
            write_transcript(Path(args.transcripts).expanduser(), run)
        if args.junit:
            writer = JUnitWriter(args.junit)
            target = run.report.get("target")
            writer.add(run, name=target if isinstance(target, str) else None)
            writer.close()
    except SweepFileError as exc:
        say(f"warning: {exc}", COMMAND)
