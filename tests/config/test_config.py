"""The config file: named agents with env: header references, keys, runner identity, keymap."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.config.file import AgentConfig, Config, ConfigError, config_path, home_dir, load_config
from explorer.config.settings import parse_header_option, resolve_reference
from explorer.interview.planning import PlanError, plan
from tests.support.paths import REPO


def _write(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text, encoding="utf-8")


def test_home_follows_the_environment(_isolated_home: Path) -> None:
    assert home_dir() == _isolated_home
    assert config_path() == _isolated_home / "config.toml"


def test_explicit_home_wins(tmp_path: Path) -> None:
    assert home_dir(tmp_path / "elsewhere") == tmp_path / "elsewhere"
    assert (tmp_path / "elsewhere").is_dir()


def test_missing_config_is_empty(_isolated_home: Path) -> None:
    cfg = load_config()
    assert cfg.agents == {} and cfg.keys == () and cfg.runner is None


def test_full_config(_isolated_home: Path) -> None:
    _write(
        _isolated_home,
        """
runner = "ci@example.org"
role = "independent"
keys = ["~/keys/a.jwks"]
watch_every = 45

[agents.stonework]
url = "https://stonework.example"
headers = { Authorization = "env:STONEWORK_TOKEN" }
keys = "https://stonework.example/keys.jwks"

[keymap]
"app.quit" = "ctrl+q"
""",
    )
    cfg = load_config()
    assert cfg.runner == "ci@example.org" and cfg.role == "independent"
    assert cfg.keys == ("~/keys/a.jwks",)
    agent = cfg.agents["stonework"]
    assert agent.url == "https://stonework.example"
    assert agent.headers == {"Authorization": "env:STONEWORK_TOKEN"}  # a reference, not a value
    assert agent.keys == ("https://stonework.example/keys.jwks",)
    assert cfg.keymap == {"app.quit": "ctrl+q"}
    assert cfg.watch_every == 45.0


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[agents.x]\nurl = "https://x"\nheaders = { Authorization = "Bearer abc" }\n', "env:VAR reference"),
        ('role = "boss"\n', "role must be"),
        ("[agents.x]\nheaders = {}\n", "needs a url"),
        ("this is = not toml = at all\n", "cannot read config"),
        ("keys = [1, 2]\n", "keys must be"),
        ("watch_every = 0\n", "watch_every must be a number of seconds"),
        ("watch_every = -5\n", "watch_every must be a number of seconds"),
        ("watch_every = 86401\n", "at most 86400"),
        ('watch_every = "60"\n', "watch_every must be a number of seconds"),
        ("watch_every = true\n", "watch_every must be a number of seconds"),
    ],
)
def test_bad_config_is_a_clear_error(_isolated_home: Path, text: str, fragment: str) -> None:
    _write(_isolated_home, text)
    with pytest.raises(ConfigError, match=fragment):
        load_config()


def test_env_references(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN_FOR_TEST", "Bearer s3cret")
    assert resolve_reference("env:TOKEN_FOR_TEST") == "Bearer s3cret"
    monkeypatch.delenv("TOKEN_FOR_TEST")
    with pytest.raises(ValueError, match="TOKEN_FOR_TEST"):
        resolve_reference("env:TOKEN_FOR_TEST")


def test_header_option() -> None:
    assert parse_header_option("Authorization: Bearer x:y") == ("Authorization", "Bearer x:y")
    for bad in ("no colon", ": value", "Two Words: v"):
        with pytest.raises(ValueError):
            parse_header_option(bad)


def test_a_target_names_a_configured_agent_by_name_or_by_url(_isolated_home: Path) -> None:
    _write(
        _isolated_home,
        'keys = ["global.jwks"]\n[agents.stonework]\nurl = "https://stonework.example/"\nkeys = "own.jwks"\n',
    )
    cfg = load_config()
    agent = cfg.agent("stonework")
    assert agent is not None and agent.url == "https://stonework.example/"
    # One rule for every command and the TUI: the name, or the URL (a trailing slash aside).
    assert cfg.agent("https://stonework.example") is agent
    assert cfg.agent("https://stonework.example/") is agent
    assert cfg.agent("https://elsewhere.example") is None
    assert cfg.agent("") is None
    beside = (str(_isolated_home / "global.jwks"), str(_isolated_home / "own.jwks"))  # the file's folder
    assert plan("stonework", {}, cfg)[1].keys == beside
    assert plan("https://elsewhere.example", {}, cfg)[1].keys == beside[:1]


def test_command_line_headers_win_over_configured_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    headers = (("Authorization", "env:A_TOKEN"), ("X-Team", "env:A_TEAM"))
    config = Config(agents={"a": AgentConfig("a", "https://a.example", {"headers": headers})})
    monkeypatch.setenv("A_TOKEN", "Bearer from-env")
    monkeypatch.setenv("A_TEAM", "blue")
    _, options = plan("a", {"headers": (("Authorization", "Bearer typed"),)}, config)
    assert dict(options.headers) == {"Authorization": "Bearer typed", "X-Team": "blue"}
    assert plan("https://b.example", {"headers": (("X-Only", "1"),)}, config)[1].headers == (("X-Only", "1"),)
    monkeypatch.delenv("A_TEAM")
    with pytest.raises(PlanError, match="A_TEAM is not set"):
        plan("a", {}, config)
    assert plan("a", {}, config, secrets=False)[1].headers == ()  # `card` never needs them


def test_unknown_settings_are_ignored_and_named_not_refused(_isolated_home: Path) -> None:
    _write(
        _isolated_home,
        """
watch_evry = 5
"future\\u001b[31m" = true

[agents.books]
url = "https://books.example"
watch_every = 60
""",
    )
    cfg = load_config()
    assert cfg.agents["books"].url == "https://books.example" and cfg.watch_every is None
    assert cfg.ignored == ("watch_evry", "future\x1b[31m", "agents.books.watch_every")
    note = cfg.ignored_note()
    assert note is not None and str(cfg.path) in note
    assert "watch_evry" in note and "agents.books.watch_every" in note
    assert "\x1b" not in note  # a control character in a key name is shown, not sent to the terminal


def test_commands_and_the_tui_say_which_settings_were_ignored(_isolated_home: Path, capsys) -> None:
    import argparse

    from explorer.cli import main
    from explorer.tui.launch import build_context

    _write(_isolated_home, "watch_evry = 5\n")
    assert main(["card", str(REPO / "examples" / "agent-card.json")]) in (0, 3)
    assert "ignored settings this version does not know: watch_evry" in capsys.readouterr().err
    context = build_context(argparse.Namespace(target=None, header=[], keys=[], home=None))
    assert any("watch_evry" in warning for warning in context.warnings)
