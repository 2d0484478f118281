"""What the headless commands say on stderr, as a newcomer reads it: a timeout names the option
that sets it and its default, the jku note appears only when the jku would have helped, and
`-q` keeps a verify to its result. Each runs the console entry point in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from http_support import silent_listener

pytestmark = pytest.mark.slow  # the console entry point in subprocesses

REPO = Path(__file__).resolve().parent.parent


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


def test_an_answer_in_time_gets_no_timeout_hint(tmp_path: Path) -> None:
    card = REPO / "examples" / "agent-card.json"
    done = _cli("verify", str(card), "--no-history", home=tmp_path)
    assert "--timeout" not in done.stderr
