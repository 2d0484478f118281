"""Every reference agent verified end to end: the verdict and codes the fleet's table states.

Stateful variants (churning) get a Fleet of their own so test order cannot change what they do.
Also checks what the fleet makes visible about the procedure itself: exchange order and
purposes, activation headers and bodies, standing, offline re-verification, OpenClasp.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from explorer.core.card import INTERVIEW_URI
from explorer.core.findings import QUESTIONS
from explorer.core.report import validate_report
from explorer.core.run import Run
from explorer.interview.options import Options
from explorer.interview.procedure import Progress, reverify_offline, run_interview

pytestmark = pytest.mark.slow  # full interviews of the reference fleet

fleet_module = pytest.importorskip("explorer.demo.fleet", reason="explorer/demo/fleet.py is not written yet")
VARIANTS = fleet_module.VARIANTS if hasattr(fleet_module, "VARIANTS") else {}
# Stateful variants get a fleet of their own so test order cannot change what they do.
STATEFUL = {"churning"}


def _options(**overrides: Any) -> Options:
    return Options(allow_jku=True, timeout=5.0, runner="tests", **overrides)


def _codes(items: list[dict[str, Any]]) -> set[str]:
    return {f["code"] for f in items}


def _check_variant(report: dict[str, Any], name: str) -> None:
    variant = VARIANTS[name]
    assert validate_report(report) == [], name
    codes = _codes(report["findings"])
    errors = {f["code"] for f in report["findings"] if f["severity"] == "error"}
    assert report["verdict"] == variant.expected_verdict, (name, report["findings"])
    assert variant.expected_codes <= codes, (name, codes)
    assert errors <= variant.expected_codes, (name, errors - variant.expected_codes)
    assert variant.expected_extension_codes <= _codes(report["extensions"]), (name, report["extensions"])


@pytest.mark.parametrize("name", [n for n in VARIANTS if n not in STATEFUL])
async def test_every_variant_gets_its_expected_verdict(
    fleet: Any, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = fleet.agents[name]
    for var, value in agent.env.items():  # a guarded agent: its demo credentials, as `demo` passes them
        monkeypatch.setenv(var, value)
    credentials = agent.credentials.option_values() if agent.credentials is not None else {}
    run = await run_interview(agent.card_url, _options(**credentials))
    _check_variant(dict(run.report), name)


@pytest.mark.parametrize("name", sorted(STATEFUL & set(VARIANTS)))
async def test_stateful_variants_on_a_fresh_fleet(name: str) -> None:
    with fleet_module.Fleet(names=[name]) as own:
        run = await run_interview(own.agents[name].card_url, _options())
    _check_variant(dict(run.report), name)
    assert run.report["attempts"] == 2


async def test_a_steady_run_records_every_exchange_in_order(fleet: Any) -> None:
    seen: list[Progress] = []
    run = await run_interview(fleet.agents["steady"].base_url, _options(), seen.append)
    purposes = [e.purpose for e in run.exchanges]
    assert purposes[0] == "card"
    assert purposes.count("proposal") == 2
    for q in QUESTIONS:
        assert purposes.count(f"ask:{q}#1") == 1 and purposes.count(f"ask:{q}#2") == 1
    for probe in (
        "undefined_method",
        "unmatched_selector",
        "valid_selector",
        "unactivated_call",
        "unactivated_call_no_params",
    ):
        assert f"probe:{probe}" in purposes
    assert {e.attempt for e in run.exchanges} == {1}
    assert run.report["attempts"] == 1
    assert run.report["ran_by"] == {"name": "tests", "role": "self"} and run.report["standing"] == "claim"
    asked = {p.question for p in seen if p.step == "ask"}
    assert asked == set(QUESTIONS)
    assert seen[-1].step == "done" and "conformant" in seen[-1].message


async def test_activation_headers_and_bodies(fleet: Any) -> None:
    run = await run_interview(fleet.agents["legacy"].base_url, _options())
    by_purpose = {e.purpose: e for e in run.exchanges}
    ask = by_purpose["ask:identity#1"]
    headers = dict(ask.request_headers)
    assert headers["A2A-Extensions"] == INTERVIEW_URI and headers["A2A-Version"] == "0.3"
    assert headers["X-A2A-Extensions"] == INTERVIEW_URI
    body = json.loads(ask.request_body or b"")
    assert body["jsonrpc"] == "2.0" and body["method"] == "interview/identity" and body["params"] == {}
    unactivated = dict(by_purpose["probe:unactivated_call"].request_headers)
    assert "A2A-Extensions" not in unactivated and "X-A2A-Extensions" not in unactivated
    bare = by_purpose["probe:unactivated_call_no_params"]
    assert "A2A-Extensions" not in dict(bare.request_headers)
    sent = json.loads(bare.request_body or b"")
    assert "params" not in sent and sent["method"] == "interview/identity"
    selector = json.loads(by_purpose["probe:unmatched_selector"].request_body or b"")
    assert selector["method"] == "interview/usage" and selector["params"] == {
        "skill": "interview-explorer/no-such-skill"
    }


async def test_the_valid_selector_probe_sends_the_first_declared_skill_and_diffs_the_answer(
    fleet: Any,
) -> None:
    run = await run_interview(fleet.agents["steady"].base_url, _options())
    card = json.loads(next(e for e in run.exchanges if e.purpose == "card").response_body)
    probes = [e for e in run.exchanges if e.purpose == "probe:valid_selector"]
    (sent,) = [json.loads(e.request_body or b"") for e in probes]
    assert sent["method"] == "interview/usage" and sent["params"] == {"skill": card["skills"][0]["id"]}
    (probe,) = [p for p in run.report["probes"] if p["name"] == "valid_selector"]
    assert probe["outcome"] == "answered" and probe["request"]["activated"] is True
    # The answer is narrowed to that skill and every projection of it is diffed against the card.
    members = [p["member"] for p in probe["projections"]]
    assert "/skills/0/inputModes" in members and "/skills/1/inputModes" not in members
    assert {p["status"] for p in probe["projections"]} == {"match"}

    refusing = await run_interview(fleet.agents["selector-refusing"].base_url, _options())
    (probe,) = [p for p in refusing.report["probes"] if p["name"] == "valid_selector"]
    assert probe["outcome"] == "refused"
    found = [(f["code"], f.get("probe")) for f in refusing.report["findings"] if f["severity"] == "error"]
    assert found == [("selector_refused", "valid_selector")]


async def test_an_agent_that_gates_only_calls_with_params_is_caught_by_the_bare_probe(fleet: Any) -> None:
    run = await run_interview(fleet.agents["paramless"].base_url, _options())
    outcomes = {p["name"]: p["outcome"] for p in run.report["probes"]}
    assert outcomes["unactivated_call"] == "method_not_found"  # params {}: refused as it should be
    assert outcomes["unactivated_call_no_params"] == "answered"
    answered = [f for f in run.report["findings"] if f["code"] == "unactivated_call_answered"]
    assert [f["probe"] for f in answered] == ["unactivated_call_no_params"]
    assert run.report["verdict"] == "nonconformant"


async def test_role_gives_standing(fleet: Any) -> None:
    run = await run_interview(fleet.agents["steady"].base_url, _options(role="independent"))
    assert run.report["standing"] == "evidence" and run.report["ran_by"]["role"] == "independent"


async def test_not_offered_asks_nothing(fleet: Any) -> None:
    run = await run_interview(fleet.agents["silent"].base_url, _options())
    assert run.report["verdict"] == "not_offered"
    assert not [e for e in run.exchanges if e.purpose.startswith(("ask:", "probe:"))]


async def test_openclasp_card_is_unsigned_not_invalid(fleet: Any) -> None:
    run = await run_interview(fleet.agents["openclasp"].card_url, _options())
    report = run.report
    assert report["card"]["signature"]["status"] == "unsigned"
    codes = _codes(report["findings"])
    assert "card_unsigned" in codes and "card_signature_invalid" not in codes
    purposes = [e.purpose for e in run.exchanges]
    assert "openclasp:public_card" in purposes and "openclasp:key" in purposes


@pytest.mark.parametrize("kind", ["profile", "public_card", "slug", "agent_id"])
async def test_openclasp_references_lead_to_the_card(fleet: Any, kind: str) -> None:
    from explorer.demo.openclasp_site import urls

    agent = fleet.agents["openclasp"]
    site = urls(agent.base_url, "openclasp")
    target, base = {
        "profile": (site.profile, None),
        "public_card": (site.public_card, None),
        "slug": (site.slug, agent.base_url),
        "agent_id": (site.agent_id, agent.base_url),
    }[kind]
    seen: list[Progress] = []
    run = await run_interview(target, _options(openclasp_base=base), seen.append)
    assert run.report["verdict"] == "conformant"
    assert run.report["card"]["url"] == site.a2a_card
    said = " ".join(p.message for p in seen if p.step == "card")
    assert "OpenClasp" in said and site.a2a_card in said
    resolved = [e for e in run.exchanges if e.purpose == "openclasp:resolve"]
    assert bool(resolved) == (kind != "public_card")


async def test_offline_reverification_reaches_the_same_report(fleet: Any) -> None:
    run = await run_interview(fleet.agents["drifting"].base_url, _options())
    stored = Run.from_transcript(json.loads(json.dumps(run.to_transcript())))
    again = reverify_offline(stored)
    assert again.report == run.report


async def test_user_keys_are_recorded_public_only(fleet: Any) -> None:
    agent = fleet.agents["steady"]
    jwks_url = getattr(agent, "jwks_url", None)
    if jwks_url is None:
        pytest.skip("the fleet does not expose jwks_url")
    run = await run_interview(agent.base_url, Options(keys=(jwks_url,), timeout=5.0))
    assert run.report["card"]["signature"]["status"] == "verified"
    assert run.keys["keys"] and all("d" not in k for k in run.keys["keys"])
    assert not [e for e in run.exchanges if e.purpose == "jwks"]  # no jku without --allow-jku


@pytest.mark.parametrize("reruns", [0, 1, 2, 3, 4, 5])
async def test_flaky_keeps_another_answer_than_the_run_before_whatever_the_reruns(
    fleet: Any, reruns: int
) -> None:
    """Under `watch` every run of flaky must differ from the one before (churn line by line),
    for any --reruns the verifier allows, while each run still flags only nondeterminism."""
    digests = []
    for _ in range(3):
        run = await run_interview(fleet.agents["flaky"].base_url, _options(reruns=reruns))
        report = run.report
        assert report["attempts"] == reruns + 1
        errors = {f["code"] for f in report["findings"] if f["severity"] == "error"}
        assert errors == {"nondeterministic_answer"}
        digests.append(report["answers_sha256"])
    assert digests[0] != digests[1] != digests[2]
