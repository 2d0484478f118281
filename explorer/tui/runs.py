"""The stored runs as the screens read them: pages, rows, the fleet, one run, a transcript file.

Every read answers with what a run earns *here*, under your keys, not what it claimed when it
was recorded: a stored run is derived again from its bytes (`explorer.evidence.reading`), its
card signature checked under the card keys you trust and its own signature under the runner keys
you trust. That costs some milliseconds a run, so the lists first show what the store's summary
says (an unsigned run is a claim by the contract's rule; a signed one shows CHECKING, the fleet's
"unchecked") and a worker reads the runs in view. A stored run never changes, so what was read
is remembered for the session, in three caches keyed by run id: the standing mark the lists
show, the standing the fleet shows, and the (verdict, standing, signature) the fleet shows. The
trust roots are loaded once each, on first use.

The load screen's recent agents are the history's agents (one agent across addresses:
`explorer.store.identity`), each offered at the address that answered last; whether that address
still answers is said from its last run there, and for a loopback address by a TCP connect that
a screen makes in a worker (`probe_recents`).

`RunReader` reads through the session's `AppContext`: its store (`history()`, opened once by the
context), its settings and config (which change during a session: keys trusted, an agent saved)
and its warnings (a note becomes a toast). Every read blocks: screens call it from a worker
thread, and a failure is an `ExplorerError` with the reason. What it reads with (the store, the
evidence readers, the report view) is imported on first use, so startup pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from explorer.tui.errors import ExplorerError

if TYPE_CHECKING:
    from explorer.core.run import Run
    from explorer.tui.context import AppContext

CHECKING = "… signed, checking"  # a signed run's standing mark until its signature is checked


class RunRow(NamedTuple):
    """One history row as the screens use it (a stable shape over `RunSummary`)."""

    run_id: int
    agent: str  # the card URL (the history's key for an agent)
    name: str
    started_at: str
    verdict: str
    card_sha256: str | None
    answers_sha256: str | None
    # Its declarations, signing key, answers or verdict differ from this agent's previous run (a card
    # only signed again is no change: CONTRACT "Signatures are proofs").
    changed: bool = False
    standing: str = ""  # the mark the run earns here: "evidence · signed", "claim · unsigned", ...
    since: str = ""  # what changed since the agent's run before: "first", "= same", "≠ key+answers", ...
    kinds: tuple[str, ...] = ()  # the same as the history keeps it (`RunSummary.kinds`)

    @property
    def target(self) -> str:
        """What to type to interview this agent again: its card URL."""
        return self.agent

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "verdict": self.verdict,
            "card_sha256": self.card_sha256,
            "answers_sha256": self.answers_sha256,
        }


class RunFilter(NamedTuple):
    """Which runs the history screen lists: one agent's or every agent's, one verdict or every
    one, only the runs that changed, only those recorded before a moment (a jump to a date)."""

    agent: str | None = None
    verdict: str | None = None
    changed: bool = False
    until: datetime | None = None

    def query(self, before: int | None, limit: int) -> Any:
        from explorer.store.base import RunQuery

        return RunQuery(
            agents=None if self.agent is None else (self.agent,),
            until=self.until,
            verdicts=() if self.verdict is None else (self.verdict,),
            changed=self.changed,
            before=before,
            limit=limit,
        )


def changes_since(before: Any, run: Any) -> str:
    """What changed from an agent's run before (a `RunSummary`, None for none) to this run, in the
    words of the history's "since previous" column (`explorer.tui.model.change_words`): `first`,
    `= same`, `≠ declarations+answers`, `~ signed again` (not a change). The kinds are the ones the
    history decided when it recorded the run (`RunSummary.kinds`), so every surface says the same."""
    from explorer.tui.model import change_words

    return change_words(tuple(getattr(run, "kinds", ()) or ()), first=before is None)


class RecentAgent(NamedTuple):
    """One entry of the load screen's recent agents: one agent of the history (by its card's
    signing key and name, else its card URL), offered at the address that answered last."""

    row: RunRow  # its latest run that got a card; `row.agent` is that run's address, the one offered
    others: tuple[str, ...] = ()  # the other addresses it answered at, the latest first
    # Why the offered address may no longer answer ("" when nothing says so): its latest run
    # there got no card, or nothing listens on that loopback port now (`probe_recents`).
    silent: str = ""

    @property
    def target(self) -> str:
        return self.row.target


PROBE_TIMEOUT = 0.5  # seconds a loopback connect may take: one that answers or refuses does at once


def probe_recents(recents: Sequence[RecentAgent]) -> list[RecentAgent]:
    """The recent agents, each whose offered address is a loopback address (written as one) where
    nothing listens now said `silent`. A TCP connect and nothing sent: on loopback it costs
    nothing and reaches no one else; any other address is said silent only by its last run.
    Blocks up to PROBE_TIMEOUT per address: call it in a worker, never on the event loop."""
    import socket
    from urllib.parse import urlsplit

    from explorer.net.origins import is_loopback_address

    out: list[RecentAgent] = []
    for recent in recents:
        target = recent.target
        if recent.silent or not is_loopback_address(target):
            out.append(recent)
            continue
        try:
            parts = urlsplit(target)
            host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            out.append(recent)
            continue
        try:
            with socket.create_connection((host or "", port), timeout=PROBE_TIMEOUT):
                pass
        except OSError:
            where = f"[{host}]:{port}" if host and ":" in host else f"{host}:{port}"
            recent = recent._replace(silent=f"nothing listens on {where} now")
        out.append(recent)
    return out


class RunReader:
    """The session's reads of stored runs and transcript files, and what they gave, remembered."""

    def __init__(self, session: AppContext) -> None:
        self._session = session
        self._trusted: Mapping[str, bytes] | None = None  # thumbprint -> key of the runner keys trusted here
        self._readers: dict[str, Any] = {}  # agent -> ReaderTrust
        self._marks: dict[int, str] = {}  # run id -> standing mark, once checked
        self._standings: dict[int, str] = {}  # run id -> claim | evidence, once checked
        # run id -> (verdict, standing, card signature status) as read here, under your keys
        self._read_here: dict[int, tuple[str, str, str | None]] = {}

    # ---- lists -------------------------------------------------------------------------------
    def rows(self, agent: str | None = None, limit: int = 200) -> list[RunRow]:
        """Runs newest first (of one agent, or of all), each with the standing it earns here;
        ExplorerError when history cannot be read. An unsigned run is a claim by the contract's
        rule, read from its summary; a signed one shows CHECKING until `check_signed` (which
        loads it and checks its signature, some milliseconds each) has run for it."""
        from explorer.evidence.standing import read_back

        with self._reading():
            history = self._session.history()
            summaries = history.runs(agent=agent, limit=limit)
            signed = history.signed([s.id for s in summaries])
            unsigned = read_back(history, [s for s in summaries if s.id not in signed], {})
        return [_row(s, self._standing_mark(s.id, signed, unsigned)) for s in summaries]

    def page(self, which: RunFilter, before: int | None = None, limit: int = 200) -> list[RunRow]:
        """One page of the history screen: the newest `limit` runs `which` selects, older than run
        `before` (keyset paging: the store answers each page from an index, never OFFSET), each
        with what changed since its agent's run before it and the standing it earns here (a
        signed run shows CHECKING until `check_signed`). ExplorerError when the history cannot
        be read."""
        from explorer.evidence.standing import read_back

        with self._reading():
            history = self._session.history()
            summaries = list(history.query(which.query(before, limit)))
            ids = [s.id for s in summaries]
            previous = history.previous(ids)
            signed = history.signed(ids)
            unsigned = read_back(history, [s for s in summaries if s.id not in signed], {})
        return [
            _row(s, self._standing_mark(s.id, signed, unsigned), changes_since(previous.get(s.id), s))
            for s in summaries
        ]

    def _standing_mark(self, run_id: int, signed: Any, unsigned: Mapping[int, Any]) -> str:
        from explorer.core.view import ReportView

        if run_id in signed:
            return self._marks.get(run_id, CHECKING)
        return ReportView.of(unsigned[run_id]).standing_mark()

    def check_signed(self, run_ids: Sequence[int]) -> dict[int, str]:
        """The standing marks of signed runs (their signature checked under the trusted runner
        keys), remembered for the session: a stored run never changes. Safe in a thread."""
        self.read_latest([run_id for run_id in run_ids if run_id not in self._marks])
        return {run_id: self._marks.get(run_id, "? unreadable") for run_id in run_ids}

    def fleet(self) -> list[Any]:
        """Every agent with its latest run and churn (history `FleetSummary`), for the fleet view.

        Each latest run as it reads here, not as it was recorded: once read (`read_latest`, or
        opening it) its verdict, standing and card signature are the ones its bytes give under
        your keys. Until then an unsigned run is a claim read back and a signed one "unchecked",
        and a card signature that depends on keys (anything but unsigned) is "unchecked" too."""
        with self._reading():
            history = self._session.history()
            entries = list(history.fleet())
            signed = history.signed([e.last_run_id for e in entries])
        return [self._fleet_row(e, e.last_run_id in signed) for e in entries]

    def _fleet_row(self, entry: Any, signed: bool) -> Any:
        read = self._read_here.get(entry.last_run_id)
        if read is not None:
            verdict, standing, signature = read
            return entry._replace(verdict=verdict, standing=standing, signature=signature)
        from explorer.tui.fleet_model import UNCHECKED

        standing = self._standings.get(entry.last_run_id, UNCHECKED) if signed else "claim"
        # No key changes an unsigned card (or no card), and pictures show their runs as recorded.
        as_recorded = not self._session.read_stored or entry.signature in (None, "unsigned")
        signature = entry.signature if as_recorded else UNCHECKED
        return entry._replace(standing=standing, signature=signature)

    def read_latest(self, run_ids: Sequence[int]) -> dict[int, tuple[str, str, str | None]]:
        """(verdict, standing, card signature status) of each stored run as read here: its
        report derived again from its bytes under your keys, its standing under the runner keys
        you trust. Some milliseconds a run, remembered for the session (a stored run never
        changes): call it off the event loop, for the rows in view."""
        for run_id in run_ids:
            if run_id not in self._read_here:
                try:
                    self.load(run_id)
                except ExplorerError:
                    self._read_here[run_id] = ("unreadable", "claim", "unreadable")
        return {run_id: self._read_here[run_id] for run_id in run_ids}

    def agents(self) -> list[Any]:
        """The agents with runs (history `AgentSummary`), most recently run first."""
        with self._reading():
            return list(self._session.history().agents())

    def mark(self) -> Any:
        """The history's change fingerprint (`HistoryStore.mark`, one small aggregate on either
        backend): when it differs from the last one read, a runner (this one, another process,
        another machine) recorded or forgot runs."""
        with self._reading():
            return self._session.history().mark()

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except ExplorerError:
            raise
        except Exception as exc:
            raise ExplorerError(f"cannot read the history: {exc}") from None

    def recent_targets(self, limit: int = 8) -> list[RecentAgent]:
        """The recently interviewed agents, the latest run first, for the load screen: one entry
        per agent of the history (a reference agent of an older session on another port, a
        signed agent moved, is one; two cards of one name signed by different keys, or two
        unsigned cards at two URLs, are two: one may be an impostor), offered at the address its
        latest run that got a card was at, naming the others it answered at. An agent that never
        gave a card (a mistyped URL, a port nothing listens on) is left out: it is no agent to
        come back to. One read of the history's latest runs (`runs`), no run loaded."""
        try:
            with self._reading():
                summaries = self._session.history().runs(limit=200)
        except Exception:
            return []
        by_agent: dict[str, list[Any]] = {}
        for summary in summaries:  # newest first: so are the agents, by their latest run
            by_agent.setdefault(summary.agent, []).append(summary)
        out: list[RecentAgent] = []
        for runs in by_agent.values():
            answered = [s for s in runs if s.card_sha256]
            if not answered:
                continue
            address = answered[0].address or answered[0].agent
            others = tuple(a for a in dict.fromkeys(s.address or s.agent for s in answered) if a != address)
            latest = runs[0]
            silent = ""
            if not latest.card_sha256 and (latest.address or latest.agent) == address:
                silent = f"its last run there got no card ({latest.verdict}, run #{latest.id})"
            out.append(RecentAgent(_row(answered[0])._replace(agent=address), others, silent))
        return out[:limit]

    # ---- one run ---------------------------------------------------------------------------------
    def load(self, run_id: int) -> Run:
        """A stored run, with the standing it earns here (the signature checked again)."""
        run = self.read(run_id)
        self.remember(run_id, run)
        return run

    def read(self, run_id: int) -> Run:
        """`load` without remembering what it read: what the launch's child process does
        (`explorer.tui.early`), whose caches would die with it."""
        try:
            return self.assessed(self._session.history().load(run_id))
        except ExplorerError:
            raise
        except Exception as exc:
            raise ExplorerError(f"cannot load run {run_id}: {exc}") from None

    def remember(self, run_id: int, run: Run) -> None:
        """What the lists show of a run once it was read here: its standing mark, its verdict."""
        from explorer.core.view import ReportView

        checked = ReportView.of(run.report)
        if run.attestation is not None:
            self._marks[run_id] = checked.standing_mark()  # the lists show it from now on
            self._standings[run_id] = checked.standing  # and the fleet view its standing
        standing = "evidence" if checked.standing == "evidence" and checked.role != "self" else "claim"
        signed = isinstance(checked.member("card", "signature"), Mapping)
        signature = checked.card.signature.status if signed else None
        self._read_here[run_id] = (checked.verdict, standing, signature)

    def assessed(self, run: Run) -> Run:
        """A stored run as read here (`explorer.evidence.reading`): its report derived again from its bytes
        under your keys, its standing under the runner keys you trust."""
        from explorer.evidence.reading import read_run
        from explorer.store.sqlite import agent_of

        return read_run(run, self.reader_trust(agent_of(run.recorded_report)))

    def looks_like_transcript(self, target: str) -> bool:
        """A `.json` file whose first bytes name `transcript_version` (cheap: no parsing)."""
        path = Path(target).expanduser()
        if path.suffix.lower() != ".json" or not path.is_file():
            return False
        try:
            with path.open("rb") as fh:
                return b'"transcript_version"' in fh.read(4096)
        except OSError:
            return False

    def open_transcript(self, target: str) -> Run | None:
        """A JSON transcript file named as a target, re-verified offline (nothing is fetched):
        everything shown derived from its bytes under your keys, the standing from its signature.
        None when `target` is not a transcript file; ExplorerError (one sentence) when it is one
        that cannot be read, is malformed, or states a report its bytes do not give (then what
        is shown is what its bytes give, and a warning says so)."""
        path = Path(target).expanduser()
        if path.suffix.lower() != ".json" or not path.is_file():
            return None  # asked of every target at launch: a URL imports nothing here
        from explorer.core.rederive import first_card_request
        from explorer.core.run import TranscriptError
        from explorer.evidence.reading import read_run, read_transcript_file, stated_problem

        try:
            transcript = read_transcript_file(path)
        except TranscriptError as exc:
            if not self.looks_like_transcript(target):
                return None  # a card file (or not JSON at all): the live path reads it and says what is wrong
            raise ExplorerError(f"{path} is not a usable transcript: {exc}") from None
        run = transcript.run
        card = first_card_request([e for e in run.exchanges if e.purpose == "card"])
        try:
            problem = stated_problem(run)
            shown = read_run(run, self.reader_trust(card.url if card is not None else ""), transcript)
        except TranscriptError as exc:
            raise ExplorerError(f"{path} is not a usable transcript: {exc}") from None
        if problem is not None:
            self._session.warnings.append(
                f"{path} states a report its bytes do not give ({problem}); shown is what its bytes give"
            )
        return shown

    # ---- your trust roots --------------------------------------------------------------------------
    def trusted_runners(self) -> Mapping[str, bytes]:
        """The runner keys whose signed results read as evidence here: the config's
        `trusted_runners` files and the public half of its own `sign_key` (URLs are not fetched
        by the TUI; `verify --offline --trust-runner URL` does that)."""
        if self._trusted is None:
            from explorer.evidence.runner_keys import config_path_of, trusted_from_files

            config = self._session.config
            warnings = self._session.warnings
            sources = list(getattr(config, "trusted_runners", ()) or ())
            for url in (s for s in sources if "://" in s):
                warnings.append(f"trusted runner keys at {url}: not fetched by the screens")
            paths = [config_path_of(config, s) for s in sources if "://" not in s]
            own = getattr(config, "sign_key", None)
            self._trusted, notes = trusted_from_files(paths, config_path_of(config, own) if own else None)
            warnings.extend(notes)
        return dict(self._trusted)

    def reader_trust(self, agent: str = "") -> Any:
        """Your trust roots for reading a recorded run of `agent` (`explorer.evidence.reading.ReaderTrust`):
        the card keys of the launch settings and the config (key files and key sets; URLs are not
        fetched by the screens), `--allow-jku`, and the trusted runner keys. Never a run's own."""
        if agent not in self._readers:
            from explorer.evidence.reading import ReaderTrust
            from explorer.interview.planning import PlanError, values
            from explorer.net.keys import KeysError, load_keys_sync, user_keys

            warnings = self._session.warnings
            try:
                found = values(agent, self._session.settings, self._session.config, secrets=False)
            except PlanError as exc:
                raise ExplorerError(str(exc)) from None
            items = tuple(found.get("keys", ()))
            files = [k for k in items if isinstance(k, str) and "://" not in k]
            for url in (k for k in items if isinstance(k, str) and "://" in k):
                warnings.append(f"trusted keys at {url}: not fetched by the screens")
            try:
                loaded, notes = load_keys_sync(files)
                keys, dropped = user_keys(items, loaded)
            except KeysError as exc:
                raise ExplorerError(f"trusted keys: {exc}") from None
            warnings.extend((*notes, *dropped))
            self._readers[agent] = ReaderTrust(keys, bool(found.get("allow_jku")), self.trusted_runners())
        return self._readers[agent]


def _row(summary: Any, standing: str = "", since: str = "") -> RunRow:
    """A history `RunSummary` as the screens' `RunRow`."""
    return RunRow(
        run_id=summary.id,
        agent=summary.agent,
        name=summary.name or "",
        started_at=summary.recorded_at,
        verdict=summary.verdict,
        card_sha256=summary.card_sha256,
        answers_sha256=summary.answers_sha256,
        changed=summary.changed,
        standing=standing,
        since=since,
        kinds=tuple(getattr(summary, "kinds", ()) or ()),
    )
