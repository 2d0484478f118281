"""The fleet view's data: every agent in the history plus every agent of a sweep in progress.

Plain Python, no textual, so the rules a user reads in the fleet view are tested without a
terminal: which row an agent is (its card URL, the history's key; a target still waiting for
its first answer is keyed by the target), what "changed" means (the verdict, the card digest or
the answers digest differs from the agent's previous run; `churn` counts such runs), and how
rows sort and filter. The model keeps one small `FleetEntry` per agent and never a report, so a
sweep of thousands stays light; the screen asks for `view(sort, verdict)` when it repaints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

PENDING = "pending"
# Sort keys the screen cycles through, and verdict order for "verdict": worst first.
SORTS: tuple[str, ...] = ("verdict", "churn", "last change", "name")
VERDICT_ORDER: tuple[str, ...] = (
    "nonconformant",
    "churn",
    "unreachable",
    "conformant",
    "not_offered",
    PENDING,
)
FILTERS: tuple[str | None, ...] = (None, *VERDICT_ORDER)


@dataclass(frozen=True)
class FleetEntry:
    """One row: an agent's latest verdict, standing, signature, last change, churn and runs."""

    key: str
    name: str
    verdict: str
    standing: str | None = None
    signature: str | None = None
    last_change_at: str | None = None
    churn: int = 0
    runs: int = 0
    last_run_id: int | None = None
    last_at: str | None = None
    card_sha256: str | None = None
    answers_sha256: str | None = None


def entry_of_summary(summary: Any) -> FleetEntry:
    """A history `FleetSummary` as a row."""
    return FleetEntry(
        key=summary.agent,
        name=summary.name or summary.agent,
        verdict=summary.verdict,
        standing=summary.standing,
        signature=summary.signature,
        last_change_at=summary.last_change_at,
        churn=int(summary.churn or 0),
        runs=int(summary.runs),
        last_run_id=summary.last_run_id,
        last_at=summary.last_recorded_at,
        card_sha256=summary.card_sha256,
        answers_sha256=summary.answers_sha256,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Finished:
    """What the fleet keeps of one finished run (read from its report, which is then dropped)."""

    agent: str
    name: str | None
    verdict: str
    standing: str | None
    signature: str | None
    card_sha256: str | None
    answers_sha256: str | None

    @classmethod
    def of(cls, report: Mapping[str, Any], agent: str) -> Finished:
        card = report.get("card") if isinstance(report.get("card"), Mapping) else {}
        signature = card.get("signature") if isinstance(card.get("signature"), Mapping) else {}
        return cls(
            agent=agent,
            name=_text(card.get("name")),
            verdict=str(report.get("verdict")),
            standing=_text(report.get("standing")),
            signature=_text(signature.get("status")),
            card_sha256=_text(card.get("sha256")),
            answers_sha256=_text(report.get("answers_sha256")),
        )


class FleetModel:
    """Agents by key; a sweep's targets wait as `pending` rows until their run finishes."""

    def __init__(self) -> None:
        self.entries: dict[str, FleetEntry] = {}
        self.pending: dict[str, FleetEntry] = {}

    def load(self, summaries: Iterable[Any]) -> None:
        """Put the history's agents in (a live entry already here is newer and kept)."""
        for summary in summaries:
            entry = entry_of_summary(summary)
            current = self.entries.get(entry.key)
            if current is None or (current.last_run_id or 0) <= (entry.last_run_id or 0):
                self.entries[entry.key] = entry

    def expect(self, targets: Iterable[str]) -> None:
        """A sweep is about to ask these targets: each is a pending row until it finishes."""
        for target in targets:
            if target not in self.entries:
                self.pending[target] = FleetEntry(key=target, name=target, verdict=PENDING)

    def finish(self, target: str, done: Finished, *, run_id: int | None, at: str) -> FleetEntry:
        """A run of the sweep finished: update (or add) its agent's row, counting a change."""
        self.pending.pop(target, None)
        before = self.entries.get(done.agent)
        entry = before or FleetEntry(key=done.agent, name=done.name or done.agent, verdict=done.verdict)
        changed = before is not None and (
            (before.verdict, before.card_sha256, before.answers_sha256)
            != (done.verdict, done.card_sha256, done.answers_sha256)
        )
        entry = replace(
            entry,
            name=done.name or entry.name,
            verdict=done.verdict,
            standing=done.standing,
            signature=done.signature,
            churn=entry.churn + (1 if changed else 0),
            last_change_at=at if changed else entry.last_change_at,
            runs=entry.runs + 1,
            last_run_id=run_id if run_id is not None else entry.last_run_id,
            last_at=at,
            card_sha256=done.card_sha256,
            answers_sha256=done.answers_sha256,
        )
        self.entries[done.agent] = entry
        return entry

    def all(self) -> list[FleetEntry]:
        return [*self.entries.values(), *self.pending.values()]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for entry in self.all():
            out[entry.verdict] = out.get(entry.verdict, 0) + 1
        return out

    def view(self, sort: str = "verdict", verdict: str | None = None) -> list[FleetEntry]:
        """The rows to show: only `verdict` (when given), ordered by `sort` (one of SORTS)."""
        rows = [e for e in self.all() if verdict is None or e.verdict == verdict]
        rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
        if sort == "churn":
            rows.sort(key=lambda e: (-e.churn, e.name.casefold()))
        elif sort == "last change":
            rows.sort(key=lambda e: (e.last_change_at or "", e.name.casefold()), reverse=True)
        elif sort == "name":
            rows.sort(key=lambda e: (e.name.casefold(), e.key))
        else:
            rows.sort(key=lambda e: (rank.get(e.verdict, len(rank)), -e.churn, e.name.casefold()))
        return rows
