"""The card model: layouts, the JSON-RPC interface choice, extensions, and hostile cards.

What a user depends on here: the interview is asked over the interface docs/PROTOCOL.md section 1
names, terms entries are judged by docs/PROTOCOL.md section 5, and no card, however odd, crashes the
explorer; oddities become readable problems instead.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.card import (
    INTERVIEW_URI,
    OPENCLASP_URI,
    REPUTATION_URI,
    TERMS_URI,
    CardError,
    parse_card,
    summary_json,
)
from tests.support.strategies import json_scalars, json_values

DIGEST = "sha256:" + "ab" * 32


def v10_card(**extra: Any) -> dict[str, Any]:
    card: dict[str, Any] = {
        "name": "Steady",
        "description": "reconciles statements",
        "version": "1.0.0",
        "provider": {"organization": "Stonework", "url": "https://stonework.example"},
        "supportedInterfaces": [
            {"url": "https://a.example/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://a.example/rpc2", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ],
        "capabilities": {"extensions": [{"uri": INTERVIEW_URI, "required": False}]},
        "skills": [
            {
                "id": "reconcile-statement",
                "name": "Reconcile",
                "description": "d",
                "inputModes": ["text/csv"],
                "outputModes": ["application/json"],
            },
            {"id": "flag-exceptions", "name": "Flag", "description": "e"},
        ],
    }
    card.update(extra)
    return card


def v03_card(**extra: Any) -> dict[str, Any]:
    card: dict[str, Any] = {
        "name": "Old",
        "description": "d",
        "version": "0.9",
        "protocolVersion": "0.3.0",
        "url": "https://old.example/a2a",
        "skills": [{"id": "only", "name": "Only", "description": "x"}],
        "capabilities": {},
    }
    card.update(extra)
    return card


def terms_ext(params: Any, **extra: Any) -> dict[str, Any]:
    return {"uri": TERMS_URI, "params": params, **extra}


def test_v10_layout_picks_the_first_jsonrpc_interface() -> None:
    card = parse_card(v10_card())
    assert card.layout == "v1.0"
    assert card.jsonrpc is not None
    assert card.jsonrpc.url == "https://a.example/rpc"
    assert card.jsonrpc.pointer == "/supportedInterfaces/1"
    assert card.jsonrpc.family == "1.0"
    assert [i.binding for i in card.interfaces] == ["GRPC", "JSONRPC", "JSONRPC"]
    assert card.skill_ids == ("reconcile-statement", "flag-exceptions")
    assert card.skills[0].input_modes == ("text/csv",)
    assert card.skills[0].pointer == "/skills/0"
    assert card.problems == ()


def test_v03_url_is_jsonrpc_when_preferred_transport_is_absent() -> None:
    card = parse_card(v03_card())
    assert card.layout == "v0.3"
    assert card.jsonrpc is not None
    assert (card.jsonrpc.url, card.jsonrpc.pointer) == ("https://old.example/a2a", "/url")
    assert card.jsonrpc.binding == "JSONRPC"
    assert card.jsonrpc.protocol_version == "0.3.0"
    assert card.jsonrpc.family == "0.3"


def test_v03_falls_back_to_an_additional_jsonrpc_interface() -> None:
    card = parse_card(
        v03_card(
            preferredTransport="GRPC",
            additionalInterfaces=[
                {"url": "https://old.example/rest", "transport": "HTTP+JSON"},
                {"url": "https://old.example/rpc", "transport": "JSONRPC"},
            ],
        )
    )
    assert card.jsonrpc is not None
    assert card.jsonrpc.pointer == "/additionalInterfaces/1"
    assert card.jsonrpc.family == "0.3"


def test_no_jsonrpc_interface_is_none_not_a_guess() -> None:
    card = parse_card(v03_card(preferredTransport="GRPC"))
    assert card.jsonrpc is None
    assert len(card.interfaces) == 1


def test_merged_card_is_mixed_and_prefers_the_v10_entry() -> None:
    doc = v10_card(url="https://a.example/v03", preferredTransport="JSONRPC", protocolVersion="0.3")
    doc["supportedInterfaces"] = [
        {"url": "https://a.example/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        {"url": "https://a.example/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
    ]
    card = parse_card(doc)
    assert card.layout == "mixed"
    assert card.jsonrpc is not None
    # The first v1.0-layout JSON-RPC entry wins, even when it speaks 0.3.
    assert card.jsonrpc.pointer == "/supportedInterfaces/0"
    assert card.jsonrpc.family == "0.3"
    pointers = [i.pointer for i in card.interfaces]
    assert pointers == ["/supportedInterfaces/0", "/supportedInterfaces/1", "/url"]


def test_extensions_are_found_by_exact_uri() -> None:
    doc = v10_card()
    doc["capabilities"]["extensions"] += [
        {"uri": REPUTATION_URI, "params": {"record": "https://rep.example/a"}},
        {"uri": INTERVIEW_URI + "/", "required": True},
        {"uri": "urn:other"},
    ]
    card = parse_card(doc)
    assert card.interview is not None and card.interview.required is False
    assert card.reputation is not None and card.reputation.params == {"record": "https://rep.example/a"}
    assert card.extension("urn:other") is not None
    assert card.terms == ()
    assert card.openclasp is None


def test_openclasp_is_matched_by_uri_or_by_its_params() -> None:
    params = {"agentId": "agent_a", "openClaspCardUrl": "https://oc.example/agents/agent_a/card.json"}
    by_uri = parse_card(v10_card(capabilities={"extensions": [{"uri": OPENCLASP_URI, "params": {}}]}))
    custom = {"uri": "https://my.example/t", "params": params}
    by_params = parse_card(v10_card(capabilities={"extensions": [custom]}))
    assert by_uri.openclasp is not None and by_uri.openclasp.uri == OPENCLASP_URI
    assert by_params.openclasp is not None and by_params.openclasp.params == params


def test_a_valid_terms_entry() -> None:
    proposal = {"url": "https://a.example/p.sow.json", "digest": DIGEST, "sow": "sow_1", "offering": "x"}
    card = parse_card(
        v10_card(
            capabilities={
                "extensions": [
                    terms_ext({"sow_spec": "0.18.0-draft", "proposals": [proposal]}, required=False)
                ]
            }
        )
    )
    (entry,) = card.terms
    assert entry.valid
    assert entry.sow_spec == "0.18.0-draft"
    (ref,) = entry.proposals
    assert (ref.url, ref.digest, ref.sow, ref.offering) == (proposal["url"], DIGEST, "sow_1", "x")
    assert ref.pointer == "/capabilities/extensions/0/params/proposals/0"


@pytest.mark.parametrize(
    ("params", "extra", "expected"),
    [
        (None, {}, "params is missing"),
        ([], {}, "params is array, not an object"),
        ({"proposals": [{"url": "u", "digest": DIGEST}]}, {}, "sow_spec is missing"),
        ({"sow_spec": "x"}, {}, "proposals is missing"),
        ({"sow_spec": "x", "proposals": []}, {}, "proposals is empty"),
        ({"sow_spec": "x", "proposals": "p"}, {}, "proposals should be an array"),
        (
            {"sow_spec": "x", "proposals": [{"url": "u", "digest": DIGEST}]},
            {"required": True},
            "required is true",
        ),
    ],
)
def test_invalid_terms_entries_say_why(params: Any, extra: dict[str, Any], expected: str) -> None:
    card = parse_card(v10_card(capabilities={"extensions": [terms_ext(params, **extra)]}))
    (entry,) = card.terms
    assert not entry.valid
    assert any(expected in p for p in entry.problems), entry.problems


@pytest.mark.parametrize(
    ("proposal", "expected"),
    [
        ({"digest": DIGEST}, "url is missing"),
        ({"url": "https://a.example/p"}, "digest is missing"),
        ({"url": "https://a.example/p", "digest": "sha256:" + "AB" * 32}, "64 lowercase hex"),
        ({"url": "https://a.example/p", "digest": "sha512:" + "ab" * 32}, "64 lowercase hex"),
        ({"url": "https://a.example/p", "digest": DIGEST + "0"}, "64 lowercase hex"),
        ({"url": 7, "digest": DIGEST}, "url should be a string"),
        ("https://a.example/p", "should be an object"),
    ],
)
def test_invalid_proposals_say_why(proposal: Any, expected: str) -> None:
    params = {"sow_spec": "x", "proposals": [proposal]}
    (entry,) = parse_card(v10_card(capabilities={"extensions": [terms_ext(params)]})).terms
    assert entry.problems == ()
    assert not entry.valid
    assert any(expected in p for p in entry.proposals[0].problems), entry.proposals[0].problems


def test_every_terms_entry_is_kept() -> None:
    good = terms_ext({"sow_spec": "x", "proposals": [{"url": "u", "digest": DIGEST}]})
    card = parse_card(v10_card(capabilities={"extensions": [good, terms_ext(None)]}))
    assert [t.valid for t in card.terms] == [True, False]


def test_hostile_types_become_problems_not_crashes() -> None:
    doc = {
        "name": 42,
        "description": ["x"],
        "skills": "all of them",
        "capabilities": {
            "extensions": ["not an object", {"uri": 5}, {"uri": INTERVIEW_URI, "required": "no"}]
        },
        "supportedInterfaces": [{"url": "https://a.example", "protocolBinding": None}, "x"],
        "url": {"nested": True},
        "provider": "Stonework",
    }
    card = parse_card(doc)
    assert card.name is None and card.description is None and card.provider is None
    assert card.skills == () and card.interfaces == () and card.jsonrpc is None
    assert card.interview is not None and card.interview.required is None
    text = "\n".join(p.detail for p in card.problems)
    for expected in (
        "/name should be a string, not number",
        "/skills should be an array, not string",
        "/capabilities/extensions/0 should be an object",
        "/capabilities/extensions/1/uri should be",
        "/capabilities/extensions/2/required should be true or false",
        "/supportedInterfaces/0/protocolBinding",
        "/provider should be an object",
    ):
        assert expected in text, text


def test_skills_without_ids_are_skipped_and_duplicates_noted() -> None:
    card = parse_card(v10_card(skills=[{"name": "no id"}, {"id": "a"}, {"id": "a"}, 3]))
    assert card.skill_ids == ("a", "a")
    assert any("/skills/0/id is missing" in p.detail for p in card.problems)
    assert any("repeats an earlier skill id" in p.detail for p in card.problems)
    assert any("/skills/3 should be an object" in p.detail for p in card.problems)


@pytest.mark.parametrize("doc", [[], "card", 3, None, True])
def test_only_a_non_object_is_refused(doc: Any) -> None:
    with pytest.raises(CardError, match="must be a JSON object"):
        parse_card(doc)


def test_summary_json_is_plain_json_and_marks_the_jsonrpc_interface() -> None:
    proposal = {"url": "https://a.example/p", "digest": DIGEST, "offering": "nope"}
    doc = v10_card()
    doc["capabilities"]["extensions"].append(terms_ext({"sow_spec": "x", "proposals": [proposal]}))
    summary = summary_json(parse_card(doc))
    assert json.loads(json.dumps(summary)) == summary
    assert [i["jsonrpc"] for i in summary["interfaces"]] == [False, True, False]
    assert summary["jsonrpc_url"] == "https://a.example/rpc"
    assert summary["extensions"]["interview"]["required"] is False
    (terms,) = summary["extensions"]["terms"]
    assert terms["valid"] is True
    assert terms["proposals"][0]["offering_is_skill"] is False


member_values = json_values(
    json_scalars(floats=st.floats(allow_nan=False), text=st.text(max_size=8)),
    keys=st.text(max_size=8),
    list_size=4,
    max_leaves=20,
)
card_keys = st.sampled_from(
    [
        "name",
        "description",
        "version",
        "provider",
        "supportedInterfaces",
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
        "skills",
        "capabilities",
        "security",
        "signatures",
    ]
)
# Cards whose members have the right names but arbitrary values, which reaches far more code
# than fully random documents would.
card_like = st.dictionaries(card_keys, member_values, max_size=8) | st.builds(
    lambda ext, skills: {"capabilities": {"extensions": ext}, "skills": skills},
    st.lists(
        st.dictionaries(st.sampled_from(["uri", "required", "params", "description"]), member_values)
        | member_values,
        max_size=3,
    ),
    st.lists(st.dictionaries(st.sampled_from(["id", "name", "inputModes"]), member_values), max_size=3),
)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        member_values,
        card_like,
        card_like.map(lambda c: {**c, "capabilities": {"extensions": [{"uri": TERMS_URI, "params": c}]}}),
    )
)
def test_any_json_parses_or_raises_card_error(doc: Any) -> None:
    try:
        card = parse_card(doc)
    except CardError:
        assert not isinstance(doc, dict)
        return
    summary = summary_json(card)
    json.dumps(summary)
    for entry in card.terms:
        assert isinstance(entry.valid, bool)
