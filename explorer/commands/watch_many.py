"""`interview-explorer watch --from FILE --every SECONDS [--count N]`: re-sweep a list, one line a sweep.

Every SECONDS the whole list is swept (`explorer.interview.sweep`, `--jobs` interviews in flight, per-host
bounds), each run recorded unless `--no-history` (signed with the config's sign_key where
`watch TARGET` would sign it), and ONE line is printed for the sweep: when it
ended, how many agents in how long, the verdict counts, and the agents that changed since the
previous sweep, each named by its card name (else its target) with what changed, in the kinds of
CONTRACT "Signatures are proofs": its verdict, its declarations (the card without its signatures,
which commits the proposals), its signing key (`key changed`), its answers. An agent whose card
was only signed again (a restart, another replica: the same declarations under the same key) has
not changed: it raises no alarm, and the line counts it as signed again. The first sweep has
nothing to compare with and says so. Targets are planned once, at the start,
exactly as `watch TARGET` plans one (config agent names, headers, keys, role, runner).

A slow sweep delays the next one and never piles them up; Ctrl+C stops the watch between or
during sweeps (what finished is recorded). Exit status: the many-targets rule of `verify` for
the last complete sweep; 2 usage error; 6 a history that cannot be used (refused before anything
is asked, or one that refused runs: the sweep's line is printed, then how many runs were not
recorded, and the watch stops); 130 when interrupted before any sweep finished.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from explorer.commands.common import (
    EXIT_UNKNOWN,
    EXIT_USAGE,
    UsageError,
    config_of,
    error,
    say,
    typed_settings,
)

if TYPE_CHECKING:
    from explorer.core.compare import RunMarks
    from explorer.evidence.runner_keys import RunnerKey
    from explorer.interview.sweep import Finished, Job
    from explorer.store.base import HistoryStore

COMMAND = "watch"
EXIT_INTERRUPTED = 130
_SHOWN = 8  # agents named on one line; the rest are counted


@dataclass(frozen=True)
class State:
    """What a sweep saw of one agent: enough to say what changed, nothing more (no report kept)."""

    name: str
    verdict: str
    card: str | None
    answers: str | None
    declarations: str | None = None  # None: unknown, the card digest stands for it
    signers: tuple[str, ...] | None = None

    def marks(self) -> RunMarks:
        from explorer.core.compare import RunMarks

        return RunMarks(self.verdict, self.card, self.declarations, self.signers, self.answers)


def state_of(report: Mapping[str, Any], target: str) -> State:
    from explorer.core.compare import RunMarks
    from explorer.core.view import ReportView

    name = ReportView.of(report).card.name
    marks = RunMarks.of_report(report)
    return State(
        name or target,
        str(report.get("verdict")),
        marks.card_sha256,
        marks.answers_sha256,
        marks.declarations_sha256,
        marks.signers,
    )


def kinds_between(before: State, after: State) -> tuple[str, ...]:
    """How one agent differs between two sweeps, in `explorer.core.compare.KINDS`."""
    from explorer.core.compare import change_kinds

    return change_kinds(before.marks(), after.marks())


def changes(before: State, after: State) -> list[str]:
    """What differs between two sweeps of one agent, in words (a card only signed again is not a
    change: `kinds_between` says `resigned`)."""
    kinds = kinds_between(before, after)
    out = []
    if "verdict" in kinds:
        out.append(f"verdict {before.verdict} -> {after.verdict}")
    if "declarations" in kinds:
        out.append("declarations")
    if "key" in kinds:
        out.append("key changed")
    if "answers" in kinds:
        out.append("answers")
    return out


def sweep_line(
    finished_at: str,
    number: int,
    states: Mapping[str, State],
    previous: Mapping[str, State] | None,
    seconds: float,
    counts: str,
) -> str:
    """The one line printed for a sweep."""
    from explorer.core.text import safe_text

    head = f"{finished_at}  sweep {number}: {len(states)} agents in {seconds:.1f} s ({counts})"
    if previous is None:
        return f"{head}  first sweep"
    changed = []
    resigned = 0
    for target, state in states.items():
        old = previous.get(target)
        what = ["new in the list"] if old is None else changes(old, state)
        if what:
            changed.append(f"{safe_text(state.name, limit=80)} ({', '.join(what)})")
        elif old is not None and "resigned" in kinds_between(old, state):
            resigned += 1
    again = f" ({resigned} signed again, not a change)" if resigned else ""
    if not changed:
        return f"{head}  no change{again}"
    more = f", +{len(changed) - _SHOWN} more" if len(changed) > _SHOWN else ""
    return f"{head}  CHANGED {len(changed)}: " + "; ".join(changed[:_SHOWN]) + more + again


@dataclass
class _Round:
    """One sweep in progress."""

    history: HistoryStore | None
    signers: Mapping[str, RunnerKey]  # target -> the config's sign_key, for runs it signs
    states: dict[str, State] = field(default_factory=dict)
    unrecorded: int = 0  # finished runs the history refused

    def __call__(self, done: Finished) -> None:
        from explorer.commands.evidence_options import sign_or_keep

        target = done.job.target
        if done.run is None:
            say(f"{target}: the interview failed: {done.error}", COMMAND)
            self.states[target] = State(target, "unreachable", None, None)
            return
        key = self.signers.get(target)
        run = done.run if key is None else sign_or_keep(done.run, key, target, COMMAND)
        if self.history is not None:
            try:
                self.history.record(run)
            except Exception as exc:  # noqa: BLE001 - whatever stopped it, the run is not kept, and that is said
                self.unrecorded += 1
                say(f"{target}: the run was not recorded in the history: {exc}", COMMAND)
        self.states[target] = state_of(run.report, target)


def _jobs(args: argparse.Namespace) -> tuple[list[Job], dict[str, RunnerKey]]:
    """The planned interviews, and the key each target's runs are signed with (the config's
    sign_key, as `watch TARGET` signs: only for an independent or platform runner)."""
    from explorer.commands.common import cached_key_loader, load_trusted_keys, preload_keys
    from explorer.commands.evidence_options import signing_key
    from explorer.commands.verify_many import listed_targets
    from explorer.interview.planning import PlanError, plan, unbound_credentials
    from explorer.interview.sweep import Job

    config = config_of(args)
    typed = [args.target] if args.target else []
    targets = listed_targets(typed, args.from_, allow_files=args.allow_files, agents=list(config.agents))
    if not targets:
        raise UsageError("no targets in the list: give one per line (blank lines and # comments skipped)")
    given = typed_settings(args)
    unbound = unbound_credentials(given, len(targets))
    if unbound is not None:
        raise UsageError(unbound)
    load_keys = cached_key_loader(load_trusted_keys)  # a `--keys URL` is fetched once, not per run
    jobs = []
    signers: dict[str, RunnerKey] = {}
    keys: dict[tuple[str, str | None], RunnerKey | None] = {}  # one load (and one note) per signer
    for position, target in enumerate(targets):
        try:
            url, options = plan(target, given, config)
        except PlanError as exc:
            raise UsageError(str(exc)) from None
        signer = (options.role, options.runner)
        if signer not in keys:
            keys[signer] = signing_key(None, config, options.role, options.runner, COMMAND)
        key = keys[signer]
        if key is not None:
            signers[url] = key
        jobs.append(Job(position, url, preload_keys(options, load_keys, COMMAND)))
    return jobs, signers


async def _watch(
    args: argparse.Namespace,
    jobs: list[Job],
    signers: Mapping[str, RunnerKey],
    history: HistoryStore | None,
    last: list[int],
) -> None:
    from explorer.core.sweep import Tally
    from explorer.core.when import stamp
    from explorer.interview.sweep import sweep

    previous: dict[str, State] | None = None
    number = 0
    next_at = time.monotonic()
    while args.count is None or number < args.count:
        pause = next_at - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)
        next_at = max(next_at + args.every, time.monotonic())
        began = time.perf_counter()
        current = _Round(history, signers)
        await sweep(jobs, current, concurrency=args.jobs)
        number += 1
        tally = Tally(len(jobs))
        for state in current.states.values():
            tally.add(state.verdict)
        states = {job.target: current.states[job.target] for job in jobs if job.target in current.states}
        took, ended = time.perf_counter() - began, stamp(precision="seconds")
        print(sweep_line(ended, number, states, previous, took, tally.words()), flush=True)
        previous = states
        last[:] = [tally.exit_status()]
        if current.unrecorded:
            runs = f"{current.unrecorded} run{'s' if current.unrecorded != 1 else ''}"
            say(
                f"{runs} of this sweep {'were' if current.unrecorded != 1 else 'was'} not recorded in the "
                f"history; the watch stops (exit status {EXIT_UNKNOWN})",
                COMMAND,
            )
            last[:] = [EXIT_UNKNOWN]
            return


def run_watch_many(args: argparse.Namespace) -> int:
    from explorer.store.base import HistoryError

    try:
        jobs, signers = _jobs(args)
    except UsageError as exc:
        return error(str(exc), EXIT_USAGE, COMMAND)
    history = None
    if not args.no_history:  # opened before anything is asked: one that cannot be used is refused now
        from explorer.commands.common import recording_history

        try:
            history = recording_history(args)
        except HistoryError as exc:
            return error(f"the history cannot be used, so nothing was asked: {exc}", EXIT_UNKNOWN, COMMAND)
    last: list[int] = []
    if not args.quiet:
        print(
            f"watching {len(jobs)} agents every {args.every:g} s"
            + (f", {args.count} sweeps" if args.count else ", until Ctrl+C"),
            file=sys.stderr,
        )
    try:
        asyncio.run(_watch(args, jobs, signers, history, last))
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
        if not last:
            return EXIT_INTERRUPTED
    finally:
        if history is not None:
            history.close()
    return last[0] if last else EXIT_INTERRUPTED
