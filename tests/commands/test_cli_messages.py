"""What the headless commands say on stderr, as a newcomer reads it: a timeout names the option
that sets it and its default, the jku note appears only when the jku would have helped, and
`-q` keeps a verify to its result. Each runs the console entry point in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.http_server import silent_listener
from tests.support.paths import REPO

if TYPE_CHECKING:
    from explorer.demo.fleet import Fleet

pytestmark = pytest.mark.slow  # the console entry point in subprocesses


def _cli(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "explorer", *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=60, env=env, stdin=subprocess.DEVNULL)  # fmt: skip


def test_a_timeout_names_the_option_and_its_default(tmp_path: Path) -> None:
    with silent_listener() as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        single = _cli("verify", url, "--timeout", "0.5", "--no-history", "--json", home=tmp_path)
        sweep = _cli("verify", url, url + "other/", "--timeout", "0.5", "--no-history", home=tmp_path)
        card = _cli("card", url, "--timeout", "0.5", home=tmp_path)
    hint = "the request timeout, 0.5 s; a slow agent may need a longer one: --timeout SECONDS (default 10 s)"
    assert single.returncode == 3 and '"timeout"' in single.stdout
    assert hint in single.stderr, single.stderr
    assert sweep.returncode == 3
    assert f"2 agents met the timeout: no complete answer came within {hint}" in sweep.stderr
    assert card.returncode == 3 and hint in card.stderr, card.stderr


def test_the_jku_note_is_said_only_when_the_jku_would_have_helped(fleet: Fleet, tmp_path: Path) -> None:
    """Without keys the note says how to check the signature; with `--keys` holding the signer's
    key the signature is verified and the note, which would only send the user after a key they
    have, is not said."""
    from explorer.demo.keyfile import public_jwks

    keys = tmp_path / "demo-keys.jwks"
    keys.write_text(json.dumps(public_jwks(fleet.agents.values())), encoding="utf-8")
    steady = fleet.agents["steady"].card_url
    note = "not fetched (allow it with --allow-jku)"
    without = _cli("verify", steady, "--json", "--no-history", home=tmp_path)
    assert json.loads(without.stdout)["card"]["signature"]["status"] == "unverifiable"
    assert note in without.stderr
    with_keys = _cli("verify", steady, "--json", "--no-history", "--keys", str(keys), home=tmp_path)
    assert json.loads(with_keys.stdout)["card"]["signature"]["status"] == "verified"
    assert note not in with_keys.stderr and "jwks" not in with_keys.stderr


def test_quiet_keeps_a_verify_to_its_result_warnings_and_errors(fleet: Fleet, tmp_path: Path) -> None:
    steady = fleet.agents["steady"].card_url
    loud = _cli("verify", steady, "--json", home=tmp_path)
    assert "[1] card: card from" in loud.stderr and "recorded as run 1" in loud.stderr
    # stderr is no terminal: no request lines (tests/commands/test_quiet.py)
    assert "HTTP 200 in" not in loud.stderr
    assert "--timeout" not in loud.stderr  # an agent that answers in time gets no timeout hint
    for flag in ("-q", "--quiet"):
        quiet = _cli("verify", steady, "--json", flag, home=tmp_path)
        assert quiet.returncode == loud.returncode == 0
        assert json.loads(quiet.stdout)["verdict"] == "conformant"
        assert quiet.stderr == "", quiet.stderr
    with silent_listener() as silent:  # a problem is still said under -q
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/"
        timed_out = _cli("verify", url, "-q", "--timeout", "0.5", "--no-history", home=tmp_path)
    assert timed_out.returncode == 3 and "[1]" not in timed_out.stderr
    assert "--timeout SECONDS" in timed_out.stderr
    unwritable = tmp_path / "home-is-a-file"
    unwritable.write_text("", encoding="utf-8")
    refused = _cli("verify", steady, "-q", "--home", str(unwritable), home=tmp_path)
    assert refused.returncode == 6 and "[1]" not in refused.stderr
    assert "the history cannot be used, so nothing was asked" in refused.stderr
