"""Shape checks on what an agent answers: the JSON-RPC envelope, answers and refusals.

Answers follow the interview extension, section 5; refusals its section 6.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.answers import check_answer, check_refusal, is_refusal, read_jsonrpc
from tests.support.strategies import json_scalars, json_values

DIGEST = "sha256:" + "ab" * 32
SKILLS = ("reconcile-statement", "flag-exceptions")
ANSWER_KEYS = [
    "question",
    "declared",
    "projections",
    "source",
    "value",
    "document",
    "member",
    "url",
    "digest",
    "x",
]


def rpc(**members: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **members}).encode()


def codes(findings: list) -> list[str]:
    return [f.code for f in findings]


def answer(question: str = "identity", *projections: dict, **extra: Any) -> dict:
    return {"question": question, "declared": True, "projections": list(projections), **extra}


def card_proj(member: str = "/name", value: Any = "Stonework") -> dict:
    return {"source": {"document": "card", "member": member}, "value": value}


def proposal_proj(member: str = "/price", value: Any = 1) -> dict:
    return {
        "source": {
            "document": "proposal",
            "member": member,
            "url": "https://a.example/t.sow.json",
            "digest": DIGEST,
        },
        "value": value,
    }


# --- JSON-RPC envelope ---------------------------------------------------------------------------


def test_result_is_read() -> None:
    out = read_jsonrpc(rpc(id=7, result={"question": "identity"}), expected_id=7)
    assert out.kind == "result"
    assert out.result == {"question": "identity"}
    assert out.payload == {"question": "identity"}


def test_error_is_read_with_code_message_and_data() -> None:
    out = read_jsonrpc(
        rpc(id=1, error={"code": -32601, "message": "Method not found", "data": {"x": 1}}), expected_id=1
    )
    assert (out.kind, out.code, out.message, out.data, out.has_data) == (
        "error",
        -32601,
        "Method not found",
        {"x": 1},
        True,
    )


def test_error_with_null_id_is_accepted() -> None:
    out = read_jsonrpc(rpc(id=None, error={"code": -32700, "message": "Parse error"}), expected_id=3)
    assert out.kind == "error" and out.code == -32700 and not out.has_data


@pytest.mark.parametrize(
    ("body", "expected_id", "needle"),
    [
        (b"not json", 1, "not valid JSON"),
        (b'{"jsonrpc":"2.0","id":1,"result":1,"result":2}', 1, "duplicate key"),
        (b"\xff\xfe", 1, "UTF-8"),
        (b"[1, 2]", 1, "an array"),
        (b'{"id":1,"result":{}}', 1, "jsonrpc"),
        (b'{"jsonrpc":"1.0","id":1,"result":{}}', 1, "jsonrpc"),
        (b'{"jsonrpc":"2.0","id":1}', 1, "neither"),
        (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}', 1, "both"),
        (b'{"jsonrpc":"2.0","result":{}}', 1, "no id"),
        (b'{"jsonrpc":"2.0","id":2,"result":{}}', 1, "does not match"),
        (b'{"jsonrpc":"2.0","id":true,"result":{}}', 1, "does not match"),
        (b'{"jsonrpc":"2.0","id":"1","result":{}}', 1, "does not match"),
        (b'{"jsonrpc":"2.0","id":null,"result":{}}', 1, "does not match"),
        (b'{"jsonrpc":"2.0","id":1,"error":"boom"}', 1, "not an object"),
        (b'{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}', 1, "integer code"),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":true,"message":"m"}}', 1, "integer code"),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":-1}}', 1, "string message"),
        (b"", 1, "not valid JSON"),
    ],
)
def test_malformed_envelopes_say_why(body: bytes, expected_id: Any, needle: str) -> None:
    out = read_jsonrpc(body, expected_id=expected_id)
    assert out.kind == "malformed"
    assert needle in (out.problem or "")
    assert out.payload is None


# --- answers -------------------------------------------------------------------------------------


def test_well_formed_answers_have_no_findings() -> None:
    assert check_answer("identity", answer("identity", card_proj(), card_proj("/version", "1.0"))) == []
    assert check_answer("terms", answer("terms", proposal_proj())) == []
    assert check_answer("terms", {"question": "terms", "declared": False, "projections": []}) == []


def test_declared_is_optional_except_on_terms() -> None:
    assert check_answer("capabilities", {"question": "capabilities", "projections": []}) == []
    found = check_answer("terms", {"question": "terms", "projections": []})
    assert codes(found) == ["answer_shape_invalid"] and found[0].member == "/declared"


@pytest.mark.parametrize("bad", [[], [card_proj()], "Stonework", None, 42, True])
def test_answers_that_are_not_objects_are_shape_invalid(bad: Any) -> None:
    found = check_answer("identity", bad)
    assert codes(found) == ["answer_shape_invalid"]
    assert found[0].question == "identity"


def test_wrong_question_missing_members_and_wrong_types() -> None:
    assert codes(check_answer("usage", answer("identity"))) == ["answer_shape_invalid"]
    assert [f.member for f in check_answer("usage", {"question": "usage", "declared": True})] == [
        "/projections"
    ]
    assert [f.member for f in check_answer("usage", {"declared": True, "projections": []})] == ["/question"]
    found = check_answer("usage", {"question": "usage", "declared": "yes", "projections": {}})
    assert sorted(f.member for f in found) == ["/declared", "/projections"]
    assert set(codes(found)) == {"answer_shape_invalid"}


def test_extra_members_at_every_level_are_named_by_pointer() -> None:
    proj = card_proj()
    proj["note"] = "I am great"
    proj["source"]["comment/x"] = "free text"
    found = check_answer("identity", answer("identity", proj, summary="We are the best"))
    assert codes(found) == ["answer_extra_member"] * 3
    assert sorted(f.member for f in found) == [
        "/projections/0/note",
        "/projections/0/source/comment~1x",
        "/summary",
    ]


def test_projection_must_have_source_and_value() -> None:
    no_value = {"source": {"document": "card", "member": "/name"}}
    found = check_answer("identity", answer("identity", {"value": 1}, no_value, 3))
    assert codes(found) == ["answer_shape_invalid"] * 3
    assert sorted(f.member for f in found) == [
        "/projections/0/source",
        "/projections/1/value",
        "/projections/2",
    ]


@pytest.mark.parametrize(
    ("source", "member"),
    [
        ("card", "/projections/0/source"),
        ({"document": "memo", "member": "/name"}, "/projections/0/source/document"),
        ({"member": "/name"}, "/projections/0/source/document"),
        ({"document": "card"}, "/projections/0/source/member"),
        ({"document": "card", "member": 3}, "/projections/0/source/member"),
        ({"document": "card", "member": "~2"}, "/projections/0/source/member"),
        ({"document": "card", "member": "name"}, "/projections/0/source/member"),
        ({"document": "card", "member": "/a~2b"}, "/projections/0/source/member"),
        ({"document": "proposal", "member": "/price", "digest": DIGEST}, "/projections/0/source/url"),
        ({"document": "proposal", "member": "/price", "url": "https://x"}, "/projections/0/source/digest"),
        (
            {"document": "proposal", "member": "/price", "url": "https://x", "digest": "sha256:ABC"},
            "/projections/0/source/digest",
        ),
        (
            {"document": "proposal", "member": "/price", "url": 5, "digest": DIGEST},
            "/projections/0/source/url",
        ),
    ],
)
def test_invalid_sources(source: Any, member: str) -> None:
    found = check_answer("identity", answer("identity", {"source": source, "value": 1}))
    assert codes(found) == ["source_invalid"]
    assert found[0].member == member


@pytest.mark.parametrize("pointer", ["", "/", "/skills/01", "/skills/-", "/a~0b~1c", "/skills/0/id"])
def test_syntactically_valid_pointers_are_not_source_invalid(pointer: str) -> None:
    # Whether they name anything is the diff's business (pointer_unresolved), not the shape's.
    assert check_answer("capabilities", answer("capabilities", card_proj(pointer, 1))) == []


def test_card_source_may_carry_locators() -> None:
    proj = card_proj()
    proj["source"].update(url="https://a.example/card.json", digest=DIGEST)
    assert check_answer("identity", answer("identity", proj)) == []


@settings(max_examples=150, deadline=None)
@given(
    json_values(
        json_scalars(
            text=st.text(max_size=8),
            also=st.sampled_from(["card", "proposal", "/name", "~2", "question", DIGEST]),
        ),
        keys=st.sampled_from(ANSWER_KEYS),
        list_size=4,
        object_size=5,
        max_leaves=25,
    )
)
def test_arbitrary_json_never_raises(value: Any) -> None:
    found = check_answer("terms", value)
    assert all(f.question == "terms" for f in found)
    check_refusal(value, SKILLS)
    is_refusal(value)


# --- refusals ------------------------------------------------------------------------------------


def refusal(**changes: Any) -> dict:
    base = {
        "refused": True,
        "reason": "out_of_scope",
        "detail": "no declared skill matches",
        "declared_skills": list(SKILLS),
    }
    base.update(changes)
    return base


def test_standard_refusal_is_accepted() -> None:
    assert is_refusal(refusal())
    assert check_refusal(refusal(), SKILLS, probe="undefined_method") == []
    assert check_refusal(refusal(reason="not_declared"), SKILLS) == []


def test_is_refusal_only_for_objects_with_refused() -> None:
    assert is_refusal({"refused": False})
    assert not is_refusal(answer())
    assert not is_refusal([refusal()])
    assert not is_refusal(None)


@pytest.mark.parametrize(
    ("obj", "member"),
    [
        (refusal(refused=False), "/refused"),
        (refusal(refused="true"), "/refused"),
        (refusal(reason="busy"), "/reason"),
        (refusal(reason=None), "/reason"),
        (refusal(detail=["x"]), "/detail"),
        (refusal(declared_skills="reconcile-statement"), "/declared_skills"),
        (refusal(declared_skills=[1, 2]), "/declared_skills"),
        (refusal(hint="ask me nicely"), "/hint"),
        ({k: v for k, v in refusal().items() if k != "detail"}, "/detail"),
    ],
)
def test_refusal_shape_invalid(obj: dict, member: str) -> None:
    found = check_refusal(obj, SKILLS, question="usage")
    assert codes(found) == ["refusal_shape_invalid"]
    assert (found[0].member, found[0].question) == (member, "usage")


@pytest.mark.parametrize("obj", [[], "refused", None])
def test_refusal_that_is_not_an_object(obj: Any) -> None:
    assert codes(check_refusal(obj, SKILLS)) == ["refusal_shape_invalid"]


@pytest.mark.parametrize("skills", [list(reversed(SKILLS)), [SKILLS[0]], [*SKILLS, "extra"], []])
def test_refusal_skills_must_equal_card_ids_in_card_order(skills: list[str]) -> None:
    found = check_refusal(refusal(declared_skills=skills), SKILLS, probe="unmatched_selector")
    assert codes(found) == ["refusal_skills_mismatch"]
    assert found[0].probe == "unmatched_selector"
