"""Relative paths in the config file are read from the config file's own folder (issue 29).

`serve` starts every browser session from a private temporary folder (`python -I -m
explorer.tui.served`), and a CI job starts `verify` from wherever its checkout is: a key file, a
runner key, a `file:` credential or a history path written relative in the config file must name
the same file either way. So they are read beside the config file, never from the working
directory; an absolute path, `~`, a URL and an `env:` reference are kept as written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from explorer.config.file import load_config
from explorer.demo.fleet import Fleet
from explorer.store.location import parse_location
from explorer.store.sqlite import History
from tests.support.paths import REPO

CONFIG = """\
keys = ["keys/agents.jwks", "https://keys.example/jwks.json", "/etc/abs.jwks", "~/mine.jwks"]
sign_key = "keys/runner.pem"
trusted_runners = ["runners/ci.jwks", "https://runners.example/jwks.json"]
history = "kept/history.sqlite3"

[agents.stonework]
url = "https://stonework.example"
keys = "keys/stonework.jwks"
bearer = "file:secrets/token"
api_key = "env:STONEWORK_KEY"
oauth2_client_id = "me"
oauth2_client_secret = "file:/run/secrets/oauth"
"""


def test_every_relative_path_in_the_config_is_read_beside_it(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # as a `serve` session or a CI job would be
    config = load_config(home)
    assert config.settings["keys"] == (
        str(home / "keys" / "agents.jwks"),
        "https://keys.example/jwks.json",
        "/etc/abs.jwks",
        "~/mine.jwks",  # the user's home, expanded where it is read, as on the command line
    )
    assert config.sign_key == str(home / "keys" / "runner.pem")
    assert config.trusted_runners == (str(home / "runners" / "ci.jwks"), "https://runners.example/jwks.json")
    assert config.history == str(home / "kept" / "history.sqlite3")
    agent = config.agents["stonework"].settings
    assert agent["keys"] == (str(home / "keys" / "stonework.jwks"),)
    assert agent["bearer"] == f"file:{home / 'secrets' / 'token'}"
    assert agent["api_key"] == "env:STONEWORK_KEY"
    assert agent["oauth2_client_secret"] == "file:/run/secrets/oauth"


def test_a_history_url_is_read_beside_the_config_and_other_histories_are_kept(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "a home with 100% odd names"
    home.mkdir()
    (home / "kept").mkdir()
    cases = {
        "sqlite:///kept/h.sqlite3": home / "kept" / "h.sqlite3",
        "kept": home / "kept" / "history.sqlite3",  # a folder beside the config: the file inside it
        "sqlite:////abs/h.sqlite3": Path("/abs/h.sqlite3"),
    }
    for written, expected in cases.items():
        (home / "config.toml").write_text(f"history = {json.dumps(written)}\n", encoding="utf-8")
        configured = load_config(home).history
        assert configured is not None
        assert parse_location(configured).path == expected, (written, configured)
    for kept in ("postgresql://runner@db.example/evidence", "host=db.example dbname=evidence user=runner"):
        (home / "config.toml").write_text(f"history = {json.dumps(kept)}\n", encoding="utf-8")
        assert load_config(home).history == kept


def test_verify_started_from_another_folder_uses_the_files_the_config_names(
    fleet: Fleet, tmp_path: Path
) -> None:
    """Keys and history written relative in the config: verified and recorded beside it, whatever
    the working directory (before, the keys were looked for in the working directory: exit 2)."""
    steady = fleet.agents["steady"]
    assert steady.jwks_url is not None
    home = tmp_path / "home"
    (home / "keys").mkdir(parents=True)
    with urllib.request.urlopen(steady.jwks_url, timeout=30) as answer:  # noqa: S310 - loopback
        (home / "keys" / "steady.jwks").write_bytes(answer.read())
    (home / "config.toml").write_text(
        'keys = ["keys/steady.jwks"]\nhistory = "kept/history.sqlite3"\n', encoding="utf-8"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "verify", steady.card_url, "--json", "--timeout", "30"],
        capture_output=True,
        text=True,
        env=env,
        cwd=elsewhere,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["card"]["signature"]["status"] == "verified"
    assert not (elsewhere / "kept").exists() and list(elsewhere.iterdir()) == []
    with History.open_file(home / "kept" / "history.sqlite3") as history:
        assert [run.agent for run in history.runs()] == [steady.card_url]
