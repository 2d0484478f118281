"""Card checks against the A2A project's own definitions of both layouts (`explorer.core.card_schema`).

Crafted cards break one rule each (the v0.3 schema, the v1.0 definition, the rules the schemas
cannot express), and each problem must come out with its pointer, the layout it breaks and a
stable code; the reference agents' cards and cards the official Python SDK builds and serves on a
real loopback server must have none; a card full of problems must leave the interview's verdict
exactly as it was, through the whole pure evaluation of recorded exchanges.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from explorer.core.card import parse_card, summary_json
from explorer.core.card_schema import MAX_PROBLEMS, PROBLEM_CODES, CardProblem, card_problems, check_card
from explorer.core.report import validate_report
from explorer.core.view import ReportView
from explorer.demo import documents
from explorer.demo.variants import VARIANTS
from tests.support.paths import REPO

URLS = documents.Urls("http://127.0.0.1:9")

V03 = {
    "protocolVersion": "0.3.0",
    "name": "Ledger",
    "description": "Reconciles ledgers.",
    "url": "https://agent.example/a2a",
    "preferredTransport": "JSONRPC",
    "version": "1.0.0",
    "capabilities": {"streaming": False},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [{"id": "reconcile", "name": "Reconcile", "description": "Matches lines.", "tags": ["books"]}],
}
V10 = {
    "name": "Ledger",
    "description": "Reconciles ledgers.",
    "supportedInterfaces": [
        {"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "version": "1.0.0",
    "capabilities": {"streaming": False},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [{"id": "reconcile", "name": "Reconcile", "description": "Matches lines.", "tags": ["books"]}],
}


def problems_of(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(p.code, p.member, p.layout) for p in card_problems(parse_card(doc))]


def edited(base: dict[str, Any], **members: Any) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    for name, value in members.items():
        if value is None:
            del doc[name]
        else:
            doc[name] = value
    return doc


def test_well_formed_cards_of_each_layout_have_no_problems() -> None:
    assert problems_of(V03) == []
    assert problems_of(V10) == []
    assert problems_of({**V10, **{k: v for k, v in V03.items() if k not in V10}}) == []


def test_a_v03_card_without_protocol_version() -> None:
    assert problems_of(edited(V03, protocolVersion=None)) == [("member_missing", "/protocolVersion", "v0.3")]


def test_modes_that_are_not_media_types() -> None:
    doc = edited(V03, defaultInputModes=["text"])
    doc["skills"][0]["outputModes"] = ["application/json", "json"]
    assert problems_of(doc) == [
        ("mode_not_media_type", "/defaultInputModes/0", "v0.3"),
        ("mode_not_media_type", "/skills/0/outputModes/1", "v0.3"),
    ]
    detail = card_problems(parse_card(doc))[0].detail
    assert '"text"' in detail and "media type" in detail


def test_relative_urls() -> None:
    doc = edited(V10, provider={"organization": "Stonework", "url": "stonework.example"})
    doc["supportedInterfaces"][0]["url"] = "/a2a"
    assert problems_of(doc) == [
        ("url_not_absolute", "/provider/url", "v1.0"),
        ("url_not_absolute", "/supportedInterfaces/0/url", "v1.0"),
    ]
    assert problems_of(edited(V03, url="a2a")) == [("url_not_absolute", "/url", "v0.3")]


def test_wrong_types_and_a_provider_given_as_a_string() -> None:
    doc = edited(V10, version=2, provider="Stonework")
    doc["capabilities"]["streaming"] = "yes"
    found = problems_of(doc)
    assert ("wrong_type", "/version", "v1.0") in found
    assert ("wrong_type", "/provider", "v1.0") in found
    assert ("wrong_type", "/capabilities/streaming", "v1.0") in found
    # the reader said the same of /provider and /version: each member is named once
    assert [m for _, m, _ in found].count("/provider") == 1
    assert [m for _, m, _ in found].count("/version") == 1


def test_a_v10_card_with_a_v03_only_member() -> None:
    doc = copy.deepcopy(V10)
    doc["capabilities"]["stateTransitionHistory"] = True  # v0.3's AgentCapabilities only
    doc["skills"][0]["security"] = [{"apiKey": []}]  # v0.3's AgentSkill only
    assert problems_of(doc) == [
        ("member_unknown", "/capabilities/stateTransitionHistory", "v1.0"),
        ("member_unknown", "/skills/0/security", "v1.0"),
    ]


def test_v10_required_members_come_from_the_proto() -> None:
    doc = copy.deepcopy(V10)
    del doc["skills"][0]["tags"]
    del doc["supportedInterfaces"][0]["protocolVersion"]
    assert problems_of(doc) == [
        ("member_missing", "/skills/0/tags", "v1.0"),
        ("member_missing", "/supportedInterfaces/0/protocolVersion", "v1.0"),
    ]


def test_protocol_versions_of_the_wrong_layout() -> None:
    assert problems_of(edited(V03, protocolVersion="1.0")) == [
        ("protocol_version_invalid", "/protocolVersion", "v0.3")
    ]
    doc = copy.deepcopy(V10)
    doc["supportedInterfaces"][0]["protocolVersion"] = "latest"
    assert problems_of(doc) == [
        ("protocol_version_invalid", "/supportedInterfaces/0/protocolVersion", "v1.0")
    ]


def test_a_mixed_card_is_held_to_both_layouts_and_says_which_each_problem_breaks() -> None:
    mixed = {**copy.deepcopy(V10), "url": "https://agent.example/a2a", "preferredTransport": "JSONRPC"}
    found = problems_of(mixed)
    # v0.3 members are no unknown members under v1.0, but the v0.3 layout wants its version
    assert found == [("member_missing", "/protocolVersion", "v0.3")]
    mixed["protocolVersion"] = "0.3.0"
    mixed["defaultInputModes"] = ["text"]
    mixed["supportedInterfaces"][0]["protocolBinding"] = 7
    assert problems_of(mixed) == [
        ("mode_not_media_type", "/defaultInputModes/0", "v0.3"),
        ("mode_not_media_type", "/defaultInputModes/0", "v1.0"),
        ("wrong_type", "/supportedInterfaces/0/protocolBinding", "v1.0"),
    ]


def test_reader_problems_join_in_the_same_shape() -> None:
    doc = copy.deepcopy(V10)
    doc["skills"].append(copy.deepcopy(doc["skills"][0]))
    found = card_problems(parse_card(doc))
    assert [p.to_json() for p in found] == [
        {
            "code": "skill_id_repeated",
            "member": "/skills/1/id",
            "layout": "v1.0",
            "detail": "/skills/1/id 'reconcile' repeats an earlier skill id",
        }
    ]


def test_problems_are_bounded() -> None:
    doc = copy.deepcopy(V10)
    doc["defaultInputModes"] = [f"mode{i}" for i in range(3 * MAX_PROBLEMS)]
    found = card_problems(parse_card(doc))
    assert len(found) == MAX_PROBLEMS + 1
    assert found[-1].code == "problems_truncated"


def test_every_code_is_documented_in_the_contract() -> None:
    contract = (REPO / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
    for code in PROBLEM_CODES:
        assert f"`{code}`" in contract, code


def test_summary_json_and_the_view_carry_the_objects() -> None:
    doc = edited(V03, protocolVersion=None)
    summary = summary_json(parse_card(doc))
    assert summary["problems"] == [
        {
            "code": "member_missing",
            "member": "/protocolVersion",
            "layout": "v0.3",
            "detail": "/protocolVersion is required by the v0.3 Agent Card",
        }
    ]
    old = ReportView.of({"card": {"layout": "v1.0", "problems": ["/name is missing"]}})
    assert old.card.problems == (CardProblem("card_problem", "", "v1.0", "/name is missing"),)


@pytest.mark.parametrize("name", [n for n in VARIANTS if not VARIANTS[n].hostile])
def test_the_reference_agents_cards_have_no_problems(name: str) -> None:
    docs = documents.build(VARIANTS[name], URLS, documents.CardKey.generate(name), documents.Provider())
    assert problems_of(docs.card) == []


def test_the_hostile_agents_extra_provider_member_is_named() -> None:
    """The hostile agent's provider carries an integer no layout defines, on purpose."""
    docs = documents.build(
        VARIANTS["hostile"], URLS, documents.CardKey.generate("hostile"), documents.Provider()
    )
    assert ("member_unknown", "/provider/employees", "v1.0") in problems_of(docs.card)


def test_the_vendored_v10_schema_is_what_the_official_sdk_gives() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "a2a_v1_card_schema.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_cards_the_official_sdk_builds_and_serves_have_no_problems() -> None:
    from a2a.server.routes.agent_card_routes import create_agent_card_routes
    from starlette.applications import Starlette

    from tests.core.test_sdk_interop import LoopbackServer, fetch_once, sdk_card

    routes = create_agent_card_routes(sdk_card("plain"), card_url="/plain/.well-known/agent-card.json")
    routes += create_agent_card_routes(
        sdk_card("merged", v03_too=True), card_url="/merged/.well-known/agent-card.json"
    )
    with LoopbackServer(Starlette(routes=routes)) as base:
        for name, layout in (("plain", "v1.0"), ("merged", "mixed")):
            exchange = fetch_once(f"{base}/{name}/.well-known/agent-card.json")
            assert exchange.status == 200, exchange.error
            doc = json.loads(exchange.response_body)
            card = parse_card(doc)
            assert card.layout == layout
            assert card_problems(card) == ()


def test_problems_never_change_the_verdict() -> None:
    """A signed card full of problems, honestly answered, is as conformant as a clean one: the same
    verdict and the same findings, through the whole pure evaluation of the recorded exchanges."""
    from tests.core.test_evaluate import attempt, make_card, report_of

    clean = report_of(attempt(make_card()))
    skills = [
        {"id": "reconcile-statement", "name": "Reconcile", "description": "Reconcile", "tags": ["books"],
         "inputModes": ["csv"]},
        {"id": "flag-exceptions", "name": "Flag", "description": "Flag exceptions", "tags": ["books"]},
    ]  # fmt: skip
    broken_card = make_card(
        defaultInputModes=["text"],
        provider={"organization": "Stonework Analytics", "url": "stonework.example"},
        skills=skills,
        iconUrl="/icon.png",
    )
    broken = report_of(attempt(broken_card))
    assert clean["card"]["problems"] == []
    assert [(p["code"], p["member"]) for p in broken["card"]["problems"]] == [
        ("mode_not_media_type", "/defaultInputModes/0"),
        ("url_not_absolute", "/iconUrl"),
        ("url_not_absolute", "/provider/url"),
        ("mode_not_media_type", "/skills/0/inputModes/0"),
    ]
    assert broken["verdict"] == clean["verdict"] == "conformant"
    assert [f["code"] for f in broken["findings"]] == [f["code"] for f in clean["findings"]]
    assert validate_report(broken) == []


def test_codes_are_checked_by_validate_report() -> None:
    report_card = {"url": None, "layout": "v1.0", "sha256": None, "signature": {}}
    bad = [{"code": "nope", "member": "x", "layout": "v2", "detail": "d"}, "a sentence"]
    from explorer.core.report import _validate_card

    found = _validate_card({**report_card, "problems": bad})
    assert any("not a known card problem code" in p for p in found)
    assert any("not an RFC 6901 pointer" in p for p in found)
    assert any("v0.3 or v1.0" in p for p in found)
    assert any("card.problems[1] must be an object" in p for p in found)
    assert check_card(V10, "v1.0") == ()
