"""The history's change kinds (CONTRACT "Signatures are proofs"), on each backend.

A run keeps what tells its kinds of change apart (its declarations digest and signers beside its
card and answers digests and verdict) and its kinds against its agent's run before it:
`declarations`, `key`, `answers`, `verdict`, or `resigned` for a card only signed again (never a
change, never churn). SQLite decides them in Python and PostgreSQL in the one statement that
records a run: both are held to `explorer.core.compare.change_kinds` here, with real ES256
signatures where a card is signed; forgetting repairs them, a copy keeps them, and a history
written by the previous version is migrated so that its agents' next runs are compared by
declarations and key.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from explorer.core.attempt import canonical_sha
from explorer.core.canonical import canonical_text, sha256_hex
from explorer.core.compare import change_kinds, is_change
from explorer.core.declarations import declarations_sha256, signers_of
from explorer.core.run import Run
from explorer.core.signatures import generate_key, public_jwks, sign_card, verify_card
from explorer.store import pg_schema, sqlite_schema
from explorer.store.base import RunQuery, agent_of, summary_fields
from explorer.store.codec import encode_run, pack_document
from explorer.store.copy import copy_history
from explorer.store.location import open_store, parse_location
from tests.support.runs import CARD_URL, make_card, make_run

OTHER = "http://127.0.0.1:10/.well-known/agent-card.json"
UNSTATED = object()  # a report member left out, as a report made before it existed


def _tick(n: int) -> dict[str, Any]:
    return {"started_at": f"2025-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z", "elapsed_ms": 1.0 + n}


def _marked(
    n: int,
    card: str,
    declarations: Any = UNSTATED,
    signers: Any = UNSTATED,
    answers: str = "x1",
    verdict: str = "conformant",
) -> Run:
    """A run whose report states these marks (a member UNSTATED is left out of it)."""
    run = make_run(verdict=verdict, **_tick(n))
    report = copy.deepcopy(dict(run.report))
    report["card"]["sha256"] = card
    report["answers_sha256"] = answers
    for name, value in (("declarations_sha256", declarations), ("signers", signers)):
        if value is not UNSTATED:
            report["card"][name] = value
    return replace(run, report=report)


# (run, the kinds it must get against the one before), in recording order. The card digests
# c1..c8 are no fetched card's: a run that states no marks has none derived (unknown).
SEQUENCE: list[tuple[Run, tuple[str, ...]]] = [
    (_marked(1, "c1", "d1", ["a"]), ()),
    (_marked(2, "c2", "d1", ["a"]), ("resigned",)),  # other bytes, same declarations and key
    (_marked(3, "c3", "d1", ["b"]), ("key",)),
    (_marked(4, "c4", "d2", ["b"]), ("declarations",)),
    (_marked(5, "c4", "d2", ["b"], answers="x2"), ("answers",)),
    (_marked(6, "c4", "d2", ["b"], answers="x2", verdict="nonconformant"), ("verdict",)),
    (_marked(7, "c5", answers="x2", verdict="nonconformant"), ("declarations",)),  # unknown: the card
    (_marked(8, "c6", "d2", None, answers="x2", verdict="nonconformant"), ("declarations",)),
    (_marked(9, "c7", "d2", ["b"], answers="x2", verdict="nonconformant"), ("key",)),  # signers unknown
    (_marked(10, "c7", "d2", ["b"], answers="x2", verdict="nonconformant"), ()),
    (_marked(11, "c8", "d2", ["b"], answers="x3"), ("answers", "verdict", "resigned")),
    (_marked(12, "c8", "d2", ["b"], answers="x3", verdict="churn"), ("verdict",)),
    (_marked(13, "c8", "d2", ["b"], answers="x3", verdict="churn"), ()),
]


def test_every_kind_is_decided_alike_in_python_and_in_sql(store_factory) -> None:
    history = store_factory()
    ids = [history.record(run) for run, _ in SEQUENCE]
    rows = {r.id: r for r in history.query(RunQuery())}
    for position, (run_id, (_, expected)) in enumerate(zip(ids, SEQUENCE, strict=True)):
        row = rows[run_id]
        assert (row.kinds, row.changed) == (expected, is_change(expected)), position
        if position:
            assert row.kinds == change_kinds(rows[ids[position - 1]].marks(), row.marks())
    assert rows[ids[1]].signers == ("a",) and rows[ids[7]].signers is None
    assert rows[ids[6]].declarations_sha256 is None and rows[ids[6]].signers is None
    changed = [r.id for r in history.query(RunQuery(changed=True))]
    expected = [run_id for run_id, (_, kinds) in zip(ids, SEQUENCE, strict=True) if is_change(kinds)]
    assert changed == expected[::-1]
    assert ids[1] not in changed  # signed again: never a change
    [row] = history.fleet()
    assert (row.runs, row.churn, row.changes) == (13, 2, 9)  # churn: the two churn verdicts only
    assert row.kinds == () and row.last_change_at == rows[ids[11]].recorded_at


def test_forgetting_decides_the_successor_again_and_recounts_both_counters(store_factory) -> None:
    history = store_factory()
    ids = [history.record(run) for run, _ in SEQUENCE[:6]]
    history.forget_run(ids[2])  # the key change: run 4 now follows run 2 (c2, d1, a)
    assert history.summary(ids[3]).kinds == ("declarations", "key")
    history.forget_run(ids[1])  # and now run 1 (c1, d1, a)
    assert history.summary(ids[3]).kinds == ("declarations", "key")
    history.forget_run(ids[5])  # the latest: the fleet row falls back to run 5
    [row] = history.fleet()
    assert (row.runs, row.churn, row.changes, row.kinds) == (3, 0, 2, ("answers",))
    again = history.record(SEQUENCE[5][0])
    assert history.summary(again).kinds == ("verdict",)


def test_a_copy_keeps_every_mark_and_kind(store_factory, fresh_store_url) -> None:
    source = store_factory()
    for run, _ in SEQUENCE:
        source.record(run)
    with open_store(fresh_store_url()) as target:
        assert copy_history(source, target).proved
        assert list(target.query(RunQuery())) == list(source.query(RunQuery()))
        assert target.fleet() == source.fleet()


# --- real signatures ------------------------------------------------------------------------------


def _signed_run(
    n: int,
    card: dict[str, Any],
    key: Any,
    *,
    stated: bool,
    card_url: str = CARD_URL,
    verdict: str = "conformant",
) -> Run:
    """A run of `card` signed now with `key` (ES256: other bytes at every signing), its card fetch
    carrying the signed bytes; its report states its marks only when `stated`, as this version's do."""
    run = make_run(card_url=card_url, verdict=verdict, **_tick(n))
    signed = sign_card(card, key, kid="card-1")
    report = copy.deepcopy(dict(run.report))
    report["card"]["sha256"] = canonical_sha(signed)
    report["card"]["name"] = card["name"]  # one key signs two agents: their names tell them apart
    if stated:
        report["card"]["declarations_sha256"] = declarations_sha256(signed)
        report["card"]["signers"] = signers_of(verify_card(signed, public_jwks(key)))
    fetched = replace(run.exchanges[0], response_body=json.dumps(signed).encode())
    return Run(report=report, exchanges=(fetched, *run.exchanges[1:]), keys=public_jwks(key))


@pytest.fixture(scope="module")
def keys() -> tuple[Any, Any]:
    return generate_key("ES256", kid="card-1"), generate_key("ES256", kid="card-1")


def test_a_report_that_states_no_marks_has_them_read_from_its_bytes(store_factory, keys) -> None:
    key, rotated = keys
    card = make_card()
    history = store_factory()
    first = history.record(_signed_run(1, card, key, stated=False))
    row = history.summary(first)
    assert row.declarations_sha256 == declarations_sha256(card)  # the card without its signatures
    assert row.signers == tuple(signers_of(verify_card(sign_card(card, key, kid="card-1"), public_jwks(key))))
    again = history.record(_signed_run(2, card, key, stated=True))  # stated, and the same
    assert history.summary(again).kinds == ("resigned",)
    derived = history.record(_signed_run(3, card, key, stated=False))
    assert history.summary(derived).kinds == ("resigned",)
    assert history.summary(history.record(_signed_run(4, card, rotated, stated=False))).kinds == ("key",)
    other = {**card, "description": "Reconciles statements and invoices"}
    assert history.summary(history.record(_signed_run(5, other, rotated, stated=True))).kinds == (
        "declarations",
    )


# --- a history written by the previous version ------------------------------------------------------


class _Statements:
    """`?` statements on either database's own connection, as the store writes its statements."""

    def __init__(self, raw: Any, postgres: bool) -> None:
        self.raw, self.postgres = raw, postgres

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self.raw.execute(sql.replace("?", "%s") if self.postgres else sql, params)


def _previous_version(url: str) -> Iterator[_Statements]:
    """An empty history of the version before the change kinds (SQLite 3, PostgreSQL 1), built
    from the released schema statements, and a connection to write into it as that version did."""
    location = parse_location(url)
    if location.kind == "sqlite":
        assert location.path is not None
        Path(location.path).parent.mkdir(parents=True, exist_ok=True)
        raw = sqlite3.connect(location.path, isolation_level=None)
        raw.execute("BEGIN")
        for version in (1, 2, 3):
            for step in sqlite_schema.MIGRATIONS[version]:
                step(raw) if callable(step) else raw.execute(step)  # type: ignore[operator]
        raw.execute(f"PRAGMA application_id={sqlite_schema.APPLICATION_ID}")
        raw.execute("PRAGMA user_version=3")
        yield _Statements(raw, postgres=False)
        raw.execute("COMMIT")
        raw.close()
        return
    import psycopg

    with psycopg.connect(location.conninfo, autocommit=False) as raw:
        for statement in pg_schema.MIGRATIONS[1]:
            raw.execute(statement)  # type: ignore[arg-type]
        raw.execute(
            f"INSERT INTO {pg_schema.MARKER_TABLE}(application, version) VALUES (%s, 1)",
            (pg_schema.APPLICATION,),
        )
        yield _Statements(raw, postgres=True)
        raw.commit()


def _write_as_previous_version(url: str, runs: list[Run]) -> None:
    """The runs recorded as the previous version recorded them: no declarations digest, signers
    or kinds; `changed` when the verdict, card digest or answers digest differed; churn counting
    those changes and the churn verdicts alike."""
    writer = _previous_version(url)
    q = next(writer)
    last: dict[str, tuple[Any, ...]] = {}
    for n, run in enumerate(runs):
        encoded = encode_run(run)
        ids = {}
        for doc in (encoded.exchanges, encoded.report, encoded.keys, *encoded.bodies):
            body, encoding = pack_document(doc)
            q.execute(
                "INSERT INTO documents(sha256, size, encoding, body) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (sha256) DO NOTHING",
                (doc.digest, len(doc.raw), encoding, body),
            )
            found = q.execute("SELECT id FROM documents WHERE sha256 = ?", (doc.digest,)).fetchone()
            ids[doc.digest] = found[0]
        for doc in encoded.bodies:
            q.execute(
                "INSERT INTO doc_links(parent, child) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (ids[encoded.exchanges.digest], ids[doc.digest]),
            )
        fields, agent = summary_fields(run.report), agent_of(run.report)
        q.execute(
            "INSERT INTO agents(agent, name) VALUES (?, ?) ON CONFLICT (agent) DO NOTHING",
            (agent, fields["name"]),
        )
        agent_id = q.execute("SELECT id FROM agents WHERE agent = ?", (agent,)).fetchone()[0]
        current = (fields["verdict"], fields["card_sha256"], fields["answers_sha256"])
        changed = 1 if agent in last and last[agent] != current else 0
        last[agent] = current
        listed = [
            fields[k] for k in ("verdict", "standing", "role", "runner", "card_sha256", "answers_sha256")
        ]
        documents = [ids[doc.digest] for doc in (encoded.report, encoded.exchanges, encoded.keys)]
        q.execute(
            """INSERT INTO runs(agent_id, recorded_at, verdict, standing, role, runner, card_sha256,
                   answers_sha256, report_doc, exchanges_doc, keys_doc, volatile, attestation, changed,
                   signature)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                agent_id,
                f"2025-01-0{n + 1}T00:00:00.000Z",
                *listed,
                *documents,
                encoded.volatile,
                encoded.attestation,
                changed,
                fields["signature"],
            ),
        )
    q.execute("""UPDATE agents SET
        runs = (SELECT COUNT(*) FROM runs WHERE agent_id = agents.id),
        last_run = (SELECT MAX(id) FROM runs WHERE agent_id = agents.id),
        churn = (SELECT COUNT(*) FROM runs WHERE agent_id = agents.id AND (changed = 1 OR verdict = 'churn')),
        last_change_at = (SELECT MAX(recorded_at) FROM runs
                          WHERE agent_id = agents.id AND (changed = 1 OR verdict = 'churn'))""")
    q.execute("""UPDATE agents SET (last_verdict, last_card, last_answers, last_changed, last_recorded_at,
            last_standing, last_signature)
        = (SELECT verdict, card_sha256, answers_sha256, changed, recorded_at, standing, signature
           FROM runs WHERE id = agents.last_run)""")
    next(writer, None)


def _version(url: str) -> int:
    with open_store(url) as history, history._reading() as conn:  # the test reads the version itself
        if history.kind == "sqlite":
            return int(conn.execute("PRAGMA user_version").fetchone()[0])
        return int(conn.execute(f"SELECT version FROM {pg_schema.MARKER_TABLE}").fetchone()[0])


def test_a_previous_version_history_is_migrated_and_its_next_runs_compared_by_declarations(
    store_url: str, keys: tuple[Any, Any]
) -> None:
    key, _ = keys
    card = make_card()
    old = [
        _signed_run(1, card, key, stated=False),
        _signed_run(2, card, key, stated=False),  # signed again: the previous version saw a change
        _signed_run(3, card, key, stated=False),
        _signed_run(4, make_card("Other"), key, stated=False, card_url=OTHER, verdict="churn"),
        _signed_run(5, make_card("Other"), key, stated=False, card_url=OTHER),
    ]
    _write_as_previous_version(store_url, old)
    with open_store(store_url) as history:
        rows = {r.id: r for r in history.query(RunQuery())}
        # old runs keep the change they were recorded with, the card digest standing for the
        # declarations; the kinds say so
        assert [(rows[i].kinds, rows[i].changed) for i in (1, 2, 3)] == [
            ((), False),
            (("declarations",), True),
            (("declarations",), True),
        ]
        assert rows[5].kinds == ("declarations", "verdict")  # a re-signed card read as changed, then
        # each agent's latest run has its marks from its own bytes; the others have none
        assert rows[3].declarations_sha256 == declarations_sha256(card)
        assert rows[3].signers == tuple(
            signers_of(verify_card(sign_card(card, key, kid="card-1"), public_jwks(key)))
        )
        assert rows[2].declarations_sha256 is None and rows[2].signers is None
        fleet = {row.agent: row for row in history.fleet()}
        assert (fleet[CARD_URL].churn, fleet[CARD_URL].changes) == (0, 2)  # was churn 2: changes only
        assert (fleet[OTHER].churn, fleet[OTHER].changes) == (1, 1)
        # the next run of a card signed again is no change, whether its report states its marks or not
        for n, stated in ((6, False), (7, True)):
            run_id = history.record(_signed_run(n, card, key, stated=stated))
            assert (history.summary(run_id).kinds, history.summary(run_id).changed) == (("resigned",), False)
        assert [r.id for r in history.query(RunQuery(changed=True, agents=(CARD_URL,)))] == [3, 2]
    schema = sqlite_schema if store_url.startswith("sqlite") else pg_schema
    assert _version(store_url) == schema.SCHEMA_VERSION


@pytest.mark.slow  # a reference agent restarted three times, on both backends
@pytest.mark.timeout(240)
def test_after_migration_a_real_restart_reads_as_signed_again(store_url: str, tmp_path: Path) -> None:
    """Live runs of a restarted reference agent, recorded as the previous version recorded them
    (no marks; an answers digest over the identity answer's signature bytes, so it differed at
    every restart): once migrated, the latest run's answers digest is the one this version
    computes, so the next restart is only signed again, not changed answers."""
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync
    from tests.support.restarts import Restarts

    agent = Restarts(tmp_path / "agent")
    options = Options(keys=(agent.jwks,), runner="tester")

    def interviewed() -> Run:
        with agent.session() as url:
            return run_interview_sync(url, options)

    live = [interviewed(), interviewed()]
    old = []
    for run in live:
        report = copy.deepcopy(dict(run.report))
        del report["card"]["declarations_sha256"], report["card"]["signers"]
        answers = {q: entry.get("answer") for q, entry in report["questions"].items()}
        report["answers_sha256"] = sha256_hex(canonical_text(answers).encode())  # over the signature bytes
        old.append(replace(run, report=report))
    assert old[0].report["answers_sha256"] != old[1].report["answers_sha256"]
    _write_as_previous_version(store_url, old)
    with open_store(store_url) as history:
        assert history.summary(2).kinds == ("declarations", "answers")  # as the previous version saw it
        assert history.summary(2).answers_sha256 == live[1].report["answers_sha256"]  # this version's
        assert history.summary(2).declarations_sha256 == live[1].report["card"]["declarations_sha256"]
        third = history.record(interviewed())
        assert (history.summary(third).kinds, history.summary(third).changed) == (("resigned",), False)
