"""Asking again: the shared engine of `replay`, `watch` and the TUI's replay and watch screens.

What to ask is planned elsewhere (`explorer.interview.planning.plan_for_run` repeats a recorded run: the
same target, role, runner and key trust; secrets were never stored, so headers come from
`--header` or the config file, as for `verify`). This module runs a planned interview once,
records it (unless asked not to) and compares it with the run it follows, with the pure
`compare_reports`; `tick_line` turns one step into the single line `watch` prints. It sits beside
the procedure, above the history: the store keeps runs and never runs an interview. The network
is reached only through `explorer.interview.procedure`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from explorer.core.compare import Comparison, compare_reports
from explorer.core.run import Run
from explorer.core.text import safe_text
from explorer.core.view import ReportView
from explorer.core.when import stamp
from explorer.store.base import HistoryStore

if TYPE_CHECKING:
    from explorer.interview.options import Options

# Findings worth naming on a watch line: the ones that say an agent is unstable or inconsistent.
_UNSTABLE = ("nondeterministic_answer", "churn", "card_changed")


@dataclass(frozen=True)
class Step:
    """One interview run by replay or watch, and how it differs from the run before it."""

    run: Run
    run_id: int | None  # None when not recorded
    previous_id: int | None
    comparison: Comparison | None  # None when there was nothing to compare with
    finished_at: str

    @property
    def verdict(self) -> str:
        return self.run.verdict


def settle(
    run: Run,
    *,
    history: HistoryStore | None,
    previous: tuple[int | None, Mapping[str, Any]] | None,
) -> Step:
    """Record a finished run in `history` (when given) and compare it with `previous` (id, report,
    as a recorded run reads back); the new run is compared as it too will read back, so an unsigned
    run's stated role is a label on both sides (`explorer.evidence.read_back_report`)."""
    from explorer.evidence.standing import read_back_report

    run_id = history.record(run) if history is not None else None
    comparison = compare_reports(previous[1], read_back_report(run.report)) if previous is not None else None
    previous_id = previous[0] if previous is not None else None
    return Step(run, run_id, previous_id, comparison, stamp(precision="seconds"))


def interview(
    target: str,
    options: Options,
    *,
    history: HistoryStore | None,
    previous: tuple[int | None, Mapping[str, Any]] | None,
    run_fn: Callable[[str, Options], Run] | None = None,
) -> Step:
    """Ask once (synchronously), record the run, and compare it with `previous` (id, report).

    Raises explorer.net.keys.KeysError for an unusable key source (a usage problem) and
    HistoryError when recording fails.
    """
    if run_fn is None:
        from explorer.interview.procedure import run_interview_sync

        run_fn = run_interview_sync
    return settle(run_fn(target, options), history=history, previous=previous)


async def interview_async(
    target: str,
    options: Options,
    *,
    history: HistoryStore | None,
    previous: tuple[int | None, Mapping[str, Any]] | None,
    run_fn: Callable[[str, Options], Awaitable[Run]] | None = None,
) -> Step:
    """`interview` inside a running event loop (watch, the TUI): cancellable while it asks."""
    if run_fn is None:
        from explorer.interview.procedure import run_interview

        run_fn = run_interview
    run = await run_fn(target, options)
    return settle(run, history=history, previous=previous)


def unstable_findings(report: Mapping[str, Any]) -> list[str]:
    """`code(question, ...)` for the findings that show an unstable agent, in report order."""
    found: dict[str, list[str]] = {}
    for f in report.get("findings") or []:
        if isinstance(f, Mapping) and (f.get("code") in _UNSTABLE or f.get("severity") == "error"):
            where = found.setdefault(str(f.get("code")), [])
            question = f.get("question")
            if isinstance(question, str) and question not in where:
                where.append(question)
    return [f"{code}({', '.join(qs)})" if qs else code for code, qs in found.items()]


def tick_line(step: Step) -> str:
    """The one line `watch` prints per run: time, run, verdict, digests, change, unstable findings."""
    report = step.run.report
    digest = (ReportView.of(report).card.sha256 or "-")[:12]
    answers = report.get("answers_sha256")
    answers = answers[:12] if isinstance(answers, str) else "-"
    recorded = f"run {step.run_id}" if step.run_id is not None else "not recorded"
    since = f" since run {step.previous_id}" if step.previous_id else ""
    if step.comparison is None:
        change = "first run"
    elif not step.comparison.changed:  # a card only signed again is no change (compare.Comparison)
        change = f"no change{since}" + (": signed again" if step.comparison.resigned else "")
    else:
        change = f"CHANGED{since}: {step.comparison.summary()}"
    parts = [
        step.finished_at,
        recorded,
        safe_text(step.verdict, limit=20),
        f"card {digest}",
        f"answers {answers}",
        change,
    ]
    flags = unstable_findings(report)
    if flags:
        shown = ", ".join(flags[:4]) + (f", +{len(flags) - 4} more" if len(flags) > 4 else "")
        parts.append(f"findings: {safe_text(shown, limit=300)}")
    return "  ".join(parts)
