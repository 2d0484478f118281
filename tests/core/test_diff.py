"""The section 7 diff: each projection against the declared bytes, under JCS, byte for byte."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.canonical import canonical_text
from explorer.core.diff import ProjectionResult, diff_question, first_differing_span
from explorer.core.sow import ProposalCheck, check_proposal, proposal_digest, public_nkey, sign_proposal
from tests.support.strategies import SAFE_INTEGERS, json_scalars, json_values

CARD: dict[str, Any] = {
    "name": "Stonework Books",
    "description": "Reconciles statements",
    "version": "1.4.0",
    "url": "https://stonework.example/a2a",
    "provider": {"organization": "Stonework Analytics", "url": "https://stonework.example"},
    "": "empty-key member",
    "pricing": {"cap": 2**53 + 1, "floor": 2**53, "ratio": 1.5},
    "skills": [
        {"id": "reconcile-statement", "description": "Reconcile a statement", "inputModes": ["text/csv"]},
        {"id": "flag-exceptions", "description": "Flag exceptions"},
    ],
}
SKILLS = ("reconcile-statement", "flag-exceptions")
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PROPOSAL_URL = "https://stonework.example/terms/reconcile-statement.sow.json"


def signed_proposal(**changes: Any) -> dict[str, Any]:
    doc = {
        "sow": "v1",
        "id": "sow_test",
        "version": 1,
        "starts_at": None,
        "parties": {"provider": {"agent": public_nkey(KEY), "owner": "Stonework"}, "client": None},
        "price": {
            "arrangement": "fixed_fee",
            "currency": "XCR",
            "rates": [{"offering": "reconcile-statement", "per_task": 2500000}],
            "grade": "enforced",
        },
        "volume": {"per_day": 8, "grade": "enforced"},
    }
    doc.update(changes)
    return sign_proposal(doc, KEY, signed_at="2026-08-11T09:00:00Z")


PROPOSAL = signed_proposal()
DIGEST = proposal_digest(PROPOSAL)
CHECK = check_proposal(json.dumps(PROPOSAL).encode(), url=PROPOSAL_URL, committed_digest=DIGEST)


def card_proj(member: str, value: Any) -> dict[str, Any]:
    return {"source": {"document": "card", "member": member}, "value": value}


def prop_proj(member: str, value: Any, url: str = PROPOSAL_URL, digest: str = DIGEST) -> dict[str, Any]:
    source = {"document": "proposal", "member": member, "url": url, "digest": digest}
    return {"source": source, "value": value}


def run(
    question: str,
    *projections: dict[str, Any],
    declared: bool = True,
    card: dict[str, Any] | None = None,
    card_signed: bool | None = True,
    unsigned: tuple[str, ...] = (),
    proposals: dict[tuple[str, str], ProposalCheck] | None = None,
    committed: set[tuple[str, str]] | None = None,
) -> tuple[list[ProjectionResult], list]:
    answer = {"question": question, "declared": declared, "projections": list(projections)}
    return diff_question(
        question,
        answer,
        card_doc=CARD if card is None else card,
        unsigned_members=unsigned,
        card_signed=card_signed,
        proposals={(PROPOSAL_URL, DIGEST): CHECK} if proposals is None else proposals,
        committed={(PROPOSAL_URL, DIGEST)} if committed is None else committed,
    )


def codes(findings: list) -> list[str]:
    return sorted(f.code for f in findings)


# --- equality is JCS equality --------------------------------------------------------------------


def test_exact_projections_match_and_report_both_canonical_strings() -> None:
    results, findings = run(
        "identity",
        card_proj("/name", "Stonework Books"),
        card_proj("/provider", {"url": "https://stonework.example", "organization": "Stonework Analytics"}),
    )
    assert findings == []
    assert [r.status for r in results] == ["match", "match"]
    assert results[1].value_canonical == results[1].source_canonical == canonical_text(CARD["provider"])
    assert results[1].signed is True and results[1].diff is None


@pytest.mark.parametrize(
    ("answer_bytes", "member"),
    [
        (b'{"organization": "Stonework Analytics", "url": "https://stonework.example"}', "/provider"),
        (b'{"url":"https://stonework.example","organization":"Stonework Analytics"}', "/provider"),
        (b"1.50", "/pricing/ratio"),
        (b"15e-1", "/pricing/ratio"),
        (b'"Stonew\\u006frk Books"', "/name"),
        (b'"Reconcile a statement"', "/skills/0/description"),
    ],
)
def test_values_equal_only_before_canonicalization_match(answer_bytes: bytes, member: str) -> None:
    results, findings = run("identity", card_proj(member, json.loads(answer_bytes)))
    assert findings == [] and results[0].status == "match"


def test_one_point_zero_equals_one_and_escaped_e_acute_equals_literal() -> None:
    card = {**CARD, "n": 1, "city": "Orléans"}
    answer = json.loads(
        b'[{"source":{"document":"card","member":"/n"},"value":1.0},'
        b'{"source":{"document":"card","member":"/city"},"value":"Orl\\u00e9ans"}]'
    )
    results, findings = run("identity", *answer, card=card)
    assert findings == [] and [r.status for r in results] == ["match", "match"]


def test_nfc_and_nfd_are_different() -> None:
    nfc = "Orl\u00e9ans"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd and unicodedata.normalize("NFC", nfd) == nfc
    results, findings = run("identity", card_proj("/city", nfd), card={**CARD, "city": nfc})
    assert codes(findings) == ["projection_mismatch"]
    result = results[0]
    assert result.status == "mismatch"
    assert result.value_canonical == json.dumps(nfd, ensure_ascii=False)
    assert result.source_canonical == json.dumps(nfc, ensure_ascii=False)
    assert result.diff == (4, 6) and result.source_diff == (4, 5)  # "e" + U+0301 versus "é"


def test_mismatch_names_member_question_both_strings_and_span() -> None:
    results, findings = run("capabilities", card_proj("/skills/1/description", "Flag all exceptions"))
    (f,) = findings
    assert (f.code, f.question, f.member) == ("projection_mismatch", "capabilities", "/skills/1/description")
    assert '"Flag all exceptions"' in f.detail and '"Flag exceptions"' in f.detail
    r = results[0]
    assert r.value_canonical == '"Flag all exceptions"' and r.source_canonical == '"Flag exceptions"'
    assert r.value_canonical[r.diff[0] : r.diff[1]] == "all "
    assert r.source_diff == (6, 6)  # nothing in the source: a pure insertion point
    assert r.to_json()["diff"] == [6, 10]


def test_type_differences_are_mismatches() -> None:
    _, findings = run("identity", card_proj("/version", 1.4), card_proj("/skills/0/inputModes", "text/csv"))
    assert codes(findings) == ["projection_mismatch", "projection_mismatch"]


def test_first_differing_span() -> None:
    assert first_differing_span("abc", "abc") == ((3, 3), (3, 3))
    assert first_differing_span("abXc", "abYYc") == ((2, 3), (2, 4))
    assert first_differing_span("aaa", "aa") == ((2, 3), (2, 2))
    assert first_differing_span("", "x") == ((0, 0), (0, 1))


# --- numbers beyond double precision -------------------------------------------------------------


def test_big_integers_differing_past_double_precision_are_never_silently_equal() -> None:
    results, findings = run("usage", card_proj("/pricing/cap", 2**53))
    assert codes(findings) == ["lossy_number", "projection_mismatch"]
    r = results[0]
    assert r.status == "mismatch" and r.lossy
    assert r.value_canonical == r.source_canonical  # JCS alone would have called them equal
    assert all(f.member == "/pricing/cap" and f.question == "usage" for f in findings)


def test_equal_big_integers_match_with_a_lossy_warning() -> None:
    results, findings = run(
        "usage", card_proj("/pricing/floor", 2**53), card_proj("/pricing", CARD["pricing"])
    )
    assert codes(findings) == ["lossy_number", "lossy_number"]
    assert [r.status for r in results] == ["match", "match"]
    assert all(r.lossy for r in results)


def test_big_integer_in_the_answer_only_is_lossy_and_mismatched() -> None:
    _, findings = run("usage", card_proj("/version", 2**60))
    assert codes(findings) == ["lossy_number", "projection_mismatch"]


# --- pointers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("member", "status"),
    [
        ("/skills/01", "unresolved"),
        ("/skills/-", "unresolved"),
        ("/skills/2", "unresolved"),
        ("/nope", "unresolved"),
        ("/name/0", "unresolved"),
        ("/", "match"),
        ("", "match"),
    ],
)
def test_pointer_resolution(member: str, status: str) -> None:
    value = CARD[""] if member == "/" else CARD if member == "" else "x"
    results, findings = run("identity", card_proj(member, value))
    assert results[0].status == status
    if status == "unresolved":
        assert codes(findings) == ["pointer_unresolved"]
        assert findings[0].member == member
    else:  # the whole card holds the big integers of /pricing, hence the warning
        assert codes(findings) == (["lossy_number"] if member == "" else [])


def test_slash_pointer_is_unresolved_without_an_empty_key() -> None:
    card = {k: v for k, v in CARD.items() if k != ""}
    results, findings = run("identity", card_proj("/", "x"), card=card)
    assert results[0].status == "unresolved" and codes(findings) == ["pointer_unresolved"]


def test_malformed_sources_are_not_compared_and_left_to_the_shape_check() -> None:
    results, findings = run(
        "identity",
        card_proj("~2", "x"),
        card_proj("name", "x"),
        {"source": {"document": "memo", "member": "/name"}, "value": "x"},
        {"source": "card", "value": 1},
        "not a projection",
    )
    assert findings == []
    assert [r.status for r in results] == ["unresolved", "unresolved", "unverifiable", "unverifiable"]


# --- signatures ----------------------------------------------------------------------------------


def test_member_not_covered_by_the_matched_form_is_member_unsigned() -> None:
    results, findings = run(
        "identity", card_proj("/url", CARD["url"]), card_proj("/name", CARD["name"]), unsigned=("/url",)
    )
    assert codes(findings) == ["member_unsigned"]
    assert findings[0].member == "/url"
    assert [r.signed for r in results] == [False, True]


def test_a_member_covered_except_empty_members_the_signer_drops_is_info_not_a_warning() -> None:
    interface = {
        "url": "https://stonework.example/a2a",
        "protocolBinding": "JSONRPC",
        "tenant": "",
        "extra": {"notes": [], "hint": None},
    }
    card = {**CARD, "supportedInterfaces": [interface]}
    empties = ("/supportedInterfaces/0/extra", "/supportedInterfaces/0/tenant")
    results, findings = run(
        "identity", card_proj("/supportedInterfaces/0", interface), card=card, unsigned=empties
    )
    assert [(f.code, f.severity, f.member) for f in findings] == [
        ("member_unsigned_empty", "info", "/supportedInterfaces/0")
    ]
    assert "except empty members its canonical form drops" in findings[0].detail
    assert results[0].unsigned_empty == empties and results[0].to_json()["unsigned_empty"] == list(empties)
    # Content the signature does not cover stays a warning, inside the member or around it.
    for unsigned in (("/supportedInterfaces/0/url",), ("/supportedInterfaces",), (*empties, "/url")):
        results, findings = run(
            "identity", card_proj("/supportedInterfaces/0", interface), card=card, unsigned=unsigned
        )
        expected = ["member_unsigned"] if unsigned != (*empties, "/url") else ["member_unsigned_empty"]
        assert codes(findings) == expected, unsigned
    results, _ = run("identity", card_proj("/name", CARD["name"]), unsigned=("/url",))
    assert "unsigned_empty" not in results[0].to_json()


def test_unsigned_card_projections_are_marked_but_not_member_unsigned() -> None:
    results, findings = run("identity", card_proj("/name", CARD["name"]), card_signed=False)
    assert findings == [] and results[0].signed is False and results[0].status == "match"
    results, findings = run("identity", card_proj("/name", CARD["name"]), card_signed=None)
    assert findings == [] and results[0].signed is None


# --- proposals -----------------------------------------------------------------------------------


def test_committed_verified_proposal_is_diffed() -> None:
    results, findings = run("terms", prop_proj("/price", PROPOSAL["price"]), prop_proj("/volume/per_day", 9))
    assert [r.status for r in results] == ["match", "mismatch"]
    assert codes(findings) == ["projection_mismatch"] and findings[0].member == "/volume/per_day"
    assert results[0].signed is True and results[0].url == PROPOSAL_URL and results[0].digest == DIGEST


def test_proposal_pointer_unresolved() -> None:
    results, findings = run("terms", prop_proj("/price/rates/1", {}))
    assert results[0].status == "unresolved" and codes(findings) == ["pointer_unresolved"]


def test_uncommitted_proposal_is_not_committed_and_unverifiable() -> None:
    other = "sha256:" + "0" * 64
    results, findings = run(
        "terms",
        prop_proj("/price", PROPOSAL["price"], digest=other),
        prop_proj("/price", PROPOSAL["price"], url="https://elsewhere.example/t.json"),
    )
    assert codes(findings) == ["proposal_not_committed", "proposal_not_committed"]
    assert [r.status for r in results] == ["unverifiable", "unverifiable"]


def test_unverified_proposal_is_unverifiable_without_repeating_its_findings() -> None:
    tampered = {**PROPOSAL, "volume": {"per_day": 80, "grade": "enforced"}}
    bad = check_proposal(json.dumps(tampered).encode(), url=PROPOSAL_URL, committed_digest=DIGEST)
    assert bad.status != "verified"
    results, findings = run(
        "terms", prop_proj("/volume/per_day", 80), proposals={(PROPOSAL_URL, DIGEST): bad}
    )
    assert findings == [] and results[0].status == "unverifiable"


# --- question-specific rules ---------------------------------------------------------------------


def test_terms_without_terms_entry_must_be_declared_false_and_empty() -> None:
    assert run("terms", declared=False, committed=set(), proposals={}) == ([], [])
    _, findings = run("terms", declared=True, committed=set(), proposals={})
    assert codes(findings) == ["terms_fabricated"]
    _, findings = run("terms", prop_proj("/price", 1), declared=False, committed=set(), proposals={})
    assert codes(findings) == ["proposal_not_committed", "terms_fabricated"]


def test_terms_declared_false_although_the_card_commits_is_wrong() -> None:
    _, findings = run("terms", declared=False)
    assert codes(findings) == ["terms_declared_wrong"]
    assert findings[0].question == "terms"


def test_terms_projections_must_come_from_proposals() -> None:
    results, findings = run("terms", card_proj("/name", CARD["name"]))
    assert codes(findings) == ["source_invalid"]
    assert findings[0].member == "/name"


def test_refusals_boundary_is_the_set_of_card_skill_ids() -> None:
    ok = [card_proj("/skills/1/id", "flag-exceptions"), card_proj("/skills/0/id", "reconcile-statement")]
    assert run("refusals", *ok)[1] == []
    _, findings = run("refusals", ok[0])
    assert codes(findings) == ["refusals_boundary_mismatch"] and "'reconcile-statement'" in findings[0].detail
    _, findings = run("refusals", *ok, card_proj("/skills/2/id", "tax-filing"))
    assert codes(findings) == ["pointer_unresolved", "refusals_boundary_mismatch"]
    _, findings = run("refusals", *ok, card_proj("/securitySchemes", {}))
    assert codes(findings) == ["pointer_unresolved"]  # grounds declared nowhere do not resolve


def test_not_an_object_answer_gives_no_results() -> None:
    for answer in ([], "x", None, {"projections": "x"}):
        assert diff_question(
            "identity", answer, card_doc=CARD, card_signed=True, proposals={}, committed=set()
        ) == ([], [])


def test_projection_result_json_shape() -> None:
    results, _ = run("identity", card_proj("/name", "Stonework"))
    assert set(results[0].to_json()) == {
        "index",
        "question",
        "document",
        "member",
        "url",
        "digest",
        "status",
        "value",
        "source_value",
        "value_canonical",
        "source_canonical",
        "signed",
        "lossy",
        "diff",
        "source_diff",
    }
    json.dumps(results[0].to_json())


# --- properties ----------------------------------------------------------------------------------

_JSON = json_values(
    json_scalars(integers=SAFE_INTEGERS, text=st.text(max_size=10)),
    keys=st.text(max_size=5),
    list_size=3,
    max_leaves=12,
)


@st.composite
def card_and_answer(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    ids = draw(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4, unique=True))
    card = {
        "name": draw(st.text(max_size=20)),
        "version": draw(_JSON),
        "provider": draw(_JSON),
        "skills": [{"id": i, "description": draw(st.text(max_size=20)), "tags": draw(_JSON)} for i in ids],
    }
    members = ["/name", "/version", "/provider"]
    for n in range(len(ids)):
        members += [f"/skills/{n}/id", f"/skills/{n}/description", f"/skills/{n}/tags"]
    chosen = draw(st.lists(st.sampled_from(members), min_size=1, unique=True))
    projections = []
    for member in chosen:
        tokens = member.split("/")[1:]
        value: Any = card
        for token in tokens:
            value = value[int(token)] if isinstance(value, list) else value[token]
        # Re-serialise the copy so the answer is built from bytes, like one read off the wire.
        projections.append(card_proj(member, json.loads(json.dumps(value))))
    return card, projections


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=120, deadline=None)
@given(card_and_answer(), st.data())
def test_mutating_one_projected_value_flags_exactly_that_member(
    model: tuple[dict[str, Any], list[dict[str, Any]]], data: st.DataObject
) -> None:
    card, projections = model
    answer = {"question": "capabilities", "projections": projections}
    results, findings = diff_question(
        "capabilities", answer, card_doc=card, card_signed=True, proposals={}, committed=set()
    )
    assert findings == [] and all(r.status == "match" for r in results)

    index = data.draw(st.integers(min_value=0, max_value=len(projections) - 1))
    original = canonical_text(projections[index]["value"])
    new = data.draw(_JSON.filter(lambda v: canonical_text(v) != original))
    mutated = [dict(p) for p in projections]
    mutated[index] = {**projections[index], "value": new}
    results, findings = diff_question(
        "capabilities",
        {"question": "capabilities", "projections": mutated},
        card_doc=card,
        card_signed=True,
        proposals={},
        committed=set(),
    )
    assert [(f.code, f.member) for f in findings] == [
        ("projection_mismatch", projections[index]["source"]["member"])
    ]
    assert [r.status for r in results] == ["mismatch" if i == index else "match" for i in range(len(mutated))]


@settings(max_examples=150, deadline=None)
@given(_JSON, st.sampled_from(["identity", "capabilities", "usage", "terms", "refusals"]))
def test_arbitrary_json_as_an_answer_never_raises(answer: Any, question: str) -> None:
    projections = [answer, {"source": answer, "value": answer}]
    shaped = {"question": question, "declared": True, "projections": projections}
    for candidate in (answer, shaped):
        results, findings = diff_question(
            question,
            candidate,
            card_doc=CARD,
            card_signed=True,
            proposals={(PROPOSAL_URL, DIGEST): CHECK},
            committed={(PROPOSAL_URL, DIGEST)},
        )
        assert all(f.question == question for f in findings)
        json.dumps([r.to_json() for r in results])


def test_a_marked_excerpt_shows_where_a_long_value_changes_with_carets_under_it() -> None:
    from explorer.core.diff import first_differing_span, marked_excerpt

    a = "x" * 300 + "old" + "y" * 300
    b = "x" * 300 + "new\x1b[2J" + "y" * 300
    span_a, span_b = first_differing_span(a, b)
    line, carets = marked_excerpt(a, span_a, 80)
    assert line.startswith("...") and line.endswith("...") and "«old»" in line and len(line) < 100
    assert carets.index("^") == line.index("«") and carets.count("^") == len("«old»")
    line, carets = marked_excerpt(b, span_b, 80)
    assert "\x1b" not in line and "«new\\x1b[2J»" in line  # made visible, the carets still under it
    assert carets.index("^") == line.index("«") and carets.count("^") == len("«new\\x1b[2J»")
