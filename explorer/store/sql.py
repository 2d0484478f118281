"""The history store in SQL, written once: every backend runs these statements.

A backend (`explorer.store.sqlite` for SQLite, `explorer.store.postgres`) subclasses
`SqlHistory` and says only how to get a connection for reading, how to run a write transaction
(SQLite: `BEGIN IMMEDIATE`, one writer at a time; PostgreSQL: retried on a serialization failure
or deadlock), and how to put a batch of documents. The statements use `?` placeholders and the
SQL both engines share (`INSERT ... ON CONFLICT`, `RETURNING`, window-free queries), so a run
recorded, listed, forgotten or copied behaves the same on either.

How a run is recorded, and why it is safe with many writers:

1. Its documents go in first, each `INSERT ... ON CONFLICT (sha256) DO NOTHING` (a document
   another runner is inserting at the same moment is waited for, then reused), in digest order so
   two runners never wait on each other in a cycle.
2. Which agent the run is of is found (`explorer.store.identity`: by its card's signing keys and
   name, else the agent living at its address, else its address), and that agent's row is
   upserted (`INSERT ... ON CONFLICT (agent) DO UPDATE ... RETURNING`), which also locks it until
   commit: two runs of one agent are recorded one after the other, so the
   second sees the first as its predecessor when its change kinds are decided (from the marks of
   the agent's latest run, kept on its row: `explorer.core.compare.change_kinds`).
3. The run row goes in (a transcript recorded once has a unique `imported_key`, so two runners
   importing it at once store it once), then the agent's counters (runs, latest, churn verdicts,
   changes), the address it was seen on and the signing identities it was recorded under.

Forgetting deletes the run, repairs the agent's successor run and counters, and deletes documents
no remaining run reaches, in one transaction that a backend runs on one snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol, TypeVar

from explorer.core.compare import RunMarks, change_kinds, is_change
from explorer.core.run import Run
from explorer.core.when import stamp, utc_now
from explorer.store.base import (
    AgentSummary,
    ChangeMark,
    FleetSummary,
    HistoryError,
    HistoryStore,
    RunQuery,
    RunSummary,
    StoredRun,
    agent_of,
    run_fingerprint,
    summary_fields,
)
from explorer.store.codec import Doc, EncodedRun, decode_document, decode_run, encode_run
from explorer.store.identity import (
    LATEST_ADDRESS_OF_AGENT,
    Identity,
    addresses_by_agent,
    find_agent,
)
from explorer.store.marks import change_fields, signers_of_text, signers_text

T = TypeVar("T")

PAGE = 500  # rows fetched per round trip while a query is consumed
_IN_CHUNK = 500  # values per IN (...) list, within SQLite's smallest variable limit
_BACKFILL_PAGE = 5000  # one agent's runs read at a time while a migration gives them change kinds

# A run's line: `agent` is its agent's address (that of the agent's latest run: one agent, one
# name for it across the addresses it had), `address` the run's own.
_SUMMARY = """r.id, r.recorded_at, a.address, a.name, r.verdict, r.standing, r.role, r.runner,
    r.card_sha256, r.answers_sha256, r.changed, r.kinds, r.declarations_sha256, r.signers, r.address"""
_FROM = "FROM runs r JOIN agents a ON a.id = r.agent_id"
_STORED = """r.id, r.recorded_at, r.address, a.name, r.verdict, r.standing, r.role, r.runner,
    r.card_sha256, r.answers_sha256, r.signature, r.report_doc, r.exchanges_doc, r.keys_doc,
    r.volatile, r.attestation, r.declarations_sha256, r.signers, a.agent"""
# A run's marks (`RunMarks`), in its order: what its successor's change kinds are decided against.
_MARKS = "verdict, card_sha256, declarations_sha256, signers, answers_sha256"
_UPSERT_AGENT = """INSERT INTO agents(agent, name) VALUES (?, ?)
    ON CONFLICT (agent) DO UPDATE SET name = COALESCE(excluded.name, agents.name)
    RETURNING id, last_run, last_verdict, last_card, last_declarations, last_signers, last_answers"""
_INSERT_RUN = """INSERT INTO runs(agent_id, recorded_at, verdict, standing, role, runner, card_sha256,
        answers_sha256, report_doc, exchanges_doc, keys_doc, volatile, attestation, changed, signature,
        imported_key, declarations_sha256, signers, kinds, address{id_column})
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?{id_value})
    ON CONFLICT (imported_key) DO NOTHING
    RETURNING id"""
_COUNT_RUN = """UPDATE agents SET runs = runs + 1, last_run = ?, churn = churn + ?, changes = changes + ?,
    last_change_at = CASE WHEN ? = 1 THEN ? ELSE last_change_at END,
    last_verdict = ?, last_card = ?, last_declarations = ?, last_signers = ?, last_answers = ?,
    last_changed = ?, last_kinds = ?, last_recorded_at = ?, last_standing = ?, last_signature = ?,
    address = ?
    WHERE id = ?"""
# Where an agent was seen: the address of a run just recorded (`?`: agent, address, run id).
_SEEN_AT = """INSERT INTO addresses(agent_id, address, runs, last_run) VALUES (?, ?, 1, ?)
    ON CONFLICT (agent_id, address) DO UPDATE SET runs = addresses.runs + 1, last_run = excluded.last_run"""
_KEYED = "INSERT INTO agent_keys(key, agent_id) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"
# An agent's addresses counted again from its runs (`?`: its id, twice), after a forget.
_ADDRESSES_OF_AGENT = (
    "DELETE FROM addresses WHERE agent_id = ?",
    """INSERT INTO addresses(agent_id, address, runs, last_run)
       SELECT agent_id, address, COUNT(*), MAX(id) FROM runs WHERE agent_id = ? GROUP BY agent_id, address""",
)
# The counters of one agent (`?` its id) counted again from its runs: churn counts churn
# verdicts, changes the runs that changed against the one before (a card only signed again is
# neither), and the last change is the latest of those.
_REFRESH_AGENT = """UPDATE agents SET
    runs = (SELECT COUNT(*) FROM runs WHERE agent_id = agents.id),
    last_run = (SELECT MAX(id) FROM runs WHERE agent_id = agents.id),
    churn = (SELECT COUNT(*) FROM runs WHERE agent_id = agents.id AND verdict = 'churn'),
    changes = (SELECT COUNT(*) FROM runs WHERE agent_id = agents.id AND changed = 1),
    last_change_at = (SELECT MAX(recorded_at) FROM runs WHERE agent_id = agents.id AND changed = 1)
    WHERE id = ?"""
COUNTERS_OF_AGENTS = _REFRESH_AGENT.replace("WHERE id = ?", "")
# What the fleet view shows of an agent's latest run, kept on its row (so `fleet()` reads the
# agents alone) and what the change kinds of its next run are decided against.
_LATEST_COLUMNS = """(last_verdict, last_card, last_declarations, last_signers, last_answers, last_changed,
    last_kinds, last_recorded_at, last_standing, last_signature)
    = (SELECT verdict, card_sha256, declarations_sha256, signers, answers_sha256, changed, kinds,
              recorded_at, standing, signature
       FROM runs WHERE id = agents.last_run)"""
LATEST_OF_AGENTS = f"UPDATE agents SET {_LATEST_COLUMNS} WHERE last_run IS NOT NULL"
_LATEST_OF_AGENT = f"UPDATE agents SET {_LATEST_COLUMNS} WHERE id = ? AND last_run IS NOT NULL"


class Cursor(Protocol):
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    """What the statements need of a connection: `execute` with `?` placeholders."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Cursor: ...


def _marks(count: int) -> str:
    return ",".join("?" * count)


def _chunks(values: Sequence[T], size: int = _IN_CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _summary(row: Sequence[Any]) -> RunSummary:
    kinds, declarations, signers = kinds_of_text(row[11]), row[12], signers_of_text(row[13])
    return RunSummary._make((*row[:10], bool(row[10]), kinds, declarations, signers, row[14]))


def kinds_text(kinds: Sequence[str]) -> str:
    """The stored form of a run's change kinds: comma-separated, '' for none."""
    return ",".join(kinds)


def kinds_of_text(text: str | None) -> tuple[str, ...]:
    """Stored change kinds read back."""
    return tuple(kind for kind in (text or "").split(",") if kind)


def marks_of_row(row: Sequence[Any]) -> RunMarks:
    """`RunMarks` of a row read as `_MARKS` (the signers as stored)."""
    verdict, card, declarations, signers, answers = row
    return RunMarks(verdict, card, declarations, signers_of_text(signers), answers)


class SqlHistory(HistoryStore):
    """Everything a history does, in SQL; a backend adds connections and transactions."""

    def __init__(self, location: str, clock: Callable[[], datetime] = utc_now) -> None:
        self.location = location
        self._clock = clock  # when a run is recorded (tests and pictures pass a fixed one)

    # --- what a backend provides -------------------------------------------------------------------

    def _reading(self) -> AbstractContextManager[Conn]:
        """A connection for one or more reads (no snapshot promised across statements)."""
        raise NotImplementedError

    def _snapshot(self) -> AbstractContextManager[Conn]:
        """A connection inside one read transaction: every statement sees the same data."""
        raise NotImplementedError

    def _transaction(self, work: Callable[[Conn], T], *, what: str, strict: bool = False) -> T:
        """Run `work` in one write transaction and commit; `what` says what failed in a message.
        `strict`: every statement sees one snapshot, and a concurrent change makes the backend
        run `work` again from the start (forgetting). Raises HistoryError."""
        raise NotImplementedError

    def _put_documents(self, conn: Conn, docs: Sequence[Doc]) -> dict[bytes, tuple[int, bool]]:
        """digest -> (document id, inserted now) for each of `docs`, inserting the new ones."""
        from explorer.store.codec import put_document

        return {doc.digest: put_document(conn, doc) for doc in sorted(docs, key=lambda d: d.digest)}

    def _after_explicit_ids(self, conn: Conn) -> None:
        """After runs were inserted with their own ids (a copy): keep new ids above them."""

    def _file_bytes(self, conn: Conn) -> int:
        raise NotImplementedError

    # --- writing -------------------------------------------------------------------------------------

    def record(self, run: Run) -> int:
        return self._record(run, once=False)[0]

    def record_once(self, run: Run) -> tuple[int, bool]:
        return self._record(run, once=True)

    def _record(self, run: Run, *, once: bool) -> tuple[int, bool]:
        if not isinstance(run.report, Mapping):
            raise HistoryError("cannot record a run whose report is not an object")
        try:
            encoded = encode_run(run)
        except (TypeError, ValueError) as exc:
            raise HistoryError(f"cannot record this run: it holds a value that is not JSON ({exc})") from None
        # Listed by the report as read here (a signed import's is re-derived from its bytes); the
        # report kept is the one recorded (as signed, so the signature still covers it).
        fields = {**summary_fields(run.report), **change_fields(run)}
        agent = agent_of(run.report)
        recorded_at = stamp(self._clock())
        if not once:
            return self._record_new(encoded, agent, fields, recorded_at), True
        return self._transaction(
            lambda conn: self._insert(conn, encoded, agent, fields, recorded_at, once=True),
            what=f"could not save the run to {self.location}",
        )

    def _record_new(
        self, encoded: EncodedRun, agent: str, fields: Mapping[str, Any], recorded_at: str
    ) -> int:
        """Record a run in one transaction; its id. A backend may do it in fewer round trips."""
        return self._transaction(
            lambda conn: self._insert(conn, encoded, agent, fields, recorded_at)[0],
            what=f"could not save the run to {self.location}",
        )

    def _insert(
        self,
        conn: Conn,
        encoded: EncodedRun,
        agent: str,
        fields: Mapping[str, Any],
        recorded_at: str,
        *,
        once: bool = False,
        run_id: int | None = None,
        recorded_under: str | None = None,
    ) -> tuple[int, bool]:
        """Record one encoded run inside the caller's transaction: (its id, True when new).
        `agent` is where the run was; which agent it is of is found by `explorer.store.identity`'s
        rules, unless a copy says it (`recorded_under`: the agent's identity in the source)."""
        docs = self._put_documents(conn, [encoded.exchanges, encoded.report, encoded.keys])
        skeleton_id, new_skeleton = docs[encoded.exchanges.digest]
        if new_skeleton and encoded.bodies:
            bodies = self._put_documents(conn, encoded.bodies)
            self._link(conn, skeleton_id, sorted(child for child, _ in bodies.values()))
        identity = Identity.of(agent, fields["name"], signers_of_text(fields["signers"]))
        key = recorded_under or _recorded_under(conn, identity)
        agent_id, last_run, *latest = conn.execute(_UPSERT_AGENT, (key, fields["name"])).fetchone()
        once_key = None
        if once:
            once_key = _once_key(agent, encoded)
            found = _same_run(conn, agent_id, docs, encoded)
            if found is not None:
                return found, False
        marks = tuple(fields[name] for name in _MARKS.split(", "))
        kinds = () if last_run is None else change_kinds(marks_of_row(latest), marks_of_row(marks))
        changed = 1 if is_change(kinds) else 0
        values = [
            agent_id,
            recorded_at,
            fields["verdict"],
            fields["standing"],
            fields["role"],
            fields["runner"],
            fields["card_sha256"],
            fields["answers_sha256"],
            docs[encoded.report.digest][0],
            skeleton_id,
            docs[encoded.keys.digest][0],
            encoded.volatile,
            encoded.attestation,
            changed,
            fields["signature"],
            once_key,
            fields["declarations_sha256"],
            fields["signers"],
            kinds_text(kinds),
            agent,
        ]
        explicit = run_id is not None
        sql = _INSERT_RUN.format(id_column=", id" if explicit else "", id_value=", ?" if explicit else "")
        row = conn.execute(sql, values if run_id is None else [*values, run_id]).fetchone()
        if row is None:  # another runner recorded this very transcript a moment ago
            existing = conn.execute("SELECT id FROM runs WHERE imported_key = ?", (once_key,)).fetchone()
            return int(existing[0]), False
        new_id = int(row[0])
        churned = 1 if fields["verdict"] == "churn" else 0
        counted = (
            new_id,
            churned,
            changed,
            changed,
            recorded_at,
            *marks,
            changed,
            kinds_text(kinds),
            recorded_at,
            fields["standing"],
            fields["signature"],
            agent,
            agent_id,
        )
        conn.execute(_COUNT_RUN, counted)
        conn.execute(_SEEN_AT, (agent_id, agent, new_id))
        for signing in identity.keys:
            conn.execute(_KEYED, (signing, agent_id))
        return new_id, True

    def _link(self, conn: Conn, parent: int, children: Sequence[int]) -> None:
        for child in children:
            conn.execute(
                "INSERT INTO doc_links(parent, child) VALUES (?, ?) ON CONFLICT DO NOTHING", (parent, child)
            )

    def forget_run(self, run_id: int) -> None:
        def work(conn: Conn) -> None:
            row = conn.execute("SELECT agent_id FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None:
                raise HistoryError(f"there is no run {run_id} in the history")
            conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            _repair_agent(conn, int(row[0]), run_id)
            _collect_garbage(conn)

        self._transaction(work, what=f"could not forget run {run_id} in {self.location}", strict=True)

    def forget_agent(self, agent: str, name: str | None = None) -> int:
        def work(conn: Conn) -> int:
            count = 0
            for agent_id in _agents_at(conn, agent, name):
                count += int(
                    conn.execute("SELECT COUNT(*) FROM runs WHERE agent_id = ?", (agent_id,)).fetchone()[0]
                )
                conn.execute("DELETE FROM runs WHERE agent_id = ?", (agent_id,))
                _delete_agent(conn, agent_id)
            if count:
                _collect_garbage(conn)
            return int(count)

        return self._transaction(work, what=f"could not forget runs in {self.location}", strict=True)

    # --- reading -------------------------------------------------------------------------------------

    def query(self, q: RunQuery) -> Iterator[RunSummary]:
        if q.limit is not None and q.limit <= 0:
            return
        agent_ids: list[int] | None = None
        if q.agents is not None:
            agent_ids = self._agent_ids(q.agents)
            if not agent_ids:
                return
        where, params = _filters(q, agent_ids)
        before = q.before
        left = q.limit
        while left is None or left > 0:
            page = PAGE if left is None else min(PAGE, left)
            terms = [*where, "r.id < ?"] if before is not None else where
            sql = f"SELECT {_SUMMARY} {_FROM}"
            if terms:
                sql += " WHERE " + " AND ".join(terms)
            sql += " ORDER BY r.id DESC LIMIT ?"
            args = [*params, *([before] if before is not None else []), page]
            with self._reading() as conn:
                rows = conn.execute(sql, args).fetchall()
            for row in rows:
                yield _summary(row)
            if len(rows) < page:
                return
            before = int(rows[-1][0])
            if left is not None:
                left -= len(rows)

    def _agent_ids(self, agents: Sequence[str]) -> list[int]:
        """The agents these addresses name: every agent whose latest run was there, else every
        agent seen there (`forget` takes only the one living there: `_agents_at`)."""
        wanted = list(dict.fromkeys(agents))
        found: set[int] = set()
        with self._reading() as conn:
            for chunk in _chunks(wanted):
                sql = f"SELECT id, address FROM agents WHERE address IN ({_marks(len(chunk))})"
                rows = conn.execute(sql, list(chunk)).fetchall()
                found.update(int(row[0]) for row in rows)
                elsewhere = [address for address in chunk if address not in {row[1] for row in rows}]
                if elsewhere:
                    sql = f"SELECT agent_id FROM addresses WHERE address IN ({_marks(len(elsewhere))})"
                    found.update(int(row[0]) for row in conn.execute(sql, elsewhere))
        return sorted(found)

    def summary(self, run_id: int) -> RunSummary:
        with self._reading() as conn:
            row = conn.execute(f"SELECT {_SUMMARY} {_FROM} WHERE r.id = ?", (run_id,)).fetchone()
        if row is None:
            raise HistoryError(f"there is no run {run_id} in the history")
        return _summary(row)

    def previous(self, run_ids: Sequence[int]) -> dict[int, RunSummary]:
        wanted = list(dict.fromkeys(int(i) for i in run_ids))
        found: dict[int, RunSummary] = {}
        with self._reading() as conn:
            for chunk in _chunks(wanted):
                sql = f"""SELECT later.id, {_SUMMARY} FROM runs later
                    JOIN runs r ON r.id = (SELECT MAX(q.id) FROM runs q
                                           WHERE q.agent_id = later.agent_id AND q.id < later.id)
                    JOIN agents a ON a.id = r.agent_id
                    WHERE later.id IN ({_marks(len(chunk))})"""
                for row in conn.execute(sql, list(chunk)):
                    found[int(row[0])] = _summary(row[1:])
        return found

    def signed(self, run_ids: Sequence[int]) -> set[int]:
        wanted = [int(i) for i in run_ids]
        found: set[int] = set()
        with self._reading() as conn:
            for chunk in _chunks(wanted):
                sql = f"SELECT id FROM runs WHERE attestation IS NOT NULL AND id IN ({_marks(len(chunk))})"
                found.update(int(row[0]) for row in conn.execute(sql, list(chunk)))
        return found

    def agents(self) -> list[AgentSummary]:
        with self._snapshot() as conn:
            rows = conn.execute(
                """SELECT id, address, name, runs, last_run, last_recorded_at, last_verdict
                   FROM agents WHERE last_run IS NOT NULL ORDER BY last_run DESC"""
            ).fetchall()
            seen = addresses_by_agent(conn)
        return [
            AgentSummary(
                address, name, runs, last_run, recorded_at, verdict, seen.get(int(agent_id), (address,))
            )
            for agent_id, address, name, runs, last_run, recorded_at, verdict in rows
        ]

    def fleet(self) -> list[FleetSummary]:
        with self._snapshot() as conn:
            rows = conn.execute(
                """SELECT id, address, name, runs, last_run, last_recorded_at, last_verdict, last_standing,
                          churn, last_change_at, last_card, last_answers, last_signature, changes, last_kinds
                   FROM agents WHERE last_run IS NOT NULL ORDER BY last_run DESC"""
            ).fetchall()
            seen = addresses_by_agent(conn)
        return [
            FleetSummary._make(
                (*row[1:13], int(row[13]), kinds_of_text(row[14]), seen.get(int(row[0]), (row[1],)))
            )
            for row in rows
        ]

    def match_agents(self, text: str) -> list[str]:
        with self._reading() as conn:
            if conn.execute("SELECT 1 FROM agents WHERE address = ?", (text,)).fetchone():
                return [text]
            elsewhere = conn.execute(
                """SELECT DISTINCT a.address FROM addresses x JOIN agents a ON a.id = x.agent_id
                   WHERE x.address = ?""",
                (text,),
            ).fetchall()
            if elsewhere:
                return sorted(r[0] for r in elsewhere)
            base = text.rstrip("/") + "/"
            rows = conn.execute(
                """SELECT DISTINCT a.address FROM addresses x JOIN agents a ON a.id = x.agent_id
                   WHERE substr(x.address, 1, ?) = ?""",
                (len(base), base),
            ).fetchall()
            if rows:
                return sorted(r[0] for r in rows)
            named = conn.execute("SELECT address, name FROM agents").fetchall()
        named.sort()
        wanted = text.strip().casefold()
        for same in (
            lambda name: name == text,
            lambda name: name.casefold() == wanted,
            lambda name: name.casefold().endswith(f"({wanted})"),
        ):
            found = [agent for agent, name in named if isinstance(name, str) and wanted and same(name)]
            found = list(dict.fromkeys(found))  # two agents may answer at one address
            if found:
                return found
        return []

    def load(self, run_id: int) -> Run:
        with self._snapshot() as conn:
            try:
                run = _read_run(conn, run_id)
            except (ValueError, KeyError) as exc:  # a document or its parts do not fit
                raise HistoryError(
                    f"run {run_id} in {self.location} is damaged and cannot be read ({exc})"
                ) from None
        if run is None:
            raise HistoryError(f"there is no run {run_id} in the history")
        return run

    def mark(self) -> ChangeMark:
        with self._reading() as conn:
            last, runs = conn.execute(
                "SELECT COALESCE(MAX(last_run), 0), COALESCE(SUM(runs), 0) FROM agents"
            ).fetchone()
            forgotten = conn.execute("SELECT value FROM counters WHERE name = 'forgotten'").fetchone()
        return ChangeMark(int(last), int(runs), int(forgotten[0]) if forgotten else 0)

    def stats(self) -> dict[str, int]:
        with self._reading() as conn:
            runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            docs, stored, original = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(length(body)), 0), COALESCE(SUM(size), 0) FROM documents"
            ).fetchone()
            size = self._file_bytes(conn)
        return {
            "runs": int(runs),
            "documents": int(docs),
            "document_bytes": int(stored),
            "original_bytes": int(original),
            "file_bytes": int(size),
        }

    # --- copying -------------------------------------------------------------------------------------

    def last_run_id(self) -> int:
        with self._reading() as conn:
            return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM runs").fetchone()[0])

    def id_high_water(self) -> int:
        with self._reading() as conn:
            top = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM runs").fetchone()[0])
            return max(self._sequence(conn), top)

    def keep_ids_above(self, high_water: int) -> None:
        self._transaction(
            lambda conn: self._raise_sequence(conn, high_water), what=f"could not update {self.location}"
        )

    def _sequence(self, conn: Conn) -> int:
        """The largest id the backend's run id sequence has given."""
        raise NotImplementedError

    def _raise_sequence(self, conn: Conn, high_water: int) -> None:
        raise NotImplementedError

    def stored_runs(self, after: int, upto: int, limit: int) -> list[StoredRun]:
        out: list[StoredRun] = []
        with self._snapshot() as conn:
            rows = conn.execute(
                f"SELECT {_STORED} {_FROM} WHERE r.id > ? AND r.id <= ? ORDER BY r.id LIMIT ?",
                (after, upto, limit),
            ).fetchall()
            documents = _Documents(conn)
            try:
                for row in rows:
                    (
                        run_id,
                        recorded_at,
                        agent,
                        name,
                        verdict,
                        standing,
                        role,
                        runner,
                        card_sha256,
                        answers_sha256,
                        signature,
                        report_id,
                        skeleton_id,
                        keys_id,
                        volatile,
                        attestation,
                        declarations_sha256,
                        signers,
                        recorded_under,
                    ) = row
                    encoded = EncodedRun(
                        report=documents.doc(report_id),
                        exchanges=documents.doc(skeleton_id),
                        bodies=[Doc(digest, raw) for digest, raw in documents.children(skeleton_id)],
                        keys=documents.doc(keys_id),
                        volatile=bytes(volatile),
                        attestation=None if attestation is None else bytes(attestation),
                    )
                    out.append(
                        StoredRun(
                            run_id,
                            recorded_at,
                            agent,
                            name,
                            verdict,
                            standing,
                            role,
                            runner,
                            card_sha256,
                            answers_sha256,
                            signature,
                            encoded,
                            declarations_sha256,
                            signers_of_text(signers),
                            recorded_under,
                        )
                    )
            except (ValueError, KeyError) as exc:
                raise HistoryError(
                    f"{self.location} holds a damaged run and cannot be copied ({exc})"
                ) from None
        return out

    def put_stored(self, runs: Sequence[StoredRun]) -> None:
        def work(conn: Conn) -> None:
            for run in runs:
                fields = {
                    "verdict": run.verdict,
                    "standing": run.standing,
                    "role": run.role,
                    "runner": run.runner,
                    "card_sha256": run.card_sha256,
                    "answers_sha256": run.answers_sha256,
                    "signature": run.signature,
                    "name": run.name,
                    "declarations_sha256": run.declarations_sha256,
                    "signers": signers_text(run.signers),
                }
                self._insert(
                    conn,
                    run.encoded,
                    run.agent,
                    fields,
                    run.recorded_at,
                    run_id=run.id,
                    recorded_under=run.recorded_under,
                )
            self._after_explicit_ids(conn)

        if runs:
            self._transaction(work, what=f"could not copy runs into {self.location}")

    def fingerprints(self, after: int, upto: int, limit: int) -> list[tuple[int, str]]:
        with self._reading() as conn:
            rows = conn.execute(
                """SELECT r.id, r.address, r.recorded_at, rd.sha256, xd.sha256, kd.sha256, r.volatile,
                          r.attestation
                   FROM runs r
                     JOIN documents rd ON rd.id = r.report_doc JOIN documents xd ON xd.id = r.exchanges_doc
                     JOIN documents kd ON kd.id = r.keys_doc
                   WHERE r.id > ? AND r.id <= ? ORDER BY r.id LIMIT ?""",
                (after, upto, limit),
            ).fetchall()
        return [
            (
                int(row[0]),
                run_fingerprint(
                    row[1],
                    row[2],
                    bytes(row[3]),
                    bytes(row[4]),
                    bytes(row[5]),
                    bytes(row[6]),
                    None if row[7] is None else bytes(row[7]),
                ),
            )
            for row in rows
        ]


def _recorded_under(conn: Conn, identity: Identity) -> str:
    """The identity of the agent a run of `identity` is of (`agents.agent`), or the one a new
    agent of it is recorded under: `explorer.store.identity`'s rules, the last one the upsert's."""
    found = find_agent(conn, identity)
    if found is not None:
        row = conn.execute("SELECT agent FROM agents WHERE id = ?", (found,)).fetchone()
        if row is not None:
            return str(row[0])
    return identity.primary


def _read_run(conn: Conn, run_id: int) -> Run | None:
    """The run as recorded, or None when there is none; ValueError or KeyError when damaged."""
    row = conn.execute(
        "SELECT report_doc, exchanges_doc, keys_doc, volatile, attestation FROM runs WHERE id = ?", (run_id,)
    ).fetchone()
    if row is None:
        return None
    report_id, skeleton_id, keys_id, volatile_blob, attestation_blob = row
    documents = _Documents(conn)
    return decode_run(
        documents.get(report_id),
        documents.get(skeleton_id),
        documents.get(keys_id),
        bytes(volatile_blob),
        {digest.hex(): raw for digest, raw in documents.children(skeleton_id)},
        None if attestation_blob is None else bytes(attestation_blob),
    )


def backfill_changes(conn: Conn) -> None:
    """The change kinds and marks of runs recorded before a run kept them (a migration step, both
    backends: SQLite history version 4, PostgreSQL version 2).

    What old runs keep, and gain:

    - Every run gets its change kinds against its agent's run before, by `change_kinds`. Runs
      recorded before had no declarations digest or signers, so between two of them the card
      digest stands for the declarations: a card whose bytes differ reads as changed
      declarations, as it did, and every old run keeps the `changed` it was recorded with; a
      card that was only signed again is told apart from the next run on.
    - The latest run of every agent, whose marks its next run is compared with, gets them from
      its own bytes (`explorer.store.marks.refreshed_marks`): its declarations digest, its
      signers, and its answers digest as this version computes it. The kinds it was given
      against the run before it are decided before, by the rule above, so they do not move.
      (Should the run between them be forgotten later, the two are compared again with the
      answers digests of two versions: a run whose answers project a card signature may then
      read as changed answers.)
    - Every agent's counters are counted again: churn counts churn verdicts only, changes the
      runs that changed, and the last change is the latest of those.
    """
    agents = [int(row[0]) for row in conn.execute("SELECT id FROM agents").fetchall()]
    for agent_id in agents:
        _kinds_of_runs(conn, agent_id)
    from explorer.store.marks import refreshed_marks

    for (run_id,) in conn.execute("SELECT last_run FROM agents WHERE last_run IS NOT NULL").fetchall():
        try:
            run = _read_run(conn, int(run_id))
        except (ValueError, KeyError):
            continue  # a damaged run is reported when it is loaded, not here
        if run is None:
            continue
        declarations, signers, answers = refreshed_marks(run)
        conn.execute(
            "UPDATE runs SET declarations_sha256 = ?, signers = ?, answers_sha256 = ? WHERE id = ?",
            (declarations, signers_text(signers), answers, int(run_id)),
        )
    conn.execute(COUNTERS_OF_AGENTS)
    conn.execute(LATEST_OF_AGENTS)


def _kinds_of_runs(conn: Conn, agent_id: int) -> None:
    """Every run of one agent given its change kinds against the run before it, a page at a time."""
    previous: RunMarks | None = None
    after = 0
    while True:
        rows = conn.execute(
            f"""SELECT id, changed, kinds, {_MARKS} FROM runs WHERE agent_id = ? AND id > ?
                ORDER BY id LIMIT ?""",
            (agent_id, after, _BACKFILL_PAGE),
        ).fetchall()
        for run_id, changed, stored, *marks in rows:
            current = marks_of_row(marks)
            kinds = () if previous is None else change_kinds(previous, current)
            if kinds_text(kinds) != (stored or "") or is_change(kinds) != bool(changed):
                conn.execute(
                    "UPDATE runs SET kinds = ?, changed = ? WHERE id = ?",
                    (kinds_text(kinds), 1 if is_change(kinds) else 0, run_id),
                )
            previous = current
        if len(rows) < _BACKFILL_PAGE:
            return
        after = int(rows[-1][0])


def _once_key(agent: str, encoded: EncodedRun) -> bytes:
    """What a run recorded once is unique by (`_same_run`): its agent, exchanges, keys, volatile
    values and envelope, so two runners importing one transcript at once store it once."""
    e = encoded
    return bytes.fromhex(
        run_fingerprint(agent, "", b"", e.exchanges.digest, e.keys.digest, e.volatile, e.attestation)
    )


class _Documents:
    """Documents read inside one snapshot, each decoded (and checked against its digest) once."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn
        self._cache: dict[int, tuple[bytes, bytes]] = {}

    def doc(self, doc_id: int) -> Doc:
        if doc_id not in self._cache:
            row = self._conn.execute(
                "SELECT sha256, size, encoding, body FROM documents WHERE id = ?", (doc_id,)
            ).fetchone()
            if row is None:
                raise KeyError(f"document {doc_id} is missing")
            digest = bytes(row[0])
            self._cache[doc_id] = (digest, decode_document(digest, row[1], row[2], bytes(row[3])))
        digest, raw = self._cache[doc_id]
        return Doc(digest, raw)

    def get(self, doc_id: int) -> bytes:
        return self.doc(doc_id).raw

    def children(self, parent: int) -> list[tuple[bytes, bytes]]:
        rows = self._conn.execute(
            """SELECT d.sha256, d.size, d.encoding, d.body FROM doc_links l
               JOIN documents d ON d.id = l.child WHERE l.parent = ? ORDER BY d.sha256""",
            (parent,),
        ).fetchall()
        out = []
        for digest, size, encoding, body in rows:
            digest = bytes(digest)
            out.append((digest, decode_document(digest, size, encoding, bytes(body))))
        return out


def _filters(q: RunQuery, agent_ids: list[int] | None) -> tuple[list[str], list[Any]]:
    """The WHERE terms and their parameters of a query (the keyset term is added per page)."""
    terms: list[str] = []
    params: list[Any] = []
    if agent_ids is not None:
        if len(agent_ids) == 1:
            terms.append("r.agent_id = ?")
        else:
            terms.append(f"r.agent_id IN ({_marks(len(agent_ids))})")
        params += agent_ids
    if q.verdicts:
        verdicts = list(dict.fromkeys(q.verdicts))
        terms.append("r.verdict = ?" if len(verdicts) == 1 else f"r.verdict IN ({_marks(len(verdicts))})")
        params += verdicts
    if q.changed:
        terms.append("r.changed = 1")  # literally so: the partial index `runs_changed` matches it
    if q.since is not None:
        terms.append("r.recorded_at >= ?")
        params.append(stamp(q.since))
    if q.until is not None:
        terms.append("r.recorded_at < ?")
        params.append(stamp(q.until))
    return terms, params


def _same_run(
    conn: Conn, agent_id: int, docs: Mapping[bytes, tuple[int, bool]], encoded: EncodedRun
) -> int | None:
    """The id of a stored copy of this run (`record_once`): the same agent, exchanges and keys
    documents and volatile values, and for a signed run the same envelope; or None.

    The report is not compared: what a reader may change in it, the standing and
    `run_attestation`, says nothing about which run it is, and `history import` has checked the
    rest against the exchanges. So a signed transcript imported after a copy stripped of its
    signature is recorded (as a new run), and its signature is kept."""
    rows = conn.execute(
        """SELECT id, attestation FROM runs WHERE agent_id = ? AND exchanges_doc = ? AND keys_doc = ?
             AND volatile = ? ORDER BY id""",
        (agent_id, docs[encoded.exchanges.digest][0], docs[encoded.keys.digest][0], encoded.volatile),
    ).fetchall()
    for run_id, attestation in rows:
        stored = None if attestation is None else bytes(attestation)
        if encoded.attestation is None or stored == encoded.attestation:
            return int(run_id)
    return None


def _repair_agent(conn: Conn, agent_id: int, gone: int) -> None:
    """After run `gone` of an agent was deleted: its successor's change kinds against its new
    predecessor, the agent's counters again, and the agent itself gone with its last run."""
    after = conn.execute(
        f"SELECT id, {_MARKS} FROM runs WHERE agent_id = ? AND id > ? ORDER BY id LIMIT 1", (agent_id, gone)
    ).fetchone()
    if after is not None:
        before = conn.execute(
            f"SELECT {_MARKS} FROM runs WHERE agent_id = ? AND id < ? ORDER BY id DESC LIMIT 1",
            (agent_id, gone),
        ).fetchone()
        kinds = () if before is None else change_kinds(marks_of_row(before), marks_of_row(after[1:]))
        conn.execute(
            "UPDATE runs SET kinds = ?, changed = ? WHERE id = ?",
            (kinds_text(kinds), 1 if is_change(kinds) else 0, after[0]),
        )
    conn.execute(_REFRESH_AGENT, (agent_id,))
    conn.execute(_LATEST_OF_AGENT, (agent_id,))
    conn.execute(LATEST_ADDRESS_OF_AGENT, (agent_id,))
    for statement in _ADDRESSES_OF_AGENT:
        conn.execute(statement, (agent_id,))
    if conn.execute("SELECT 1 FROM agents WHERE id = ? AND runs = 0", (agent_id,)).fetchone():
        _delete_agent(conn, agent_id)


def _delete_agent(conn: Conn, agent_id: int) -> None:
    """An agent without runs deleted, with what names it."""
    conn.execute("DELETE FROM agent_keys WHERE agent_id = ?", (agent_id,))
    conn.execute("DELETE FROM addresses WHERE agent_id = ?", (agent_id,))
    conn.execute("DELETE FROM agents WHERE id = ?", (agent_id,))


def _agents_at(conn: Conn, address: str, name: str | None = None) -> list[int]:
    """The agents `forget` deletes for an address (CONTRACT "Signatures are proofs"): the agent
    whose latest run was there, else every agent seen there. When another agent took the address
    over, each of the two may have its latest run there: the one that answered there last is the
    agent living there (as `identity.RESIDENT` decides for a new run), the other is left alone,
    unless it is the one of the card name `name` (a person named it so)."""
    if name is not None:
        rows = conn.execute(
            "SELECT id FROM agents WHERE address = ? AND name = ? ORDER BY last_run DESC LIMIT 1",
            (address, name),
        ).fetchall()
        if rows:
            return [int(rows[0][0])]
    rows = conn.execute(
        "SELECT id FROM agents WHERE address = ? ORDER BY last_run DESC LIMIT 1", (address,)
    ).fetchall()
    if not rows:
        rows = conn.execute("SELECT agent_id FROM addresses WHERE address = ?", (address,)).fetchall()
    return sorted(int(row[0]) for row in rows)


def _collect_garbage(conn: Conn) -> None:
    """Documents no remaining run reaches are deleted, and the forget is counted (`mark`)."""
    conn.execute("DELETE FROM doc_links WHERE parent NOT IN (SELECT exchanges_doc FROM runs)")
    conn.execute(
        """DELETE FROM documents WHERE id NOT IN (SELECT report_doc FROM runs)
             AND id NOT IN (SELECT exchanges_doc FROM runs)
             AND id NOT IN (SELECT keys_doc FROM runs)
             AND id NOT IN (SELECT child FROM doc_links)"""
    )
    conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'forgotten'")
