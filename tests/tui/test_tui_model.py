"""The words and marks the TUI shows, decided without a terminal: tab labels, badges, standing,
diff spans, caret lines, JSON highlighting and untrusted-text neutralising.

These are the sentences a user relies on ("usage (1 mismatch)", "claim: self-run by ..."), so
they are tested as plain data; the pilot tests then check they land in the right place.
"""

from __future__ import annotations

from typing import Any

from explorer.core.view import SIGN_HOW, UNSIGNED_EVIDENCE, Finding, Probe, Projection, ReportView
from explorer.tui import diffmarks, jsonview, model, safe


def _projection(member: str, status: str, value: Any, source: Any, **extra: Any) -> dict[str, Any]:
    import json

    return {
        "index": 0,
        "question": "usage",
        "document": extra.pop("document", "card"),
        "member": member,
        "url": extra.pop("url", None),
        "digest": extra.pop("digest", None),
        "status": status,
        "value": value,
        "source_value": source,
        "value_canonical": json.dumps(value, separators=(",", ":")),
        "source_canonical": json.dumps(source, separators=(",", ":")),
        "signed": extra.pop("signed", True),
        "lossy": False,
        "diff": None,
        **extra,
    }


def _report(**questions: Any) -> dict[str, Any]:
    base = {q: {"status": "answered", "projections": []} for q in model.QUESTIONS}
    base.update(questions)
    return {
        "verdict": "nonconformant",
        "ran_by": {"name": "alice", "role": "self"},
        "standing": "claim",
        "card": {"signature": {"status": "verified", "form": "served", "alg": "ES256", "kid": "k1"}},
        "questions": base,
        "findings": [],
    }


def test_tab_label_counts_mismatches_in_words() -> None:
    report = _report(
        usage={
            "status": "answered",
            "projections": [
                _projection("/a", "match", 1, 1),
                _projection("/b", "mismatch", 1, 2),
            ],
        }
    )
    assert model.question_state(ReportView.of(report), "usage").label == "✗ usage (1 mismatch)"
    assert model.question_state(ReportView.of(report), "identity").label == "identity (no projections)"
    two = _report(usage={"status": "answered", "projections": [_projection("/b", "mismatch", 1, 2)] * 2})
    assert model.question_state(ReportView.of(two), "usage").summary == "2 mismatches"


def test_tab_label_states_for_terms_refusal_and_not_asked() -> None:
    report = _report(
        terms={"status": "answered", "declared": False, "projections": []},
        capabilities={"status": "refused", "projections": []},
        refusals={"status": "not_asked", "projections": []},
        identity={"status": "answered", "projections": [_projection("/name", "match", "x", "x")]},
    )
    assert model.question_state(ReportView.of(report), "terms").label == "terms (not declared)"
    assert model.question_state(ReportView.of(report), "capabilities").label == "✗ capabilities (refused)"
    assert model.question_state(ReportView.of(report), "refusals").label == "refusals (not asked)"
    assert model.question_state(ReportView.of(report), "identity").label == "identity (all match)"


def test_question_errors_without_projection_problems_still_mark_the_tab() -> None:
    report = _report(identity={"status": "answered", "projections": [_projection("/name", "match", 1, 1)]})
    report["findings"] = [{"code": "answer_extra_member", "severity": "error", "question": "identity"}]
    assert model.question_state(ReportView.of(report), "identity").label == "✗ identity (1 error)"


def test_standing_never_presents_a_self_run_as_evidence() -> None:
    # The TUI says what the CLI summary and the exports say (explorer.core.view).
    def words(report: dict[str, Any]) -> str:
        return ReportView.of(report).standing_words()

    assert words({"ran_by": {"name": "bob", "role": "self"}, "standing": "evidence"}) == (
        "claim: run by bob, no independent role declared (--as independent declares one)"
    )
    assert words({"ran_by": {"name": "ci", "role": "platform"}, "standing": "evidence"}) == (
        f"evidence: recorded by a platform (ci); {UNSIGNED_EVIDENCE} ({SIGN_HOW})"  # live, not signed
    )
    assert words({"ran_by": {"name": "ci", "role": "platform"}}).startswith("claim")
    assert words({}).startswith("claim")


def test_signature_badge_names_status_form_and_key() -> None:
    badge, ok = model.signature_badge(ReportView.of(_report()))
    assert ok and badge == "✓ verified · form served · ES256 · kid k1"
    badge, ok = model.signature_badge(ReportView.of({"card": {"signature": {"status": "unsigned"}}}))
    assert not ok and badge == "– unsigned"
    jku = {"card": {"signature": {"status": "verified", "form": "served", "key_source": "jku"}}}
    assert "key from the card's own jku" in model.signature_badge(ReportView.of(jku))[0]


def test_malformed_reports_give_neutral_answers() -> None:
    for junk in ({}, {"questions": []}, {"questions": {"usage": "x"}}, {"card": 3, "findings": "no"}):
        view = ReportView.of(junk)
        assert model.question_state(view, "usage").summary == "not asked"
        assert view.questions["usage"].projections == ()
        assert view.findings == ()
        assert model.first_problem(view) is None
        model.signature_badge(view)
        view.standing_words()


def test_first_problem_and_finding_target() -> None:
    report = _report(
        usage={
            "status": "answered",
            "projections": [_projection("/a", "match", 1, 1), _projection("/b", "mismatch", 1, 2)],
        }
    )
    view = ReportView.of(report)
    assert model.first_problem(view) == ("usage", 1)
    finding = Finding.of({"code": "projection_mismatch", "question": "usage", "member": "/b"})
    assert model.finding_target(view, finding) == ("usage", 1)
    assert model.finding_target(
        view, Finding.of({"code": "closure_method_not_refused", "probe": "undefined_method"})
    ) == (
        "refusals",
        None,
    )
    assert model.finding_target(view, Finding.of({"code": "card_unsigned"})) is None


def test_clause_grade_comes_from_the_proposal_clause() -> None:
    projection = _projection(
        "/price",
        "match",
        {"grade": "evidence"},
        {"grade": "evidence"},
        document="proposal",
        url="u",
        digest="d",
    )
    report = _report()
    report["card"]["terms"] = {
        "proposals": [
            {
                "url": "u",
                "digest": "d",
                "status": "verified",
                "clauses": [{"member": "/price", "grade": "enforced"}],
            }
        ]
    }
    assert model.clause_grade(ReportView.of(report), Projection.of(projection)) == "enforced"
    assert model.signed_text(ReportView.of(report), Projection.of(projection)) == (
        "yes: covered by the proposal's provider signature",
        True,
    )
    del report["card"]["terms"]
    grade = model.clause_grade(ReportView.of(report), Projection.of(projection))
    assert grade == "evidence"  # from the value itself
    assert model.signed_text(ReportView.of(report), Projection.of(projection))[1] is False


def test_unsigned_member_is_said_in_words() -> None:
    projection = _projection("/url", "match", "x", "x", signed=False)
    text, ok = model.signed_text(ReportView.of(_report()), Projection.of(projection))
    assert not ok and text.startswith("NO: this member is outside the signed payload")


def test_a_member_signed_except_dropped_empties_says_so_on_the_signed_line() -> None:
    projection = {
        **_projection("/supportedInterfaces/0", "match", "x", "x", signed=False),
        "unsigned_empty": ["/supportedInterfaces/0/tenant", "/x\x1b[2J"],
    }
    text, ok = model.signed_text(ReportView.of(_report()), Projection.of(projection))
    assert ok and text.startswith(
        "yes, except empty members the signer's canonical form drops: /supportedInterfaces/0/tenant"
    )
    assert "\x1b" not in text  # a pointer is agent text


def test_diff_spans_find_the_differing_middle() -> None:
    assert model.diff_spans('["a","b"]', '["a"]') == ((4, 8), (4, 4))
    assert model.diff_spans("2500000", "2500001") == ((6, 7), (6, 7))
    assert model.diff_spans("same", "same") == ((4, 4), (4, 4))
    assert model.diff_spans("aXa", "aYYa") == ((1, 2), (1, 3))


def test_marked_lines_put_brackets_and_carets_under_the_span() -> None:
    text = '{"per_task":2500001}'
    span = (18, 19)
    lines = diffmarks.marked_lines("answer  ", text, span).plain.split("\n")
    assert lines[0] == 'answer  {"per_task":250000«1»}'
    caret = lines[1]
    assert caret.index("^") == lines[0].index("1»")
    assert caret.strip() == "^"


def test_marked_lines_mark_an_insertion_point_and_wrap_with_carets_aligned() -> None:
    lines = diffmarks.marked_lines("source  ", '["a"]', (4, 4)).plain.split("\n")
    assert lines[0] == 'source  ["a"«»]'
    assert lines[1].rstrip() == " " * lines[0].index("«") + "^^"
    wrapped = diffmarks.marked_lines("x ", "a" * 30 + "BBBB" + "c" * 30, (30, 34), width=20).plain.split("\n")
    rows = [line for line in wrapped if "^" not in line]
    carets = [line for line in wrapped if "^" in line]
    assert carets and all(len(line) <= 22 for line in rows)
    for row, caret in zip(wrapped, wrapped[1:], strict=False):
        if "^" in caret:
            for column, mark in enumerate(caret):
                if mark == "^":
                    assert row[column] in "B«»"


def test_marked_lines_window_long_strings_and_escape_controls() -> None:
    text = "x" * 5000 + "\x1b" + "y" * 5000
    plain = diffmarks.marked_lines("a ", text, (5000, 5001)).plain
    assert "«\\x1b»" in plain and "\x1b" not in plain
    assert "showing characters" in plain and len(plain) < 2000


def test_json_highlight_is_text_not_markup_and_truncates() -> None:
    hostile = {"name": "[@click=app.quit]x[/] \x1b[2J \u202e"}
    shown = jsonview.highlight(hostile)
    assert "[@click=app.quit]x[/]" in shown.content.plain
    assert "\x1b" not in shown.content.plain and "\u202e" not in shown.content.plain
    assert not shown.truncated
    big = jsonview.highlight(list(range(1000)))
    assert big.truncated and "press v" in big.content.plain and big.total_lines == 1002


def test_safe_text_content_is_never_markup() -> None:
    content = safe.text("[b]bold[/b] [@click=app.quit]q[/]\nnext")
    assert content.plain == "[b]bold[/b] [@click=app.quit]q[/]\\nnext"
    assert not content.spans


def test_churn_markers_say_what_changed_since_the_previous_run() -> None:
    rows = [  # newest first
        {"agent": "a", "card_sha256": "c2", "answers_sha256": "x2", "verdict": "nonconformant"},
        {"agent": "b", "card_sha256": "c", "answers_sha256": "x", "verdict": "conformant"},
        {"agent": "a", "card_sha256": "c", "answers_sha256": "x", "verdict": "conformant"},
        {"agent": "a", "card_sha256": "c", "answers_sha256": "x", "verdict": "conformant"},
    ]
    # Without the declarations digests, a card whose bytes differ reads as changed declarations.
    assert model.churn_markers(rows) == ["≠ declarations+answers+verdict", "first", "= same", "first"]


def test_probe_text_counts_a_correct_refusal_as_good() -> None:
    assert model.probe_text(Probe.of({"name": "undefined_method", "outcome": "refused"})) == (
        "✓ undefined method: got the standard refusal",
        True,
    )
    assert model.probe_text(Probe.of({"name": "unactivated_call", "outcome": "answered"}))[1] is False


def test_a_clause_grade_from_the_agent_is_drawn_as_text_in_the_list() -> None:
    from explorer.tui.widgets.projections import projection_prompt

    hostile = "[@click=app.quit]enforced\x1b[5m\u202e"
    prompt = projection_prompt(Projection.of(_projection("/price", "match", 1, 1)), grade=hostile, source="p")
    assert "[@click=app.quit]enforced\\x1b[5m" in prompt.plain
    assert "\x1b" not in prompt.plain and "\u202e" not in prompt.plain
    assert not any("@click" in str(span.style) for span in prompt.spans)


def test_terms_summary_survives_a_card_whose_terms_are_not_an_object() -> None:
    from explorer.tui.widgets.question import summary_lines

    report = {"card": {"terms": None}, "questions": {"terms": {"status": "answered", "declared": True}}}
    assert "terms:" in summary_lines(ReportView.of(report), "terms").plain
    report = {"card": {"terms": {"proposals": [{"url": "http://x/p.sow.json/", "status": "verified"}]}}}
    assert "✓ proposal p.sow.json: verified" in summary_lines(ReportView.of(report), "terms").plain


def test_a_valid_selector_answered_with_values_in_conflict_is_not_marked_good(demo_runs: Any) -> None:
    report = demo_runs["drifting"].report
    [probe] = [p for p in report["probes"] if p["name"] == "valid_selector"]
    conflicts = [f for f in report["findings"] if f.get("probe") == "valid_selector"]
    assert probe["outcome"] == "answered" and conflicts  # drifting answers the selector with its drift
    words, ok = model.probe_text(Probe.of(probe), ReportView.of(report))
    assert not ok and words == "✗ valid selector: was answered, but projection_mismatch (see findings)"
    assert model.probe_text(Probe.of(probe)) == ("✓ valid selector: was answered", True)  # the reply alone
