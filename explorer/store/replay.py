"""Asking again: the shared engine of `replay`, `watch` and the TUI's replay and watch screens.

A replay runs "the same interview" as a recorded run: the same target, the same role and runner
(so a claim stays a claim and evidence stays evidence), and the same trust in keys: the public
keys the user supplied for the original run are stored with it and trusted again, and a run whose
key came from the card's own `jku` is replayed with `jku` allowed again. Secrets were never stored,
so headers come from `--header` or from the config file's agent entry, as for `verify`.

Each replay is recorded (unless asked not to) and compared with the run it follows, with the pure
`compare_reports`; `tick_line` turns one step into the single line `watch` prints. The network is
reached only through `explorer.procedure`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from explorer.core.compare import Comparison, compare_reports
from explorer.core.run import Run
from explorer.core.text import safe_text
from explorer.store.history import History, agent_of

if TYPE_CHECKING:
    from explorer.config import Config
    from explorer.procedure import Options

# Findings worth naming on a watch line: the ones that say an agent is unstable or inconsistent.
_UNSTABLE = ("nondeterministic_answer", "churn", "card_changed")


@dataclass(frozen=True)
class Plan:
    """What to ask and how: a target plus the settings `procedure.Options` needs."""

    target: str
    role: str = "self"
    runner: str | None = None
    keys: tuple[Any, ...] = ()
    allow_jku: bool = False
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # secrets: never printed
    timeout: float = 10.0
    openclasp_base: str | None = None

    def options(self) -> Options:
        from explorer.procedure import Options

        return Options(
            keys=self.keys,
            allow_jku=self.allow_jku,
            headers=self.headers,
            role=self.role,
            runner=self.runner,
            timeout=self.timeout,
            openclasp_base=self.openclasp_base,
        )


def plan_for_target(
    target: str,
    *,
    role: str | None = None,
    runner: str | None = None,
    headers: Sequence[tuple[str, str]] = (),
    keys: Sequence[Any] = (),
    allow_jku: bool = False,
    timeout: float = 10.0,
    openclasp_base: str | None = None,
    config: Config | None = None,
) -> Plan:
    """A plan for a target typed by a person (a URL, a card file, or an agent name from the config).

    Raises explorer.config.ConfigError when a configured header's environment variable is unset.
    """
    from explorer.config import Config, agent_headers

    config = config if config is not None else Config()
    agent = config.agent(target, by_url=True)
    return Plan(
        target=agent.url if agent is not None else target,
        role=role or config.role or "self",
        runner=runner or config.runner,
        keys=config.key_sources(agent) + tuple(keys),
        allow_jku=allow_jku,
        headers=agent_headers(agent, headers),
        timeout=timeout,
        openclasp_base=openclasp_base,
    )


def plan_for_run(
    run: Run,
    *,
    headers: Sequence[tuple[str, str]] = (),
    keys: Sequence[Any] = (),
    allow_jku: bool = False,
    timeout: float = 10.0,
    openclasp_base: str | None = None,
    config: Config | None = None,
) -> Plan:
    """A plan that repeats a recorded run: same target, role, runner and key trust."""
    report = run.report
    ran_by = report.get("ran_by") if isinstance(report.get("ran_by"), Mapping) else {}
    signature = report.get("card", {}).get("signature") if isinstance(report.get("card"), Mapping) else None
    key_source = signature.get("key_source") if isinstance(signature, Mapping) else None
    target = report.get("target") if isinstance(report.get("target"), str) else agent_of(report)
    stored_keys: tuple[Any, ...] = ()
    if key_source == "user" and isinstance(run.keys, Mapping) and run.keys.get("keys"):
        stored_keys = (dict(run.keys),)
    return plan_for_target(
        target,
        role=ran_by.get("role") if isinstance(ran_by.get("role"), str) else None,
        runner=ran_by.get("name") if isinstance(ran_by.get("name"), str) else None,
        headers=headers,
        keys=tuple(keys) + stored_keys,
        allow_jku=allow_jku or key_source == "jku",
        timeout=timeout,
        openclasp_base=openclasp_base,
        config=config,
    )


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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def settle(
    run: Run,
    *,
    history: History | None,
    previous: tuple[int | None, Mapping[str, Any]] | None,
) -> Step:
    """Record a finished run in `history` (when given) and compare it with `previous` (id, report)."""
    run_id = history.record(run) if history is not None else None
    comparison = compare_reports(previous[1], run.report) if previous is not None else None
    return Step(run, run_id, previous[0] if previous is not None else None, comparison, _now())


def interview(
    plan: Plan,
    *,
    history: History | None,
    previous: tuple[int | None, Mapping[str, Any]] | None,
    run_fn: Callable[[str, Options], Run] | None = None,
) -> Step:
    """Run the plan once (synchronously), record it, and compare with `previous` (id, report).

    Raises explorer.net.keys.KeysError for an unusable key source (a usage problem) and
    HistoryError when recording fails.
    """
    if run_fn is None:
        from explorer.procedure import run_interview_sync as run_fn
    return settle(run_fn(plan.target, plan.options()), history=history, previous=previous)


async def interview_async(
    plan: Plan,
    *,
    history: History | None,
    previous: tuple[int | None, Mapping[str, Any]] | None,
    run_fn: Callable[[str, Options], Awaitable[Run]] | None = None,
) -> Step:
    """`interview` inside a running event loop (watch, the TUI): cancellable while it asks."""
    if run_fn is None:
        from explorer.procedure import run_interview as run_fn
    run = await run_fn(plan.target, plan.options())
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
    card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
    digest = (card.get("sha256") or "-")[:12] if isinstance(card.get("sha256"), str) else "-"
    answers = report.get("answers_sha256")
    answers = answers[:12] if isinstance(answers, str) else "-"
    recorded = f"run {step.run_id}" if step.run_id is not None else "not recorded"
    if step.comparison is None:
        change = "first run"
    elif step.comparison.identical:
        change = "no change" + (f" since run {step.previous_id}" if step.previous_id else "")
    else:
        since = f" since run {step.previous_id}" if step.previous_id else ""
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
