"""`interview-explorer envelope`, run as a user runs it: a subprocess, real files, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import VECTORS

pytestmark = pytest.mark.slow  # the envelope command in subprocesses

CONTRACT = VECTORS / "openclasp" / "contract.json"
KNOWN_HASH = "zGeGrDYC8Gj0zfubZHgOeaxSs3Ke62uZNincR1Zc3qM"
URI = "https://openclasp.vercel.app/extensions/trust/v0.1"


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "envelope", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _envelope(**overrides: Any) -> dict[str, Any]:
    return {
        "interactionId": "3f1c2a9e-8b7d-4e21-9c55-0a6b7e4d2f10",
        "termsHash": KNOWN_HASH,
        "initiatorAgentId": "agent_a",
        "responderAgentId": "agent_b",
        **overrides,
    }


def _write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.fixture()
def message_file(tmp_path: Path) -> Path:
    message = {
        "role": "ROLE_USER",
        "messageId": "m1",
        "parts": [{"text": "hi"}],
        "metadata": {URI: _envelope()},
    }
    return _write(tmp_path, "message.json", message)


def test_valid_envelope_with_matching_contract_exits_0(message_file: Path) -> None:
    out = _cli(message_file, "--contract", CONTRACT)
    assert out.returncode == 0, out.stderr
    assert KNOWN_HASH in out.stdout and "matches" in out.stdout
    assert out.stdout.rstrip().endswith("valid")


def test_jsonrpc_request_with_json_output(tmp_path: Path, message_file: Path) -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"message": json.loads(message_file.read_text())},
    }
    out = _cli(_write(tmp_path, "request.json", request), "--contract", CONTRACT, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)  # exactly one JSON object on stdout
    assert report["valid"] is True and report["terms_hash_match"] is True
    assert report["computed_terms_hash"] == KNOWN_HASH
    assert report["envelope"]["initiatorAgentId"] == "agent_a"


def test_hash_mismatch_exits_1(tmp_path: Path) -> None:
    message = {"metadata": {URI: _envelope(termsHash="A" * 43)}}
    out = _cli(_write(tmp_path, "m.json", message), "--contract", CONTRACT)
    assert out.returncode == 1
    assert "does NOT match" in out.stdout and "error: termsHash" in out.stdout


def test_invalid_envelope_exits_1_and_shows_hostile_text_safely(tmp_path: Path) -> None:
    message = {"metadata": {URI: _envelope(interactionId="\x1b[2Jnope\u202e")}}
    out = _cli(_write(tmp_path, "m.json", message))
    assert out.returncode == 1
    assert "not a UUID" in out.stdout
    assert "\x1b" not in out.stdout and "\u202e" not in out.stdout
    assert "\\x1b[2Jnope<U+202E>" in out.stdout


def test_custom_uri(tmp_path: Path) -> None:
    custom = "https://clasp.internal/trust"
    path = _write(tmp_path, "m.json", {"metadata": {custom: _envelope()}})
    assert _cli(path).returncode == 1
    assert _cli(path, "--uri", custom).returncode == 0


def test_hash_only_prints_the_terms_hash() -> None:
    out = _cli("--hash", CONTRACT)
    assert (out.returncode, out.stdout) == (0, KNOWN_HASH + "\n")
    out = _cli("--hash", CONTRACT, "--json")
    assert json.loads(out.stdout) == {"terms_hash": KNOWN_HASH}


@pytest.mark.parametrize(
    "args",
    [
        (),  # neither FILE nor --hash
        ("/nonexistent/message.json",),
        ("--hash", "/nonexistent/contract.json"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    out = _cli(*args)
    assert out.returncode == 2
    assert out.stderr.startswith("interview-explorer envelope: ") and "Traceback" not in out.stderr


def test_missing_contract_file_exits_2(message_file: Path) -> None:
    out = _cli(message_file, "--contract", "/nonexistent/contract.json")
    assert out.returncode == 2 and "cannot read contract" in out.stderr


@pytest.mark.parametrize("content", [b"not json", b'{"a": 1, "a": 2}', b"\xff\xfe", b""])
def test_files_that_are_not_json_are_a_usage_error(
    tmp_path: Path, message_file: Path, content: bytes
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    for args in ((bad,), (message_file, "--contract", bad), ("--hash", bad)):
        out = _cli(*args)
        assert out.returncode == 2, (args, out.stderr)  # not 3, which is verify's unreachable
        assert "is not JSON" in out.stderr and "Traceback" not in out.stderr


def test_the_command_never_imports_textual(message_file: Path) -> None:
    code = (
        "import sys\n"
        "from explorer.cli import main\n"
        f"rc = main(['envelope', {str(message_file)!r}, '--json'])\n"
        "assert 'textual' not in sys.modules, 'textual imported'\n"
        "sys.exit(rc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
