"""`verify` with many targets against real agents on 127.0.0.1, as CI and job runners use it:
NDJSON, the one-line summary, exit statuses, shards, JUnit, the history (also of a sweep killed
half way), transcripts and `history import`, and the promise that a sweep's verdict for an agent
is the verdict that agent gets alone (the whole reference fleet, and a seeded crowd)."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.demo.crowd import Crowd
from explorer.demo.fleet import Fleet
from explorer.demo.ratelimit import RateLimit
from explorer.store.sqlite import History
from tests.support.demo_serve import demo_serve
from tests.support.http_server import serving

pytestmark = pytest.mark.slow  # many-agent sweeps in subprocesses

CROWD_SEED = 11


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def _bind_demo_credentials(fleet: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guarded agents' demo credentials bound to each agent in the config file (secrets in
    the environment), as a sweep requires: a credential reaches only the agent it is bound to."""
    entries: list[str] = []
    for agent in fleet.agents.values():
        for name, value in agent.env.items():
            monkeypatch.setenv(name, value)
        if agent.credentials is not None:
            entries.append(f'[agents."{agent.name}"]\nurl = "{agent.card_url}"')
            entries += [f"{k} = {json.dumps(v)}" for k, v in agent.credentials.to_config().items()]
    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    (home / "config.toml").write_text("\n".join(entries) + "\n", encoding="utf-8")


def _alone(capsys: pytest.CaptureFixture[str], target: str) -> str:
    code, out, _ = _run(capsys, "verify", target, "--json", "--allow-jku", "--no-history")
    report = json.loads(out)
    assert out.count("\n") == 1
    return str(report["verdict"])


@pytest.fixture(scope="module")
def crowd() -> Iterator[Crowd]:
    with Crowd(30, seed=CROWD_SEED, rate_limit=RateLimit(calls=100_000, per_seconds=60.0)) as started:
        yield started


def _list(tmp_path: Path, urls: list[str]) -> Path:
    path = tmp_path / "agents.txt"
    path.write_text("# agents to sweep\n\n" + "\n".join(urls) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow  # end-to-end against agents on loopback
def test_a_fleet_sweep_gives_every_agent_its_verdict_alone(
    capsys: pytest.CaptureFixture[str], fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls = [a.card_url for a in fleet.agents.values()]
    _bind_demo_credentials(fleet, monkeypatch)
    listed = str(_list(tmp_path, urls))
    code, out, err = _run(capsys, "verify", "--from", listed, "--json", "--allow-jku", "--jobs", "8")
    reports = _lines(out)
    assert sorted(r["target"] for r in reports) == sorted(urls)
    by_target = {r["target"]: r["verdict"] for r in reports}
    expected = {a.card_url: a.variant.expected_verdict for a in fleet.agents.values()}
    assert by_target == expected
    for agent in fleet.agents.values():
        assert _alone(capsys, agent.card_url) == by_target[agent.card_url], agent.name
    assert code == 1  # some agent is nonconformant
    summary = [line for line in err.splitlines() if "swept" in line]
    assert len(summary) == 1 and f"swept {len(urls)}/{len(urls)} agents" in summary[0]
    assert "nonconformant" in summary[0] and "Traceback" not in err
    with History.open(os.environ["INTERVIEW_EXPLORER_HOME"]) as history:
        assert {s.agent for s in history.agents()} >= set(urls)


@pytest.mark.slow  # end-to-end against agents on loopback
def test_a_seeded_crowd_sweep_gives_every_agent_its_verdict_alone(
    capsys: pytest.CaptureFixture[str], crowd: Crowd
) -> None:
    urls = [a.card_url for a in crowd.agents.values()]
    code, out, _ = _run(capsys, "verify", *urls, "--json", "--allow-jku", "--no-history", "--timeout", "5")
    by_target = {r["target"]: r["verdict"] for r in _lines(out)}
    assert by_target == {a.card_url: a.variant.expected_verdict for a in crowd.agents.values()}
    assert {"unreachable", "conformant"} <= set(by_target.values())
    for url, verdict in by_target.items():
        assert _alone(capsys, url) == verdict
    assert code == (1 if "nonconformant" in by_target.values() else 5 if "churn" in by_target.values() else 3)


@pytest.mark.parametrize(
    ("names", "status"),
    [(["steady", "silent"], 0), (["steady", "churning"], 5), (["steady", "drifting", "churning"], 1)],
)
@pytest.mark.slow  # end-to-end against agents on loopback
def test_the_exit_status_of_many_targets(
    capsys: pytest.CaptureFixture[str], fleet: Fleet, names: list[str], status: int
) -> None:
    urls = [fleet.agents[n].card_url for n in names]
    code, out, err = _run(capsys, "verify", *urls, "--no-history")
    assert code == status
    assert len(out.splitlines()) == len(names)  # one line of words per agent
    assert "swept" in err


@pytest.mark.slow  # end-to-end against agents on loopback
def test_an_unreachable_agent_makes_the_sweep_exit_3(
    capsys: pytest.CaptureFixture[str], fleet: Fleet
) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}"
    code, out, _ = _run(capsys, "verify", fleet.agents["steady"].card_url, dead, "--json", "--no-history")
    assert code == 3
    assert {r["target"]: r["verdict"] for r in _lines(out)}[dead] == "unreachable"


@pytest.mark.slow  # end-to-end against agents on loopback
def test_targets_from_stdin_and_shards_split_the_list(
    capsys: pytest.CaptureFixture[str], fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["steady", "legacy", "unsigned", "no-terms", "quiet"]
    text = "# five\n" + "\n".join(fleet.agents[n].card_url for n in names) + "\n"
    seen: list[str] = []
    for index in (1, 2):
        monkeypatch.setattr(sys, "stdin", io.StringIO(text))
        code, out, _ = _run(
            capsys, "verify", "--from", "-", "--shard", f"{index}/2", "--json", "--no-history"
        )
        assert code == 0
        seen.append(",".join(sorted(r["target"] for r in _lines(out))))
    first = sorted(fleet.agents[n].card_url for n in names[0::2])
    second = sorted(fleet.agents[n].card_url for n in names[1::2])
    assert seen == [",".join(first), ",".join(second)]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--from", "/nonexistent/list.txt"], "no such file"),
        (["a", "b", "--offline", "t.json"], "does not go with a sweep"),
        (["--from", "{empty}"], "no targets"),
        (["a", "b", "--header", "NoColon"], "--header expects 'Name: value'"),
    ],
)
def test_sweep_usage_errors_exit_2_before_anything_is_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    code, out, err = _run(capsys, "verify", *[a.replace("{empty}", str(empty)) for a in argv])
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_bad_jobs_and_shard_values_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["a", "--jobs", "0"], ["a", "--shard", "3/2"], ["a", "--shard", "half"]):
        with pytest.raises(SystemExit) as exc:
            main(["verify", *argv])
        assert exc.value.code == 2
    assert "I/N" in capsys.readouterr().err


@pytest.mark.slow  # end-to-end against agents on loopback
def test_junit_has_a_suite_per_agent_with_failures_by_code(
    capsys: pytest.CaptureFixture[str], fleet: Fleet, tmp_path: Path
) -> None:
    names = ["steady", "drifting", "silent"]
    dead = f"http://127.0.0.1:{_closed_port()}"
    urls = [fleet.agents[n].card_url for n in names] + [dead]
    out_file = tmp_path / "ci" / "junit.xml"
    code, _, _ = _run(capsys, "verify", *urls, "--junit", str(out_file), "--allow-jku", "--no-history")
    assert code == 1
    root = ET.parse(out_file).getroot()
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == set(urls)
    assert int(root.get("tests") or 0) == 11 * len(urls)  # card, 5 questions, 5 probes
    steady, drifting = suites[urls[0]], suites[urls[1]]
    assert steady.get("failures") == "0" and steady.get("skipped") == "0"
    usage = next(c for c in drifting.iter("testcase") if c.get("name") == "usage")
    failure = usage.find("failure")
    assert failure is not None and failure.get("type") == "projection_mismatch"
    assert (failure.get("message") or "").startswith("projection_mismatch at /")
    assert suites[urls[2]].get("skipped") == "11"  # not_offered: a skipped suite
    card = next(c for c in suites[dead].iter("testcase") if c.get("name") == "card")
    assert card.find("failure").get("type") == "card_unreachable"  # type: ignore[union-attr]
    assert int(root.get("failures") or 0) == sum(int(s.get("failures") or 0) for s in suites.values())
    assert not list(out_file.parent.glob(".*.tmp"))


@pytest.mark.slow  # end-to-end against agents on loopback
def test_transcripts_merge_into_another_history_once(
    capsys: pytest.CaptureFixture[str], fleet: Fleet, tmp_path: Path
) -> None:
    names = ["steady", "drifting", "churning", "silent"]
    urls = [fleet.agents[n].card_url for n in names]
    shard_dir, home, other = tmp_path / "out", tmp_path / "home", tmp_path / "other"
    code, out, _ = _run(
        capsys, "verify", *urls, "--json", "--allow-jku", "--transcripts", str(shard_dir), "--home", str(home)
    )
    verdicts = {r["target"]: r["verdict"] for r in _lines(out)}
    files = sorted(shard_dir.glob("*.json"))
    assert len(files) == 4 and not list(shard_dir.glob(".*"))
    assert all(f.name.startswith("127.0.0.1_") for f in files)

    code, out, _ = _run(capsys, "history", "import", str(shard_dir), "--home", str(other))
    assert code == 0 and out.count("imported as run") == 4
    with History.open(other) as history:
        assert {s.agent: s.last_verdict for s in history.agents()} == verdicts
    code, out, _ = _run(capsys, "history", "import", *map(str, files), "--home", str(other))
    assert code == 0 and out.count("already recorded as run") == 4
    code, out, _ = _run(capsys, "history", "import", str(shard_dir), "--home", str(home))
    assert code == 0 and out.count("already recorded as run") == 4  # the sweep recorded them itself
    with History.open(home) as history:
        assert len(history.runs()) == 4


@pytest.mark.slow  # end-to-end against agents on loopback
def test_import_refuses_a_transcript_whose_bytes_do_not_give_its_verdict(
    capsys: pytest.CaptureFixture[str], fleet: Fleet, tmp_path: Path
) -> None:
    out_dir = tmp_path / "t"
    _run(
        capsys,
        "verify",
        fleet.agents["drifting"].card_url,
        "--allow-jku",
        "--no-history",
        "--transcripts",
        str(out_dir),
    )
    (path,) = out_dir.glob("*.json")
    data = json.loads(path.read_text())
    assert data["report"]["verdict"] == "nonconformant"
    data["report"]["verdict"] = "conformant"
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data))
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2")
    code, out, err = _run(capsys, "history", "import", str(forged), str(path))
    assert code == 1  # refused: its bytes do not give what it states
    assert out.count("refused") == 1 and out.count("imported as run") == 1
    assert '/report/verdict: its bytes give "nonconformant" but it states "conformant"' in err
    code, out, err = _run(capsys, "history", "import", str(junk), str(path))
    assert code == 2  # not a transcript at all; the next file is still tried (and already there)
    assert out.count("refused") == 1 and out.count("already recorded as run") == 1
    assert "not strict JSON" in err and "Traceback" not in err
    code, _, err = _run(capsys, "history", "import")
    assert code == 2 and "needs one or more" in err


@pytest.mark.slow  # end-to-end against agents on loopback
def test_a_sweep_killed_half_way_keeps_what_finished(fleet: Fleet, tmp_path: Path) -> None:
    """One agent answers at once; the others accept connections and never answer. The sweep is
    killed (SIGKILL) once the first report is out: that run is in the history (a line is
    printed only after its run is recorded)."""
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)
    port = hang.getsockname()[1]
    home = tmp_path / "home"
    urls = [fleet.agents["steady"].card_url] + [f"http://127.0.0.1:{port}/a{i}" for i in range(3)]
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "verify", *urls, "--json", "--timeout", "60", "--jobs", "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert first["target"] == urls[0]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        hang.close()
    with History.open(home) as history:
        runs = history.runs()
    assert [r.agent for r in runs] == [urls[0]]


@pytest.mark.slow  # end-to-end against agents on loopback
def test_demo_serves_a_seeded_crowd_in_the_fleet_format() -> None:
    from explorer.demo.crowd import draw

    with demo_serve("--crowd", "12", "--seed", "3", "--crowd-only") as served:
        lines = list(served.agents.values())
        expected = draw(12, seed=3)
        assert [line.name for line in lines] == [v.name for v in expected]
        assert [line.verdict for line in lines] == [v.expected_verdict for v in expected]
        assert len({line.card_url for line in lines}) == 12
        assert all(line.card_url.startswith("http://127.0.0.1:") for line in lines)
        code, err = served.stop()
        assert code == 0, err


@pytest.mark.slow  # end-to-end against agents on loopback
def test_watch_from_names_the_agents_that_changed_since_the_previous_sweep(
    capsys: pytest.CaptureFixture[str], fleet: Fleet, tmp_path: Path
) -> None:
    names = ["steady", "flaky", "churning"]
    urls = [fleet.agents[n].card_url for n in names]
    code, out, err = _run(
        capsys, "watch", "--from", str(_list(tmp_path, urls)), "--every", "0.1", "--count", "2", "--allow-jku"
    )
    first, second = out.splitlines()
    assert "sweep 1: 3 agents" in first and first.endswith("first sweep")
    assert "sweep 2: 3 agents" in second and "CHANGED 2:" in second
    assert "(Flaky) (answers)" in second and "(Churning) (declarations, answers)" in second
    assert "(Steady)" not in second
    assert code == 1 and "watching 3 agents every 0.1 s, 2 sweeps" in err
    with History.open(os.environ["INTERVIEW_EXPLORER_HOME"]) as history:
        assert len(history.runs(urls[0])) == 2  # every run recorded


def test_watch_lines_say_what_changed() -> None:
    from explorer.commands.watch_many import State, sweep_line

    before = {"a": State("A", "conformant", "c1", "x1"), "b": State("B\x1b[2J", "conformant", "c1", "x1")}
    after = {
        "a": State("A", "conformant", "c1", "x1"),
        "b": State("B\x1b[2J", "churn", "c2", "x1"),
        "c": State("C", "conformant", None, None),
    }
    line = sweep_line("T", 2, after, before, 1.0, "counts")
    assert line.startswith("T  sweep 2: 3 agents in 1.0 s (counts)  CHANGED 2: ")
    assert "B\\x1b[2J (verdict conformant -> churn, declarations)" in line and "C (new in the list)" in line
    assert "\x1b" not in line
    assert sweep_line("T", 3, after, after, 1.0, "counts").endswith("no change")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_progress_line_is_kept_on_stderr_only_when_it_is_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = [f"http://127.0.0.1:{_closed_port()}/{i}" for i in range(3)]
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code = main(["verify", *dead, "--json", "--no-history", "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 3 and len(out.splitlines()) == 3 and "\x1b" not in out
    err = terminal.getvalue()
    assert "\r\x1b[K1/3" in err and "3 unreachable" in err
    last = err.split("\r")[-1]  # the progress line is cleared before the summary
    assert last.startswith("\x1b[Kinterview-explorer verify: swept 3/3 agents")
    monkeypatch.undo()
    main(["verify", *dead, "--json", "--no-history"])
    assert "\x1b" not in capsys.readouterr().err


@pytest.mark.slow  # end-to-end against agents on loopback
def test_config_applies_per_target_in_a_sweep_as_for_one(
    capsys: pytest.CaptureFixture[str], fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A configured agent's name brings its URL and its headers to that agent only; the config's
    runner and role, and --timeout, apply to every target; a missing env variable is a usage
    error before anything is asked."""
    home = tmp_path / "h"
    home.mkdir()
    steady, quiet = fleet.agents["steady"], fleet.agents["quiet"]
    (home / "config.toml").write_text(
        f'runner = "fleet-ci"\nrole = "platform"\n[agents.books]\nurl = "{steady.card_url}"\n'
        'headers = { X-Books-Token = "env:BOOKS_TOKEN" }\n'
    )
    code, out, err = _run(capsys, "verify", "books", quiet.card_url, "--home", str(home), "--no-history")
    assert code == 2 and "BOOKS_TOKEN" in err and out == ""
    monkeypatch.setenv("BOOKS_TOKEN", "s3cret-value")
    out_dir = tmp_path / "t"
    code, out, _ = _run(
        capsys,
        "verify",
        "books",
        quiet.card_url,
        "--home",
        str(home),
        "--no-history",
        "--json",
        "--transcripts",
        str(out_dir),
        "--timeout",
        "7",
    )
    reports = {r["target"]: r for r in _lines(out)}
    assert set(reports) == {steady.card_url, quiet.card_url}
    assert all(r["ran_by"] == {"name": "fleet-ci", "role": "platform"} for r in reports.values())
    assert "s3cret-value" not in out
    sent: dict[str, set[str]] = {}
    for path in out_dir.glob("*.json"):
        data = json.loads(path.read_text())
        assert "s3cret-value" not in path.read_text()
        sent[data["report"]["target"]] = {
            name.lower() for ex in data["exchanges"] for name, _ in ex["request_headers"]
        }
    assert "x-books-token" in sent[steady.card_url] and "x-books-token" not in sent[quiet.card_url]


@pytest.mark.slow  # a subprocess interrupted half way
def test_ctrl_c_ends_a_sweep_with_a_summary_a_whole_junit_file_and_status_130(
    fleet: Fleet, tmp_path: Path
) -> None:
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)
    urls = [fleet.agents["steady"].card_url, f"http://127.0.0.1:{hang.getsockname()[1]}/"]
    junit_file = tmp_path / "junit.xml"
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "explorer",
            "verify",
            *urls,
            "--json",
            "--timeout",
            "60",
            "--junit",
            str(junit_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["target"] == urls[0]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
        hang.close()
    assert proc.returncode == 130
    assert "swept 1/2 agents" in err and "(interrupted)" in err and "Traceback" not in err
    suites = ET.parse(junit_file).getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == [urls[0]]


class _Counting(BaseHTTPRequestHandler):
    """Answers every request with 404 after a pause, counting the requests in flight (the peak)
    and the Host headers they came with (one per spelling that reached it)."""

    lock = threading.Lock()
    in_flight = peak = total = 0
    hosts: set[str] = set()

    def do_GET(self) -> None:
        cls = type(self)
        with cls.lock:
            cls.in_flight += 1
            cls.total += 1
            cls.peak = max(cls.peak, cls.in_flight)
            cls.hosts.add(self.headers.get("Host", ""))
        try:
            time.sleep(0.15)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
        finally:
            with cls.lock:
                cls.in_flight -= 1

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.slow  # a sweep in a subprocess
def test_one_host_reached_through_every_spelling_gets_the_per_host_bound(tmp_path: Path) -> None:
    """docs/CONTRACT.md: at most 8 requests in flight to one host across a sweep, a host being
    an address and port, however each target's URL spells it."""
    spellings = [
        "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.0.1", "017700000001",
        "localhost", "[::ffff:127.0.0.1]",
    ]  # fmt: skip
    handler = type("Counting", (_Counting,), {"lock": threading.Lock(), "hosts": set()})
    with serving(handler, backlog=128) as server:
        port = server.server_address[1]
        urls = [f"http://{host}:{port}/agent-{i}/" for host in spellings for i in range(6)]
        listed = _list(tmp_path, urls)
        done = subprocess.run(
            [sys.executable, "-m", "explorer", "verify", "--from", str(listed), "--jobs", "64", "--json",
             "--no-history", "--timeout", "30"],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "INTERVIEW_EXPLORER_HOME": str(tmp_path / "home")},
        )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert sorted(line["target"] for line in _lines(done.stdout)) == sorted(urls)
    assert handler.total >= len(urls)
    assert {host.rsplit(":", 1)[0].lower() for host in handler.hosts} == {h.lower() for h in spellings}
    assert 2 <= handler.peak <= 8
