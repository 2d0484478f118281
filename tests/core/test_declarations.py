"""Signatures are proofs, not declarations: when two card signatures prove the same thing.

Every signature here is a real one (ES256/ES384 keys made by joserfc, cards signed with
`explorer.core.signatures.sign_card`), and ECDSA makes each signing of one card different bytes.
First `explorer.core.declarations` on its own: two signings of one card under one key are
equivalent, while another key, another algorithm, another declaration, or a signature that does
not verify or cannot be checked never is. Then the verifier's uses of it, through the report
`evaluate` builds from recorded exchanges: a projected `/signatures` (the shape replicas behind
one address give), two asks, two attempts, and `answers_sha256` across signings.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.canonical import canonicalize, sha256_hex
from explorer.core.declarations import (
    MAX_JUDGED,
    STAND_IN,
    Equivalence,
    Proof,
    card_digests,
    declarations_of,
    declarations_sha256,
    holds_signatures,
    projects_signatures,
    proofs_of,
    signers_of,
)
from explorer.core.signatures import generate_key, public_jwks, sign_card, verify_card
from tests.core.test_evaluate import (
    CARD_KEY,
    KEYS,
    attempt,
    cp,
    honest_answers,
    make_card,
    report_of,
)
from tests.support.strategies import json_values

UNSIGNED = make_card(sign=False)
KID = "card-key-1"  # CARD_KEY's kid in tests.core.test_evaluate
OTHER_KEY = generate_key("ES256", kid="other-key")  # trusted too: it verifies, but proves another signer
ES384_KEY = generate_key("ES384", kid="card-key-384")
TRUSTED = public_jwks(CARD_KEY, OTHER_KEY, ES384_KEY)


def signed(card: dict[str, Any] = UNSIGNED, key: Any = CARD_KEY, kid: str = KID, alg: str = "ES256") -> dict:
    """One signing of `card`: ECDSA makes every call's signature different."""
    return sign_card(card, key, kid=kid, alg=alg)


def judge(card: dict[str, Any], keys: dict[str, Any] = TRUSTED) -> Equivalence:
    return Equivalence(card, verify_card(card, keys), keys, None)


def altered(signature: str) -> str:
    """The signature with one character changed: same length, no longer the signature."""
    return signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]


# --- the rule on its own ------------------------------------------------------------------------


def test_two_signings_of_one_card_under_one_key_are_equivalent() -> None:
    one, two = signed(), signed()
    assert one["signatures"] != two["signatures"]  # ECDSA: different bytes every time
    assert declarations_of(one) == declarations_of(two) == UNSIGNED
    judged = judge(one)
    assert (
        judged.proofs
        == proofs_of(verify_card(two, TRUSTED))
        == {Proof(CARD_KEY.thumbprint(), "ES256", "served")}
    )
    assert judged.same_declaration(two)
    assert judged.value_equivalent("/signatures", two["signatures"])
    assert judged.value_equivalent("/signatures/0", two["signatures"][0])
    assert judged.value_equivalent("", two)  # the whole card, answered
    assert judged.proven("/signatures", one["signatures"]) and judged.proven("/signatures", two["signatures"])
    assert signers_of(verify_card(two, TRUSTED)) == [CARD_KEY.thumbprint()]


def test_another_key_another_alg_or_another_declaration_is_not_equivalent() -> None:
    judged = judge(signed())
    by_other_key = signed(key=OTHER_KEY, kid="other-key")
    by_es384 = signed(key=ES384_KEY, kid="card-key-384", alg="ES384")
    assert verify_card(by_other_key, TRUSTED).status == verify_card(by_es384, TRUSTED).status == "verified"
    for other in (by_other_key, by_es384):
        assert not judged.same_declaration(other)
        assert not judged.value_equivalent("/signatures", other["signatures"])
    changed = signed({**UNSIGNED, "description": "Reconciles statements, and anything else"})
    assert verify_card(changed, TRUSTED).status == "verified"  # a real signature, of other declarations
    assert not judged.same_declaration(changed)
    assert not judged.value_equivalent("/signatures", changed["signatures"])  # invalid over this card
    both = signed(signed(), key=OTHER_KEY, kid="other-key")  # one signature more than the card has
    assert not judged.value_equivalent("/signatures", both["signatures"])


def test_a_signature_that_does_not_verify_or_cannot_be_checked_proves_nothing() -> None:
    card = signed()
    judged = judge(card)
    forged = copy.deepcopy(signed()["signatures"])
    forged[0]["signature"] = altered(forged[0]["signature"])
    assert not judged.value_equivalent("/signatures", forged)
    assert not judged.proven("/signatures", forged)
    unknown_kid = signed(key=generate_key("ES256", kid="stranger"), kid="stranger")
    assert not judged.value_equivalent("/signatures", unknown_kid["signatures"])
    # A card whose own signature cannot be checked (no key) or fails proves nothing either.
    unchecked = judge(card, keys={"keys": []})
    assert unchecked.proofs is None and not unchecked.value_equivalent("/signatures", signed()["signatures"])
    invalid = {**card, "signatures": forged}
    assert judge(invalid).proofs is None
    assert signers_of(verify_card(invalid, TRUSTED)) == []
    # Only members that hold signatures are judged: a declaration is compared by its bytes.
    assert not judged.value_equivalent("/name", "Stonework Books")


def test_a_judge_verifies_each_distinct_signature_list_once_and_only_so_many() -> None:
    judged = judge(signed())
    signings = [signed()["signatures"] for _ in range(MAX_JUDGED + 1)]
    assert all(judged.value_equivalent("/signatures", s) for s in signings[:MAX_JUDGED])
    assert judged.value_equivalent("/signatures", copy.deepcopy(signings[0]))  # judged already
    # An agent answering ever more signatures cannot keep the verifier verifying.
    assert not judged.value_equivalent("/signatures", signings[MAX_JUDGED])


def test_members_that_hold_signatures() -> None:
    assert [holds_signatures(m) for m in ("", "/signatures", "/signatures/0/protected")] == [True] * 3
    others = ("/name", "/signaturesX", "/skills/0/signatures", None)
    assert [holds_signatures(m) for m in others] == [False] * 4
    assert projects_signatures({"projections": [cp("/name", "x"), cp("/signatures", [])]})
    assert not projects_signatures(
        {
            "projections": [
                cp("/name", "x"),
                {"source": {"document": "proposal", "member": "/signatures"}, "value": []},
            ]
        }
    )


def test_settled_answers_read_the_cards_own_signatures_as_one_stand_in() -> None:
    one, two = signed(), signed()
    judged = judge(one)
    answer = {
        "question": "identity",
        "declared": True,
        "projections": [
            cp("/name", one["name"]),
            cp("/signatures", two["signatures"]),
            cp("", two),
            cp("/signatures", one["signatures"]),
        ],
    }
    settled = judged.settled(answer)
    assert settled["projections"][0] == answer["projections"][0]
    assert settled["projections"][1]["value"] == settled["projections"][3]["value"] == STAND_IN
    assert settled["projections"][2]["value"] == {**UNSIGNED, "signatures": STAND_IN}  # declarations kept
    assert answer["projections"][1]["value"] == two["signatures"]  # the answer itself is left alone
    plain = {"question": "usage", "declared": True, "projections": [cp("/name", one["name"])]}
    assert judged.settled(plain) is plain
    # Without the signer's key only the card's own bytes stand in: equivalence takes a verification.
    unkeyed = judge(one, keys={"keys": []}).settled(answer)["projections"]
    assert [p["value"] == STAND_IN for p in unkeyed] == [False, False, False, True]
    forged = copy.deepcopy(two["signatures"])
    forged[0]["signature"] = altered(forged[0]["signature"])
    assert judged.settled({"projections": [cp("/signatures", forged)]})["projections"][0]["value"] == forged


def test_the_difference_names_what_differed_and_why_it_is_the_same() -> None:
    one, two = signed(), signed()
    words = judge(one).difference("/signatures", two["signatures"])
    assert "signatures[0] signature" in words  # the protected header is the same; the bytes differ
    assert CARD_KEY.thumbprint() in words and "ES256 over the served payload" in words


@settings(max_examples=200, deadline=None)
@given(json_values(keys=st.text(max_size=3) | st.sampled_from(["signatures", "\U0001f600", "\ue000", "é"])))
def test_card_digests_are_the_digests_of_the_canonical_bytes(card: Any) -> None:
    if not isinstance(card, dict):
        card = {"value": card}
    whole, declared = card_digests(card)
    try:
        assert whole == sha256_hex(canonicalize(card))
    except ValueError:
        assert whole is None
    try:
        assert declared == declarations_sha256(card) == sha256_hex(canonicalize(declarations_of(card)))
    except ValueError:
        assert declared is None


# --- the verifier's uses, through evaluate ------------------------------------------------------


def replica_answers(card: dict[str, Any], served: dict[str, Any]) -> dict[str, Any]:
    """An honest replica's answers: its own served card projected, `/signatures` included."""
    answers = honest_answers(card)
    answers["identity"]["projections"].append(cp("/signatures", served["signatures"]))
    return answers


def findings_of(report: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["code"] == code]


def test_replicas_that_signed_at_their_own_start_are_conformant() -> None:
    fetched, asked_first, asked_second = signed(), signed(), signed()
    report = report_of(
        attempt(
            fetched,
            answers=replica_answers(fetched, asked_first),
            answers2=replica_answers(fetched, asked_second),
        )
    )
    assert report["verdict"] == "conformant"
    assert [f["code"] for f in report["findings"]] == ["signature_equivalent"]  # no nondeterministic_answer
    found = findings_of(report, "signature_equivalent")[0]
    assert (found["severity"], found["question"], found["member"]) == ("info", "identity", "/signatures")
    assert "signatures[0] signature" in found["detail"] and CARD_KEY.thumbprint() in found["detail"]
    projection = report["questions"]["identity"]["projections"][-1]
    assert (projection["member"], projection["status"]) == ("/signatures", "match")
    card = report["card"]
    assert card["signers"] == [CARD_KEY.thumbprint()]
    assert card["declarations_sha256"] == sha256_hex(canonicalize(UNSIGNED))
    assert card["signature"]["signatures"][0]["thumbprint"] == CARD_KEY.thumbprint()


def test_an_answered_signature_that_does_not_prove_the_card_is_a_mismatch() -> None:
    fetched = signed()
    forged = copy.deepcopy(signed())
    forged["signatures"][0]["signature"] = altered(forged["signatures"][0]["signature"])
    by_other_key = signed(key=OTHER_KEY, kid="other-key")
    other_payload = signed({**UNSIGNED, "description": "Another description"})
    for lie in (forged, by_other_key, other_payload):
        answers = replica_answers(fetched, lie)
        report = report_of(attempt(fetched, answers=answers), keys=TRUSTED)
        assert report["verdict"] == "nonconformant"
        mismatch = findings_of(report, "projection_mismatch")
        assert [(f["question"], f["member"]) for f in mismatch] == [("identity", "/signatures")]
        assert not findings_of(report, "signature_equivalent")


def test_two_asks_that_differ_beyond_equivalent_signatures_are_nondeterministic() -> None:
    fetched = signed()
    forged = copy.deepcopy(signed())
    forged["signatures"][0]["signature"] = altered(forged["signatures"][0]["signature"])
    report = report_of(
        attempt(
            fetched, answers=replica_answers(fetched, signed()), answers2=replica_answers(fetched, forged)
        )
    )
    assert [(f["code"], f["question"]) for f in report["findings"] if f["severity"] == "error"] == [
        ("nondeterministic_answer", "identity")
    ]


def test_answers_sha256_does_not_change_when_the_agent_signs_again() -> None:
    def digest(card: dict[str, Any], keys: dict[str, Any] = TRUSTED) -> str:
        report = report_of(attempt(card, answers=replica_answers(card, card)), keys=keys)
        assert report["verdict"] == "conformant"
        return str(report["answers_sha256"])

    first, again = signed(), signed()
    assert first["signatures"] != again["signatures"]
    assert digest(first) == digest(again)
    # Whoever reads the run: the same digest without the signer's key (the card's own signatures).
    assert digest(first, keys={"keys": []}) == digest(again, keys={"keys": []}) == digest(first)
    # Another key is the card's business (`card.signers`), not the answers'.
    rotated = signed(key=OTHER_KEY, kid="other-key")
    assert digest(rotated) == digest(first)
    assert report_of(attempt(rotated), keys=TRUSTED)["card"]["signers"] == [OTHER_KEY.thumbprint()]
    changed = signed({**UNSIGNED, "version": "1.5.0"})
    assert digest(changed) != digest(first)


def test_a_card_signed_again_between_attempts_is_resigned_not_changed() -> None:
    first, again = signed(), signed()
    lying = honest_answers(first)
    lying["capabilities"]["projections"][1]["value"] = "Reconcile anything"
    report = report_of(attempt(first, answers=lying), attempt(again, n=2))
    assert report["verdict"] == "churn"
    resigned = findings_of(report, "card_resigned")
    assert len(resigned) == 1 and resigned[0]["severity"] == "info"
    assert CARD_KEY.thumbprint() in resigned[0]["detail"]
    assert not findings_of(report, "card_changed")
    # Other declarations, or another key, between attempts is a change.
    for other in (signed({**UNSIGNED, "version": "1.3.0"}), signed(key=OTHER_KEY, kid="other-key")):
        changed = report_of(attempt(first, answers=lying), attempt(other, n=2), keys=TRUSTED)
        assert findings_of(changed, "card_changed") and not findings_of(changed, "card_resigned")


def test_reports_without_a_card_name_no_declarations_and_no_signers() -> None:
    report = report_of([], keys=KEYS)
    assert (report["card"]["declarations_sha256"], report["card"]["signers"]) == (None, [])
    unsigned = report_of(attempt(UNSIGNED))
    assert unsigned["card"]["signers"] == []
    assert unsigned["card"]["declarations_sha256"] == sha256_hex(canonicalize(UNSIGNED))
