"""`history import` of real transcripts: what is recorded, what is refused, and what is kept.

A reference agent on 127.0.0.1 is interviewed and the run signed with a real runner key on one
"machine" (an explorer home); its JSON export is then imported, as made or crafted, into another
home's real SQLite history, through the same entry point a user types.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from tests.support.cards import agent_card
from tests.support.http_server import base_url, serving

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


# --- trust roots come only from you --------------------------------------------------------------


class _CardServer(BaseHTTPRequestHandler):
    """Serves one card (set on the class) at /.well-known/agent-card.json; counts every request."""

    card: bytes = b"{}"
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        type(self).requests.append(self.path)
        found = self.path == "/.well-known/agent-card.json"
        body = self.card if found else b"{}"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_replay_of_an_imported_run_never_trusts_the_key_it_carries(
    capsys: pytest.CaptureFixture[str], fleet: Any, tmp_path: Path
) -> None:
    """An attacker serves a card signed by their own key under the agent's kid, verifies it with that
    key (so its transcript says `verified`, key_source user) and hands the transcript over."""
    from explorer.core.signatures import generate_key, public_jwks, sign_card

    real = fleet.agents["steady"]
    kid = real.jwks["keys"][0]["kid"]
    attacker = generate_key("ES256", kid=kid)
    card = agent_card("Stonework Books (Steady)", url=None, interview=False, version="1.0.0")
    _CardServer.card = json.dumps(sign_card(card, attacker, kid=kid)).encode()
    (tmp_path / "attacker.jwks").write_text(json.dumps(public_jwks(attacker)))
    (tmp_path / "real.jwks").write_text(json.dumps(real.jwks))
    made, yours = ["--home", str(tmp_path / "attacker-home")], ["--home", str(tmp_path / "your-home")]
    with serving(_CardServer) as server:
        url = base_url(server)
        attacker_keys = ("--keys", str(tmp_path / "attacker.jwks"))
        code, out, err = _run(capsys, "verify", url, *attacker_keys, "--json", *made)
        assert json.loads(out)["card"]["signature"]["status"] == "verified", err
        assert json.loads(out)["card"]["signature"]["key_source"] == "user"
        assert _run(capsys, "export", "1", "-o", str(tmp_path / "gift.json"), *made)[0] == 0
        code, out, err = _run(capsys, "history", "import", str(tmp_path / "gift.json"), *yours)
        assert code == 0 and out.startswith("imported as run 1"), err
        code, out, err = _run(capsys, "replay", "1", "--json", "--no-history", *yours)
        assert json.loads(out)["report"]["card"]["signature"]["status"] == "unverifiable", err
        real_keys = ("--keys", str(tmp_path / "real.jwks"))
        code, out, err = _run(capsys, "replay", "1", "--json", "--no-history", *real_keys, *yours)
        assert json.loads(out)["report"]["card"]["signature"]["status"] == "invalid"
        code, out, _ = _run(capsys, "watch", "1", "--every", "0.1", "--count", "1", "--no-history", *yours)
        assert code == 4 and "not_offered" in out
        code, out, _ = _run(capsys, "show", "1", *yours)
        assert "signature: unverifiable" in out
        assert "verified by the keys it carries when recorded, but keys a recorded run carries are not" in out
    assert set(_CardServer.requests) == {"/.well-known/agent-card.json"}


def test_a_replay_of_a_run_that_used_the_cards_jku_fetches_it_only_when_you_allow_it(
    capsys: pytest.CaptureFixture[str], fleet: Any, tmp_path: Path
) -> None:
    agent = fleet.agents["steady"]
    home = ["--home", str(tmp_path / "home")]
    code, out, err = _run(capsys, "verify", agent.card_url, "--allow-jku", "--json", *home)
    assert json.loads(out)["card"]["signature"]["key_source"] == "jku", err
    code, out, err = _run(capsys, "replay", "1", "--json", "--no-history", *home)
    signature = json.loads(out)["report"]["card"]["signature"]
    assert signature["status"] == "unverifiable" and signature["key_source"] is None, err
    code, out, err = _run(capsys, "replay", "1", "--json", "--no-history", "--allow-jku", *home)
    assert json.loads(out)["report"]["card"]["signature"]["key_source"] == "jku"


def test_a_replay_of_an_imported_signed_run_is_signed_as_you_or_not_at_all(
    capsys: pytest.CaptureFixture[str], fleet: Any, tmp_path: Path
) -> None:
    agent = fleet.agents["steady"]
    keys = tmp_path / "agent.jwks"
    keys.write_text(json.dumps(agent.jwks))
    acme, mine = tmp_path / "acme.pem", tmp_path / "mine.pem"
    for path in (acme, mine):
        assert _run(capsys, "keygen", "--out", str(path))[0] == 0
    made = ["--home", str(tmp_path / "acme-home")]
    code, _, err = _run(
        capsys, "verify", agent.card_url, "--keys", str(keys), *made, "--sign-key", str(acme),
        "--runner", "ACME Certification Platform", "--as", "independent",
    )  # fmt: skip
    assert code == 0, err
    assert _run(capsys, "export", "1", "-o", str(tmp_path / "acme.json"), *made)[0] == 0
    home = tmp_path / "your-home"
    home.mkdir()
    (home / "config.toml").write_text(f'sign_key = "{mine}"\nkeys = ["{keys}"]\n')
    yours = ["--home", str(home)]
    assert _run(capsys, "history", "import", str(tmp_path / "acme.json"), *yours)[0] == 0
    code, out, err = _run(capsys, "replay", "1", *yours)  # your config names no role: a self-run claim
    assert code == 0 and "not used for a self-run interview" in err
    assert "standing: claim: " in out
    assert "no independent role declared (--as independent declares one)" in out
    assert "ACME" not in out
    code, out, err = _run(capsys, "replay", "1", "--as", "independent", "--runner", "me", *yours)
    assert code == 0, err
    code, out, _ = _run(capsys, "show", "3", *yours)
    assert "standing: evidence: signed by me (key" in out and "ACME" not in out


# --- what every surface says of a run whose role is only a label --------------------------------


def _every_output(
    capsys: pytest.CaptureFixture[str], home: list[str], run_id: str, other: str
) -> dict[str, str]:
    """Every place a user meets a recorded run: show, history, compare, each export format."""
    outputs: dict[str, str] = {}
    for name, argv in {
        "show": ("show", run_id),
        "show --json": ("show", run_id, "--json"),
        "history": ("history",),
        "history --json": ("history", "--json"),
        "compare": ("compare", other, run_id),
        "compare --json": ("compare", other, run_id, "--json"),
        "export json": ("export", run_id, "--format", "json"),
        "export md": ("export", run_id, "--format", "md"),
        "export html": ("export", run_id, "--format", "html"),
    }.items():
        code, out, err = _run(capsys, *argv, *home)
        assert code in (0, 1), (name, err)
        outputs[name] = out
    return outputs


def _says_claim_and_why(name: str, text: str, who: str) -> None:
    if name.endswith("json"):
        lines = text.splitlines() if name == "history --json" else [text]
        values = [json.loads(line) for line in lines]
        standings = [s for v in values for s in _members(v, "standing") if isinstance(s, str)]
        reasons = [r for v in values for r in _members(v, "reason")]
        assert standings and set(standings) == {"claim"}, (name, standings)
        assert "unsigned" in reasons, name
    elif name == "history":
        assert "claim · unsigned" in text and "evidence" not in text, name
    else:
        assert f"claim, unsigned: {who} says it ran this as an independent party" in text, name
        assert "evidence: run by" not in text and "evidence: signed" not in text, name


def _members(value: Any, name: str) -> list[Any]:
    """Every value of a member called `name`, at any depth (a proposal's `standing` is a boolean)."""
    found, stack = [], [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found += [v for k, v in node.items() if k == name]
            stack += node.values()
        elif isinstance(node, list):
            stack += node
    return found


async def _tui_says_claim(home: Path, run_id: int, who: str) -> None:
    import argparse

    from textual.widgets import Static

    from explorer.tui.launch import build_app
    from explorer.tui.pictures import fixed_clock
    from explorer.tui.screens.history import COLUMNS, HistoryScreen, RunTable
    from tests.support.tui import plain, wait_for, wait_for_interview

    args = argparse.Namespace(target=str(run_id), home=str(home))
    app = build_app(args, cursor_blink=False, clock=fixed_clock)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for_interview(pilot)
        header = plain(app.screen.query_one("#header", Static))
        assert f"claim, unsigned: {who} says it ran this as an independent party" in header
        await pilot.press("f2")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        await pilot.pause()
        table = app.screen.query_one(RunTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        column = COLUMNS.index("standing")
        marks = {str(table.get_row_at(i)[column]) for i in range(table.row_count)}
        assert marks == {"claim · unsigned"}
    app.context.close()


def test_an_unsigned_independent_run_is_a_claim_with_its_reason_wherever_it_is_read(
    capsys: pytest.CaptureFixture[str], fleet: Any, tmp_path: Path
) -> None:
    import asyncio

    agent = fleet.agents["steady"]
    keys = tmp_path / "agent.jwks"
    keys.write_text(json.dumps(agent.jwks))
    home = tmp_path / "home"
    who = ("--as", "independent", "--runner", "auditor", "--keys", str(keys))
    for _ in range(2):
        code, out, err = _run(capsys, "verify", agent.card_url, *who, "--json", "--transcripts",
                              str(tmp_path / "shard"), "--home", str(home))  # fmt: skip
        assert code == 0, err
    for name, text in _every_output(capsys, ["--home", str(home)], "2", "1").items():
        _says_claim_and_why(name, text, "auditor")
    for path in (tmp_path / "shard").glob("*.json"):  # what a sweep leaves for `history import`
        _says_claim_and_why("transcript json", path.read_text(), "auditor")
    asyncio.run(_tui_says_claim(home, 2, "auditor"))


def test_a_signed_transcript_stripped_of_its_envelope_is_a_claim_wherever_it_is_read(
    capsys: pytest.CaptureFixture[str], signed: dict[str, Path], tmp_path: Path
) -> None:
    import asyncio

    stripped = _stripped(signed["transcript"], tmp_path)
    code, out, _ = _run(capsys, "verify", "--offline", str(stripped), "--trust-runner", str(signed["trust"]),
                        "--keys", str(signed["keys"]))  # fmt: skip
    _says_claim_and_why("verify --offline", out, "ci@example.org")
    code, out, _ = _run(capsys, "verify", "--offline", str(stripped), "--trust-runner", str(signed["trust"]),
                        "--json")  # fmt: skip
    _says_claim_and_why("verify --offline --json", out, "ci@example.org")
    home = tmp_path / "reader-home"
    home.mkdir()
    (home / "config.toml").write_text(f'trusted_runners = ["{signed["trust"]}"]\n')
    reader = ["--home", str(home)]
    for _ in range(2):  # imported once; the second is already recorded, so import it beside a copy
        assert _run(capsys, "history", "import", str(stripped), *reader)[0] == 0
    copy_of = json.loads(stripped.read_text())
    copy_of["exchanges"][0]["started_at"] = "2026-01-01T00:00:00.000Z"  # another run (its time)
    (tmp_path / "copy.json").write_text(json.dumps(copy_of))
    assert _run(capsys, "history", "import", str(tmp_path / "copy.json"), *reader)[0] == 0
    for name, text in _every_output(capsys, reader, "1", "2").items():
        _says_claim_and_why(name, text, "ci@example.org")
    asyncio.run(_tui_says_claim(home, 1, "ci@example.org"))


def test_a_transcript_altered_after_signing_is_said_so_at_import(
    capsys: pytest.CaptureFixture[str], signed: dict[str, Path], tmp_path: Path
) -> None:
    data = json.loads(signed["transcript"].read_text())
    data["exchanges"][0]["response_headers"].append(["X-Injected", "after signing"])  # the report fits
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(data))
    reader = ["--home", str(tmp_path / "reader-home"), "--trust-runner", str(signed["trust"])]
    code, out, err = _run(capsys, "history", "import", str(altered), *reader)
    assert code == 0 and out.startswith("imported as run 1"), err
    assert "its signature does not hold for these bytes (altered transcript" in err
    assert "recorded as a claim" in err
    code, out, _ = _run(capsys, "show", "1", *reader)
    assert "standing: claim, altered transcript" in out
    code, out, err = _run(capsys, "history", "import", str(signed["transcript"]), *reader)
    assert "warning" not in err  # the untouched file says nothing of the kind


# --- the screens --------------------------------------------------------------------------------


def _broken_files(folder: Path) -> dict[str, Path]:
    good = json.loads(json.dumps({"transcript_version": 1, "report": {}, "exchanges": [], "keys": {}}))
    files = {
        "nesting is 200001 levels deep": b'{"transcript_version": 1, "report": ' + b"[" * 200_000
        + b"]" * 200_000 + b"}",
        "duplicate key 'report'": b'{"transcript_version": 1, "report": {"verdict": 1}, "report": {}}',
        "/exchanges/0/status must be": json.dumps(
            {**good, "exchanges": [{"purpose": "card", "status": "200"}]}).encode(),
    }  # fmt: skip
    out = {}
    for index, (named, data) in enumerate(files.items()):
        path = folder / f"broken-{index}.json"
        path.write_bytes(data)
        out[named] = path
    return out


def test_the_explorer_says_in_one_message_why_a_transcript_file_cannot_be_opened(tmp_path: Path) -> None:
    import argparse

    from explorer.tui.launch import LaunchError, build_app

    for named, path in _broken_files(tmp_path).items():
        with pytest.raises(LaunchError) as refused:
            build_app(argparse.Namespace(target=str(path), home=str(tmp_path / "home")))
        assert "is not a usable transcript" in str(refused.value) and named in str(refused.value)


async def test_a_transcript_file_typed_in_the_explorer_that_cannot_be_read_is_a_message(
    tmp_path: Path,
) -> None:
    import argparse

    from explorer.tui.launch import build_app
    from tests.support.tui import wait_for

    broken = _broken_files(tmp_path)
    app = build_app(argparse.Namespace(target=None, home=str(tmp_path / "home")), cursor_blink=False)
    async with app.run_test(size=(150, 50)) as pilot:
        await pilot.pause()
        for named, path in broken.items():
            app.screen.query_one("#target").value = str(path)
            await pilot.press("enter")
            await wait_for(pilot, lambda named=named: any(named in n.message for n in app._notifications))
        assert not [n for n in app._notifications if "Traceback" in n.message]
    app.context.close()
