"""The replay engine: a replay repeats the recorded interview's settings, records it, and says what changed.

The interview itself is replaced by a function returning prepared runs, so these tests pin down
the settings a replay asks with (target, role, runner, key trust, headers) and the line `watch`
prints, without a network; the live path is covered in test_history_commands.py.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from explorer.config.file import load_config
from explorer.core.run import Run
from explorer.interview.options import Options
from explorer.interview.planning import PlanError, plan, plan_for_run
from explorer.interview.replay import interview, interview_async, tick_line
from explorer.store.sqlite import History
from tests.support.runs import CARD_URL, make_run


def _with_key_source(run: Run, source: str | None) -> Run:
    report = copy.deepcopy(dict(run.report))
    report["card"]["signature"]["key_source"] = source
    return Run(report=report, exchanges=run.exchanges, keys=run.keys)


def test_a_replay_asks_the_recorded_target_as_you_never_with_the_runs_keys_or_runner() -> None:
    run = _with_key_source(make_run(role="independent", runner="ACME Certification Platform"), "user")
    target, options = plan_for_run(run, {"timeout": 3.0})
    assert target == CARD_URL and options.timeout == 3.0
    assert (options.role, options.runner, options.keys, options.allow_jku) == ("self", None, (), False)
    _, yours = plan_for_run(run, {"role": "platform", "runner": "me", "keys": ("mine.jwks",)})
    assert (yours.role, yours.runner, yours.keys) == ("platform", "me", ("mine.jwks",))


def test_a_key_from_the_cards_jku_is_used_again_only_when_you_allow_it() -> None:
    _, options = plan_for_run(_with_key_source(make_run(), "jku"))
    assert options.allow_jku is False and options.keys == ()
    _, allowed = plan_for_run(_with_key_source(make_run(), "jku"), {"allow_jku": True})
    assert allowed.allow_jku is True


def test_headers_come_from_the_command_line_and_the_config_never_from_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.toml").write_text(
        f'runner = "ci"\n[agents.steady]\nurl = "{CARD_URL}"\n'
        'headers = { Authorization = "env:STEADY_TOKEN" }\nkeys = ["agent.jwks"]\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("STEADY_TOKEN", "Bearer from-env")
    config = load_config(tmp_path)
    _, options = plan_for_run(make_run(), {"headers": (("X-Extra", "1"),)}, config)
    assert dict(options.headers) == {"Authorization": "Bearer from-env", "X-Extra": "1"}
    assert str(tmp_path / "agent.jwks") in options.keys  # a config's relative path is read from its folder
    assert "from-env" not in repr(options)  # options may be logged; their secrets may not
    target, by_name = plan("steady", {}, config)
    assert target == CARD_URL and by_name.runner == "ci" and by_name.role == "self"
    monkeypatch.delenv("STEADY_TOKEN")
    with pytest.raises(PlanError, match="STEADY_TOKEN"):
        plan("steady", {}, config)


def test_interview_records_and_compares_with_the_run_before(tmp_path: Path) -> None:
    answers = iter([make_run(), make_run(answered_name="Impostor", verdict="nonconformant")])
    asked: list[tuple[str, str]] = []

    def fake(target: str, options) -> Run:
        asked.append((target, options.role))
        return next(answers)

    with History.open(tmp_path) as history:
        first_id = history.record(make_run())
        target, options = plan_for_run(history.load(first_id))
        step = interview(
            target, options, history=history, previous=(first_id, history.load(first_id).report), run_fn=fake
        )
        assert step.run_id == first_id + 1 and step.previous_id == first_id
        assert step.comparison is not None and step.comparison.identical
        assert "no change since run 1" in tick_line(step)
        step2 = interview(target, options, history=None, previous=(step.run_id, step.run.report), run_fn=fake)
        assert step2.run_id is None and len(history.runs()) == 2
    assert asked == [(CARD_URL, "self"), (CARD_URL, "self")]
    line = tick_line(step2)
    assert "not recorded  nonconformant" in line
    assert "CHANGED since run 2: verdict conformant -> nonconformant" in line
    assert "identity: 1 changed" in line
    assert "findings: projection_mismatch(identity)" in line


def test_the_first_watch_line_says_first_run_and_hostile_text_stays_inert(tmp_path: Path) -> None:
    evil = make_run(answered_name="\x1b[2J\u202e", verdict="nonconformant")
    report = copy.deepcopy(dict(evil.report))
    report["findings"][0]["code"] = "projection_mismatch\x1b]0;pwned\x07"
    step = interview("x", Options(), history=None, previous=None, run_fn=lambda t, o: Run(report=report))
    line = tick_line(step)
    assert "first run" in line
    assert "\x1b" not in line and "\x07" not in line


async def test_the_async_interview_records_and_compares_the_same_way(tmp_path: Path) -> None:
    async def fake(target: str, options) -> Run:
        return make_run(answered_name="Impostor")

    with History.open(tmp_path) as history:
        first = history.record(make_run())
        step = await interview_async(
            CARD_URL, Options(), history=history, previous=(first, history.load(first).report), run_fn=fake
        )
        assert step.run_id == first + 1
        assert step.comparison is not None and len(step.comparison.question("identity").changed) == 1
