"""compare_reports: projections aligned by source, document and verdict changes, findings, safe output."""

from __future__ import annotations

import copy
import json
from typing import Any

from explorer.core.compare import compare_reports
from tests.support.runs import PROPOSAL_URL, make_run


def _report(**kwargs: Any) -> dict[str, Any]:
    return copy.deepcopy(dict(make_run(**kwargs).report))


def test_two_runs_of_an_unchanged_agent_are_identical_whatever_their_timing() -> None:
    a = _report(started_at="2025-01-01T00:00:00.000Z", elapsed_ms=1.0)
    b = _report(started_at="2025-06-01T12:00:00.000Z", elapsed_ms=99.0)
    result = compare_reports(a, b)
    assert result.identical
    assert result.summary() == "no change"
    assert result.lines() == ["identical: same verdict, card, proposals, answers and findings"]
    assert result.question("identity").unchanged == 2


def test_reordered_projections_are_not_a_change() -> None:
    a, b = _report(), _report()
    b["questions"]["capabilities"]["projections"].reverse()
    assert compare_reports(a, b).identical


def test_a_changed_value_is_reported_with_both_values_and_canonical_forms() -> None:
    a = _report()
    b = _report(answered_name="Impostor", verdict="nonconformant")
    result = compare_reports(a, b)
    assert not result.identical
    identity = result.question("identity")
    assert (len(identity.changed), len(identity.added), len(identity.removed), identity.unchanged) == (
        1,
        0,
        0,
        1,
    )
    change = identity.changed[0]
    assert (change.document, change.url, change.member) == ("card", None, "/name")
    assert (change.before, change.after) == ("Steady Agent", "Impostor")
    assert (change.before_canonical, change.after_canonical) == ('"Steady Agent"', '"Impostor"')
    assert (change.before_status, change.after_status) == ("match", "mismatch")
    assert result.fact("verdict").after == "nonconformant"
    assert result.fact("answers_sha256") is not None
    assert result.fact("card.sha256") is None  # the card itself did not change
    assert [f["code"] for f in result.findings_added] == ["projection_mismatch"]
    assert result.findings_removed == ()
    text = "\n".join(result.lines())
    assert "verdict: conformant -> nonconformant" in text
    assert '"«Steady Agent»"' in text and '"«Impostor»"' in text
    assert "identity: 1 changed" in result.summary()


def test_added_and_removed_projections_are_aligned_by_pointer() -> None:
    a = _report()
    b = _report(extra_skill=True)
    del b["questions"]["refusals"]["projections"][1]
    result = compare_reports(a, b)
    capabilities = result.question("capabilities")
    assert [c.member for c in capabilities.added] == ["/skills/2/id"]
    assert capabilities.added[0].after == "sneaky" and capabilities.added[0].before_canonical is None
    refusals = result.question("refusals")
    assert [c.member for c in refusals.removed] == ["/skills/1/id"]
    assert refusals.removed[0].before == "flag-exceptions"
    reverse = compare_reports(b, a)
    assert [c.member for c in reverse.question("capabilities").removed] == ["/skills/2/id"]


def test_proposal_projections_are_keyed_by_their_url_too() -> None:
    a, b = _report(), _report(price=3000000)
    result = compare_reports(a, b)
    change = result.question("terms").changed[0]
    assert (change.document, change.url, change.member) == ("proposal", PROPOSAL_URL, "/price")
    assert (change.before, change.after) == ({"per_task": 2500000}, {"per_task": 3000000})


def test_a_source_answered_twice_is_paired_in_order() -> None:
    a, b = _report(), _report()
    for report, value in ((a, "x"), (b, "y")):
        extra = copy.deepcopy(report["questions"]["identity"]["projections"][0])
        extra.update(value=value, value_canonical=json.dumps(value))
        report["questions"]["identity"]["projections"].append(extra)
    identity = compare_reports(a, b).question("identity")
    assert [(c.before, c.after) for c in identity.changed] == [("x", "y")]
    assert identity.unchanged == 2


def test_card_signature_proposal_and_question_status_changes() -> None:
    a, b = _report(), _report(name="Renamed Agent")
    b["card"]["signature"]["status"] = "invalid"
    b["card"]["terms"]["proposals"][0]["digest"] = "sha256:" + "cd" * 32
    b["questions"]["usage"]["status"] = "refused"
    b["questions"]["terms"]["answer"]["declared"] = False
    result = compare_reports(a, b)
    assert result.fact("card.sha256") is not None
    assert (result.fact("card.signature").before, result.fact("card.signature").after) == (
        "verified",
        "invalid",
    )
    digest = result.fact(f"proposal {PROPOSAL_URL} digest")
    assert digest is not None and digest.after == "sha256:" + "cd" * 32
    assert result.question("usage").status == ("answered", "refused")
    assert result.question("terms").declared == (True, False)
    assert "usage: answered -> refused" in result.summary()


def test_findings_are_matched_by_code_and_place_not_wording() -> None:
    a = _report(answered_name="Impostor")
    b = copy.deepcopy(a)
    b["findings"][0]["detail"] = "worded differently this time"
    assert compare_reports(a, b).identical
    b["findings"][0]["member"] = "/version"
    result = compare_reports(a, b)
    assert [f["member"] for f in result.findings_added] == ["/version"]
    assert [f["member"] for f in result.findings_removed] == ["/name"]


def test_to_json_is_plain_json_with_every_question() -> None:
    result = compare_reports(_report(), _report(answered_name="Impostor"))
    data = json.loads(json.dumps(result.to_json()))
    assert data["identical"] is False
    assert list(data["questions"]) == ["identity", "capabilities", "usage", "terms", "refusals"]
    changed = data["questions"]["identity"]["changed"][0]
    assert changed["before"] == "Steady Agent" and changed["after_canonical"] == '"Impostor"'
    assert [c["what"] for c in data["changes"]] == ["answers_sha256"]  # the verdict was given unchanged


def test_hostile_agent_text_is_made_safe_in_lines_and_summary() -> None:
    evil = "\x1b]52;c;cGF3bmVk\x07\x1b[2J\u202eevil\r\n"
    result = compare_reports(_report(), _report(answered_name=evil))
    for line in [*result.lines(), result.summary()]:
        assert "\x1b" not in line and "\r" not in line and "\n" not in line and "\u202e" not in line
    assert any("<U+202E>" in line for line in result.lines())  # shown, not obeyed


def test_malformed_reports_compare_without_crashing() -> None:
    odd: dict[str, Any] = {
        "questions": {"identity": {"projections": "not a list"}, "usage": None},
        "findings": [1],
    }
    result = compare_reports(odd, {})
    assert result.identical
    result = compare_reports({}, _report())
    assert not result.identical
    assert len(result.question("identity").added) == 2
    assert compare_reports(None, None).identical  # type: ignore[arg-type]


def _repeated_name(value: str, status: str) -> dict[str, Any]:
    """A report whose identity question answers /name twice: once as usual, once with `value`."""
    report = _report()
    projections = report["questions"]["identity"]["projections"]
    extra = copy.deepcopy(projections[0])
    extra.update(index=2, value=value, value_canonical=json.dumps(value), status=status)
    projections.append(extra)
    return report


def test_a_pointer_answered_twice_keeps_its_unchanged_and_changed_occurrences_apart() -> None:
    a = _repeated_name("Steady Agent", "match")
    b = _repeated_name("Impostor", "mismatch")
    identity = compare_reports(a, b).question("identity")
    assert [(e.kind, e.member) for e in identity.entries] == [
        ("same", "/name"),
        ("same", "/version"),
        ("changed", "/name"),
    ]
    assert [e.member for e in identity.same] == ["/name", "/version"]
    assert identity.unchanged == 2
    assert [(c.member, c.before, c.after) for c in identity.changed] == [
        ("/name", "Steady Agent", "Impostor")
    ]
    same_name = identity.same[0]
    assert same_name.before_canonical == same_name.after_canonical == '"Steady Agent"'
    data = identity.to_json()  # the JSON output keeps its shape: a count, not the same entries
    assert set(data) == {"added", "removed", "changed", "resigned", "unchanged", "status", "declared"}
    assert data["unchanged"] == 2 and len(data["changed"]) == 1


def test_the_compare_screen_lays_out_both_occurrences_of_a_repeated_pointer() -> None:
    from explorer.tui.screens.compare import compare_rows

    a = _repeated_name("Steady Agent", "match")
    b = _repeated_name("Impostor", "mismatch")
    rows = [r for r in compare_rows(compare_reports(a, b)) if r.question == "identity"]
    assert [(r.kind, r.member, r.before, r.after) for r in rows] == [
        ("same", "/name", '"Steady Agent"', '"Steady Agent"'),
        ("same", "/version", '"1.0.0"', '"1.0.0"'),
        ("changed", "/name", '"Steady Agent"', '"Impostor"'),
    ]
    assert (rows[2].before_status, rows[2].after_status) == ("match", "mismatch")
