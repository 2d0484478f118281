"""compare_reports in kinds (CONTRACT "Signatures are proofs"): a card signed again is no change.

Reports of runs of one card signed with real ES256 keys (`explorer.core.signatures.sign_card`:
other bytes at every signing), each answering `/signatures` from its own card as the reference
agents do, and stating `card.declarations_sha256` and `card.signers` as this version's reports do.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from explorer.core.attempt import canonical_sha
from explorer.core.canonical import canonical_text
from explorer.core.compare import RunMarks, change_kinds, compare_reports, kinds_words
from explorer.core.declarations import declarations_sha256, signers_of
from explorer.core.signatures import generate_key, public_jwks, sign_card, verify_card
from tests.support.runs import make_card, make_run


@pytest.fixture(scope="module")
def keys() -> tuple[Any, Any]:
    return generate_key("ES256", kid="card-1"), generate_key("ES256", kid="card-1")


def _report(card: dict[str, Any], key: Any, *, answered: Any = None, status: str = "match") -> dict[str, Any]:
    """A report of `card` signed now with `key`, whose identity answer projects its `/signatures`
    (`answered`: another value answered for it)."""
    signed = sign_card(card, key, kid="card-1")
    report = copy.deepcopy(dict(make_run().report))
    report["card"].update(
        sha256=canonical_sha(signed),
        declarations_sha256=declarations_sha256(signed),
        signers=signers_of(verify_card(signed, public_jwks(key))),
    )
    value = signed["signatures"] if answered is None else answered
    report["questions"]["identity"]["projections"].append(
        {
            "index": 2,
            "question": "identity",
            "document": "card",
            "member": "/signatures",
            "url": None,
            "digest": None,
            "status": status,
            "value": value,
            "source_value": signed["signatures"],
            "value_canonical": canonical_text(value),
            "source_canonical": canonical_text(signed["signatures"]),
        }
    )
    return report


def test_a_card_signed_again_is_shown_and_is_no_change(keys) -> None:
    key, _ = keys
    card = make_card()
    before, after = _report(card, key), _report(card, key)
    assert before["card"]["sha256"] != after["card"]["sha256"]  # ES256: other bytes at every signing
    result = compare_reports(before, after)
    assert result.kinds == ("resigned",) and result.resigned
    assert not result.changed and not result.identical
    assert [c.member for c in result.question("identity").resigned] == ["/signatures"]
    assert result.question("identity").changed == ()
    assert result.summary() == "no change: signed again"
    assert result.lines()[0].startswith("no change, signed again: the card was signed again")
    assert result.to_json()["kinds"] == ["resigned"] and result.to_json()["changed"] is False


def test_another_key_is_a_change_named_key_changed(keys) -> None:
    key, rotated = keys
    card = make_card()
    result = compare_reports(_report(card, key), _report(card, rotated))
    assert result.kinds == ("key",) and result.changed
    assert result.lines()[0] == "changed: key changed"
    assert "key changed" in result.summary() and result.fact("card.signers") is not None
    assert [c.member for c in result.question("identity").changed] == ["/signatures"]  # not signed again


def test_other_declarations_are_a_change_whatever_signs_them(keys) -> None:
    key, _ = keys
    before = _report(make_card(), key)
    after = _report(make_card(description="Reconciles statements and invoices"), key)
    result = compare_reports(before, after)
    assert result.kinds == ("declarations",) and result.changed
    assert result.fact("card.declarations_sha256") is not None
    proposal = copy.deepcopy(before)
    proposal["card"]["terms"]["proposals"][0]["digest"] = "sha256:" + "cd" * 32  # a committed proposal
    assert "declarations" in compare_reports(before, proposal).kinds


def test_another_replicas_signature_answered_over_the_same_card_is_no_change(keys) -> None:
    key, _ = keys
    card = make_card()
    before = _report(card, key)
    replica = sign_card(card, key, kid="card-1")["signatures"]  # the same key, signed by another replica
    after = copy.deepcopy(before)
    answered = after["questions"]["identity"]["projections"][-1]
    answered.update(value=replica, value_canonical=canonical_text(replica))
    result = compare_reports(before, after)
    assert result.kinds == () and not result.changed and not result.identical
    forged = copy.deepcopy(after)
    forged["questions"]["identity"]["projections"][-1]["status"] = "mismatch"
    assert compare_reports(before, forged).changed  # a signature that proves nothing is a change


def test_without_the_marks_the_card_digest_stands_for_the_declarations() -> None:
    old = RunMarks("conformant", "c1", None, None, "x")
    assert change_kinds(old, RunMarks("conformant", "c2", None, None, "x")) == ("declarations",)
    assert change_kinds(old, RunMarks("conformant", "c2", "d", ("k",), "x")) == ("declarations",)
    unknown_signers = RunMarks("conformant", "c1", "d", None, "x")
    # nothing shows the same key signed it
    assert change_kinds(unknown_signers, RunMarks("conformant", "c2", "d", ("k",), "x")) == ("key",)
    assert kinds_words(("declarations", "answers", "resigned", "unknown")) == (
        "declarations changed, answers changed, signed again"
    )
