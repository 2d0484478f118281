"""Headless commands never import textual (or rich): a CI job must not pay for the TUI. And a
plain `verify` (no OAuth 2.0 settings, no signing or attestation checking) never imports Authlib,
securesystemslib or in-toto: start-up time is most of a short run, so what a run does not use
is loaded only on the path that uses it.

Nor does a command pay for another command's imports: `interview-explorer --help` lists the
commands without importing any of them, a command's `--help` imports its own module and the
helpers it shares, and a `verify` that records nothing loads neither the web server, the
PostgreSQL driver, the exports nor the history store (`bench/verify_overhead.py` measures the
whole process against `import httpx`).

Each command runs in a fresh interpreter through `explorer.cli.main`, once with `--help` and
once doing real work where the arguments are known (verify a card file, which records a run;
then show, export and compare that run), and the test reads `sys.modules` afterwards. A command
whose module does not exist yet is skipped with the reason. Exit statuses are not asserted here:
the point is what got imported on the way.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cards import agent_card
from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # a fresh interpreter per command

HEADLESS = ("card", "verify", "history", "show", "compare", "export", "envelope")
FORBIDDEN = ("textual", "rich")
# Needed only for OAuth 2.0 client credentials, or for signing / checking run attestations.
PLAIN_RUN_NEEDS_NONE_OF = ("authlib", "securesystemslib", "in_toto")

SCRIPT = """
import json, sys
from explorer.cli import main
argv = json.loads(sys.argv[1])
try:
    rc = main(argv)
except SystemExit as exc:
    rc = exc.code
forbidden = json.loads(sys.argv[2])
bad = sorted(m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in forbidden))
ours = sorted(m for m in sys.modules if m == "explorer" or m.startswith("explorer."))
print(json.dumps({"rc": rc if isinstance(rc, int) else None, "bad": bad, "ours": ours}))
"""

CARD = agent_card(
    "Headless",
    url="http://127.0.0.1:9/a2a",
    interview=False,
    description="a card without the interview",
    version="1.0.0",
    defaultInputModes=["text/plain"],
    defaultOutputModes=["text/plain"],
)


def _modules_after(argv: list[str], home: Path, forbidden: tuple[str, ...] = FORBIDDEN) -> list[str]:
    """The forbidden modules (each a package or module, with everything under it) `interview-explorer
    ARGV` imported, run in a fresh interpreter."""
    return _imports(argv, home, forbidden)["bad"]


def _imports(argv: list[str], home: Path, forbidden: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """What `interview-explorer ARGV` imported in a fresh interpreter: `bad`, the forbidden
    modules; `ours`, every module of the explorer."""
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(argv), json.dumps(forbidden)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stdout.strip().splitlines()
    assert lines, f"{argv}: no output\n{done.stderr}"
    found = json.loads(lines[-1])
    return {"bad": found["bad"], "ours": found["ours"]}


def _invocations(command: str, card: Path) -> list[list[str]]:
    real = {
        "card": [["card", str(card)]],
        "verify": [["verify", str(card), "--timeout", "2"], ["verify", str(card), "--json", "--no-history"]],
        "history": [["history"]],
        "show": [["show", "1"]],
        "compare": [["compare", "1", "1"]],
        "export": [["export", "1"]],
        "envelope": [],
    }
    return [[command, "--help"], *real[command]]


@pytest.mark.parametrize("command", HEADLESS)
def test_headless_command_never_imports_the_tui(command: str, tmp_path: Path) -> None:
    if importlib.util.find_spec(f"explorer.commands.{command}") is None:
        pytest.skip(f"explorer/commands/{command}.py does not exist yet")
    home = tmp_path / "home"
    home.mkdir()
    card = tmp_path / "card.json"
    card.write_text(json.dumps(CARD), encoding="utf-8")
    if command in ("show", "compare", "export") and importlib.util.find_spec("explorer.commands.verify"):
        _modules_after(["verify", str(card)], home)  # a recorded run for them to read
    for argv in _invocations(command, card):
        assert _modules_after(argv, home) == [], f"`interview-explorer {' '.join(argv)}` imported the TUI"


def test_a_plain_verify_loads_no_oauth_or_attestation_library(tmp_path: Path) -> None:
    from explorer.demo.fleet import Fleet

    home = tmp_path / "home"
    home.mkdir()
    card = tmp_path / "card.json"
    card.write_text(json.dumps(CARD), encoding="utf-8")
    fleet = Fleet(["steady"]).start()
    try:
        assert fleet.wait_ready(30)
        url = fleet.agents["steady"].base_url
        for argv in (
            ["verify", "--help"],
            ["verify", str(card), "--json", "--no-history"],
            ["verify", url, "--json", "--no-history", "--allow-jku"],
            ["verify", url, "--allow-jku"],  # recorded in history, as most runs are
        ):
            assert _modules_after(argv, home, PLAIN_RUN_NEEDS_NONE_OF) == [], f"`{' '.join(argv)}`"
    finally:
        fleet.stop()


def test_the_served_explorer_imports_the_tui_only_in_its_session_processes(tmp_path: Path) -> None:
    """`serve` checks a session, imports its web server and binds before it serves; none of that
    loads textual in the server's own process (each browser tab's process imports it)."""
    import socket

    home = tmp_path / "home"
    home.mkdir()
    with socket.socket() as busy:  # the port is taken, so serve stops with status 2 after binding
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        for argv in (["serve", "--help"], ["serve", "--port", port], ["demo", "--help"]):
            assert _modules_after(argv, home) == [], f"`interview-explorer {' '.join(argv)}` imported the TUI"


# Never loaded by a headless command that does not serve: the TUI, the browser face and its server,
# the PostgreSQL driver, the exports, and `serve`'s module.
NOT_HEADLESS = (
    "textual",
    "textual_serve",
    "aiohttp",
    "psycopg",
    "psycopg_pool",
    "explorer.tui",
    "explorer.web",
    "explorer.store.export",
    "explorer.commands.serve",
)
# What the program's own `--help` and `--version` may import: the entry point and the helpers it
# builds the TUI's parser from; no command's module.
PROGRAM_HELP = {
    "explorer",
    "explorer.cli",
    "explorer.commands",
    "explorer.commands.common",
    "explorer.core",
    "explorer.core.nogc",  # the collector's pause around start-up (explorer.cli._settle_imports)
}
# The command modules a command's parser shares besides its own and these two.
SHARED = {"common", "evidence_options"}
SHARES_ALSO = {"verify": {"verify_many"}, "watch": {"verify_many"}, "demo": {"serve"}}


@pytest.mark.parametrize("argv", [["--help"], ["--version"]])
def test_the_program_help_imports_no_command(argv: list[str], tmp_path: Path) -> None:
    found = _imports(argv, tmp_path, NOT_HEADLESS)
    assert set(found["ours"]) <= PROGRAM_HELP, sorted(set(found["ours"]) - PROGRAM_HELP)
    assert found["bad"] == []


def test_a_commands_help_imports_no_other_commands_module(tmp_path: Path) -> None:
    from explorer.cli import COMMANDS

    for command, (module, _) in COMMANDS.items():
        ours = _imports([command, "--help"], tmp_path)["ours"]
        siblings = {m.removeprefix("explorer.commands.") for m in ours if m.startswith("explorer.commands.")}
        allowed = {module} | SHARED | SHARES_ALSO.get(command, set())
        assert siblings <= allowed, f"`{command} --help` imported the modules of {sorted(siblings - allowed)}"


def test_a_verify_that_records_nothing_stays_small(tmp_path: Path) -> None:
    """`verify --help` and `verify --json --no-history` against a reference agent served by
    another thread: none of NOT_HEADLESS, and no history store (nothing is recorded)."""
    from explorer.demo.fleet import Fleet

    home = tmp_path / "home"
    home.mkdir()
    with Fleet(["steady"]) as fleet:
        assert fleet.wait_ready(30)
        url = fleet.agents["steady"].base_url
        for argv in (
            ["verify", "--help"],
            ["verify", url, "--json", "--no-history", "--allow-jku"],
            ["verify", url, "--json", "--no-history", "--allow-jku", "-q"],
        ):
            found = _imports(argv, home, (*NOT_HEADLESS, "explorer.store"))
            assert found["bad"] == [], f"`interview-explorer {' '.join(argv)}` imported {found['bad']}"
        recorded = _imports(["verify", url, "--allow-jku"], home, NOT_HEADLESS)  # the store, only as needed
        assert recorded["bad"] == [] and "explorer.store.base" in recorded["ours"]


def test_checking_a_signed_card_loads_no_jose_library_and_no_x509(tmp_path: Path) -> None:
    """The steady agent's card carries two ES256 signatures, verified over its jku key set: the
    check is `explorer.core.jwk` on cryptography's primitives, so neither joserfc nor the X.509
    machinery its key module pulls in is loaded (about a sixth of the process, bench/startup.py).
    And `verify --help` does not import what a live interview runs on (`preload` is for a run)."""
    from explorer.demo.fleet import Fleet

    home = tmp_path / "home"
    home.mkdir()
    with Fleet(["steady"]) as fleet:
        assert fleet.wait_ready(30)
        argv = ["verify", fleet.agents["steady"].base_url, "--json", "--no-history", "--allow-jku", "-q"]
        found = _imports(argv, home, ("joserfc", "cryptography.x509"))
        assert found["bad"] == [], f"verifying a signed card imported {found['bad']}"
        assert "explorer.core.jwk" in found["ours"]  # the signatures were checked, with it
    helped = _imports(["verify", "--help"], home)
    assert "explorer.interview.procedure" not in helped["ours"]
