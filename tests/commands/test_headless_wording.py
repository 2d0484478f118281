"""What a newcomer reads from the headless commands (issue 31, items 5 and 8).

- An agent with no runs (`history stedy`) gets "did you mean" as `verify stedy` does: a recorded
  card name, a reference agent's short name or a configured agent close to the word.
- An unknown config key is warned about once per process, though a command reads the config
  more than once.
- No verdict is shown in capitals (`NOT_OFFERED`): headless text says the contract's words.
- `latest` selects the newest run for `show`, `export` and `compare`, so the README's
  "verify, then export" runs as printed whatever the history already holds.
- `demo --serve` says which listed verdicts need the demo's credentials, which a sweep of the
  printed URLs alone cannot reproduce.

In-process through `explorer.cli.main`, on card files (nothing served), in the isolated home of
`tests/conftest.py`; the demo's listing in a subprocess, as a script reads it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.cli import main
from tests.support.cards import agent_card
from tests.support.demo_serve import demo_serve
from tests.support.paths import REPO

VERDICTS_IN_CAPITALS = re.compile(r"\b(CONFORMANT|NONCONFORMANT|NOT_OFFERED|NOT OFFERED|UNREACHABLE|CHURN)\b")


def _home() -> Path:
    return Path(os.environ["INTERVIEW_EXPLORER_HOME"])


def _card(tmp_path: Path, name: str) -> str:
    """A card file without the interview (verdict not_offered, nothing fetched); its path."""
    path = tmp_path / f"{re.sub(r'[^a-z]+', '-', name.lower())}.json"
    card = agent_card(
        name,
        url="http://127.0.0.1:9/a2a",
        interview=False,
        description="a card",
        version="1.0.0",
        defaultInputModes=["text/plain"],
        defaultOutputModes=["text/plain"],
    )
    path.write_text(json.dumps(card), encoding="utf-8")
    return str(path)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _recorded(capsys: pytest.CaptureFixture[str], card: str) -> int:
    code, _, err = _run(capsys, "verify", card)
    assert code == 4, err  # not_offered
    return int(re.search(r"recorded as run (\d+)", err).group(1))  # type: ignore[union-attr]


@pytest.mark.parametrize("command", ["history", "show", "forget"])
def test_an_agent_with_no_runs_gets_did_you_mean(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _recorded(capsys, _card(tmp_path, "Stonework Books (Steady)"))
    code, out, err = _run(capsys, command, "stedy")
    assert code == 6 and out == ""
    assert "no runs recorded for stedy; did you mean steady?" in err
    code, _, err = _run(capsys, command, "Stonework Bookz (Steady)")
    assert code == 6 and "did you mean Stonework Books (Steady)?" in err
    code, _, err = _run(capsys, command, "nothing-like-it")
    assert code == 6 and "no runs recorded for nothing-like-it" in err and "did you mean" not in err


def test_a_configured_agent_close_to_the_word_is_suggested(capsys: pytest.CaptureFixture[str]) -> None:
    (_home() / "config.toml").write_text('[agents.books]\nurl = "http://127.0.0.1:9/"\n', encoding="utf-8")
    code, _, err = _run(capsys, "history", "bokks")
    assert code == 6 and "did you mean books?" in err


def test_an_agent_name_from_a_card_is_suggested_as_safe_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _recorded(capsys, _card(tmp_path, "Books\x1b[31m (Steady)"))
    code, _, err = _run(capsys, "history", "Books (Steady)")
    assert code == 6 and "did you mean" in err and "\x1b" not in err


def test_an_unknown_config_key_is_warned_about_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (_home() / "config.toml").write_text('runnr = "ci"\n', encoding="utf-8")
    card = _card(tmp_path, "Once")
    heard = []
    for argv in (["verify", card], ["verify", card, "--no-history", "--json"], ["history"]):
        _, _, err = _run(capsys, *argv)
        heard.append(err.count("ignored settings this version does not know: runnr"))
    assert heard == [1, 0, 0]  # verify reads the config twice (the plan, the signing key); one process
    # A second process hears it again: once per process, not once ever.
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "verify", card, "--no-history"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert done.stderr.count("ignored settings this version does not know: runnr") == 1, done.stderr


def test_no_verdict_is_shown_in_capitals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    card = _card(tmp_path, "Capitals")
    first, second = _recorded(capsys, card), _recorded(capsys, card)
    said = []
    for argv in (
        ["verify", card, "--no-history"],
        ["history"],
        ["show", str(second)],
        ["compare", str(first), str(second)],
        ["export", str(second), "--format", "md"],
    ):
        _, out, err = _run(capsys, *argv)
        said.append(out + err)
        assert re.search(r"not\\?_offered", out + err), argv  # Markdown escapes the underscore
    assert [VERDICTS_IN_CAPITALS.findall(text) for text in said] == [[]] * len(said)


def test_latest_selects_the_newest_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "export", "latest")
    assert code == 6 and "no runs recorded yet, so there is no latest run" in err
    first = _recorded(capsys, _card(tmp_path, "First"))
    newest = _recorded(capsys, _card(tmp_path, "Newest"))
    code, out, _ = _run(capsys, "show", "latest")
    assert code == 0 and out.startswith(f"run {newest}, ")
    written = tmp_path / "run.json"
    code, _, err = _run(capsys, "export", "latest", "-o", str(written))
    assert code == 0 and f"of run {newest} to" in err
    assert json.loads(written.read_text(encoding="utf-8"))["report"]["card"]["name"] == "Newest"
    code, out, _ = _run(capsys, "compare", str(first), "latest", "--json")
    assert json.loads(out)["run_b"]["id"] == newest and code == 1


@pytest.mark.parametrize("command", ["show", "export"])
def test_a_run_that_is_neither_an_id_nor_latest_is_a_usage_error(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "lastest" if command == "export" else "0"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert ("or `latest`, not 'lastest'" if command == "export" else "a run id is a positive number") in err


@pytest.mark.slow  # `demo --serve` in a subprocess, and a sweep of what it printed
def test_the_demo_listing_says_which_agents_need_their_credentials(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with demo_serve("--only", "guarded-bearer", "steady", "--home", str(home)) as served:
        urls = tmp_path / "agents.txt"
        listed = "\n".join(agent.card_url for agent in served.agents.values())
        urls.write_text(listed + "\n", encoding="utf-8")
        swept = subprocess.run(
            [
                sys.executable,
                "-m",
                "explorer",
                "verify",
                "--from",
                str(urls),
                "--json",
                "--no-history",
                "--allow-jku",
                "--home",
                str(home),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        _, said = served.stop()
    assert served.agents["guarded-bearer"].verdict == "conformant"  # with its credential, as the table says
    notes = [line for line in said.splitlines() if "conformant only with the agent's demo credential" in line]
    assert (
        len(notes) == 1
        and notes[0].startswith("demo: guarded agents (guarded-bearer) are ")
        and "steady" not in notes[0]
    )
    verdicts = {json.loads(line)["target"]: json.loads(line)["verdict"] for line in swept.stdout.splitlines()}
    assert verdicts[served.url("guarded-bearer")] == "unreachable"  # as the note says, without it
    assert verdicts[served.url("steady")] == "conformant"
