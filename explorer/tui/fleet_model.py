"""The fleet view's data: every agent in the history plus every agent of a sweep in progress.

Plain Python, no textual, so the rules a user reads in the fleet view are tested without a
terminal: which row an agent is (the history's agent, one across addresses, keyed by the address
of its latest run, with every address it was seen on; a target still waiting for its first
answer is keyed by the target), what "changed" means (CONTRACT "Signatures are
proofs": the declarations, the signing key, the answers or the verdict differ from the agent's
previous run, never a card only signed again; `changes` counts such runs), what churn is (runs
whose verdict is churn, and nothing else: `churn`), both counted as the history counts them,
for a live sweep's runs too, where an agent is in words short enough for a narrow terminal
(`where_labels`: host:port, with as much of the path as tells two agents on one host apart),
and how rows sort and filter. The model keeps one small `FleetEntry` per agent and never a
report, so a sweep of ten thousand stays light; the screen asks for `view(sort, verdict, text)`
when it repaints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from explorer.core.card import WELL_KNOWN
from explorer.core.view import ReportView

PENDING = "pending"
# Sort keys the screen cycles through, and verdict order for "verdict": worst first.
SORTS: tuple[str, ...] = ("verdict", "churn", "changes", "last change", "name")
VERDICT_ORDER: tuple[str, ...] = (
    "nonconformant",
    "churn",
    "unreachable",
    "conformant",
    "not_offered",
    PENDING,
)
FILTERS: tuple[str | None, ...] = (None, *VERDICT_ORDER)
UNCHECKED = "unchecked"  # a standing or signature as recorded, not yet read under your keys


@dataclass(frozen=True)
class FleetEntry:
    """One row: an agent's latest verdict, standing, signature, last change, churn, changes and runs."""

    key: str
    name: str
    verdict: str
    standing: str | None = None
    signature: str | None = None
    last_change_at: str | None = None  # when the latest run that changed was recorded
    churn: int = 0  # runs whose verdict is churn
    runs: int = 0
    last_run_id: int | None = None
    last_at: str | None = None
    card_sha256: str | None = None
    answers_sha256: str | None = None
    live: bool = False  # set by a run of this session's sweep, not (yet) read from the history
    changes: int = 0  # runs that changed from the agent's run before (never one only signed again)
    kinds: tuple[str, ...] = ()  # what the latest run changed (`explorer.core.compare.KINDS`)
    # The latest run's declarations digest and signers, when known: what a sweep's next run of the
    # agent is compared with when the history cannot say (`FleetModel.finish`).
    declarations_sha256: str | None = None
    signers: tuple[str, ...] | None = None
    addresses: tuple[str, ...] = ()  # every address the agent was seen on, `key` first

    def marks(self) -> Any:
        """The latest run's `RunMarks` (unknown declarations and signers stay unknown)."""
        from explorer.core.compare import RunMarks

        return RunMarks(
            self.verdict, self.card_sha256, self.declarations_sha256, self.signers, self.answers_sha256
        )


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
        changes=int(getattr(summary, "changes", 0) or 0),
        kinds=tuple(getattr(summary, "kinds", ()) or ()),
        addresses=tuple(getattr(summary, "addresses", ()) or (summary.agent,)),
    )


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
    declarations_sha256: str | None = None
    signers: tuple[str, ...] | None = None
    # What the history decided the run changed when it recorded it (`RunSummary.kinds`); None
    # when it was not recorded, and the model compares it with the agent's row itself.
    kinds: tuple[str, ...] | None = None

    @classmethod
    def of(cls, report: ReportView, agent: str, kinds: tuple[str, ...] | None = None) -> Finished:
        from explorer.core.compare import RunMarks

        marks = RunMarks.of_report(report.raw)
        return cls(
            agent=agent,
            name=report.card.name,
            verdict=report.verdict,
            standing=report.standing,
            signature=report.card.signature.status,
            card_sha256=report.card.sha256,
            answers_sha256=report.answers_sha256,
            declarations_sha256=marks.declarations_sha256,
            signers=marks.signers,
            kinds=kinds,
        )

    def marks(self) -> Any:
        """This run's `RunMarks`, what its change kinds are decided by."""
        from explorer.core.compare import RunMarks

        return RunMarks(
            self.verdict, self.card_sha256, self.declarations_sha256, self.signers, self.answers_sha256
        )


class FleetModel:
    """Agents by key; a sweep's targets wait as `pending` rows until their run finishes."""

    def __init__(self) -> None:
        self.entries: dict[str, FleetEntry] = {}
        self.pending: dict[str, FleetEntry] = {}
        self._where: dict[str, str] | None = None

    def load(self, summaries: Iterable[Any]) -> None:
        """The history's agents, as they are now: an agent forgotten since is gone; a row this
        session's sweep wrote that the history does not hold yet (or holds an older run of) is kept.
        `summaries` may be rows already (`prepare`, in a worker thread)."""
        loaded = {
            entry.key: entry
            for entry in (s if isinstance(s, FleetEntry) else entry_of_summary(s) for s in summaries)
        }
        for key, current in self.entries.items():
            known = loaded.get(key)
            if current.live and (known is None or (current.last_run_id or 0) > (known.last_run_id or 0)):
                loaded[key] = current
        self.entries = loaded
        self._where = None

    def unread(self, first: int, count: int, rows: Sequence[FleetEntry]) -> list[int]:
        """The latest run ids among `rows[first:first+count]` (the rows in view) whose verdict,
        standing or signature is still the recorded one, not yet read under your keys."""
        return [
            e.last_run_id
            for e in rows[max(first, 0) : first + count]
            if e.last_run_id is not None and not e.live and UNCHECKED in (e.standing, e.signature)
        ]

    def read(self, found: Mapping[int, tuple[str, str, str | None]]) -> bool:
        """Rows whose latest run was read under your keys take what it gave; True if any did."""
        changed = False
        for key, entry in self.entries.items():
            got = found.get(entry.last_run_id) if entry.last_run_id is not None and not entry.live else None
            if got is not None:
                verdict, standing, signature = got
                self.entries[key] = replace(entry, verdict=verdict, standing=standing, signature=signature)
                changed = True
        return changed

    def expect(self, targets: Iterable[str]) -> None:
        """A sweep is about to ask these targets: each is a pending row until it finishes."""
        for target in targets:
            if target not in self.entries:
                self.pending[target] = FleetEntry(key=target, name=target, verdict=PENDING)
        self._where = None

    def finish(self, target: str, done: Finished, *, run_id: int | None, at: str) -> FleetEntry:
        """A run of the sweep finished: update (or add) its agent's row, counted as the history
        counts it. Churn when its verdict is churn; a change when its declarations, signing key,
        answers or verdict differ from the agent's run before (the kinds the history recorded it
        with, else its marks against the row's), never when the card was only signed again."""
        from explorer.core.compare import change_kinds, is_change

        self.pending.pop(target, None)
        before = self.entries.get(done.agent)
        entry = before or FleetEntry(key=done.agent, name=done.name or done.agent, verdict=done.verdict)
        if done.kinds is not None:
            kinds = done.kinds
        else:
            kinds = () if before is None else change_kinds(before.marks(), done.marks())
        changed = is_change(kinds)
        entry = replace(
            entry,
            name=done.name or entry.name,
            verdict=done.verdict,
            standing=done.standing,
            signature=done.signature,
            churn=entry.churn + (1 if done.verdict == "churn" else 0),
            changes=entry.changes + (1 if changed else 0),
            kinds=tuple(kinds),
            last_change_at=at if changed else entry.last_change_at,
            runs=entry.runs + 1,
            last_run_id=run_id if run_id is not None else entry.last_run_id,
            last_at=at,
            card_sha256=done.card_sha256,
            answers_sha256=done.answers_sha256,
            declarations_sha256=done.declarations_sha256,
            signers=done.signers,
            live=True,
        )
        self.entries[done.agent] = entry
        self._where = None
        return entry

    def all(self) -> list[FleetEntry]:
        return [*self.entries.values(), *self.pending.values()]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for entry in self.all():
            out[entry.verdict] = out.get(entry.verdict, 0) + 1
        return out

    def where(self, key: str) -> str:
        """Where the agent of `key` is, in words that tell it from every other agent here."""
        if self._where is None:
            self._where = where_labels(e.key for e in self.all())
        return self._where.get(key, key)

    def where_width(self) -> int:
        """The length of the longest where label."""
        if self._where is None:
            self.where(next(iter(self.entries), ""))
        return max((len(label) for label in (self._where or {}).values()), default=0)

    def view(self, sort: str = "verdict", verdict: str | None = None, text: str = "") -> list[FleetEntry]:
        """The rows to show: only `verdict` (when given) and only agents whose name or one of
        whose URLs holds `text` (any case), ordered by `sort` (one of SORTS)."""
        wanted = text.strip().casefold()
        rows = [
            e
            for e in self.all()
            if (verdict is None or e.verdict == verdict)
            and (
                not wanted
                or wanted in e.name.casefold()
                or any(wanted in url.casefold() for url in (e.key, *e.addresses))
            )
        ]
        rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
        if sort == "churn":
            rows.sort(key=lambda e: (-e.churn, e.name.casefold(), e.key))
        elif sort == "changes":
            rows.sort(key=lambda e: (-e.changes, e.name.casefold(), e.key))
        elif sort == "last change":
            rows.sort(key=lambda e: (e.last_change_at or "", e.name.casefold(), e.key), reverse=True)
        elif sort == "name":
            rows.sort(key=lambda e: (e.name.casefold(), e.key))
        else:
            rows.sort(key=lambda e: (rank.get(e.verdict, len(rank)), -e.churn, e.name.casefold(), e.key))
        return rows


def prepare(summaries: Iterable[Any]) -> list[FleetEntry]:
    """The history's fleet as rows, with where each agent is worked out, for a worker thread: with
    10,000 agents this is most of a reload, and the event loop then only swaps the rows in."""
    entries = [entry_of_summary(summary) for summary in summaries]
    for entry in entries:
        _parts(entry.key)  # cached: where_labels on the loop then splits no URL again
    return entries


@lru_cache(maxsize=1 << 16)
def _parts(key: str) -> tuple[str, str, str]:
    """(host:port, path without the well-known card suffix, the rest) of an agent's key; a key
    that is not an HTTP URL (a card file) is all path."""
    try:
        parts = urlsplit(key)
        port = parts.port
    except ValueError:
        return "", key, ""
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "", key, ""
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    default = 443 if parts.scheme == "https" else 80
    netloc = f"{host}:{port or default}"
    path = parts.path
    for suffix in WELL_KNOWN:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    rest = (f"?{parts.query}" if parts.query else "") + ("" if parts.scheme == "http" else " https")
    return netloc, path.rstrip("/"), rest


def where_labels(keys: Iterable[str]) -> dict[str, str]:
    """Each agent's URL said as briefly as tells it from the others: `host:port`; with the path
    when two agents share a host and port; with the query and scheme when even that is shared.
    The userinfo of a URL is never part of it (it may hold a secret)."""
    keys = list(dict.fromkeys(keys))
    parts = {key: _parts(key) for key in keys}
    by_host: dict[str, list[str]] = {}
    for key, (netloc, _path, _rest) in parts.items():
        by_host.setdefault(netloc, []).append(key)
    labels: dict[str, str] = {}
    for netloc, same_host in by_host.items():
        if netloc and len(same_host) == 1:
            labels[same_host[0]] = netloc
            continue
        by_path: dict[str, list[str]] = {}
        for key in same_host:
            by_path.setdefault(netloc + parts[key][1], []).append(key)
        for label, same_path in by_path.items():
            for key in same_path:
                labels[key] = label if len(same_path) == 1 else label + parts[key][2]
    seen: dict[str, int] = {}
    for key, label in labels.items():  # URLs that differ only in what is not shown (userinfo)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            labels[key] = f"{label} ({seen[label]})"
    return labels


def fit_middle(text: str, width: int) -> str:
    """`text` cut to `width` characters in the middle (`127.0.0.1:80…/b/agent`), so both the
    host and the end of a path, where two agents differ, stay in view."""
    if len(text) <= width:
        return text
    if width < 5:
        return text[: max(width - 1, 0)] + "…"
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
