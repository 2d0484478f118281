"""A newcomer's typos get a usage error that says what was meant, never a verdict or a TUI.

`verfiy URL` and a bare `verfiy` were read as a TUI target; `verify stedy` and `verify
127.0.0.1:1` reported `unreachable` (exit 3) with the cause said twice. Each is now exit 2 with
"did you mean", and a real unreachable agent's cause is said once. Run as a user runs them: the
console entry point in a subprocess.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # the console entry point in subprocesses


def _cli(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("argv", [("verfiy", "http://127.0.0.1:9/"), ("verfiy",), ("histroy",)])
def test_a_mistyped_command_is_a_usage_error_that_names_the_command(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    done = _cli(*argv, home=tmp_path)
    meant = {"verfiy": "verify", "histroy": "history"}[argv[0]]
    assert done.returncode == 2, done.stderr
    assert f"unknown command {argv[0]!r}; did you mean `interview-explorer {meant}`?" in done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr


def test_a_configured_agent_named_like_a_command_is_not_a_typo(tmp_path: Path) -> None:
    config = '[agents.verfiy]\nurl = "http://127.0.0.1:9/"\n'
    (tmp_path / "config.toml").write_text(config, encoding="utf-8")
    done = _cli("verfiy", "--no-such-option", home=tmp_path)  # reaches the TUI's parser, not a typo
    assert "unknown command" not in done.stderr and done.returncode == 2


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("stedy", "did you mean the reference agent steady"),
        ("steady", "steady is a reference agent: `interview-explorer demo --serve --only steady`"),
        ("127.0.0.1:1", "'127.0.0.1:1' is not a URL; did you mean http://127.0.0.1:1 ?"),
        ("cards/nope.json", "no such card file 'cards/nope.json'"),
        ("nope.json", "no such card file 'nope.json'"),  # a missing file, never a host to look up
        ("http//127.0.0.1:1/", "'http//127.0.0.1:1/' is not a URL; did you mean http://127.0.0.1:1/ ?"),
        (
            "htp://127.0.0.1:1/",
            "'htp://127.0.0.1:1/' is not an http(s) URL; did you mean http://127.0.0.1:1/",
        ),
        ("htps://agent.example", "is not an http(s) URL; did you mean https://agent.example ?"),
        ("http:/127.0.0.1:1", "'http:/127.0.0.1:1' is not an http(s) URL; did you mean http://127.0.0.1:1 ?"),
        ("ftp://agent.example/card.json", "not an http(s) URL; a target URL starts with http:// or https://"),
        ("stonewrk", "did you mean the configured agent stonework?"),
    ],
)
def test_a_target_that_names_nothing_is_a_usage_error_listing_what_a_target_can_be(
    tmp_path: Path, target: str, said: str
) -> None:
    config = '[agents.stonework]\nurl = "http://127.0.0.1:9/"\n'
    (tmp_path / "config.toml").write_text(config, encoding="utf-8")
    for argv in (("verify", target, "--no-history"), ("card", target), (target,)):
        done = _cli(*argv, home=tmp_path)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert said in done.stderr, (argv, done.stderr)
        assert done.stdout == "" and "Traceback" not in done.stderr
    if ":" not in target:
        assert "a target is a base URL" in done.stderr  # what a target can be, listed


def test_an_unreachable_agent_says_its_cause_once(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = _cli("verify", f"http://127.0.0.1:{port}", "--no-history", home=tmp_path)
    assert done.returncode == 3
    findings = done.stdout[done.stdout.index("findings:") :]
    assert findings.count("Connection refused") == 1, findings
    assert "card_unreachable" in findings and "transport_error" not in findings
    assert "to check it" not in done.stdout  # no card, so no signature to make checkable


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ("verify", "http://127.0.0.1:1/", "--timeout", "abc"),
            "interview-explorer verify: argument --timeout: expected a number of seconds, got 'abc'",
        ),
        (
            ("verify", "http://127.0.0.1:1/", "--frobnicate"),
            "interview-explorer verify: unrecognized arguments: --frobnicate",
        ),
        (("compare", "1"), "interview-explorer compare: the following arguments are required: RUN_B"),
        (("--frobnicate",), "interview-explorer: unrecognized arguments: --frobnicate"),
    ],
)
def test_a_usage_error_is_one_sentence_naming_the_command_and_its_help(
    tmp_path: Path, argv: tuple[str, ...], said: str
) -> None:
    done = _cli(*argv, home=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"{said} (see `{said.split(':')[0]} --help`)"], done.stderr
