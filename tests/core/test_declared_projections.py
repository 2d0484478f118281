"""`questions.<q>.declared`: what the declared documents say for each question, asked or not.

Real reference agents, served by `demo --serve` in another process and interviewed over loopback
HTTP: one that does not offer the interview (silent), one that is down (its card is read, every
call gets 503), one that refuses the calls without its credential (guarded-bearer), and answering
ones (steady on a v1.0 card, legacy on a v0.3 card). Each question's `declared` must be exactly
what a conformant answer projects: the answering agents' own answers, and for the others the
reference projection (`explorer.demo.projection`) over the bytes the run fetched.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.core.compare import compare_reports, report_kinds
from explorer.core.findings import QUESTIONS
from explorer.core.rederive import rederive
from explorer.core.report import summary_lines, validate_report
from explorer.core.run import Run
from explorer.core.strict_json import parse as strict_parse
from explorer.core.view import ReportView
from explorer.demo import projection
from explorer.interview.options import Options
from explorer.interview.procedure import run_interview
from explorer.store.export import export
from tests.support.demo_serve import DemoServe, demo_serve

pytestmark = pytest.mark.slow  # `demo --serve` in a subprocess, and live interviews of it

AGENTS = ("silent", "down", "guarded-bearer", "steady", "legacy", "tampered-terms")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DemoServe, Path]]:
    home = tmp_path_factory.mktemp("demo-home")
    keys = home / "demo-keys.jwks"
    with demo_serve("--only", *AGENTS, "--home", str(home), "--keys-out", str(keys)) as running:
        running.wait_for_stderr("public keys")
        yield running, keys


@pytest.fixture(scope="module")
def runs(served: tuple[DemoServe, Path]) -> dict[str, Run]:
    running, keys = served
    options = Options(keys=(json.loads(keys.read_text(encoding="utf-8")),), runner="tester", timeout=5.0)

    async def interview(name: str) -> Run:
        return await run_interview(running.url(name), options)

    return {name: asyncio.run(interview(name)) for name in AGENTS}


def _pairs(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a declared entry and an answer's projection have in common: source and value."""
    return [(e["document"], e.get("url"), e.get("digest"), e["member"], e["value"]) for e in entries]


def _answer_pairs(answer: dict[str, Any]) -> list[tuple[Any, ...]]:
    out = []
    for p in answer["projections"]:
        source = p["source"]
        out.append(
            (source["document"], source.get("url"), source.get("digest"), source["member"], p["value"])
        )
    return out


def _in_declared_order(question: str, pairs: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """An answer's pairs in the order `declared` lists them: the card's members as the answer
    gives them, a proposal's in the order of its canonical bytes (by UTF-16 code units)."""
    if question != "terms":
        return pairs
    proposals = list(dict.fromkeys((pair[1], pair[2]) for pair in pairs))  # in card order
    return sorted(pairs, key=lambda pair: (proposals.index((pair[1], pair[2])), pair[3].encode("utf-16-be")))


def _reference_answers(run: Run) -> dict[str, dict[str, Any]]:
    """The reference projection's honest answers over the card and proposals this run fetched."""
    card_ex = next(ex for ex in run.exchanges if ex.purpose == "card")
    card = strict_parse(card_ex.response_body)
    bodies = {ex.url: ex.response_body for ex in run.exchanges if ex.purpose == "proposal"}
    committed = []
    for entry in card["capabilities"]["extensions"]:
        for ref in (entry.get("params") or {}).get("proposals") or []:
            if ref["url"] in bodies:
                document = strict_parse(bodies[ref["url"]])
                committed.append(
                    projection.Committed(ref["url"], ref["digest"], ref.get("offering"), document)
                )
    return {q: projection.answer(q, card, committed or None) for q in QUESTIONS}


@pytest.mark.parametrize("name", ["silent", "down", "guarded-bearer"])
def test_an_agent_that_does_not_answer_still_has_every_question_declared(
    runs: dict[str, Run], name: str
) -> None:
    run = runs[name]
    report = run.report
    assert report["verdict"] == {"silent": "not_offered"}.get(name, "unreachable")
    assert validate_report(report) == []
    reference = _reference_answers(run)
    for q in QUESTIONS:
        entry = report["questions"][q]
        assert entry["status"] != "answered" and entry["projections"] == []
        assert entry["declared"], q
        assert _pairs(entry["declared"]) == _in_declared_order(q, _answer_pairs(reference[q])), q
    terms = report["questions"]["terms"]["declared"]
    assert {e["document"] for e in terms} == {"proposal"} and all(e["signed"] is True for e in terms)
    assert {e["signed"] for q in QUESTIONS for e in report["questions"][q]["declared"]} == {True}
    view = ReportView.of(report).questions["capabilities"]
    assert [m.member for m in view.declared_members] == ["/skills/0/id", "/skills/0/description"] + [
        "/skills/1/id",
        "/skills/1/description",
    ]


@pytest.mark.parametrize("name", ["steady", "legacy"])
def test_an_answering_agents_declared_members_are_what_its_conformant_answer_projected(
    runs: dict[str, Run], name: str
) -> None:
    report = runs[name].report
    assert report["verdict"] == "conformant" and validate_report(report) == []
    for q in QUESTIONS:
        entry = report["questions"][q]
        assert entry["status"] == "answered"
        assert _pairs(entry["declared"]) == _in_declared_order(q, _answer_pairs(entry["answer"])), q
        assert [e["signed"] for e in entry["declared"]] == [p["signed"] for p in entry["projections"]]
    if name == "legacy":  # a v0.3 card says where it is spoken to in its own members
        identity = [e["member"] for e in report["questions"]["identity"]["declared"]]
        assert "/url" in identity and "/preferredTransport" in identity
    view = ReportView.of(report).questions["terms"]
    assert view.declared is True  # the answer's own boolean, read from the answer


def test_a_tampered_proposal_declares_no_terms_from_bytes_the_card_never_committed_to(
    runs: dict[str, Run],
) -> None:
    report = runs["tampered-terms"].report
    statuses = {p["url"].rsplit("/", 1)[-1]: p["status"] for p in report["card"]["terms"]["proposals"]}
    assert sorted(statuses.values()) == ["digest_mismatch", "verified"]
    cited = {e["url"].rsplit("/", 1)[-1] for e in report["questions"]["terms"]["declared"]}
    assert cited == {name for name, status in statuses.items() if status == "verified"}


def test_declared_changes_neither_the_answers_digest_nor_what_the_history_calls_a_change(
    runs: dict[str, Run], served: tuple[DemoServe, Path]
) -> None:
    _, keys = served
    run = runs["steady"]
    derived = rederive(run, json.loads(keys.read_text(encoding="utf-8")), allow_jku=False)
    for q in QUESTIONS:  # derived again from the stored bytes: the same members, the same values
        assert derived["questions"][q]["declared"] == run.report["questions"][q]["declared"]
    assert derived["answers_sha256"] == run.report["answers_sha256"]
    trimmed = copy.deepcopy(run.report)
    for q in QUESTIONS:
        trimmed["questions"][q]["declared"] = trimmed["questions"][q]["declared"][:1]
    assert report_kinds(run.report, trimmed) == ()
    assert compare_reports(run.report, trimmed).question("usage").declared is None


def test_transcripts_and_json_exports_keep_declared_and_verify_mentions_it_for_not_offered(
    runs: dict[str, Run],
) -> None:
    run = runs["silent"]
    again = Run.from_transcript(json.loads(json.dumps(run.to_transcript())))
    assert again.report["questions"]["usage"]["declared"] == run.report["questions"]["usage"]["declared"]
    exported = json.loads(export(run, "json"))
    report = exported.get("report", exported)
    assert report["questions"]["refusals"]["declared"] == run.report["questions"]["refusals"]["declared"]
    said = [line for line in summary_lines(run.report) if line.startswith("declared, not asked")]
    assert said == [
        "declared, not asked (members per question): identity 5, capabilities 4, usage 9, terms 16, "
        "refusals 2; `card TARGET` prints them"
    ]


def test_markdown_and_html_transcripts_show_each_declared_member_of_a_question_not_answered(
    runs: dict[str, Run],
) -> None:
    run = runs["silent"]
    declared = run.report["questions"]["capabilities"]["declared"]
    md = export(run, "md")
    capabilities = md.split("## Capabilities", 1)[1].split("\n## ", 1)[0]
    assert "Declared, not answered" in capabilities and "No projections." not in capabilities
    rows = [line for line in capabilities.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split(" | ")[2] for row in rows] == [e["member"] for e in declared]
    assert all(row.split(" | ")[3] == "signed" for row in rows)
    assert [row.split(" | ")[4].rstrip(" |") for row in rows] == [json.dumps(e["value"]) for e in declared]
    page = export(run, "html")
    terms = page.split("<h2>Terms", 1)[1].split("<h2>", 1)[0]
    assert '<table class="declared">' in terms
    assert terms.count("<tr><td>") == len(run.report["questions"]["terms"]["declared"])
    assert "<td>proposal http://" in terms
    # An agent that answered is shown as it answered, with no declared table.
    steady = export(runs["steady"], "md")
    assert "Declared, not answered" not in steady


def test_a_report_without_declared_members_is_refused_and_an_older_one_still_reads() -> None:
    from tests.support.runs import make_run

    report = copy.deepcopy(dict(make_run().report))
    for q in QUESTIONS:
        report["questions"][q]["declared"] = []
    assert validate_report(report) == []
    del report["questions"]["usage"]["declared"]
    report["questions"]["identity"]["declared"] = [{"member": "/name", "document": "elsewhere"}]
    problems = validate_report(report)
    assert "questions.usage.declared is missing" in problems
    assert "questions.identity.declared[0].value is missing" in problems
    assert any("questions.identity.declared[0].document" in p for p in problems)
    older = copy.deepcopy(dict(make_run().report))  # a question entry whose `declared` was the answer's
    older["questions"]["terms"]["declared"] = True
    older["questions"]["terms"]["answer"].pop("declared", None)
    terms = ReportView.of(older).questions["terms"]
    assert terms.declared is True and terms.declared_members == ()
