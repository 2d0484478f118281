"""One plan for every surface: verify, card, replay, watch and the TUI ask with the same options.

The same target (a configured agent's name, its URL, or a card file), the same config file and the
same command-line flags must reach the procedure as the same `Options` whichever surface the person
used. The entry points run for real from their argument parsers; only the procedure itself is
replaced by a function that records what it was asked with (these tests are about the asking; the
live paths are covered in test_verify_cli.py, test_history_commands.py and the TUI flows).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import _tui_parser, main
from explorer.config import settings
from explorer.config.file import load_config
from explorer.core.run import Run
from explorer.interview.options import Options
from explorer.interview.planning import plan
from explorer.store.sqlite import History
from explorer.tui.launch import build_context
from tests.support.paths import REPO

KEYS = str(REPO / "examples" / "agent-keys.jwks")
CARD_FILE = str(REPO / "examples" / "agent-card.json")
AGENT_URL = "http://127.0.0.1:9/books"
FLAGS = ["--header", "X-Extra: 1", "--keys", KEYS, "--allow-jku", "--openclasp", "http://127.0.0.1:9/oc"]
WHO = ["--as", "independent", "--runner", "me"]


@pytest.fixture
def config_home(_isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (_isolated_home / "config.toml").write_text(
        f'runner = "ci"\nrole = "platform"\nkeys = ["{KEYS}"]\n'
        f'[agents.books]\nurl = "{AGENT_URL}"\n'
        'headers = { Authorization = "env:BOOKS_TOKEN", "X-Extra" = "env:BOOKS_EXTRA" }\n'
        f'keys = ["{KEYS}"]\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("BOOKS_TOKEN", "Bearer from-env")
    monkeypatch.setenv("BOOKS_EXTRA", "configured")
    return _isolated_home


class _Asked:
    """Stands in for the procedure: records (target, options) and answers with a fixed report."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Options]] = []

    def report(self, target: str, options: Options) -> Run:
        self.calls.append((target, options))
        return Run(
            report={
                "verdict": "unreachable",
                "target": target,
                "ran_by": {"name": options.runner or "unknown", "role": options.role},
                "card": {"url": target},
                "findings": [],
            }
        )


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> _Asked:
    import explorer.interview.procedure as procedure

    recorder = _Asked()

    def sync(target: str, options: Options, progress: Any = None) -> Run:
        return recorder.report(target, options)

    async def run(target: str, options: Options, progress: Any = None) -> Run:
        return recorder.report(target, options)

    monkeypatch.setattr(procedure, "run_interview_sync", sync)
    monkeypatch.setattr(procedure, "run_interview", run)
    return recorder


def _keys_loaded(planned: tuple[str, Options]) -> tuple[str, Options]:
    """What `verify` asks with: the same plan, its key sources loaded up front (once per sweep)."""
    from explorer.commands.common import load_trusted_keys

    target, options = planned
    loaded = load_trusted_keys([k for k in options.keys if isinstance(k, str)], options.timeout, "verify")
    return target, dataclasses.replace(options, keys=(loaded,) if loaded["keys"] else ())


def _verify(target: str, *extra: str) -> None:
    main(["verify", target, "--json", "--no-history", *extra])


def _watch(target: str, *extra: str) -> None:
    main(["watch", target, "--every", "0.01", "--count", "1", "--no-history", *extra])


def _tui(target: str, *extra: str) -> tuple[str, Options]:
    return build_context(_tui_parser().parse_args(list(extra))).plan(target)


@pytest.mark.parametrize("target", ["books", AGENT_URL, AGENT_URL + "/", CARD_FILE])
def test_verify_watch_and_the_tui_ask_with_the_same_options(
    target: str, config_home: Path, asked: _Asked, capsys: pytest.CaptureFixture[str]
) -> None:
    _verify(target, *WHO, *FLAGS)
    _watch(target, *WHO, *FLAGS)
    expected = plan(target, settings.given(_tui_parser().parse_args([*WHO, *FLAGS])), load_config())
    assert asked.calls == [_keys_loaded(expected), expected]
    assert _tui(target, *WHO, *FLAGS) == expected
    url, options = expected
    configured = target != CARD_FILE
    assert url == (AGENT_URL if target == "books" else target)
    assert (options.role, options.runner, options.allow_jku) == ("independent", "me", True)
    assert options.openclasp_base == "http://127.0.0.1:9/oc"
    # Config keys, the agent's keys, then --keys; configured headers with the typed one winning.
    assert options.keys == ((KEYS, KEYS, KEYS) if configured else (KEYS, KEYS))
    configured_headers = {"Authorization": "Bearer from-env"} if configured else {}
    assert dict(options.headers) == {**configured_headers, "X-Extra": "1"}


def test_without_flags_the_config_decides_and_verify_sends_configured_headers_to_a_url(
    config_home: Path, asked: _Asked, capsys: pytest.CaptureFixture[str]
) -> None:
    _verify(AGENT_URL)
    (url, options) = asked.calls[0]
    assert url == AGENT_URL  # typed as a URL, it stays as typed; the config still applies
    assert dict(options.headers) == {"Authorization": "Bearer from-env", "X-Extra": "configured"}
    assert (options.role, options.runner, options.timeout, options.reruns) == ("platform", "ci", 10.0, 1)
    assert _keys_loaded(_tui(AGENT_URL)) == asked.calls[0]


def test_flags_win_over_the_config(
    config_home: Path, asked: _Asked, capsys: pytest.CaptureFixture[str]
) -> None:
    _verify("books", "--as", "self", "--runner", "typed", "--timeout", "3", "--reruns", "0", "--public-only")
    _, options = asked.calls[0]
    assert (options.role, options.runner, options.timeout, options.reruns, options.public_only) == (
        "self",
        "typed",
        3.0,
        0,
        True,
    )
    assert "books is the configured agent" in capsys.readouterr().err


def test_the_deadline_comes_from_the_config_or_the_flag_and_a_bad_one_is_refused(
    config_home: Path, asked: _Asked, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_home / "config.toml"
    text = config.read_text(encoding="utf-8").replace('runner = "ci"\n', 'runner = "ci"\ndeadline = 45\n')
    config.write_text(text + "deadline = 20.5\n", encoding="utf-8")  # the last table is books' entry
    _verify("books")
    _verify(AGENT_URL.replace("books", "other"))
    _verify("books", "--deadline", "7")
    assert [options.deadline for _, options in asked.calls] == [20.5, 45.0, 7.0]  # agent, global, flag
    with pytest.raises(SystemExit) as exc:
        main(["verify", "books", "--deadline", "0"])
    assert exc.value.code == 2 and "--deadline" in capsys.readouterr().err
    config.write_text('deadline = "soon"\n', encoding="utf-8")
    assert main(["verify", AGENT_URL, "--json"]) == 2
    assert "deadline must be a number of seconds" in capsys.readouterr().err


def test_replay_asks_the_recorded_target_as_you_with_todays_flags_and_config(
    config_home: Path, asked: _Asked, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = Run(
        report={
            "verdict": "conformant",
            "target": AGENT_URL,
            "ran_by": {"name": "ACME Certification Platform", "role": "independent"},
            "card": {"url": AGENT_URL, "signature": {"key_source": "user"}},
            "findings": [],
        },
        keys={"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "A" * 43, "kid": "k1"}]},
    )
    with History.open() as history:
        run_id = history.record(recorded)
    main(["replay", str(run_id), "--no-history", *FLAGS])
    _watch(str(run_id), *FLAGS)
    # The recorded run's runner, role and keys are its own: who asks, and with which keys, is you.
    expected = plan(AGENT_URL, settings.given(_tui_parser().parse_args(FLAGS)), load_config())
    assert asked.calls == [expected, expected]
    assert (expected[1].role, expected[1].runner) == ("platform", "ci")  # the config's
    main(["replay", str(run_id), "--no-history", *WHO, *FLAGS])
    yours = settings.given(_tui_parser().parse_args([*WHO, *FLAGS]))
    assert asked.calls[-1] == plan(AGENT_URL, yours, load_config())


def test_card_reads_the_same_target_keys_and_timeout_without_credentials(
    config_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("BOOKS_TOKEN")  # the card is fetched without credentials: never needed
    assert main(["card", "books", "--keys", KEYS, "--timeout", "2", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["target"] == "books" and AGENT_URL in out["error"]["detail"]
    assert main(["card", CARD_FILE, "--keys", KEYS, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["keys"]["sources"] == [KEYS, KEYS]


def test_a_bad_header_or_an_unset_variable_is_one_usage_message_everywhere(
    config_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", "http://127.0.0.1:9", "--header", "NoColon", "--no-history"]) == 2
    assert "--header expects 'Name: value'" in capsys.readouterr().err
    monkeypatch.delenv("BOOKS_TOKEN")
    for argv in (["verify", AGENT_URL, "--no-history"], ["watch", "books", "--every", "1", "--no-history"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "BOOKS_TOKEN is not set" in err and "Traceback" not in err


def test_every_setting_fills_an_options_field_and_reads_its_own_config_key() -> None:
    fields = {f.name for f in dataclasses.fields(Options)}
    assert {s.name for s in settings.SETTINGS} <= fields
    for group, names in settings.GROUPS.items():
        parser = argparse.ArgumentParser()
        settings.add_arguments(parser, group)
        assert set(vars(parser.parse_args([]))) == set(names), group
    assert "s3cret" not in repr(Options(headers=(("Authorization", "Bearer s3cret"),)))


def test_verify_of_a_configured_url_sends_its_configured_headers_on_the_wire(
    _isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The visible bug behind the one rule: `verify URL` used to match configured agents by name only."""
    from http.server import BaseHTTPRequestHandler

    from tests.support.http_server import base_url, serving

    card = json.loads(Path(CARD_FILE).read_text(encoding="utf-8"))
    card["capabilities"] = {}  # nothing to ask: the card request is the whole interview
    body = json.dumps(card).encode()
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (stdlib name)
            seen.append({k.lower(): v for k, v in self.headers.items()})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Handler) as server:
        url = base_url(server) + "/.well-known/agent-card.json"
        (_isolated_home / "config.toml").write_text(
            f'[agents.wired]\nurl = "{url}"\nheaders = {{ X-Team-Token = "env:WIRED_TOKEN" }}\n',
            encoding="utf-8",
        )
        monkeypatch.setenv("WIRED_TOKEN", "t0ken")
        assert main(["verify", url, "--json", "--no-history", "--timeout", "2"]) == 4  # not_offered
    report = json.loads(capsys.readouterr().out)
    assert seen and seen[0].get("x-team-token") == "t0ken"
    assert "t0ken" not in json.dumps(report)  # sent, never recorded


def test_a_secret_typed_in_the_tui_wins_and_is_never_read_as_a_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TYPED_LOOKALIKE", "what-the-environment-holds")
    given = {"bearer": "env:TYPED_LOOKALIKE"}  # a flag or config value may be a reference
    assert plan(AGENT_URL, given)[1].bearer == "what-the-environment-holds"
    typed = {"bearer": "env:TYPED_LOOKALIKE"}  # typed into the sign-in dialog: the secret itself
    assert plan(AGENT_URL, given, resolved=typed)[1].bearer == "env:TYPED_LOOKALIKE"
