"""The shared history: a PostgreSQL database that any number of runners write into at once.

For a team: one server, many runner machines, anyone's TUI. SQLite's own documentation says
every process using one database file must be on one host; this store has no such limit.
Installed with the `postgres` extra (psycopg 3 and psycopg-pool); opened by
`explorer.store.location` from a `postgresql://` URL.

Shape, and why:

- The statements are `explorer.store.sql`'s, the same as SQLite's; this module adds connections
  (a small psycopg-pool, so the TUI's threads and a sweep share a few), transactions, and
  batches where a round trip matters (a run's documents go in with one `INSERT ... SELECT
  unnest(...) ON CONFLICT DO NOTHING`). A document is compressed and sent only when the
  history lacks it: those this process has seen stored are known, the others asked about by
  digest first (one indexed lookup each, in one round trip).
- Recording runs at READ COMMITTED: unique constraints and `ON CONFLICT` decide what is new, and
  the agent row an upsert locks orders two runs of one agent. Forgetting runs at REPEATABLE READ,
  so its garbage collection sees one snapshot. A serialization failure, a deadlock, or a
  constraint a concurrent runner's commit just broke (a document forgotten under a run that
  reuses it) rolls the transaction back and runs it again, a few times with a growing random
  pause: no such error reaches the user. A connection lost while committing is never retried
  (the run may be stored), it is reported.
- Deleted rows stay in PostgreSQL's files until VACUUM; `forget_note` says so and what to run.
- Other runners' runs are seen by polling `mark()` (one aggregate over the agents table), not
  by LISTEN/NOTIFY, whose commit-time lock would serialise every writer's commit.
- The password never appears: `location` is the URL without it, and an error text that could
  carry it has it replaced.
"""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from explorer.core.when import utc_now
from explorer.store.base import HistoryError
from explorer.store.codec import Doc, EncodedRun, pack_document
from explorer.store.identity import Identity
from explorer.store.marks import signers_of_text
from explorer.store.sql import Conn, SqlHistory

T = TypeVar("T")

ATTEMPTS = 8  # tries of one transaction that meets serialization failures or deadlocks
CONNECT_TIMEOUT = 10  # seconds, unless the URL says connect_timeout
POOL_MAX = 4
POOL_TIMEOUT = 30.0  # seconds to wait for a free connection
KNOWN_CAP = 4096  # document digests remembered as stored, most recently used kept

FORGET_NOTE = (
    "PostgreSQL keeps deleted rows in its files until VACUUM reclaims them (autovacuum does, in "
    "time); to remove them now, run VACUUM FULL documents, doc_links, runs, agents; (it locks those "
    "tables while it runs) or `vacuumdb --full --table=documents --table=doc_links --table=runs "
    "--table=agents DBNAME`"
)


class _Conn:
    """A psycopg connection that takes the `?` placeholders of `explorer.store.sql`."""

    _translated: dict[str, str] = {}

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        text = self._translated.get(sql)
        if text is None:
            text = self._translated[sql] = sql.replace("%", "%%").replace("?", "%s")
        return self.raw.execute(text, params)


class PostgresHistory(SqlHistory):
    """The run history in a PostgreSQL database; safe to share between threads."""

    kind = "postgresql"

    def __init__(
        self,
        conninfo: str,
        shown: str,
        *,
        password: str | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(shown, clock)
        import psycopg
        from psycopg_pool import ConnectionPool

        from explorer.store.pg_schema import prepare

        self._psycopg = psycopg
        self._secret = password
        self._known: OrderedDict[bytes, None] = OrderedDict()  # digests of documents seen stored
        self._known_lock = threading.Lock()
        kwargs: dict[str, Any] = {"autocommit": True}
        if password is not None:
            kwargs["password"] = password
        if "connect_timeout" not in conninfo:
            kwargs["connect_timeout"] = CONNECT_TIMEOUT
        try:
            first = psycopg.connect(conninfo, **kwargs)
        except psycopg.Error as exc:
            raise HistoryError(f"cannot connect to the history at {shown}: {self._clean(exc)}") from None
        try:
            prepare(first, shown)
        except psycopg.Error as exc:
            raise HistoryError(f"cannot use the history at {shown}: {self._clean(exc)}") from None
        finally:
            first.close()
        self._pool = ConnectionPool(
            conninfo,
            kwargs=kwargs,
            min_size=1,
            max_size=POOL_MAX,
            timeout=POOL_TIMEOUT,
            open=False,
            name="interview-explorer-history",
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT + 5)
        except Exception as exc:  # noqa: BLE001 - PoolTimeout or a driver error, said plainly
            self._pool.close()
            raise HistoryError(f"cannot connect to the history at {shown}: {self._clean(exc)}") from None

    def check_writable(self) -> None:
        """Refuse now a history this connection can read but not record into: a role without
        INSERT or UPDATE on the tables a run is written to (or USAGE of the run id sequence), a
        database or role whose transactions are read-only by default, a standby server. Such a
        history opens and lists its runs like any other and would refuse only the first run
        recorded, after its interview (`explorer.commands.common.recording_history` asks this
        before anything is asked). Every statement is one that writes nothing (`WHERE false`),
        in a transaction rolled back: PostgreSQL checks a statement's privileges and a read-only
        transaction before it looks for rows, so nothing is changed and no run id is drawn."""
        problem = f"the history at {self.location} cannot be written"
        remedy = (
            "nothing was asked. Grant the role INSERT and UPDATE on the history's tables and USAGE on "
            "its sequences, make the database writable, or choose another history with --history"
        )
        try:
            with self._pool.connection() as raw:
                raw.execute("BEGIN")
                try:
                    for statement in _WRITE_PROBES:
                        raw.execute(statement)
                    row = raw.execute(
                        "SELECT has_sequence_privilege(pg_get_serial_sequence('runs', 'id'), 'USAGE, UPDATE')"
                    ).fetchone()
                    drawable = bool(row and row[0])
                finally:
                    _rollback(raw)
        except self._psycopg.Error as exc:
            raise HistoryError(f"{problem} ({self._clean(exc)}); {remedy}") from None
        except Exception as exc:  # noqa: BLE001 - PoolTimeout: the server went away since it was opened
            raise HistoryError(f"{problem}: no connection ({self._clean(exc)}); nothing was asked") from None
        if not drawable:
            raise HistoryError(f"{problem} (permission denied for the run id sequence); {remedy}")

    def _clean(self, exc: BaseException) -> str:
        """A driver error as one line, never holding the password."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        if self._secret:
            text = text.replace(self._secret, "<redacted>")
        return text

    def close(self) -> None:
        self._pool.close()

    @property
    def forget_note(self) -> str | None:
        return FORGET_NOTE

    # --- connections and transactions ---------------------------------------------------------------

    @contextmanager
    def _connection(self, what: str) -> Iterator[Any]:
        try:
            with self._pool.connection() as raw:
                yield raw
        except HistoryError:
            raise
        except self._psycopg.Error as exc:
            raise HistoryError(f"{what}: {self._clean(exc)}") from None
        except Exception as exc:
            from psycopg_pool import PoolTimeout

            if isinstance(exc, PoolTimeout):
                raise HistoryError(f"{what}: no connection to {self.location} ({self._clean(exc)})") from None
            raise

    @contextmanager
    def _reading(self) -> Iterator[Conn]:
        with self._connection(f"the history at {self.location} cannot be read") as raw:
            yield _Conn(raw)

    @contextmanager
    def _snapshot(self) -> Iterator[Conn]:
        with self._connection(f"the history at {self.location} cannot be read") as raw:
            raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield _Conn(raw)
            finally:
                if not raw.closed:
                    raw.execute("ROLLBACK")

    def _transaction(self, work: Callable[[Conn], T], *, what: str, strict: bool = False) -> T:
        return self._retrying(lambda raw: self._once(raw, work, strict), what)

    def _retrying(self, attempt: Callable[[Any], T], what: str) -> T:
        """`attempt(connection)` until it succeeds, again after an error that a concurrent
        runner's transaction caused; any other error is a HistoryError at once."""
        errors = self._psycopg.errors
        retry = (
            errors.SerializationFailure,
            errors.DeadlockDetected,
            errors.ForeignKeyViolation,  # a document or agent forgotten under this run: again
            errors.UniqueViolation,
            errors.NotNullViolation,  # `_RECORD`: a document another runner committed meanwhile
        )
        pause = 0.005
        for number in range(1, ATTEMPTS + 1):
            try:
                with self._connection(what) as raw:
                    return attempt(raw)
            except _Retry as again:
                if number == ATTEMPTS or not isinstance(again.cause, retry):
                    raise HistoryError(f"{what}: {self._clean(again.cause)}") from None
            time.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, 0.5)
        raise AssertionError("unreachable")

    def _record_new(
        self, encoded: EncodedRun, agent: str, fields: Mapping[str, Any], recorded_at: str
    ) -> int:
        """A run recorded by one statement (`_RECORD`), its own transaction: one round trip, two
        when this process has not yet seen all of the run's documents stored.

        Documents this store has seen stored are sent by digest alone (and an exchange list it has
        seen, without its bodies), so an unchanged agent's run sends and compresses nothing but
        its row. Documents it has not seen are first looked up by digest (`_learn_stored`): a
        runner starting afresh, or sweeping agents another runner recorded, compresses and sends
        only what the history lacks. Should a document seen stored have been forgotten since,
        the statement fails on its NOT NULL constraint and runs again, looked up anew."""
        listed = (
            "name",
            "verdict",
            "standing",
            "role",
            "runner",
            "card_sha256",
            "answers_sha256",
            "signature",
            "declarations_sha256",
            "signers",
        )
        fixed = {name: fields[name] for name in listed}
        identity = Identity.of(agent, fields["name"], signers_of_text(fields["signers"]))
        tries = [0]

        def attempt(raw: Any) -> int:
            tries[0] += 1
            if tries[0] > 1:
                with self._known_lock:
                    self._known.clear()
            try:
                self._learn_stored(raw, encoded)
            except self._psycopg.Error as exc:
                raise _Retry(exc) from None
            params = {
                **self._documents_params(encoded),
                **fixed,
                "address": agent,
                "identity": identity.primary,
                "signing": list(identity.keys),
                "recorded_at": recorded_at,
                "volatile": encoded.volatile,
                "attestation": encoded.attestation,
            }
            try:
                run_id = int(raw.execute(_RECORD, params).fetchone()[0])
            except self._psycopg.Error as exc:
                raise _Retry(exc) from None
            self._remember([encoded.exchanges, encoded.report, encoded.keys, *encoded.bodies])
            return run_id

        return self._retrying(attempt, f"could not save the run to {self.location}")

    def _learn_stored(self, raw: Any, encoded: EncodedRun) -> None:
        """Remember which of the run's documents not known here the history holds (one indexed
        lookup per digest, one round trip), so `_documents_params` sends only the others; no
        round trip when all are known. The bodies are asked about only with a new exchange list
        (a stored one was stored with its bodies, and they are not sent)."""
        known = self._known
        tops = (encoded.exchanges, encoded.report, encoded.keys)
        asked = [*tops, *encoded.bodies] if encoded.exchanges.digest not in known else list(tops)
        unknown = sorted({doc.digest for doc in asked if doc.digest not in known})
        if not unknown:
            return
        held = {bytes(row[0]) for row in raw.execute(_STORED, (unknown,))}
        if held:
            self._remember([doc for doc in asked if doc.digest in held])

    def _documents_params(self, encoded: EncodedRun) -> dict[str, Any]:
        known = self._known
        skeleton_known = encoded.exchanges.digest in known
        every = (encoded.exchanges, encoded.report, encoded.keys, *(() if skeleton_known else encoded.bodies))
        docs = sorted({d.digest: d for d in every}.values(), key=lambda d: d.digest)
        sent = [doc for doc in docs if doc.digest not in known]
        packed = [pack_document(doc) for doc in sent]
        return {
            "l_sha": [doc.digest for doc in docs],
            "d_sha": [doc.digest for doc in sent],
            "d_size": [len(doc.raw) for doc in sent],
            "d_enc": [encoding for _, encoding in packed],
            "d_body": [body for body, _ in packed],
            "bodies": [] if skeleton_known else sorted({doc.digest for doc in encoded.bodies}),
            "skeleton": encoded.exchanges.digest,
            "report": encoded.report.digest,
            "keys": encoded.keys.digest,
        }

    def _remember(self, docs: Sequence[Doc]) -> None:
        with self._known_lock:
            for doc in docs:
                self._known[doc.digest] = None
                self._known.move_to_end(doc.digest)
            while len(self._known) > KNOWN_CAP:
                self._known.popitem(last=False)

    def _once(self, raw: Any, work: Callable[[Conn], T], strict: bool) -> T:
        raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ" if strict else "BEGIN")
        try:
            result = work(_Conn(raw))
        except self._psycopg.Error as exc:
            _rollback(raw)
            raise _Retry(exc) from None
        except BaseException:
            _rollback(raw)
            raise
        raw.execute("COMMIT")  # an error here is reported as it is: the commit may have happened
        return result

    # --- batches ---------------------------------------------------------------------------------------

    def _put_documents(self, conn: Conn, docs: Sequence[Doc]) -> dict[bytes, tuple[int, bool]]:
        unique = sorted({doc.digest: doc for doc in docs}.values(), key=lambda d: d.digest)
        packed = [pack_document(doc) for doc in unique]
        raw = conn.raw  # type: ignore[attr-defined]
        inserted = raw.execute(
            """INSERT INTO documents(sha256, size, encoding, body)
               SELECT * FROM unnest(%s::bytea[], %s::bigint[], %s::smallint[], %s::bytea[])
               ON CONFLICT (sha256) DO NOTHING RETURNING id, sha256""",
            (
                [doc.digest for doc in unique],
                [len(doc.raw) for doc in unique],
                [encoding for _, encoding in packed],
                [body for body, _ in packed],
            ),
        ).fetchall()
        out = {bytes(digest): (int(doc_id), True) for doc_id, digest in inserted}
        missing = [doc.digest for doc in unique if doc.digest not in out]
        if missing:
            for doc_id, digest in raw.execute(
                "SELECT id, sha256 FROM documents WHERE sha256 = ANY(%s)", (missing,)
            ).fetchall():
                out[bytes(digest)] = (int(doc_id), False)
        return out

    def _link(self, conn: Conn, parent: int, children: Sequence[int]) -> None:
        conn.raw.execute(  # type: ignore[attr-defined]
            """INSERT INTO doc_links(parent, child) SELECT %s, unnest(%s::bigint[])
               ON CONFLICT DO NOTHING""",
            (parent, list(children)),
        )

    def _after_explicit_ids(self, conn: Conn) -> None:
        top = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM runs").fetchone()[0])
        self._raise_sequence(conn, top)

    def _sequence(self, conn: Conn) -> int:
        row = conn.execute(
            """SELECT last_value FROM pg_sequences
               WHERE schemaname = current_schema() AND sequencename = 'runs_id_seq'"""
        ).fetchone()
        return 0 if row is None or row[0] is None else int(row[0])

    def _raise_sequence(self, conn: Conn, high_water: int) -> None:
        if high_water > self._sequence(conn):
            conn.execute("SELECT setval(pg_get_serial_sequence('runs', 'id'), ?)", (high_water,))

    def _file_bytes(self, conn: Conn) -> int:
        return int(
            conn.execute(
                """SELECT pg_total_relation_size('documents') + pg_total_relation_size('doc_links')
                        + pg_total_relation_size('runs') + pg_total_relation_size('agents')"""
            ).fetchone()[0]
        )


# One run in one statement, so recording costs one round trip, whatever the network's latency.
# Documents go in first (in digest order, `ON CONFLICT DO NOTHING`) and are looked up where they
# already were; a new exchange list is linked to its bodies; which agent the run is of is found
# (`explorer.store.identity`: `_FOUND` its rules 1 and 2, and `who` the identity of that agent
# or, for rule 3 and a new agent, the run's own); the agent's row is upserted on it, which
# locks it (two runs of one agent are recorded one after the other), counts the run and decides
# its change kinds against the agent's previous run from the marks kept on that row (`_KINDS`:
# the rules of `explorer.core.compare.change_kinds`, in SQL); the run goes in
# under the id the upsert drew. For a known agent that id is drawn under the lock (in DO UPDATE,
# not from the VALUES, which are computed before the conflict is met, and draw one only for an
# agent not there yet), so one agent's runs get increasing ids in the order they are recorded,
# and `changed` always compares with the run before by id. An agent forgotten between the two
# gets a run without an id, which fails on the primary key and runs again. A
# document another runner committed after this statement's snapshot is found by neither branch
# of `docs`: its id is then NULL, the NOT NULL constraint fails the whole statement, and it runs
# again (`_retrying`), as it does when a link is missing. The run's address and signing identities
# are added to the agent's (`seen`, `keyed`).
_STORED = "SELECT sha256 FROM documents WHERE sha256 = ANY(%b::bytea[])"
# `explorer.core.compare.change_kinds` in SQL, `a` the agent's row as it was (its latest run's
# marks) and EXCLUDED the run being recorded; tested against the Python on both backends.
_CARD = "(a.last_card IS DISTINCT FROM EXCLUDED.last_card)"
_DECLARATIONS = f"""(CASE WHEN a.last_declarations IS NOT NULL AND EXCLUDED.last_declarations IS NOT NULL
    THEN a.last_declarations <> EXCLUDED.last_declarations ELSE {_CARD} END)"""
_KEY = f"""(CASE WHEN a.last_signers IS NOT NULL AND EXCLUDED.last_signers IS NOT NULL
    THEN a.last_signers <> EXCLUDED.last_signers ELSE {_CARD} AND NOT {_DECLARATIONS} END)"""
_ANSWERS = "(a.last_answers IS DISTINCT FROM EXCLUDED.last_answers)"
_VERDICT = "(a.last_verdict IS DISTINCT FROM EXCLUDED.last_verdict)"
_CHANGED = f"({_DECLARATIONS} OR {_KEY} OR {_ANSWERS} OR {_VERDICT})"
_KINDS = f"""concat_ws(',', CASE WHEN {_DECLARATIONS} THEN 'declarations' END,
    CASE WHEN {_KEY} THEN 'key' END, CASE WHEN {_ANSWERS} THEN 'answers' END,
    CASE WHEN {_VERDICT} THEN 'verdict' END,
    CASE WHEN {_CARD} AND NOT {_DECLARATIONS} AND NOT {_KEY} THEN 'resigned' END)"""
# `explorer.store.identity.find_agent` in SQL: rules 1 (a signing identity) and 2 (the agent
# living at the address under the same name, or with no name on either side).
_FOUND = """COALESCE(
        (SELECT k.agent_id FROM agent_keys k WHERE k.key = ANY(%(signing)s::text[]) ORDER BY k.key LIMIT 1),
        (SELECT r.id FROM agents r WHERE r.address = %(address)s
           AND (%(name)s::text IS NULL OR r.name IS NULL OR r.name = %(name)s)
         ORDER BY r.last_run DESC LIMIT 1))"""
_RECORD = f"""
WITH input(sha256, size, encoding, body) AS (
    SELECT * FROM unnest(%(d_sha)b::bytea[], %(d_size)s::bigint[], %(d_enc)s::smallint[], %(d_body)b::bytea[])
), new_docs AS (
    INSERT INTO documents(sha256, size, encoding, body)
    SELECT sha256, size, encoding, body FROM input ORDER BY sha256
    ON CONFLICT (sha256) DO NOTHING
    RETURNING id, sha256
), docs AS (
    SELECT id, sha256 FROM new_docs
    UNION ALL
    SELECT id, sha256 FROM documents WHERE sha256 = ANY(%(l_sha)b::bytea[])
), links AS (
    INSERT INTO doc_links(parent, child)
    SELECT p.id, c.id FROM new_docs p JOIN docs c ON c.sha256 = ANY(%(bodies)b::bytea[])
    WHERE p.sha256 = %(skeleton)b
    ON CONFLICT DO NOTHING
    RETURNING child
), who AS (
    SELECT COALESCE((SELECT g.agent FROM agents g WHERE g.id = ({_FOUND})), %(identity)s) AS agent
), ag AS (
    INSERT INTO agents AS a (agent, name, runs, last_run, churn, changes, last_change_at, last_verdict,
                             last_card, last_declarations, last_signers, last_answers, last_changed,
                             last_kinds, last_recorded_at, last_standing, last_signature, address)
    VALUES ((SELECT agent FROM who), %(name)s, 1,
            CASE WHEN NOT EXISTS (SELECT 1 FROM agents WHERE agent = (SELECT agent FROM who))
                 THEN nextval(pg_get_serial_sequence('runs', 'id')) END,
            CASE WHEN %(verdict)s = 'churn' THEN 1 ELSE 0 END, 0, NULL,
            %(verdict)s, %(card_sha256)s, %(declarations_sha256)s, %(signers)s, %(answers_sha256)s, 0, '',
            %(recorded_at)s, %(standing)s, %(signature)s, %(address)s)
    ON CONFLICT (agent) DO UPDATE SET
        name = COALESCE(EXCLUDED.name, a.name),
        address = EXCLUDED.address,
        runs = a.runs + 1,
        last_run = nextval(pg_get_serial_sequence('runs', 'id')),
        churn = a.churn + CASE WHEN EXCLUDED.last_verdict = 'churn' THEN 1 ELSE 0 END,
        changes = a.changes + CASE WHEN {_CHANGED} THEN 1 ELSE 0 END,
        last_change_at = CASE WHEN {_CHANGED} THEN %(recorded_at)s ELSE a.last_change_at END,
        last_changed = CASE WHEN {_CHANGED} THEN 1 ELSE 0 END,
        last_kinds = {_KINDS},
        last_verdict = EXCLUDED.last_verdict,
        last_card = EXCLUDED.last_card,
        last_declarations = EXCLUDED.last_declarations,
        last_signers = EXCLUDED.last_signers,
        last_answers = EXCLUDED.last_answers,
        last_recorded_at = EXCLUDED.last_recorded_at,
        last_standing = EXCLUDED.last_standing,
        last_signature = EXCLUDED.last_signature
    RETURNING a.id, a.last_run, a.last_changed, a.last_kinds
), seen AS (
    INSERT INTO addresses AS x (agent_id, address, runs, last_run)
    SELECT ag.id, %(address)s, 1, ag.last_run FROM ag
    ON CONFLICT (agent_id, address) DO UPDATE SET runs = x.runs + 1, last_run = EXCLUDED.last_run
    RETURNING x.agent_id
), keyed AS (
    INSERT INTO agent_keys(key, agent_id)
    SELECT signing.key, ag.id FROM ag CROSS JOIN unnest(%(signing)s::text[]) AS signing(key)
    ON CONFLICT (key) DO NOTHING
    RETURNING agent_id
)
INSERT INTO runs(id, agent_id, recorded_at, verdict, standing, role, runner, card_sha256, answers_sha256,
                 report_doc, exchanges_doc, keys_doc, volatile, attestation, changed, signature,
                 declarations_sha256, signers, kinds, address)
SELECT ag.last_run, ag.id, %(recorded_at)s, %(verdict)s, %(standing)s, %(role)s, %(runner)s,
       %(card_sha256)s, %(answers_sha256)s,
       (SELECT id FROM docs WHERE sha256 = %(report)b LIMIT 1),
       CASE WHEN NOT EXISTS (SELECT 1 FROM new_docs WHERE sha256 = %(skeleton)b)
              OR (SELECT count(*) FROM links) = cardinality(%(bodies)b::bytea[])
            THEN (SELECT id FROM docs WHERE sha256 = %(skeleton)b LIMIT 1) END,
       (SELECT id FROM docs WHERE sha256 = %(keys)b LIMIT 1),
       %(volatile)b, %(attestation)b, ag.last_changed, %(signature)s,
       %(declarations_sha256)s, %(signers)s, ag.last_kinds, %(address)s
FROM ag
RETURNING id"""


# What recording a run (`_RECORD`) writes, each as a statement that writes nothing: the privileges
# and a read-only transaction are checked before any row is looked for (`check_writable`); identity
# columns are copied as they are (OVERRIDING SYSTEM VALUE), no row being there to copy.
_WRITE_PROBES = (
    "INSERT INTO documents OVERRIDING SYSTEM VALUE SELECT * FROM documents WHERE false",
    "INSERT INTO doc_links OVERRIDING SYSTEM VALUE SELECT * FROM doc_links WHERE false",
    "INSERT INTO agents OVERRIDING SYSTEM VALUE SELECT * FROM agents WHERE false",
    "UPDATE agents SET runs = runs WHERE false",
    "INSERT INTO addresses OVERRIDING SYSTEM VALUE SELECT * FROM addresses WHERE false",
    "UPDATE addresses SET runs = runs WHERE false",
    "INSERT INTO agent_keys OVERRIDING SYSTEM VALUE SELECT * FROM agent_keys WHERE false",
    "INSERT INTO runs OVERRIDING SYSTEM VALUE SELECT * FROM runs WHERE false",
)


class _Retry(Exception):
    """A transaction failed inside; `cause` says whether running it again can succeed."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _rollback(raw: Any) -> None:
    try:
        if not raw.closed:
            raw.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - the original error is the one worth reporting
        pass
