"""`history import` of real transcripts: what is recorded, what is refused, and what is kept.

A reference agent on 127.0.0.1 is interviewed and the run signed with a real runner key on one
"machine" (an explorer home); its JSON export is then imported, as made or crafted, into another
home's real SQLite history, through the same entry point a user types.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main

pytestmark = pytest.mark.slow  # the CLI against a reference agent, real signatures


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def signed(capsys: pytest.CaptureFixture[str], fleet: Any, tmp_path: Path) -> dict[str, Path]:
    """A signed run of the steady agent exported as JSON, the runner's public key set, and the
    agent's card keys."""
    agent = fleet.agents["steady"]
    keys = tmp_path / "agent.jwks"
    keys.write_text(json.dumps(agent.jwks))
    key = tmp_path / "runner.pem"
    code, out, err = _run(capsys, "keygen", "--out", str(key))
    assert code == 0, err
    trust = tmp_path / "runner.jwks"
    trust.write_text(out)
    home = ["--home", str(tmp_path / "runner-home")]
    code, _, err = _run(
        capsys, "verify", agent.card_url, "--keys", str(keys), *home,
        "--sign-key", str(key), "--runner", "ci@example.org", "--as", "independent",
    )  # fmt: skip
    assert code == 0, err
    exported = tmp_path / "signed.json"
    assert _run(capsys, "export", "1", "-o", str(exported), *home)[0] == 0
    return {"transcript": exported, "trust": trust, "keys": keys}


def _stripped(signed: Path, folder: Path) -> Path:
    data = json.loads(signed.read_text())
    del data["run_attestation"]
    path = folder / "stripped.json"
    path.write_text(json.dumps(data))
    return path


def test_a_signed_transcript_imported_after_its_stripped_copy_keeps_its_signature(
    capsys: pytest.CaptureFixture[str], signed: dict[str, Path], tmp_path: Path
) -> None:
    stripped = _stripped(signed["transcript"], tmp_path)
    reader = ["--home", str(tmp_path / "reader-home")]
    code, out, err = _run(capsys, "history", "import", str(stripped), *reader)
    assert code == 0 and out.startswith("imported as run 1"), err
    code, out, err = _run(capsys, "history", "import", str(signed["transcript"]), *reader)
    assert code == 0 and out.startswith("imported as run 2"), (out, err)
    code, out, _ = _run(capsys, "show", "2", "--json", "--trust-runner", str(signed["trust"]), *reader)
    report = json.loads(out)
    assert report["standing"] == "evidence" and report["run_attestation"]["status"] == "verified"
    code, out, _ = _run(capsys, "export", "2", "--format", "intoto", *reader)
    assert code == 0 and json.loads(out) == json.loads(signed["transcript"].read_text())["run_attestation"]
    code, out, _ = _run(capsys, "show", "1", "--json", "--trust-runner", str(signed["trust"]), *reader)
    assert json.loads(out)["standing"] == "claim"  # the stripped copy stays what it is
    # Both again: each is already there.
    code, out, _ = _run(capsys, "history", "import", str(signed["transcript"]), str(stripped), *reader)
    assert code == 0 and out.splitlines()[0].startswith("already recorded as run 2")
    assert out.splitlines()[1].startswith("already recorded as run 1")


def test_a_stripped_copy_imported_after_the_signed_transcript_is_already_recorded(
    capsys: pytest.CaptureFixture[str], signed: dict[str, Path], tmp_path: Path
) -> None:
    stripped = _stripped(signed["transcript"], tmp_path)
    reader = ["--home", str(tmp_path / "reader-home")]
    code, out, err = _run(capsys, "history", "import", str(signed["transcript"]), str(stripped), *reader)
    assert code == 0, err
    assert out.splitlines()[0].startswith("imported as run 1")
    assert out.splitlines()[1].startswith("already recorded as run 1")
    code, out, _ = _run(capsys, "history", "--json", *reader)
    assert [json.loads(line)["id"] for line in out.splitlines()] == [1]  # NDJSON: one run per line
    code, out, _ = _run(capsys, "show", "1", "--json", "--trust-runner", str(signed["trust"]), *reader)
    assert json.loads(out)["standing"] == "evidence"
