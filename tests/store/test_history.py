"""The history store: exact round trips, dedup, listing, forgetting, refusing files it does not own."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import zlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from explorer.core.run import REDACTED
from explorer.store import sqlite_schema as schema_module
from explorer.store.base import ChangeMark, HistoryError, RunQuery
from explorer.store.sqlite import HISTORY_FILE, History
from tests.support.paths import REPO
from tests.support.runs import CARD_URL, SECRET, make_run


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _tick(n: int) -> dict:
    """Arguments that change only what differs between two runs of an unchanged agent."""
    return {
        "started_at": f"2025-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z",
        "elapsed_ms": 1.5 + n * 0.37,
    }


def _file_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return (
            conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
        )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_run_comes_back_exactly_as_recorded_minus_secrets(home: Path) -> None:
    original = make_run(**_tick(7))
    with History.open(home) as history:
        run_id = history.record(original)
        loaded = history.load(run_id)
    assert loaded.report == original.report
    assert list(loaded.report) == list(original.report)  # member order survives
    assert loaded.keys == original.keys
    assert len(loaded.exchanges) == len(original.exchanges)
    for got, sent in zip(loaded.exchanges, original.exchanges, strict=True):
        assert got.response_body == sent.response_body
        assert got.request_body == sent.request_body
        assert (got.started_at, got.elapsed_ms, got.status, got.purpose) == (
            sent.started_at,
            sent.elapsed_ms,
            sent.status,
            sent.purpose,
        )
        assert [n for n, _ in got.response_headers] == [n for n, _ in sent.response_headers]
        assert got.header("date") == sent.header("date")
    headers = dict(loaded.exchanges[0].request_headers)
    assert headers["Authorization"] == REDACTED
    assert dict(loaded.exchanges[1].request_headers)["X-Api-Key"] == REDACTED
    assert dict(loaded.exchanges[1].response_headers)["Set-Cookie"] == REDACTED


def test_no_secret_reaches_the_database_file_even_compressed(home: Path) -> None:
    with History.open(home) as history:
        history.record(make_run())
    conn = sqlite3.connect(home / HISTORY_FILE)
    blobs = [
        zlib.decompress(b) if e == 1 else b for e, b in conn.execute("SELECT encoding, body FROM documents")
    ]
    blobs += [zlib.decompress(v) for (v,) in conn.execute("SELECT volatile FROM runs")]
    conn.close()
    everything = b"".join(blobs) + (home / HISTORY_FILE).read_bytes()
    for secret in (SECRET, "key-should-vanish", "session=abc"):
        assert secret.encode() not in everything


def test_unchanged_runs_share_their_documents_and_cost_little(home: Path) -> None:
    path = home / HISTORY_FILE
    with History.open(home) as history:
        history.record(make_run(**_tick(0)))
        documents = history.stats()["documents"]
        size_after_one = _file_bytes(path)
        for n in range(1, 201):
            history.record(make_run(**_tick(n)))
        assert history.stats()["documents"] == documents  # nothing new was stored but rows
        assert history.stats()["runs"] == 201
        per_run = (_file_bytes(path) - size_after_one) / 200
    assert per_run < 2048, f"{per_run:.0f} bytes per unchanged run"


def test_a_changed_answer_adds_only_the_changed_documents(home: Path) -> None:
    with History.open(home) as history:
        history.record(make_run())
        before = history.stats()["documents"]
        history.record(make_run(answered_name="Someone Else"))
        added = history.stats()["documents"] - before
    # the identity answer body, the report and the exchange list: not the card, not the other answers
    assert 1 <= added <= 4


def test_runs_are_listed_newest_first_with_a_churn_marker(home: Path) -> None:
    other = "http://127.0.0.1:10/.well-known/agent-card.json"
    with History.open(home) as history:
        a1 = history.record(make_run(**_tick(1)))
        a2 = history.record(make_run(**_tick(2)))
        b1 = history.record(make_run(card_url=other, name="Other"))
        a3 = history.record(make_run(answered_name="Changed", verdict="nonconformant"))
        a4 = history.record(make_run(answered_name="Changed", verdict="nonconformant", **_tick(4)))
        a5 = history.record(make_run(**_tick(5)))
        listed = history.runs()
        assert [r.id for r in listed] == [a5, a4, a3, b1, a2, a1]
        mine = {r.id: r for r in history.runs(CARD_URL)}
        assert list(mine) == [a5, a4, a3, a2, a1]
        assert [mine[i].changed for i in (a1, a2, a3, a4, a5)] == [False, False, True, False, True]
        assert history.runs(other)[0].changed is False  # another agent's runs never count
        assert [r.id for r in history.runs(CARD_URL, limit=2)] == [a5, a4]
        assert history.summary(a3) == mine[a3]
        top = listed[0]
        assert (top.verdict, top.standing, top.role, top.runner, top.name) == (
            "conformant",
            "claim",
            "self",
            "tester",
            "Steady Agent",
        )
        assert top.card_sha256 and len(top.card_sha256) == 64
        agents = history.agents()
        assert [(a.agent, a.runs, a.last_run_id) for a in agents] == [(CARD_URL, 5, a5), (other, 1, b1)]
        assert history.runs("http://nowhere/") == []


def test_each_run_is_stamped_by_the_history_clock_in_utc(home: Path) -> None:
    moments = iter(
        [
            datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC),
            datetime(2026, 11, 30, 13, 30, 0, tzinfo=timezone(timedelta(hours=1))),  # 12:30 UTC
        ]
    )
    with History.open(home, clock=lambda: next(moments)) as history:
        first, second = history.record(make_run()), history.record(make_run(**_tick(2)))
        assert history.summary(first).recorded_at == "2026-11-30T12:00:00.123Z"
        assert history.summary(second).recorded_at == "2026-11-30T12:30:00.000Z"
    with History.open(home) as history:  # the system clock by default
        third = history.record(make_run(**_tick(3)))
        stamped = datetime.fromisoformat(history.summary(third).recorded_at.replace("Z", "+00:00"))
        assert abs((datetime.now(UTC) - stamped).total_seconds()) < 60


def test_agents_can_be_named_by_url_base_url_or_name(home: Path) -> None:
    with History.open(home) as history:
        history.record(make_run())
        history.record(make_run(card_url="http://127.0.0.1:10/.well-known/agent-card.json", name="Other"))
        assert history.match_agents(CARD_URL) == [CARD_URL]
        assert history.match_agents("http://127.0.0.1:9") == [CARD_URL]
        assert history.match_agents("http://127.0.0.1:9/") == [CARD_URL]
        assert history.match_agents("Other") == ["http://127.0.0.1:10/.well-known/agent-card.json"]
        assert history.match_agents("http://127.0.0.1:1") == []


def test_forgetting_deletes_the_run_and_its_unshared_documents(home: Path) -> None:
    with History.open(home) as history:
        keep = history.record(make_run())
        baseline = history.stats()["documents"]
        gone = history.record(make_run(answered_name="Only in this run"))
        history.forget_run(gone)
        assert history.stats()["documents"] == baseline
        assert [r.id for r in history.runs()] == [keep]
        assert history.load(keep).report == make_run().report
        with pytest.raises(HistoryError, match=f"no run {gone}"):
            history.load(gone)
        with pytest.raises(HistoryError, match=f"no run {gone}"):
            history.forget_run(gone)
        again = history.record(make_run())
        assert again > gone  # ids are never reused, so an old id never names a new run
        assert history.forget_agent(CARD_URL) == 2
        assert history.forget_agent(CARD_URL) == 0
        assert history.runs() == [] and history.agents() == []
        assert history.stats()["documents"] == 0


def test_history_open_uses_the_environment_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("INTERVIEW_EXPLORER_HOME", str(tmp_path / "env-home"))
    with History.open() as history:
        history.record(make_run())
    assert (tmp_path / "env-home" / HISTORY_FILE).exists()


def test_random_bytes_at_the_path_are_refused_and_never_overwritten(home: Path) -> None:
    home.mkdir()
    path = home / HISTORY_FILE
    path.write_bytes(os.urandom(8192))
    before = _digest(path)
    with pytest.raises(HistoryError, match="not an Interview Explorer history"):
        History.open(home)
    assert _digest(path) == before
    assert not Path(str(path) + "-wal").exists()


def test_a_damaged_sqlite_file_is_refused_with_a_message(home: Path) -> None:
    home.mkdir()
    path = home / HISTORY_FILE
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    before = _digest(path)
    with pytest.raises(HistoryError, match="left untouched"):
        History.open(home)
    assert _digest(path) == before


def test_another_applications_database_is_refused_and_left_alone(home: Path) -> None:
    home.mkdir()
    path = home / HISTORY_FILE
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        conn.execute("INSERT INTO notes(text) VALUES ('precious')")
    conn.close()
    before = _digest(path)
    with pytest.raises(HistoryError, match="another application"):
        History.open(home)
    assert _digest(path) == before
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT text FROM notes").fetchall() == [("precious",)]
    conn.close()


def test_a_history_from_a_newer_explorer_is_refused(home: Path) -> None:
    with History.open(home) as history:
        history.record(make_run())
    with sqlite3.connect(home / HISTORY_FILE) as conn:
        conn.execute(f"PRAGMA user_version={schema_module.SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(HistoryError, match="newer Interview Explorer"):
        History.open(home)


def test_a_folder_at_the_path_is_refused(home: Path) -> None:
    (home / HISTORY_FILE).mkdir(parents=True)
    with pytest.raises(HistoryError, match="folder"):
        History.open(home)


def test_a_tampered_document_is_reported_not_returned(home: Path) -> None:
    with History.open(home) as history:
        run_id = history.record(make_run())
    with sqlite3.connect(home / HISTORY_FILE) as conn:
        conn.execute("UPDATE documents SET body = zeroblob(length(body)) WHERE encoding = 1")
    conn.close()
    with History.open(home) as history, pytest.raises(HistoryError, match="damaged"):
        history.load(run_id)


def test_a_report_that_is_not_json_is_refused(home: Path) -> None:
    bad = replace(make_run(), report={"verdict": "conformant", "oops": object()})
    with History.open(home) as history:
        with pytest.raises(HistoryError, match="not JSON"):
            history.record(bad)
        assert history.runs() == []


# --- migrations ---------------------------------------------------------------------------------


def _create_version_1(path: Path) -> None:
    """A database exactly as the first released explorer created it, from the stored v1 schema."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("BEGIN")
    for statement in schema_module.MIGRATIONS[1]:
        conn.execute(statement)
    conn.execute(f"PRAGMA application_id={schema_module.APPLICATION_ID}")
    conn.execute("PRAGMA user_version=1")
    conn.execute("COMMIT")
    conn.close()


def test_a_version_1_database_opens_and_keeps_working(home: Path) -> None:
    _create_version_1(home / HISTORY_FILE)
    with History.open(home) as history:
        run_id = history.record(make_run())
        assert history.load(run_id).report == make_run().report
    with sqlite3.connect(home / HISTORY_FILE) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == schema_module.SCHEMA_VERSION
    conn.close()


def test_migrations_run_forward_from_version_1_and_keep_every_run(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _create_version_1(home / HISTORY_FILE)
    with History.open(home) as history:
        run_id = history.record(make_run())
    nxt = schema_module.SCHEMA_VERSION + 1  # a future version, after every released one
    migrations = dict(schema_module.MIGRATIONS)
    migrations[nxt] = (
        "ALTER TABLE runs ADD COLUMN note TEXT",
        "CREATE INDEX runs_by_verdict ON runs(verdict)",
    )
    monkeypatch.setattr(schema_module, "MIGRATIONS", migrations)
    monkeypatch.setattr(schema_module, "SCHEMA_VERSION", nxt)
    with History.open(home) as history:
        assert history.load(run_id).report == make_run().report
        history.record(make_run())
    with sqlite3.connect(home / HISTORY_FILE) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == nxt
        assert "note" in [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
    conn.close()


def test_a_failing_migration_changes_nothing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _create_version_1(home / HISTORY_FILE)
    with History.open(home) as history:
        run_id = history.record(make_run())
    current = schema_module.SCHEMA_VERSION
    migrations = dict(schema_module.MIGRATIONS)
    migrations[current + 1] = ("ALTER TABLE runs ADD COLUMN note TEXT", "THIS IS NOT SQL")
    monkeypatch.setattr(schema_module, "MIGRATIONS", migrations)
    monkeypatch.setattr(schema_module, "SCHEMA_VERSION", current + 1)
    with pytest.raises(HistoryError, match=f"from history version {current} to {current + 1}"):
        History.open(home)
    monkeypatch.undo()
    with History.open(home) as history:
        assert history.load(run_id).report == make_run().report
    with sqlite3.connect(home / HISTORY_FILE) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == current
        assert "note" not in [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
    conn.close()


def _record_version_2(path: Path, runs: list) -> None:
    """Rows exactly as a version 2 explorer wrote them (no `changed`, no agent counters)."""
    from explorer.store.codec import encode_run, put_document

    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for statement in schema_module.MIGRATIONS[2]:
        conn.execute(statement)
    for n, run in enumerate(runs):
        encoded = encode_run(run)
        skeleton = put_document(conn, encoded.exchanges)[0]
        for body in encoded.bodies:
            child = put_document(conn, body)[0]
            conn.execute("INSERT OR IGNORE INTO doc_links VALUES (?, ?)", (skeleton, child))
        url = run.report["card"]["url"]
        name = run.report["card"]["name"]
        conn.execute("INSERT OR IGNORE INTO agents(agent, name) VALUES (?, ?)", (url, name))
        agent_id = conn.execute("SELECT id FROM agents WHERE agent = ?", (url,)).fetchone()[0]
        conn.execute(
            """INSERT INTO runs(agent_id, recorded_at, verdict, standing, role, runner, card_sha256,
                   answers_sha256, report_doc, exchanges_doc, keys_doc, volatile)
               VALUES (?, ?, ?, 'claim', 'self', 'tester', ?, ?, ?, ?, ?, ?)""",
            (
                agent_id,
                f"2025-01-0{n + 1}T00:00:00.000Z",
                run.report["verdict"],
                run.report["card"]["sha256"],
                run.report["answers_sha256"],
                put_document(conn, encoded.report)[0],
                skeleton,
                put_document(conn, encoded.keys)[0],
                encoded.volatile,
            ),
        )
    conn.execute("PRAGMA user_version=2")
    conn.execute("COMMIT")
    conn.close()


def test_a_version_2_history_gains_changes_counters_and_signatures(home: Path) -> None:
    _create_version_1(home / HISTORY_FILE)
    runs = [
        make_run(**_tick(1)),
        make_run(verdict="churn", **_tick(2)),  # the verdict alone changed
        make_run(verdict="churn", **_tick(3)),
        make_run(card_url="http://127.0.0.1:10/.well-known/agent-card.json", name="Other"),
    ]
    _record_version_2(home / HISTORY_FILE, runs)
    with History.open(home) as history:
        assert [r.changed for r in history.runs(CARD_URL)] == [False, True, False]
        fleet = {row.agent: row for row in history.fleet()}
        mine = fleet[CARD_URL]
        counters = (mine.runs, mine.last_run_id, mine.churn, mine.changes, mine.last_change_at)
        assert counters == (3, 3, 2, 1, "2025-01-02T00:00:00.000Z")  # two churn verdicts, one change
        assert mine.signature == "verified" and mine.verdict == "churn"
        assert [r.id for r in history.query(RunQuery(changed=True))] == [2]
        assert history.mark() == ChangeMark(4, 4, 0)
        assert history.record(make_run(**_tick(4))) == 5
        assert history.summary(5).changed  # churn -> conformant


def test_a_second_opening_in_one_process_keeps_every_connection_seeing_other_processes(home: Path) -> None:
    """Opening the history again in a process that holds it open (the TUI's screens, a test)
    must not drop that process's locks: another process closing its connection would then take
    itself for the last one, checkpoint and delete the WAL, and the first connection would read a
    frozen snapshot, never seeing another runner's runs again."""
    import subprocess
    import sys

    first = History.open(home)
    for n in range(2):
        first.record(make_run(**_tick(n)))
    second = History.open(home)  # the same file, opened again in this process
    writer = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from tests.support.runs import make_run\n"
        "from explorer.store.sqlite import History\n"
        "with History.open(sys.argv[2]) as h:\n"
        "    h.record(make_run(card_url='http://127.0.0.1:12/.well-known/agent-card.json'))\n"
    )
    try:
        for expected in (3, 4):
            subprocess.run([sys.executable, "-c", writer, str(REPO), str(home)], check=True, timeout=60)
            assert first.last_run_id() == expected and second.last_run_id() == expected
            assert first.mark() == ChangeMark(expected, expected, 0)
    finally:
        first.close()
        second.close()
