"""Every command that records or reads history, end to end, on each backend.

The same session runs on the SQLite file and on a PostgreSQL database (`store_url`, tests/
conftest.py) against the reference agents on 127.0.0.1: a signed verify, a sweep, replay, watch,
a watched list, history with and without the runner's key trusted, show, compare, export and the
offline re-check of the export, history import of it (recorded once), the TUI's context reading
the same store, and forget.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main

pytestmark = pytest.mark.slow  # the CLI against the reference agents, on both backends


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _recorded(err: str) -> list[int]:
    return [int(n) for n in re.findall(r"recorded as run (\d+)", err)]


def test_every_history_command_behaves_the_same_on_either_store(
    capsys: pytest.CaptureFixture[str], fleet: Any, store_url: str, store_kind: str, tmp_path: Path
) -> None:
    agent = fleet.agents["steady"]
    keys = tmp_path / "agent.jwks"
    keys.write_text(json.dumps(agent.jwks))
    key = tmp_path / "runner.pem"
    code, out, _ = _run(capsys, "keygen", "--out", str(key))
    trust = tmp_path / "runner.jwks"
    trust.write_text(out)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(f'sign_key = "{key}"\n')  # signs, and is trusted here
    at = ["--history", store_url, "--home", str(tmp_path / "home")]
    signer = ["--runner", "ci", "--as", "independent"]
    elsewhere = ["--history", store_url, "--home", str(tmp_path / "reader-home")]  # a reader's machine

    code, out, err = _run(capsys, "verify", agent.card_url, "--keys", str(keys), "--json", *signer, *at)
    assert code == 0, err
    [first] = _recorded(err)
    assert json.loads(out)["run_attestation"]["status"] == "verified"
    where = store_url.split("?")[0].split("://")[1]  # the history's address is in no report
    assert where not in out

    others = [fleet.agents[name].card_url for name in ("unsigned", "drifting", "churning")]
    code, out, err = _run(capsys, "verify", *others, "--json", *at)
    assert len(out.splitlines()) == 3 and "not recorded" not in err, err

    code, _, err = _run(capsys, "replay", str(first), "--keys", str(keys), *signer, *at)  # asked as you
    assert code == 0, err
    [replayed] = _recorded(err) or [None]
    code, _, err = _run(capsys, "watch", agent.card_url, "--keys", str(keys), *signer, "--every", "0.1",
                        "--count", "1", *at)  # fmt: skip
    assert code == 0, err
    listed = tmp_path / "agents.txt"
    listed.write_text("\n".join(others) + "\n")
    code, _, err = _run(capsys, "watch", "--from", str(listed), "--every", "0.1", "--count", "1", *at)
    assert code in (0, 1, 5), err

    code, out, _ = _run(capsys, "history", "--json", *elsewhere)
    runs = [json.loads(line) for line in out.splitlines()]
    assert len(runs) == 1 + 3 + 1 + 1 + 3  # verify, the sweep, replay, watch, the watched list
    mine = [r for r in runs if r["agent"] == agent.card_url]
    assert len(mine) == 3 and {r["standing"] for r in mine} == {"claim"}  # the key is not trusted there
    code, out, _ = _run(capsys, "history", agent.card_url, "--json", "--trust-runner", str(trust), *elsewhere)
    assert [json.loads(line)["standing"] for line in out.splitlines()] == ["evidence"] * 3
    code, out, _ = _run(capsys, "history", agent.card_url, "--json", *at)  # the runner trusts its own key
    assert [json.loads(line)["standing"] for line in out.splitlines()] == ["evidence"] * 3
    if replayed is not None:
        code, out, _ = _run(capsys, "compare", str(first), str(replayed), *at)
        assert code == 0, out

    code, out, _ = _run(capsys, "show", str(first), "--json", "--trust-runner", str(trust), *elsewhere)
    assert code == 0 and json.loads(out)["standing"] == "evidence"
    exported = tmp_path / "run.json"
    assert _run(capsys, "export", str(first), "-o", str(exported), *at)[0] == 0
    assert where not in exported.read_text()
    code, out, _ = _run(capsys, "verify", "--offline", str(exported), "--trust-runner", str(trust), "--json")
    assert code == 0 and json.loads(out)["standing"] == "evidence"
    code, out, err = _run(capsys, "history", "import", str(exported), *at)
    assert code == 0 and out.startswith(f"already recorded as run {first}"), err

    from explorer.config.history_choice import choose_history
    from explorer.tui.context import AppContext

    context = AppContext(home=tmp_path / "home", history_choice=choose_history(store_url))
    try:
        assert [row.run_id for row in context.rows()] == [r["id"] for r in runs]
        assert {entry.agent for entry in context.fleet()} == {agent.card_url, *others}
    finally:
        context.close()

    code, out, err = _run(capsys, "forget", agent.card_url, *at)
    assert code == 0 and "forgot 3 runs" in out
    assert ("VACUUM" in err) == (store_kind == "postgresql")
    code, out, _ = _run(capsys, "history", "--json", *at)
    assert len(out.splitlines()) == 6
