"""`interview-explorer verify` as scripts and CI use it: exit statuses, --json, history, config.

The command runs in-process through `explorer.cli.main` with captured stdout/stderr. Card files
and closed ports cover what needs no agent; the reference fleet covers the verdicts.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.core.card import INTERVIEW_URI
from explorer.core.report import validate_report
from explorer.core.run import Run
from tests.support.cards import agent_card

pytestmark = pytest.mark.slow  # the verify command in subprocesses against the fleet

SILENT_CARD = agent_card("Silent", interview=False)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _verify(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["verify", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def silent_card(tmp_path: Path) -> Path:
    path = tmp_path / "card.json"
    path.write_text(json.dumps(SILENT_CARD), encoding="utf-8")
    return path


def _history_runs(home: Path) -> list[Any]:
    from explorer.store.sqlite import History

    with History.open(home) as history:
        return history.runs()


def test_not_offered_exits_4_and_prints_a_summary(
    capsys: pytest.CaptureFixture[str], silent_card: Path
) -> None:
    code, out, err = _verify(capsys, str(silent_card), "--no-history")
    assert code == 4
    assert out.startswith("verdict: not_offered")
    assert "absence says nothing about the agent" in out
    assert "\x1b[" not in out  # plain output: not a TTY, NO_COLOR set
    assert "[1] card:" in err


def test_json_is_exactly_one_report_on_stdout(capsys: pytest.CaptureFixture[str], silent_card: Path) -> None:
    code, out, err = _verify(capsys, str(silent_card), "--json", "--no-history", "--as", "independent")
    report = json.loads(out)
    assert out.count("\n") == 1
    assert validate_report(report) == []
    assert report["verdict"] == "not_offered" and code == 4
    assert report["standing"] == "evidence" and report["ran_by"]["role"] == "independent"
    assert "[1] card:" in err


def test_unreachable_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _verify(
        capsys, f"http://127.0.0.1:{_closed_port()}", "--json", "--timeout", "2", "--no-history"
    )
    assert code == 3
    report = json.loads(out)
    assert report["verdict"] == "unreachable"
    assert "card_unreachable" in {f["code"] for f in report["findings"]}


def test_public_only_refuses_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _verify(capsys, "https://127.0.0.1/", "--public-only", "--json", "--no-history")
    report = json.loads(out)
    assert code == 3 and report["verdict"] == "unreachable"
    blocked = [f for f in report["findings"] if f["code"] == "address_blocked"]
    assert blocked and "not a public address" in blocked[0]["detail"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "a TARGET is required"),
        (["x.json", "--offline", "t.json"], "either TARGET or --offline"),
        (["http://127.0.0.1:9", "--header", "NoColon"], "--header expects 'Name: value'"),
        (["http://127.0.0.1:9", "--keys", "/nonexistent/keys.jwks"], "no such file"),
        (["--offline", "/nonexistent/transcript.json"], "no such file"),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = _verify(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [["x", "--timeout", "0"], ["x", "--timeout", "soon"], ["x", "--reruns", "-1"], ["x", "--as", "judge"]],
)
def test_bad_option_values_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["verify", *argv])
    assert exc.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_not_a_transcript_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "t.json"
    bad.write_text('{"hello": 1}')
    code, _, err = _verify(capsys, "--offline", str(bad))
    assert code == 2 and "not an Interview Explorer transcript" in err
    bad.write_text("{not json")
    code, _, err = _verify(capsys, "--offline", str(bad))
    assert code == 2 and "cannot read" in err


def test_runs_are_recorded_unless_no_history(
    capsys: pytest.CaptureFixture[str], silent_card: Path, tmp_path: Path
) -> None:
    home = tmp_path / "h"
    _verify(capsys, str(silent_card), "--home", str(home), "--no-history")
    assert _history_runs(home) == []
    code, _, err = _verify(capsys, str(silent_card), "--home", str(home))
    assert code == 4 and "recorded as run" in err
    assert len(_history_runs(home)) == 1


def test_a_broken_history_is_refused_before_anything_is_asked(
    capsys: pytest.CaptureFixture[str], silent_card: Path, tmp_path: Path
) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "history.sqlite3").write_bytes(b"this is not a database" * 10)
    code, out, err = _verify(capsys, str(silent_card), "--home", str(home), "--json")
    assert code == 6 and out == ""  # not a run interviewed, then lost with exit status 4
    assert "the history cannot be used, so nothing was asked" in err


def test_offline_replays_a_transcript(
    capsys: pytest.CaptureFixture[str], silent_card: Path, tmp_path: Path
) -> None:
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync

    run = run_interview_sync(str(silent_card), Options(timeout=2.0))
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps(run.to_transcript()))
    code, out, _ = _verify(capsys, "--offline", str(transcript), "--json")
    assert code == 4
    assert json.loads(out) == json.loads(json.dumps(dict(run.report)))


def test_config_agent_name_with_env_headers(
    capsys: pytest.CaptureFixture[str], silent_card: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text(
        f'runner = "ci@example.org"\nrole = "platform"\n[agents.quiet]\nurl = "{silent_card}"\n'
        'headers = { Authorization = "env:QUIET_TOKEN" }\n'
    )
    code, _, err = _verify(capsys, "quiet", "--home", str(home), "--no-history")
    assert code == 2 and "QUIET_TOKEN is not set" in err
    monkeypatch.setenv("QUIET_TOKEN", "Bearer t0ken")
    code, out, err = _verify(capsys, "quiet", "--home", str(home), "--no-history", "--json")
    report = json.loads(out)
    assert code == 4 and "configured agent" in err
    assert report["ran_by"] == {"name": "ci@example.org", "role": "platform"}
    assert "t0ken" not in out


# --- against the reference agents -------------------------------------------------------------


def _fleet_or_skip(request: pytest.FixtureRequest) -> Any:
    pytest.importorskip("explorer.demo.fleet", reason="explorer/demo/fleet.py is not written yet")
    return request.getfixturevalue("fleet")


@pytest.mark.parametrize(("name", "status"), [("steady", 0), ("drifting", 1), ("silent", 4), ("quiet", 0)])
def test_exit_status_follows_the_verdict(
    capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, name: str, status: int
) -> None:
    fleet = _fleet_or_skip(request)
    code, out, _ = _verify(capsys, fleet.agents[name].base_url, "--json", "--allow-jku", "--no-history")
    report = json.loads(out)
    assert validate_report(report) == []
    assert code == status, report["findings"]


def test_churn_exits_5(capsys: pytest.CaptureFixture[str]) -> None:
    fleet_module = pytest.importorskip(
        "explorer.demo.fleet", reason="explorer/demo/fleet.py is not written yet"
    )
    with fleet_module.Fleet(names=["churning"]) as own:
        code, out, _ = _verify(
            capsys, own.agents["churning"].base_url, "--json", "--allow-jku", "--no-history"
        )
    assert code == 5 and json.loads(out)["verdict"] == "churn"


def test_secret_headers_never_reach_the_output(
    capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    fleet = _fleet_or_skip(request)
    home = Path(request.getfixturevalue("tmp_path")) / "h"
    code, out, err = _verify(
        capsys,
        fleet.agents["steady"].base_url,
        "--json",
        "--allow-jku",
        "--home",
        str(home),
        "--header",
        "Authorization: Bearer sup3rsecret",
    )
    assert code == 0
    assert "sup3rsecret" not in out + err
    from explorer.store.sqlite import History

    with History.open(home) as history:
        run: Run = history.load(history.runs()[0].id)
    asks = [e for e in run.exchanges if e.purpose.startswith("ask:")]
    assert asks and all(dict(e.request_headers).get("Authorization") == "<redacted>" for e in asks)
    assert dict(asks[0].request_headers).get("A2A-Extensions") == INTERVIEW_URI
    assert "sup3rsecret" not in json.dumps(run.to_transcript())


def test_a_header_value_can_come_from_the_environment(
    capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--header 'Authorization: env:VAR'` keeps the secret off the command line (and shell history)."""
    fleet = _fleet_or_skip(request)
    home = Path(request.getfixturevalue("tmp_path")) / "h"
    url = fleet.agents["steady"].base_url
    monkeypatch.delenv("HEADER_FOR_TEST", raising=False)
    code, _, err = _verify(capsys, url, "--no-history", "--header", "Authorization: env:HEADER_FOR_TEST")
    assert code == 2 and "environment variable HEADER_FOR_TEST is not set" in err
    monkeypatch.setenv("HEADER_FOR_TEST", "Bearer fr0m-env")
    code, out, err = _verify(
        capsys, url, "--json", "--home", str(home), "--header", "Authorization: env:HEADER_FOR_TEST"
    )
    assert code == 0, err
    assert "fr0m-env" not in out + err


def test_agent_text_in_progress_is_made_safe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal, where a request's outcome (here the hostile proposal URL's) is shown on the
    rewritten status line (tests/commands/test_quiet.py)."""
    from explorer.core.card import TERMS_URI

    hostile = "http://127.0.0.1:9/\x1b]52;c;ZXZpbA==\x07/p.sow.json\u202e"
    card = {
        **SILENT_CARD,
        "capabilities": {
            "extensions": [
                {"uri": INTERVIEW_URI, "required": False},
                {
                    "uri": TERMS_URI,
                    "params": {"sow_spec": "0.18.0-draft", "proposals": [{"url": hostile, "digest": "x"}]},
                },
            ]
        },
    }
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = _verify(capsys, str(path), "--no-history", "--timeout", "2")
    err = err.replace("\r\x1b[K", "")  # the status line's own rewrite: the only escape allowed
    assert code == 3  # the card's endpoint is a closed port
    assert "proposal" in err and "\\x1b" in err
    assert "\x1b" not in err + out and "\u202e" not in err + out and "\x07" not in err + out
