"""The README's commands work as printed, for a newcomer who copies them.

A newcomer set up with the README's first command and then met "command not found": the set-up
installed into `.venv` and never activated it. So the README's `sh` blocks are held to a rule:
each line runs as printed (a synopsis with placeholders goes in a plain block). Checked here:
every `interview-explorer` command in them is accepted by the explorer's own argument parser;
none holds a placeholder; the set-up activates the environment before the first bare
`interview-explorer`, and that activation puts the command on the PATH; the examples that need
no network beyond loopback run, as printed, in a subprocess. The README also states no count the
code would make stale (the reference agents are listed by name, and every one of them is).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.cli import COMMANDS, _parser, _tui_parser
from explorer.demo.variants import VARIANTS
from tests.support.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
SH_BLOCKS = re.findall(r"^```sh\n(.*?)^```", README, re.S | re.M)
# Values for the shell variables the examples use, so they can be parsed.
VARIABLES = {"TOKEN": "t0k3n", "I": "1", "N": "2", "INTERVIEW_EXPLORER_HISTORY": "sqlite:///shared.db"}
PROGRAMS = {"interview-explorer", "python3", "pip", ".", ".venv/bin/python", ".venv/bin/pip", "psql",
            "export"}  # fmt: skip
SEPARATORS = {"&&", "||", ";", "|", "&"}
REDIRECTIONS = {">", ">>", "<", "2>"}
PLACEHOLDER = re.compile(r"^\[|^[A-Z][A-Z0-9_]+(\.\.\.)?$")  # [--json], RUN, AGENT...


def _commands(block: str) -> list[list[str]]:
    """The simple commands of a block: continuations joined, variables filled in, comments,
    redirections and separators dropped."""
    text = block.replace("\\\n", " ")
    text = re.sub(r"\$\{?([A-Za-z_]+)\}?", lambda m: VARIABLES.get(m.group(1), "x"), text)
    commands: list[list[str]] = []
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
        lexer.commenters = "#"
        lexer.whitespace_split = True
        current: list[str] = []
        tokens = iter(lexer)
        for token in tokens:
            if token in SEPARATORS:
                commands.append(current)
                current = []
            elif token in REDIRECTIONS or token.endswith(">"):
                next(tokens, None)  # the file
            else:
                current.append(token)
        commands.append(current)
    return [command for command in commands if command]


EXAMPLES = [command for block in SH_BLOCKS for command in _commands(block)]
EXPLORER_EXAMPLES = [command[1:] for command in EXAMPLES if command[0] == "interview-explorer"]


def test_the_readme_has_examples_to_check() -> None:
    assert len(SH_BLOCKS) >= 8 and len(EXPLORER_EXAMPLES) >= 15


@pytest.mark.parametrize("command", EXAMPLES, ids=lambda c: " ".join(c)[:60])
def test_every_example_line_is_a_command_without_placeholders(command: list[str]) -> None:
    assert command[0] in PROGRAMS, f"not a command a newcomer can run: {command}"
    placeholders = [token for token in command if PLACEHOLDER.search(token)]
    assert not placeholders, f"{placeholders} in {command}: a synopsis belongs in a plain block"


@pytest.mark.parametrize("argv", EXPLORER_EXAMPLES, ids=lambda a: " ".join(a)[:60])
def test_every_explorer_example_is_accepted_by_its_argument_parser(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    first = argv[0] if argv else ""
    parser: argparse.ArgumentParser = _parser(first) if first in COMMANDS else _tui_parser()
    try:
        parser.parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"interview-explorer {shlex.join(argv)}: exit {exc.code}: {capsys.readouterr().err}")


def test_the_set_up_activates_the_environment_before_the_command_is_used_bare() -> None:
    setup = _commands(SH_BLOCKS[0])
    words = [command[0] for command in setup]
    assert ["."] == [w for w in words if w == "."] and words.index(".") < words.index("interview-explorer")
    assert setup[words.index(".")] == [".", ".venv/bin/activate"]
    bare = README.index("\ninterview-explorer ")
    assert README.index(". .venv/bin/activate") < bare  # said before any later example uses it


def _activated_shell(
    command: str, cwd: Path, home: Path, user_home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`command` in bash after the README's activation of this test run's environment (in place of
    `.venv`), starting from a PATH that does not hold it: the newcomer's shell (`~` is `user_home`
    when given)."""
    venv = Path(sys.prefix)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != venv / "bin")
    env = {**os.environ, "PATH": path, "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1"}
    if user_home is not None:
        env["HOME"] = str(user_home)
    env.pop("VIRTUAL_ENV", None)
    script = f". {shlex.quote(str(venv / 'bin' / 'activate'))} && {command}"
    return subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.slow  # subprocesses and a demo agent on loopback
def test_the_offline_examples_run_as_printed_in_an_activated_shell(tmp_path: Path) -> None:
    assert (Path(sys.prefix) / "bin" / "activate").exists(), "the tests run in a virtual environment"
    card = "interview-explorer card examples/agent-card.json --keys examples/agent-keys.jwks"
    assert f"`{card}`" in README
    done = _activated_shell(card, REPO, tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "verified" in done.stdout and "example-agent-2026" in done.stdout


@pytest.mark.slow  # subprocesses and a demo agent on loopback
def test_the_demo_example_runs_as_printed_on_a_free_port(tmp_path: Path) -> None:
    """The two terminals of the demo example: `demo --serve` in one, `verify` in the other once it
    says "listening". Only the port is changed (a test never binds a fixed one)."""
    import socket

    serve = next(" ".join(c) for c in EXAMPLES if c[:3] == ["interview-explorer", "demo", "--serve"])
    verify = next(" ".join(c) for c in EXAMPLES if c[:2] == ["interview-explorer", "verify"] and "--keys" in c
                  and "demo-keys.jwks" in c)  # fmt: skip
    port = re.search(r"--port (\d+)", serve).group(1)  # type: ignore[union-attr]
    assert f"127.0.0.1:{port}/" in verify
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = str(probe.getsockname()[1])
    venv = Path(sys.prefix) / "bin"
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    server = subprocess.Popen(
        ["bash", "-c", f". {shlex.quote(str(venv / 'activate'))} && exec {serve.replace(port, free)}"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stderr is not None
        while "listening" not in (line := server.stderr.readline()):
            assert line, "demo --serve ended before it listened"
        done = _activated_shell(verify.replace(port, free), tmp_path, tmp_path / "home")
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("verdict: nonconformant") and "card_signature_invalid" in done.stdout


@pytest.mark.slow  # subprocesses and a demo agent on loopback
def test_the_signed_evidence_example_runs_as_printed(tmp_path: Path) -> None:
    """keygen, a signed verify, `export latest` twice, then the reader's offline check: each line
    as printed, with only the agent's URL changed to a reference agent's and its keys put at
    `keys/agent.jwks`. The history already holds a run, so `latest` must be the signed one."""
    from tests.support.demo_serve import demo_serve

    signing = next(block for block in SH_BLOCKS if "keygen" in block)
    reading = next(block for block in SH_BLOCKS if "--trust-runner" in block and "--offline" in block)
    user, home = tmp_path / "user", tmp_path / "explorer-home"
    user.mkdir()
    (tmp_path / "keys").mkdir()
    with demo_serve("--only", "steady", "--port", "0", "--keys-out", str(tmp_path / "keys" / "agent.jwks"),
                    "--home", str(home)) as served:  # fmt: skip
        url = served.url("steady")
        earlier = _activated_shell(f"interview-explorer verify {url} --keys keys/agent.jwks", tmp_path, home)
        assert earlier.returncode == 0, earlier.stderr  # an unsigned run recorded first
        assert "https://agent.example" in signing
        script = "set -e\n" + signing.replace("https://agent.example", url)
        signed = _activated_shell(script, tmp_path, home, user)
    assert signed.returncode == 0, signed.stderr
    assert (user / "runner-key.pem").exists() and "recorded as run 2" in signed.stderr
    assert "of run 2 to" in signed.stderr and '"payloadType"' in signed.stdout  # the DSSE envelope
    assert '"run_attestation"' in (tmp_path / "run.json").read_text(encoding="utf-8")
    checked = _activated_shell(reading, tmp_path, home, user)
    assert checked.returncode == 0, checked.stderr
    assert "standing: evidence: signed by ci@example.org" in checked.stdout


def test_the_postgres_extra_keeps_the_install_editable() -> None:
    """`pip install '.[postgres]'` in the clone replaced the set-up's editable install with a copy."""
    installs = re.findall(r"pip install [^`\n]*'\.\[[a-z,]+\]'", README)
    assert installs and [line for line in installs if " -e " not in f" {line} "] == []


def test_the_readme_names_every_reference_agent_and_counts_none() -> None:
    """Counts went stale ("29 agents" when `demo --list` showed 32, "about 850" fast tests when
    there were 955): the README lists the agents by name instead, and counts neither."""
    start = README.index("## The reference agents")
    section = README[start : README.index("\n## ", start)]
    assert [name for name in VARIANTS if f"`{name}`" not in section] == []
    assert not re.search(r"reference fleet \(\d+|\b\d+ (reference )?agents, one process", README)
    assert not re.search(r"\b\d+ (unit |fast )?tests\b", README)
