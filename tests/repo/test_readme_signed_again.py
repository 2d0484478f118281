"""The README's "signed again" example runs as printed (tests/repo/test_readme.py's rule for `sh` blocks).

The README shows what a restart of an agent that signs at every start does to the history: the
steady reference agent served by `demo --serve --home restarts`, asked once, stopped, started
again with the same line (its card signed again with the key kept in that home), asked again;
then `compare 1 2` exits 0 saying "signed again" and `history --changed` lists nothing. Each line
runs here as printed, in a shell activated as the README says, with only the port changed to a
free one (a test never binds a fixed one).
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.repo.test_readme import EXAMPLES, README, SH_BLOCKS, _activated_shell

SECTION = README[README.index("### What changed") : README.index("### Exit statuses")]


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def test_the_section_names_the_three_kinds_and_signed_again() -> None:
    for said in ("`declarations`", "`key`", "`answers`", "`signed again`", "`resigned`", "`compare` exits 0"):
        assert said in SECTION, said
    assert any(c[:3] == ["interview-explorer", "compare", "1"] and "restarts" in c for c in EXAMPLES)


@pytest.mark.slow  # subprocesses and a demo agent on loopback, started twice
@pytest.mark.timeout(180)
def test_a_restart_that_signs_again_compares_as_no_change_as_printed(tmp_path: Path) -> None:
    serve = next(" ".join(c) for c in EXAMPLES if c[:3] == ["interview-explorer", "demo", "--serve"]
                 and "restarts" in c)  # fmt: skip
    first, again = (block for block in SH_BLOCKS if "compare 1 2" in block or "restarts/demo-keys" in block)
    port = re.search(r"--port (\d+)", serve).group(1)  # type: ignore[union-attr]
    free = _free_port()
    venv = Path(sys.prefix) / "bin"
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("INTERVIEW_EXPLORER_HOME", None)
    env.pop("INTERVIEW_EXPLORER_HISTORY", None)

    def session(block: str) -> subprocess.CompletedProcess[str]:
        """The demo started as printed, `block` run once it listens, the demo stopped."""
        server = subprocess.Popen(
            ["bash", "-c", f". {shlex.quote(str(venv / 'activate'))} && exec {serve.replace(port, free)}"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert server.stderr is not None
            while "listening" not in (line := server.stderr.readline()):
                assert line, "demo --serve ended before it listened"
            return _activated_shell(
                "set -e\n" + block.replace(f":{port}/", f":{free}/"), tmp_path, tmp_path / "unused-home"
            )
        finally:
            server.terminate()
            server.communicate(timeout=30)

    asked = session(first)
    assert asked.returncode == 0 and "recorded as run 1" in asked.stderr, asked.stderr
    # The compare line is last but one, so `set -e` stops at it unless it exits 0.
    done = session(again)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "recorded as run 2" in done.stderr
    said = "no change, signed again: the card was signed again over the same declarations"
    assert said in done.stdout and said in " ".join(SECTION.split())
    assert "signed again card /signatures" in done.stdout
    assert done.stdout.rstrip().endswith("no recorded runs match")  # `history --changed`
    assert (tmp_path / "restarts" / "demo-keys.jwks").exists()
