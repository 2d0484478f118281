"""The history store's interface: what every backend (SQLite, PostgreSQL, a plugin) offers.

Every command, the TUI and `history copy` talk to a `HistoryStore`; which one is behind it is
chosen by a URL (`explorer.store.location`). A third backend is one module implementing this
class, not a rewrite: `explorer.store.sql.SqlHistory` implements it once in portable SQL, and
`explorer.store.sqlite` (SQLite) and `explorer.store.postgres` only add how they connect,
begin a transaction and retry.

Shape, and why:

- Reading is a query, not a list: `query(RunQuery(...))` yields runs newest first, filtered by
  agents, time, verdicts and changed-only, paged by keyset (`before` a run id, never OFFSET) and
  fetched from the database a page at a time, so `history --json` over a million runs holds one
  page in memory and a backend answers each page from an index.
- An agent is one agent across addresses (`explorer.store.identity`: by the card's signing key
  and name where it is signed, by card URL otherwise); its runs at every address are its runs,
  and `agent` in a row is the address of its latest run, with the others listed.
- What the fleet view and the change signal need is kept per agent at write time (runs,
  latest run, churn verdicts, changes, when it last changed), so `fleet()` reads one row per
  agent and `mark()` costs one small aggregate, however many runs there are.
- What changed is decided when a run is recorded, against the same agent's previous run, and
  kept with the run as kinds (`explorer.core.compare.change_kinds`: `declarations`, `key`,
  `answers`, `verdict`, or `resigned` for a card only signed again), from what the run records
  to tell them apart: its declarations digest and signers beside its card and answers digests
  and verdict. `changed` (any kind but `resigned`) is kept too, so `--changed` is an index.
- Copying a history between backends moves `StoredRun`s: the stored documents and values as
  they are, so a signed envelope and every body arrive byte for byte, with their run ids.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from explorer.core.view import ReportView

if TYPE_CHECKING:
    from explorer.core.compare import RunMarks
    from explorer.core.run import Run
    from explorer.store.codec import EncodedRun

__all__ = [
    "AgentSummary",
    "ChangeMark",
    "FleetSummary",
    "HistoryError",
    "HistoryStore",
    "RunQuery",
    "RunSummary",
    "StoredRun",
    "agent_of",
    "summary_fields",
]

AGENT_NAME_CAP = 200
VERDICTS: tuple[str, ...] = ("conformant", "nonconformant", "churn", "not_offered", "unreachable")


class HistoryError(Exception):
    """The history cannot do what was asked; str() is a sentence a person can act on."""


class RunSummary(NamedTuple):
    """One line of the history list (a named tuple: lists of thousands are built cheaply)."""

    id: int
    recorded_at: str
    agent: str
    name: str | None
    verdict: str
    standing: str | None
    role: str | None
    runner: str | None
    card_sha256: str | None
    answers_sha256: str | None
    changed: bool  # a change of a kind in CHANGE_KINDS against the previous run of the same agent
    # What changed against that run, in `explorer.core.compare.KINDS` order: `declarations`, `key`,
    # `answers`, `verdict`, and `resigned` (the card signed again: shown, never a change).
    kinds: tuple[str, ...] = ()
    declarations_sha256: str | None = None  # of the card without its signatures; None when unknown
    signers: tuple[str, ...] | None = None  # thumbprints of the keys whose signatures verified
    # Where this run was (its card URL, else its target); `agent` is where its agent's latest run
    # was, the same for every run of one agent (`explorer.store.identity`).
    address: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = self._asdict()
        out["kinds"] = list(self.kinds)
        out["signers"] = None if self.signers is None else list(self.signers)
        return out

    def marks(self) -> RunMarks:
        """What this run's successor's change kinds are decided against (`change_kinds`)."""
        from explorer.core.compare import RunMarks

        return RunMarks(
            self.verdict, self.card_sha256, self.declarations_sha256, self.signers, self.answers_sha256
        )


class FleetSummary(NamedTuple):
    """One agent of the fleet view: its latest run, and how often its runs changed."""

    agent: str  # the address of its latest run
    name: str | None
    runs: int
    last_run_id: int
    last_recorded_at: str
    verdict: str
    standing: str | None
    churn: int  # runs whose verdict is churn (a conflict that did not survive the re-run)
    last_change_at: str | None  # when the latest run that changed (`changes`) was recorded
    card_sha256: str | None  # of the latest run
    answers_sha256: str | None
    signature: str | None  # the card signature status of the latest run
    changes: int = 0  # runs that changed against the agent's run before (`RunSummary.changed`)
    kinds: tuple[str, ...] = ()  # what the latest run changed (`RunSummary.kinds`)
    addresses: tuple[str, ...] = ()  # every address the agent was seen on, `agent` (the latest) first


@dataclass(frozen=True)
class AgentSummary:
    """An agent that has runs in the history, most recently run first: `agent` is the address of
    its latest run, `addresses` every address it was seen on, that one first."""

    agent: str
    name: str | None
    runs: int
    last_run_id: int
    last_recorded_at: str
    last_verdict: str
    addresses: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return self.agent


@dataclass(frozen=True)
class RunQuery:
    """Which runs to list, newest first. Every field narrows; the defaults list every run.

    `agents`: agents by address (None: every agent; an empty tuple matches nothing): each names
    the agents whose latest run was there, else every agent seen there, with all their runs.
    `since` / `until`: recorded at or after `since`, and before `until`.
    `verdicts`: any of these verdicts. `changed`: only runs whose declarations, signing key,
    answers or verdict differ from the same agent's previous run (not a card only signed again:
    `RunSummary.kinds`). `before`: only runs with a smaller
    id (the keyset page after the last one shown). `limit`: at most this many (None: all).
    """

    agents: tuple[str, ...] | None = None
    since: datetime | None = None
    until: datetime | None = None
    verdicts: tuple[str, ...] = ()
    changed: bool = False
    before: int | None = None
    limit: int | None = None


class ChangeMark(NamedTuple):
    """A cheap fingerprint of the whole history: when it differs from the last one read, another
    runner recorded or forgot something (`HistoryStore.mark`)."""

    last_run: int  # the largest run id
    runs: int  # how many runs there are
    forgotten: int  # how many forget operations there have been


@dataclass(frozen=True)
class StoredRun:
    """A run as a store holds it, for copying between stores without re-encoding anything that
    is signed: the documents' bytes, the volatile values and the attestation as stored."""

    id: int
    recorded_at: str
    agent: str  # where the run was (`RunSummary.address`): what its fingerprint names
    name: str | None
    verdict: str
    standing: str | None
    role: str | None
    runner: str | None
    card_sha256: str | None
    answers_sha256: str | None
    signature: str | None
    encoded: EncodedRun
    declarations_sha256: str | None = None
    signers: tuple[str, ...] | None = None
    recorded_under: str | None = None  # its agent's identity in the source (`explorer.store.identity`)

    def fingerprint(self) -> str:
        """The digest `history copy` compares on both sides: what the run is, not where."""
        e = self.encoded
        return run_fingerprint(
            self.agent,
            self.recorded_at,
            e.report.digest,
            e.exchanges.digest,
            e.keys.digest,
            e.volatile,
            e.attestation,
        )


def run_fingerprint(
    agent: str,
    recorded_at: str,
    report: bytes,
    exchanges: bytes,
    keys: bytes,
    volatile: bytes,
    attestation: bytes | None,
) -> str:
    """SHA-256 over what a stored run is: its agent and time, the digests of its report,
    exchanges and keys documents (the exchanges document names every body by digest), its
    volatile values and its signed envelope as stored."""
    import hashlib

    h = hashlib.sha256()
    for part in (agent.encode(), recorded_at.encode(), report, exchanges, keys, volatile, attestation or b""):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    h.update(b"1" if attestation is not None else b"0")
    return h.hexdigest()


def agent_of(report: Mapping[str, Any]) -> str:
    """Which agent a report is about: its card URL, else the target it was run against."""
    url = ReportView.of(report).card.url
    if url:
        return url
    target = report.get("target")
    return str(target) if target else "(unknown agent)"


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def summary_fields(report: Mapping[str, Any]) -> dict[str, Any]:
    """The columns a run's history line is listed by, read from its report. Each is the text the
    report states, None when it states none: not the view's reading of a missing member (a role
    of `self`, a `claim`), so a stored row says what its report says. The declarations digest
    and signers are not among them: `explorer.store.marks.change_fields` reads those, from the
    run's bytes where its report does not state them."""
    view = ReportView.of(report)
    name = view.card.name
    return {
        "verdict": str(report.get("verdict") or "unknown"),
        "standing": _text_or_none(report.get("standing")),
        "role": _text_or_none(view.member("ran_by", "role")),
        "runner": view.runner,
        "card_sha256": view.card.sha256,
        "answers_sha256": _text_or_none(report.get("answers_sha256")),
        "signature": _text_or_none(view.member("card", "signature", "status")),
        "name": name[:AGENT_NAME_CAP] if name else None,
    }


def signature_of_report(document: bytes) -> str | None:
    """The card signature status in a stored report document, None when it cannot be read."""
    try:
        report = json.loads(document)
    except ValueError:
        return None
    return summary_fields(report)["signature"] if isinstance(report, dict) else None


class HistoryStore(ABC):
    """A history of runs. Safe to share between threads; a context manager that closes it.

    Every method raises `HistoryError` (never a driver's exception) with a sentence a person can
    act on. Runs are append-only: a run id is never reused, even after `forget_*`.
    """

    location: str  # where the history is, safe to print (never a password)
    kind: str  # "sqlite", "postgresql", ...

    # --- lifecycle -------------------------------------------------------------------------------

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writing ---------------------------------------------------------------------------------

    @abstractmethod
    def record(self, run: Run) -> int:
        """Store a run in one transaction and return its id."""

    @abstractmethod
    def record_once(self, run: Run) -> tuple[int, bool]:
        """Store a run unless this very run (same agent, report, exchanges, keys, times) is stored
        already: (its id, True when stored now). Two runners importing one transcript at once
        record it once."""

    @abstractmethod
    def forget_run(self, run_id: int) -> None:
        """Delete one run and every document no other run uses; HistoryError if there is none."""

    @abstractmethod
    def forget_agent(self, agent: str, name: str | None = None) -> int:
        """Delete every run of the agent at this address, at every address it had: the agent whose
        latest run was there (the one that answered there last, when another agent took the address
        over, or the one of card name `name` among those whose latest run was there), else every
        agent seen there; how many were deleted (0 when it had none)."""

    @property
    def forget_note(self) -> str | None:
        """What a person should know after forgetting (where deleted data still is), or None."""
        return None

    # --- reading ---------------------------------------------------------------------------------

    @abstractmethod
    def query(self, q: RunQuery) -> Iterator[RunSummary]:
        """The runs `q` selects, newest first, fetched a page at a time as they are consumed."""

    def runs(self, agent: str | None = None, limit: int = 100) -> list[RunSummary]:
        """The newest `limit` runs, of one agent or of all."""
        agents = None if agent is None else (agent,)
        return list(self.query(RunQuery(agents=agents, limit=max(0, limit))))

    @abstractmethod
    def summary(self, run_id: int) -> RunSummary:
        """The history line of one run; HistoryError when there is no such run."""

    @abstractmethod
    def load(self, run_id: int) -> Run:
        """The run exactly as recorded (bodies byte for byte); HistoryError if unknown or damaged."""

    @abstractmethod
    def previous(self, run_ids: Sequence[int]) -> dict[int, RunSummary]:
        """For each of these runs, the same agent's run before it (what "changed" was decided
        against), by the later run's id; an agent's first run has none and is left out. One
        indexed lookup per run, in one statement per few hundred: a screen listing a filtered
        page (only changed runs, only one verdict) says what changed in each row."""

    @abstractmethod
    def signed(self, run_ids: Sequence[int]) -> set[int]:
        """Which of these runs carry a runner's signed attestation (no document is read)."""

    @abstractmethod
    def agents(self) -> list[AgentSummary]:
        """Every agent with runs, the most recently run first."""

    @abstractmethod
    def fleet(self) -> list[FleetSummary]:
        """Every agent with its latest run and how often it changed (the fleet view's rows),
        the most recently run first; one row read per agent."""

    @abstractmethod
    def match_agents(self, text: str) -> list[str]:
        """Agents a person may mean by `text`, each by the address of its latest run: the agent
        there, else the agents seen at that address, else under that base URL, else by card name
        (exactly, then in any case, then a reference agent's short name)."""

    @abstractmethod
    def mark(self) -> ChangeMark:
        """A cheap fingerprint to poll: it changes whenever any runner records or forgets."""

    @abstractmethod
    def stats(self) -> dict[str, int]:
        """Counts and sizes: runs, documents, document_bytes, original_bytes, file_bytes."""

    # --- copying ---------------------------------------------------------------------------------

    @abstractmethod
    def last_run_id(self) -> int:
        """The largest run id (0 for an empty history)."""

    @abstractmethod
    def id_high_water(self) -> int:
        """The largest run id ever given, forgotten runs included (no new run gets it again)."""

    @abstractmethod
    def keep_ids_above(self, high_water: int) -> None:
        """Never give a new run an id up to `high_water` (a copy keeps its source's promise)."""

    @abstractmethod
    def stored_runs(self, after: int, upto: int, limit: int) -> list[StoredRun]:
        """Up to `limit` runs with `after < id <= upto`, oldest first, as stored."""

    @abstractmethod
    def put_stored(self, runs: Sequence[StoredRun]) -> None:
        """Add runs copied from another store, keeping their ids, in one transaction."""

    @abstractmethod
    def fingerprints(self, after: int, upto: int, limit: int) -> list[tuple[int, str]]:
        """(id, `StoredRun.fingerprint()`) of up to `limit` runs with `after < id <= upto`,
        oldest first: what `history copy` compares to prove a copy."""
