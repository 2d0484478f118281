"""One history chosen by URL, on either backend: the URL's rules, the commands on it, copying.

The commands run in process (`explorer.cli.main`) against the `store_url` of each backend
(tests/conftest.py): the SQLite file, and a fresh database on the session's PostgreSQL server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.store.base import HistoryError
from explorer.store.location import StoreUrlError, open_store, parse_location
from tests.support.paths import REPO
from tests.support.runs import make_run

SECRET = "hunter2-never-printed"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _signed(run: Any, n: int) -> Any:
    """A run carrying an envelope (its bytes are what a copy must keep exactly)."""
    return replace(
        run,
        attestation={
            "payloadType": "application/vnd.in-toto+json",
            "payload": f"cGF5{n}",
            "signatures": [{"keyid": "k", "sig": "c2ln" * (n + 1)}],
        },
    )


# --- the URL ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://runner:{SECRET}@db.example:5432/evidence",
        f"postgres://runner:{SECRET}@db.example/evidence?sslmode=require",
        f"postgresql://runner@db.example/evidence?password={SECRET}",
        f"postgresql://runner@db.example/evidence?sslpassword={SECRET}",
    ],
)
def test_a_literal_password_is_refused_and_never_repeated(url: str, capsys) -> None:
    with pytest.raises(StoreUrlError) as caught:
        parse_location(url)
    assert SECRET not in str(caught.value) and "env:VAR" in str(caught.value)
    code, out, err = _cli(capsys, "history", "--history", url)
    assert code == 2 and SECRET not in out + err and "never written there" in err


def test_a_password_reference_is_resolved_and_never_shown(monkeypatch) -> None:
    located = parse_location("postgresql://runner:env:IE_PG@db.example:5433/evidence?sslmode=require")
    assert located.password_ref == "env:IE_PG"
    assert located.shown == "postgresql://runner@db.example:5433/evidence"
    assert "env:" not in (located.conninfo or "") and "sslmode=require" in (located.conninfo or "")
    by_query = parse_location(
        "postgresql://runner@db/evidence?password=file:/run/secrets/pg&sslmode=verify-full"
    )
    assert by_query.password_ref == "file:/run/secrets/pg" and "password" not in (by_query.conninfo or "")

    from explorer.config.history_choice import HistoryChoiceError, choose_history

    monkeypatch.setenv("IE_PG", SECRET)
    chosen = choose_history("postgresql://runner:env:IE_PG@db.example/evidence")
    assert chosen.password == SECRET and SECRET not in chosen.shown and SECRET not in repr(chosen.location)
    monkeypatch.delenv("IE_PG")
    with pytest.raises(HistoryChoiceError, match="IE_PG is not set"):
        choose_history("postgresql://runner:env:IE_PG@db.example/evidence")


def test_sqlite_urls_and_paths(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_location(f"sqlite:///{tmp_path}/h.db").path == tmp_path / "h.db"  # four slashes: absolute
    assert parse_location("sqlite:///rel/h.db").path == Path("rel/h.db")
    assert parse_location(str(tmp_path / "x.sqlite3")).path == tmp_path / "x.sqlite3"
    assert parse_location(str(tmp_path)).path == tmp_path / "history.sqlite3"  # a folder: the file in it
    for bad in ("sqlite://", "mysql://u@h/db", "   "):
        with pytest.raises(StoreUrlError):
            parse_location(bad)


def test_flag_over_environment_over_config_over_home(tmp_path: Path, monkeypatch, capsys) -> None:
    home = tmp_path / "home"
    home.mkdir()
    paths = {name: tmp_path / f"{name}.sqlite3" for name in ("flag", "env", "config")}
    (home / "config.toml").write_text(f'history = "sqlite:///{paths["config"]}"\n', encoding="utf-8")
    for name, path in paths.items():
        with open_store(str(path)) as store:
            for _ in range({"flag": 1, "env": 2, "config": 3}[name]):
                store.record(make_run())

    def count(*argv: str) -> int:
        code, out, err = _cli(capsys, "history", "--json", "--home", str(home), *argv)
        assert code == 0, err
        return len(out.splitlines())

    monkeypatch.setenv("INTERVIEW_EXPLORER_HISTORY", str(paths["env"]))
    assert count("--history", str(paths["flag"])) == 1
    assert count() == 2
    monkeypatch.delenv("INTERVIEW_EXPLORER_HISTORY")
    assert count() == 3
    (home / "config.toml").write_text("", encoding="utf-8")
    assert count() == 0  # the home's own file


def test_a_postgresql_url_without_the_extra_names_the_install_command(tmp_path: Path) -> None:
    probe = (
        "import sys\nsys.modules['psycopg'] = None  # as if the postgres extra were not installed\n"
        "from explorer.cli import main\n"
        "sys.exit(main(['history', '--history', 'postgresql://runner@127.0.0.1:1/evidence']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "INTERVIEW_EXPLORER_HOME": str(tmp_path)},
    )
    assert done.returncode == 2, done.stderr
    assert "pip install 'interview-explorer[postgres]'" in done.stderr and "Traceback" not in done.stderr


# --- the commands on either backend ----------------------------------------------------------------------


def test_every_history_command_works_on_the_chosen_store(store_url: str, store_kind: str, capsys) -> None:
    with open_store(store_url) as store:
        first = store.record(make_run())
        second = store.record(make_run(name="Impostor", verdict="nonconformant"))
    at = ("--history", store_url)
    code, out, _ = _cli(capsys, "history", "--json", *at)
    assert code == 0 and [json.loads(line)["id"] for line in out.splitlines()] == [second, first]
    code, out, _ = _cli(capsys, "history", "--changed", *at)
    assert code == 0 and f"{second}*" in out
    code, out, _ = _cli(capsys, "show", str(first), "--json", *at)
    # `show` derives the report from the stored bytes: a synthetic card declares no interview.
    assert code == 0 and json.loads(out)["verdict"] == "not_offered"
    code, out, _ = _cli(capsys, "compare", str(first), str(second), *at)
    assert code == 1
    code, out, _ = _cli(capsys, "export", str(second), "--format", "json", *at)
    assert code == 0 and json.loads(out)["report"]["verdict"] == "nonconformant"
    code, out, err = _cli(capsys, "forget", str(first), *at)
    assert code == 0 and f"forgot run {first}" in out
    assert ("VACUUM" in err) == (store_kind == "postgresql")
    code, out, _ = _cli(capsys, "history", "--json", *at)
    assert [json.loads(line)["id"] for line in out.splitlines()] == [second]


# --- refusing what is not a history -----------------------------------------------------------------------


def test_a_postgresql_database_of_another_application_is_refused_untouched(postgres_server) -> None:
    url = postgres_server.fresh_database()
    database = url.split("?")[0].rsplit("/", 1)[1]
    postgres_server.psql(
        "CREATE TABLE notes (id int, text text); INSERT INTO notes VALUES (1, 'precious')", database
    )
    before = postgres_server.psql(
        "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY relname", database
    )
    with pytest.raises(HistoryError, match="not an Interview Explorer history"):
        open_store(url)
    after = postgres_server.psql(
        "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY relname", database
    )
    assert before == after and postgres_server.psql("SELECT text FROM notes", database).strip() == "precious"


def test_a_postgresql_history_from_a_newer_explorer_is_refused(postgres_server, capsys) -> None:
    url = postgres_server.fresh_database()
    with open_store(url) as store:
        store.record(make_run())
    database = url.split("?")[0].rsplit("/", 1)[1]
    postgres_server.psql("UPDATE interview_explorer SET version = version + 1", database)
    with pytest.raises(HistoryError, match="newer Interview Explorer"):
        open_store(url)
    code, _, err = _cli(capsys, "history", "--history", url)
    assert code == 6 and "newer Interview Explorer" in err


def test_runners_creating_one_postgresql_history_at_once_create_it_once(postgres_server) -> None:
    url = postgres_server.fresh_database()
    probe = (
        "import sys\nfrom explorer.store.location import open_store\n"
        "with open_store(sys.argv[1]) as s: print(s.mark())\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", probe, url],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    database = url.split("?")[0].rsplit("/", 1)[1]
    assert postgres_server.psql("SELECT count(*) FROM interview_explorer", database).strip() == "1"


def test_a_runner_starting_afresh_sends_no_document_the_postgresql_history_holds(postgres_server) -> None:
    url = postgres_server.fresh_database()
    database = url.split("?")[0].rsplit("/", 1)[1]
    with open_store(url) as first:
        first.record(make_run(started_at="2025-01-01T00:00:01.000Z", elapsed_ms=1.0))

    def drawn() -> str:  # every row an INSERT tries draws an id, even one ON CONFLICT skips
        return postgres_server.psql("SELECT last_value FROM documents_id_seq", database).strip()

    before = drawn()
    again = make_run(started_at="2025-01-01T00:00:02.000Z", elapsed_ms=2.0)  # the same documents
    with open_store(url) as afresh:  # another process's store: it has seen nothing stored yet
        loaded = afresh.load(afresh.record(again))
    assert loaded.report == again.report
    assert [e.response_body for e in loaded.exchanges] == [e.response_body for e in again.exchanges]
    assert drawn() == before  # nothing was sent to be inserted: the history held every document


# --- copying ---------------------------------------------------------------------------------------------


def test_a_copy_to_the_other_backend_and_back_is_proved_and_byte_exact(
    store_url: str, tmp_path: Path, request, capsys
) -> None:
    other = (
        f"sqlite:///{tmp_path / 'other.sqlite3'}"
        if store_url.startswith("postgresql")
        else _postgres_or_skip(request)
    )
    with open_store(store_url) as store:
        made = [make_run(elapsed_ms=1.0 + n) for n in range(7)]
        ids = [store.record(_signed(run, n) if n % 2 else run) for n, run in enumerate(made)]
        store.forget_run(ids[-1])  # its id must never be given again, on either side
        originals = {i: store.load(i) for i in ids[:-1]}
        changes = [r.changed for r in store.runs()]
    code, out, err = _cli(capsys, "history", "copy", "--to", other, "--history", store_url)
    assert code == 0, err
    assert "copied 6 runs" in out and "proved: 6 runs on both sides" in out
    with open_store(other) as copy:
        for run_id, run in originals.items():
            again = copy.load(run_id)
            assert again.report == run.report and again.attestation == run.attestation
            assert [e.response_body for e in again.exchanges] == [e.response_body for e in run.exchanges]
        assert copy.record(make_run()) > ids[-1]
        assert [r.changed for r in copy.runs()][1:] == changes
    back = tmp_path / "back.sqlite3"
    code, out, err = _cli(capsys, "history", "copy", "--from", other, "--to", str(back))
    assert code == 0 and "copied 7 runs" in out, err
    code, out, err = _cli(capsys, "history", "copy", "--from", other, "--to", str(back))
    assert code == 0 and "copied 0 runs (7 were there already)" in out, err


def test_a_copy_into_a_history_holding_other_runs_is_refused(store_url: str, tmp_path: Path, capsys) -> None:
    with open_store(store_url) as store:
        store.record(make_run())
    elsewhere = tmp_path / "elsewhere.sqlite3"
    with open_store(str(elsewhere)) as store:
        store.record(make_run(card_url="http://127.0.0.1:10/.well-known/agent-card.json"))
    code, out, err = _cli(capsys, "history", "copy", "--to", str(elsewhere), "--history", store_url)
    assert code == 6 and "not a copy of" in err
    code, _, err = _cli(capsys, "history", "copy", "--to", store_url, "--history", store_url)
    assert code == 2 and "same history" in err


@pytest.mark.slow  # kills a copy part way, many runs
def test_a_copy_killed_part_way_is_resumed_and_proved(store_url: str, tmp_path: Path) -> None:
    source = tmp_path / "source.sqlite3"
    with open_store(str(source)) as store:
        for n in range(1500):
            store.record(make_run(answered_name=f"n{n}" if n % 50 == 0 else None, elapsed_ms=n / 3))
    argv = [sys.executable, "-m", "explorer", "history", "copy", "--from", str(source), "--to", store_url]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    with open_store(store_url) as target:
        while target.last_run_id() < 400 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        part = target.last_run_id()
    assert 0 < part < 1500, "the copy was not caught part way"
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "proved: 1500 runs on both sides" in done.stdout
    assert f"({part} were there already)" in done.stdout or "were there already" in done.stdout


def _postgres_or_skip(request) -> str:
    return request.getfixturevalue("postgres_server").fresh_database()


def test_the_explorer_opens_on_the_store_the_command_line_names(
    store_url: str, store_kind: str, capsys
) -> None:
    from explorer.cli import _tui_parser
    from explorer.tui.launch import build_context

    with open_store(store_url) as store:
        first = store.record(make_run())
    context = build_context(_tui_parser().parse_args(["--history", store_url]))
    try:
        history = context.history()
        assert history.kind == store_kind and [r.id for r in history.runs()] == [first]
        assert [row.run_id for row in context.rows()] == [first]
    finally:
        context.close()
    code, out, err = _cli(capsys, "--history", f"postgresql://alice:{SECRET}@db.example/evidence")
    assert code == 2 and SECRET not in out + err and "never written there" in err


def test_a_password_reaches_the_server_only_from_a_reference_or_libpq(
    postgres_server, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Over TCP the test server asks for the role's password (SCRAM), as a team's server does."""
    postgres_server.role("runner", SECRET)
    database = postgres_server.fresh_database(owner="runner").split("?")[0].rsplit("/", 1)[1]
    tcp = f"127.0.0.1:{postgres_server.port}/{database}"
    secret_file = tmp_path / "pg-password"
    secret_file.write_text(SECRET + "\n")
    monkeypatch.setenv("IE_PG_PASSWORD", SECRET)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    for url in (
        f"postgresql://runner:env:IE_PG_PASSWORD@{tcp}",
        f"postgresql://runner@{tcp}?password=file:{secret_file}",
    ):
        code, out, err = _cli(capsys, "history", "--json", "--history", url)
        assert code == 0 and out == "", err
    monkeypatch.setenv("PGPASSWORD", SECRET)  # libpq's own
    code, out, err = _cli(capsys, "history", "--history", f"postgresql://runner@{tcp}")
    assert code == 0 and "no runs recorded yet" in out, err
    monkeypatch.delenv("PGPASSWORD")
    monkeypatch.setenv("IE_PG_PASSWORD", "wrong-" + SECRET)
    code, out, err = _cli(capsys, "history", "--history", f"postgresql://runner:env:IE_PG_PASSWORD@{tcp}")
    assert code == 6 and "password authentication failed" in err and SECRET not in out + err
    code, out, err = _cli(capsys, "history", "--history", f"postgresql://runner@{tcp}")
    assert code == 6 and "cannot connect to the history at postgresql://runner@" in err
