"""The history commands end to end: history, show, compare, export, forget offline; replay and watch live.

Offline commands run on synthetic runs recorded in a temporary home. The live ones run against
the reference agents on 127.0.0.1 (the session `fleet`): two runs of the churning agent differ in
`compare`, `watch` on the flaky and churning agents prints one line per run with what changed,
and a JSON export re-verifies offline to the same verdict.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.store.sqlite import HISTORY_FILE, History
from tests.support.paths import REPO
from tests.support.runs import CARD_URL, SECRET, make_run

pytestmark = pytest.mark.slow  # the history commands in subprocesses against the fleet


def _ndjson(out: str) -> list[dict[str, Any]]:
    """`history --json` prints one run per line."""
    return [json.loads(line) for line in out.splitlines()]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path: Path) -> str:
    return str(tmp_path / "home")


@pytest.fixture
def recorded(home: str) -> list[int]:
    """Runs 1-3: the steady agent twice, then the same agent answering a wrong name."""
    with History.open(home) as history:
        return [
            history.record(make_run(started_at="2025-01-01T00:00:00.000Z")),
            history.record(make_run(started_at="2025-01-01T00:01:00.000Z", elapsed_ms=9.0)),
            history.record(make_run(answered_name="Impostor", verdict="nonconformant")),
        ]


# --- offline commands ---------------------------------------------------------------------------


def test_history_show_and_forget_accept_the_names_verify_does(capsys, home, tmp_path) -> None:
    """A configured agent's name, a reference agent's name (any demo's port) and a card name in
    any case find the same runs a card URL does."""
    with History.open(home) as history:
        first = history.record(make_run(name="Stonework Books (Churning)"))
        second = history.record(
            make_run(name="Stonework Books (Churning)", answered_name="Other", verdict="nonconformant")
        )
    Path(home, "config.toml").write_text('[agents.books]\nurl = "http://127.0.0.1:9/"\n', encoding="utf-8")
    for name in ("churning", "books", "stonework books (churning)", CARD_URL):
        code, out, err = _cli(capsys, "history", name, "--json", "--home", home)
        assert code == 0, (name, err)
        assert [r["id"] for r in _ndjson(out)] == [second, first], name
    code, out, err = _cli(capsys, "show", "churning", "--home", home)
    assert code == 0 and out.startswith(f"run {second},"), err
    code, _, err = _cli(capsys, "show", "nobody", "--home", home)
    assert code == 6 and "no runs recorded for nobody" in err
    code, out, err = _cli(capsys, "forget", "books", "--home", home)
    assert code == 0 and "forgot 2 runs" in out, err
    code, _, err = _cli(capsys, "history", "churning", "--home", home)
    assert code == 6 and "no runs recorded for churning" in err


def test_history_lists_runs_newest_first_with_digests_and_churn_marker(capsys, home, recorded) -> None:
    code, out, _ = _cli(capsys, "history", "--home", home)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["ID", "RECORDED", "(UTC)"]
    rows = [line for line in lines[1:] if line.strip() and line.strip()[0].isdigit()]
    assert [r.split()[0] for r in rows] == ["3*", "2", "1"]
    assert "nonconformant" in rows[0] and "claim" in rows[0] and CARD_URL in rows[0]
    assert "changed since that agent's previous run" in out

    code, out, _ = _cli(capsys, "history", "--json", "--home", home)
    data = _ndjson(out)
    assert [r["id"] for r in data] == recorded[::-1]
    assert data[0]["changed"] is True and data[1]["changed"] is False
    assert {"id", "recorded_at", "agent", "verdict", "standing", "card_sha256", "answers_sha256"} <= set(
        data[0]
    )

    code, out, _ = _cli(capsys, "history", "http://127.0.0.1:9", "--json", "--home", home)
    assert code == 0 and len(_ndjson(out)) == 3
    code, out, err = _cli(capsys, "history", "http://elsewhere.example", "--home", home)
    assert code == 6 and "no runs recorded for http://elsewhere.example" in err


def test_history_of_an_empty_home_says_so(capsys, home) -> None:
    code, out, _ = _cli(capsys, "history", "--home", home)
    assert code == 0 and "no runs recorded yet" in out
    code, out, _ = _cli(capsys, "history", "--json", "--home", home)
    assert code == 0 and out == ""


@pytest.mark.parametrize(
    "argv",
    [("history",), ("show", "1"), ("forget", "1"), ("replay", "1"), ("compare", "1", "2"), ("export", "1")],
)
def test_a_mistyped_history_path_is_an_error_and_creates_nothing(capsys, home, tmp_path, argv) -> None:
    wrong = tmp_path / "no" / "such" / "history.db"
    code, _, err = _cli(capsys, *argv, "--history", str(wrong), "--home", home)
    assert code == 6, err
    assert "the file does not exist; check the path" in err and str(wrong) in err
    assert not (tmp_path / "no").exists()


def test_show_prints_what_the_stored_bytes_give_not_what_was_written_down(capsys, home, recorded) -> None:
    # Run 3's report says nonconformant, but its exchanges hold a card without the interview
    # extension: a history is a file too, and a run is shown by what its bytes give.
    code, out, _ = _cli(capsys, "show", "3", "--json", "--home", home)
    assert code == 0
    shown = json.loads(out)
    assert shown["verdict"] == "not_offered" and shown["target"] == CARD_URL
    unsigned = {"status": "unsigned", "keyid": None, "runner": "tester", "role": "self"}
    assert shown["run_attestation"] == unsigned
    assert [f["code"] for f in shown["findings"]] == ["card_unsigned", "interview_not_declared"]
    code, out, _ = _cli(capsys, "show", "3", "--home", home)
    assert code == 0
    assert out.startswith("run 3, recorded ") and CARD_URL in out.splitlines()[0]
    assert (
        "verdict: not_offered" in out
        and "standing: claim: run by tester, no independent role declared" in out
    )


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (("show", "99"), 6, "no run 99"),
        (("show", "abc"), 6, "no runs recorded for abc"),
        (("show", "0"), 2, "positive"),
        (("compare", "1", "99"), 6, "no run 99"),
        (("export", "99"), 6, "no run 99"),
        (("forget", "99"), 6, "no run 99"),
        (("forget", "http://nobody.example/"), 6, "no runs recorded"),
        (("replay", "99"), 6, "no run 99"),
        (("watch", "99", "--every", "1"), 6, "no run 99"),
        (("watch", "1", "--every", "0"), 2, "more than 0"),
        (("history", "--limit", "0"), 2, "--limit"),
    ],
)
def test_bad_ids_and_arguments_get_clear_messages_and_statuses(
    capsys, home, recorded, argv, code, message
) -> None:
    got, out, err = _cli(capsys, *argv, "--home", home)
    assert got == code
    assert message in err
    assert "Traceback" not in out + err


@pytest.mark.timeout(120)
def test_compare_exits_0_when_identical_and_1_with_the_differences(capsys, fleet, home, tmp_path) -> None:
    steady, drifting = fleet.agents["steady"], fleet.agents["drifting"]
    for agent in (steady, steady, drifting):
        _verify(capsys, home, agent, _keys_file(tmp_path, agent))
    code, out, _ = _cli(capsys, "compare", "1", "2", "--home", home)
    assert code == 0 and "identical" in out
    code, out, _ = _cli(capsys, "compare", "2", "3", "--home", home)
    assert code == 1
    assert "verdict: conformant -> nonconformant" in out
    assert "changed card /defaultOutputModes (status match -> mismatch)" in out
    assert 'after:  ["application/json"«,"text/html"»]' in out
    assert "finding + projection_mismatch usage /defaultOutputModes" in out
    code, out, _ = _cli(capsys, "compare", "2", "3", "--json", "--home", home)
    data = json.loads(out)
    assert code == 1 and data["identical"] is False
    assert (data["run_a"]["id"], data["run_b"]["id"]) == (2, 3)
    assert (data["run_a"]["verdict"], data["run_b"]["verdict"]) == ("conformant", "nonconformant")


def test_export_to_stdout_and_to_files_never_leaks_a_secret(capsys, home, recorded, tmp_path) -> None:
    code, out, _ = _cli(capsys, "export", "3", "--home", home)
    assert code == 0 and json.loads(out)["report"]["verdict"] == "nonconformant"
    for what, name in (("Markdown report", "t.md"), ("HTML report", "t.html"), ("JSON transcript", "t.json")):
        target = tmp_path / name
        code, _, err = _cli(capsys, "export", "3", "-o", str(target), "--home", home)
        assert code == 0 and f"wrote the {what} of run 3" in err
        text = target.read_text(encoding="utf-8")
        assert SECRET not in text and "key-should-vanish" not in text
    assert (tmp_path / "t.html").read_text().startswith("<!DOCTYPE html>")
    code, out, _ = _cli(capsys, "export", "3", "--format", "md", "--home", home)
    assert code == 0 and out.startswith("# Interview transcript")
    code, _, err = _cli(capsys, "export", "3", "-o", str(tmp_path), "--home", home)
    assert code == 1 and "cannot write" in err


def test_export_keeps_an_existing_file_unless_forced(capsys, home, recorded, tmp_path) -> None:
    target = tmp_path / "t.md"
    target.write_text("mine", encoding="utf-8")
    code, _, err = _cli(capsys, "export", "3", "-o", str(target), "--home", home)
    assert code == 1 and "already exists; choose another file or pass --force to replace it" in err
    assert target.read_text(encoding="utf-8") == "mine"
    code, _, err = _cli(capsys, "export", "3", "-o", str(target), "--force", "--home", home)
    assert code == 0 and target.read_text(encoding="utf-8").startswith("# Interview transcript")


def test_an_unsigned_run_exported_as_intoto_is_one_usage_error_to_a_file_or_to_stdout(
    home, recorded, tmp_path
) -> None:
    """The README's table: the same refusal gets the same status wherever the export was to go;
    1 stays for a file that cannot be written."""
    envelope = tmp_path / "run.intoto.json"
    for target in ([], ["-o", str(envelope)]):
        done = subprocess.run(
            [sys.executable, "-m", "explorer", "export", "1", "--format", "intoto", *target, "--home", home],
            capture_output=True, text=True, cwd=REPO,
        )  # fmt: skip
        assert done.returncode == 2, (target, done.stderr)
        assert "not signed" in done.stderr and done.stdout == ""
    assert not envelope.exists() and not list(tmp_path.glob(".*.tmp"))


def test_forget_a_run_then_an_agent(capsys, home, recorded) -> None:
    code, out, _ = _cli(capsys, "forget", "2", "--home", home)
    assert code == 0 and "forgot run 2" in out
    code, out, _ = _cli(capsys, "history", "--json", "--home", home)
    assert [r["id"] for r in _ndjson(out)] == [3, 1]
    code, out, _ = _cli(capsys, "forget", CARD_URL, "--home", home)
    assert code == 0 and "forgot 2 runs" in out
    code, out, _ = _cli(capsys, "history", "--json", "--home", home)
    assert out == ""


def test_forget_refuses_an_agent_name_that_matches_several(capsys, home) -> None:
    with History.open(home) as history:
        history.record(make_run(card_url="http://127.0.0.1:9/a/.well-known/agent-card.json"))
        history.record(make_run(card_url="http://127.0.0.1:9/b/.well-known/agent-card.json"))
    code, _, err = _cli(capsys, "forget", "http://127.0.0.1:9", "--home", home)
    assert code == 2 and "several agents" in err
    with History.open(home) as history:
        assert len(history.runs()) == 2


def test_a_foreign_file_in_home_is_reported_not_overwritten(capsys, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / HISTORY_FILE).write_bytes(b"not a database at all" * 100)
    for argv in (("history",), ("show", "1"), ("export", "1"), ("forget", "1"), ("compare", "1", "2")):
        code, out, err = _cli(capsys, *argv, "--home", str(home))
        assert code == 6, argv
        assert "not an Interview Explorer history" in err and "Traceback" not in err
    assert (home / HISTORY_FILE).read_bytes() == b"not a database at all" * 100


def test_history_commands_never_import_textual(home, recorded) -> None:
    probe = (
        "import sys\nfrom explorer.cli import main\n"
        "for argv in (['history'], ['show', '1'], ['compare', '1', '2'],\n"
        "             ['export', '1', '--format', 'md'], ['forget', '2']):\n"
        f"    main(argv + ['--home', {home!r}])\n"
        "assert 'textual' not in sys.modules, 'textual was imported'\n"
        "assert 'rich' not in sys.modules, 'rich was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_output_survives_a_terminal_that_cannot_encode_the_agents_text(tmp_path) -> None:
    """An agent's name is the agent's choice; a latin-1 or ASCII terminal must not crash on it."""
    home = str(tmp_path / "home")
    with History.open(home) as history:
        history.record(make_run(name="Stønework ✓ 名前"))
    argvs = [["history"], ["show", "1"], ["show", "1", "--json"], ["compare", "1", "1"]]
    probe = (
        "import json, sys\nfrom explorer.cli import main\n"
        "codes = [main(argv + ['--home', sys.argv[2]]) for argv in json.loads(sys.argv[1])]\n"
        "print(json.dumps(codes), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(argvs), home],
        cwd=REPO,
        env={**os.environ, "PYTHONIOENCODING": "ascii:strict"},
        capture_output=True,
        timeout=60,
    )
    err = done.stderr.decode("ascii", errors="replace")
    assert done.returncode == 0 and "Traceback" not in err, err
    assert json.loads(err.strip().splitlines()[-1]) == [0, 0, 0, 0]
    out = done.stdout.decode("ascii")  # every byte written is ASCII
    assert "St?nework ? ??" in out  # text for people: unencodable characters replaced
    assert "St\\u00f8nework \\u2713 \\u540d\\u524d" in out  # JSON: escaped, still exact


# --- live: replay, watch, and offline re-verification ---------------------------------------------


def _keys_file(tmp_path: Path, agent: Any) -> str:
    path = tmp_path / f"{agent.name}.jwks"
    path.write_text(json.dumps(agent.jwks), encoding="utf-8")
    return str(path)


def _verify(capsys, home: str, agent: Any, keys: str, *extra: str) -> dict[str, Any]:
    code, out, err = _cli(capsys, "verify", agent.base_url, "--json", "--keys", keys, "--home", home, *extra)
    assert "recorded as run" in err, err
    return json.loads(out)


@pytest.mark.timeout(120)
def test_two_runs_against_the_churning_agent_show_the_change_in_compare(
    capsys, fleet, home, tmp_path
) -> None:
    agent = fleet.agents["churning"]
    keys = _keys_file(tmp_path, agent)
    first = _verify(capsys, home, agent, keys)
    second = _verify(capsys, home, agent, keys)
    assert first["verdict"] == second["verdict"] == "churn"
    assert first["card"]["sha256"] != second["card"]["sha256"]
    code, out, _ = _cli(capsys, "compare", "1", "2", "--home", home)
    assert code == 1
    assert f"card.sha256: {first['card']['sha256'][:12]} -> {second['card']['sha256'][:12]}" in out
    assert "answers_sha256:" in out
    assert "changed card /skills/1/description" in out
    # Where the value changes: a window around the first difference, in « », with ^ carets under.
    lines = out.splitlines()
    at = lines.index(next(line for line in lines if "changed card /skills/1/description" in line))
    before, carets, after = lines[at + 1], lines[at + 2], lines[at + 3]
    assert before.lstrip().startswith("before: ") and after.lstrip().startswith("after:  ")
    assert "«" in before and "»" in before and "«" in after
    assert set(carets.strip()) == {"^"} and carets.index("^") == before.index("«")
    code, out, _ = _cli(capsys, "history", "--home", home)
    assert out.splitlines()[1].split()[0] == "2*"  # the churn marker, in the list itself


@pytest.mark.timeout(120)
def test_replay_runs_the_same_interview_again_and_reports_the_change(capsys, fleet, home, tmp_path) -> None:
    steady = fleet.agents["steady"]
    keys = _keys_file(tmp_path, steady)
    first = _verify(
        capsys,
        home,
        steady,
        keys,
        "--as",
        "independent",
        "--runner",
        "auditor",
        "--header",
        f"Authorization: {SECRET}",
    )
    assert first["verdict"] == "conformant" and first["card"]["signature"]["status"] == "verified"
    who = ("--keys", keys, "--as", "independent", "--runner", "auditor")  # yours, never the run's
    code, out, err = _cli(capsys, "replay", "1", *who, "--home", home)
    assert code == 0, err
    assert "standing: evidence: run by an independent party (auditor)" in out
    assert "since run 1" in out and "identical" in out
    assert "recorded as run 2" in err
    code, out, err = _cli(capsys, "replay", "1", "--no-history", "--home", home)
    assert code == 0, err  # without your keys and your role: a claim, its signature unverifiable
    assert "no independent role declared" in out and "signature: unverifiable" in out
    code, out, _ = _cli(capsys, "replay", "1", *who, "--json", "--no-history", "--home", home)
    data = json.loads(out)
    assert code == 0 and data["run_id"] is None and data["comparison"]["identical"] is True
    assert data["report"]["ran_by"] == {"name": "auditor", "role": "independent"}
    with History.open(home) as history:
        assert len(history.runs()) == 2
        text = "".join(json.dumps(history.load(i).to_transcript()) for i in (1, 2))
    assert SECRET not in text


@pytest.mark.timeout(120)
def test_replay_exits_like_verify(capsys, fleet, home, tmp_path) -> None:
    churning = fleet.agents["churning"]
    _verify(capsys, home, churning, _keys_file(tmp_path, churning))
    code, out, _ = _cli(capsys, "replay", "1", "--home", home)
    assert code == 5 and "verdict: churn" in out


@pytest.mark.timeout(120)
def test_watch_prints_one_line_per_run_with_what_changed(capsys, fleet, home, tmp_path) -> None:
    churning = fleet.agents["churning"]
    code, out, err = _cli(
        capsys,
        "watch",
        churning.base_url,
        "--every",
        "0.1",
        "--count",
        "3",
        "--keys",
        _keys_file(tmp_path, churning),
        "--home",
        home,
    )
    assert code == 5, err
    lines = out.splitlines()
    assert len(lines) == 3
    assert "run 1  churn" in lines[0] and "first run" in lines[0]
    for line in lines[1:]:
        assert "CHANGED since run" in line and "card.sha256" in line and "identity: 2 changed" in line
        assert "findings: card_changed, churn" in line


def test_watch_counts_its_runs_in_words(capsys, fleet, home, tmp_path) -> None:
    steady = fleet.agents["steady"]
    keys = _keys_file(tmp_path, steady)
    for count, words in (("1", "1 run"), ("2", "2 runs")):
        args = ("watch", steady.card_url, "--keys", keys, "--every", "0.05", "--count", count, "--home", home)
        _, _, err = _cli(capsys, *args)
        assert f"every 0.05 s, {words}\n" in err, err


@pytest.mark.timeout(120)
def test_watch_on_the_flaky_agent_shows_its_answers_churn_line_by_line(capsys, fleet, home, tmp_path) -> None:
    flaky = fleet.agents["flaky"]
    keys = _keys_file(tmp_path, flaky)
    first = _verify(capsys, home, flaky, keys)
    code, out, _ = _cli(capsys, "watch", "1", "--every", "0.1", "--count", "3", "--home", home)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 3
    previous = first["answers_sha256"][:12]
    for number, line in enumerate(lines, start=1):
        assert f"run {number + 1}  nonconformant" in line
        assert "findings: nondeterministic_answer(capabilities)" in line
        change = re.search(rf"CHANGED since run {number}: answers_sha256 (\w+) -> (\w+)", line)
        assert change, line  # every run's answers differ from the run before: churn, line by line
        assert change[1] == previous and change[2] != previous and f"answers {change[2]}" in line
        previous = change[2]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("variant", ["steady", "churning", "drifting"])
def test_an_exported_transcript_reverifies_offline_to_the_same_verdict(
    capsys, fleet, home, tmp_path, variant
) -> None:
    agent = fleet.agents[variant]
    report = _verify(capsys, home, agent, _keys_file(tmp_path, agent), "--header", f"Authorization: {SECRET}")
    transcript = tmp_path / "run.json"
    code, _, _ = _cli(capsys, "export", "1", "-o", str(transcript), "--home", home)
    assert code == 0
    assert SECRET not in transcript.read_text(encoding="utf-8")
    keys = _keys_file(tmp_path, agent)
    code, out, _ = _cli(capsys, "verify", "--offline", str(transcript), "--keys", keys, "--json")
    again = json.loads(out)
    assert again["verdict"] == report["verdict"] == agent.variant.expected_verdict
    assert again["card"]["sha256"] == report["card"]["sha256"]
    assert [f["code"] for f in again["findings"]] == [f["code"] for f in report["findings"]]
    # Without your keys the keys the transcript carries decide nothing: unverifiable, and said why.
    code, out, _ = _cli(capsys, "verify", "--offline", str(transcript), "--json")
    alone = json.loads(out)
    assert alone["verdict"] == report["verdict"] and alone["card"]["signature"]["status"] == "unverifiable"
    assert alone["card"]["signature"]["with_recorded_keys"]["status"] == "verified"
    code, out, _ = _cli(capsys, "verify", "--offline", str(transcript))
    assert "verified by the keys it carries when recorded, but keys a recorded run carries are not" in out


@pytest.mark.timeout(120)
@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_watch_stops_cleanly_on_ctrl_c(fleet, home) -> None:
    import signal

    steady = fleet.agents["steady"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "watch", steady.base_url, "--every", "0.2", "--home", home],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # blocks until one run is done
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=60)
    assert "first run" in first
    assert proc.returncode == 0, err  # the last run's verdict: conformant
    assert "stopped after" in err and "Traceback" not in err
    assert all("conformant" in line for line in rest.splitlines())
