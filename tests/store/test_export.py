"""Transcript exports: a complete JSON for third parties, Markdown and HTML for people, no secret anywhere."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from explorer.core.run import Run
from explorer.store.export import EXPORT_FORMATS, ExportError, export, format_for_path, write_export
from tests.support.runs import SECRET, make_run

HOSTILE = "Evil `|<script>alert(1)</script> [click](javascript:x) <img src=x onerror=y> &amp; \x1b[31m"
SECRETS = (SECRET, "s3cr3t", "key-should-vanish", "session=abc")


def test_the_formats_are_declared_as_data_for_cli_and_tui() -> None:
    assert list(EXPORT_FORMATS) == ["json", "md", "html"]
    assert [f.suffix for f in EXPORT_FORMATS.values()] == [".json", ".md", ".html"]
    assert all(f.description and f.label and f.media_type for f in EXPORT_FORMATS.values())
    assert format_for_path("x/report.HTML") == "html" and format_for_path("a.markdown") == "md"
    assert format_for_path("run.txt") is None
    with pytest.raises(ExportError, match="unknown export format"):
        export(make_run(), "pdf")


@pytest.mark.parametrize("fmt", list(EXPORT_FORMATS))
def test_no_secret_appears_in_any_format(fmt: str) -> None:
    text = export(make_run(answered_name=HOSTILE), fmt)
    for secret in SECRETS:
        assert secret not in text
    assert "<redacted>" in text or fmt != "json"


def test_json_is_complete_self_contained_and_reads_back_as_a_run() -> None:
    run = make_run(answered_name="Impostor", verdict="nonconformant", role="independent", runner="auditor")
    data = json.loads(export(run, "json"))
    back = Run.from_transcript(data)
    # How a reader takes an unsigned "independent" (and whether its standing is signed: not).
    assessed = ("standing", "standing_signed", "run_attestation", "findings")
    assert {k: v for k, v in back.report.items() if k not in assessed} == {
        k: v for k, v in run.report.items() if k not in assessed
    }
    assert back.report["findings"][:-1] == run.report["findings"]
    assert back.keys == run.keys
    assert [e.response_body for e in back.exchanges] == [e.response_body for e in run.exchanges]
    assert data["summary"]["verdict"] == "nonconformant"
    assert data["summary"]["standing"] == back.report["standing"] == "claim"
    assert back.report["findings"][-1]["code"] == "evidence_unverified"
    assert data["summary"]["standing_words"] == (
        "claim, unsigned: auditor says it ran this as an independent party, but the result is not signed, "
        "so that is only a label"
    )
    assert data["exported_with"]["explorer_version"] and data["explorer_version"] == "0.1.0"
    card = data["exchanges"][0]
    raw = base64.b64decode(card["response_body_b64"])
    assert card["response"]["sha256"] == hashlib.sha256(raw).hexdigest()
    canonical = json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert card["response"]["canonical"] == canonical
    assert card["response"]["canonical_sha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert card["response"]["canonical_sha256"] == run.report["card"]["sha256"]
    assert dict(map(tuple, card["request_headers"]))["Authorization"] == "<redacted>"
    assert data["report"]["findings"][0]["code"] == "projection_mismatch"


def test_json_export_is_deterministic_and_marks_bodies_that_are_not_json() -> None:
    run = make_run()
    broken = run.exchanges[0].__class__(
        purpose="card", attempt=1, method="GET", url="x", response_body=b"{nope"
    )
    odd = Run(report=run.report, exchanges=(broken,), keys=run.keys)
    assert export(run, "json") == export(run, "json")
    entry = json.loads(export(odd, "json"))["exchanges"][0]["response"]
    assert "canonical" not in entry and entry["canonical_error"]


def _table_rows(md: str) -> list[str]:
    return [line for line in md.splitlines() if line.startswith("| ")]


def test_markdown_shows_projections_beside_their_sources_and_marks_mismatches() -> None:
    md = export(make_run(answered_name="Impostor", verdict="nonconformant"), "md")
    assert md.startswith("# Interview transcript: Steady Agent")
    assert (
        "**Standing:** claim: run by tester, no independent role declared (--as independent declares one)"
        in md
    )
    assert "**Verdict:** nonconformant" in md
    for title in ("## Identity", "## Capabilities", "## Usage", "## Terms", "## Refusals"):
        assert title in md
    row = next(r for r in _table_rows(md) if "/name" in r)
    assert "✗ MISMATCH" in row and '"Impostor"' in row and '"Steady Agent"' in row
    assert '```\n"Impostor"\n"Steady Agent"\n ^^^^^^^^^^^^\n```' in md
    assert "✓ match" in md


def test_markdown_keeps_agent_text_inert() -> None:
    md = export(make_run(answered_name=HOSTILE), "md")
    assert "\x1b" not in md
    # Inside fenced blocks text is literal by definition; everywhere else no markup may survive.
    prose = re.sub(r"^(`{3,})\n.*?\n\1$", "", md, flags=re.DOTALL | re.MULTILINE)
    assert "Evil" in prose
    assert not re.search(r"(?<!\\)<", prose)  # every < is escaped: no HTML passes through
    assert not re.search(r"(?<!\\)\]\(", prose)  # no link can form
    for row in _table_rows(md):  # a pipe in agent text never adds a column
        cells = re.split(r"(?<!\\)\|", row)
        assert len(cells) in (7, 8), row  # 6 columns (projections) or 5 (exchanges), plus the ends
    # the fenced block around the mismatch cannot be closed by the backtick in the name
    fence = re.search(r"^(`{3,})\n\"Evil", md, re.MULTILINE)
    assert fence is not None


def test_an_unsigned_role_is_stated_as_only_a_label_in_people_formats() -> None:
    run = make_run(role="independent", runner="Acme Audits")
    for fmt in ("md", "html"):
        text = export(run, fmt)
        assert "claim, unsigned: Acme Audits says it ran this as an independent party" in text
        assert "evidence: run by" not in text
    platform = make_run(role="platform", runner="Market")
    assert "claim, unsigned: Market says it ran this as a platform" in export(platform, "md")


def test_html_is_one_escaped_self_contained_page() -> None:
    page = export(make_run(answered_name=HOSTILE, verdict="nonconformant"), "html")
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower() and "<img" not in page and "\x1b" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["']?https?:""", page)  # nothing loaded from elsewhere
    assert '<tr class="mismatch">' in page and "✗ MISMATCH" in page and "<mark>" in page
    assert "claim: run by tester, no independent role declared (--as independent declares one)" in page
    for q in ("Identity", "Capabilities", "Usage", "Terms", "Refusals"):
        assert f"<h2>{q} " in page


def test_write_export_replaces_the_file_atomically(tmp_path: Path) -> None:
    target = tmp_path / "out" / "run.md"
    write_export(make_run(), "md", target)
    first = target.read_text(encoding="utf-8")
    assert first.startswith("# Interview transcript")
    write_export(make_run(answered_name="Other"), "md", target)
    assert target.read_text(encoding="utf-8") != first
    assert sorted(p.name for p in target.parent.iterdir()) == ["run.md"]  # no temporary file left


def test_write_export_never_replaces_a_file_unless_told_to(tmp_path: Path) -> None:
    target = tmp_path / "run.md"
    target.write_text("mine", encoding="utf-8")
    with pytest.raises(ExportError, match="already exists; choose another file or pass --force"):
        write_export(make_run(), "md", target, replace=False)
    assert write_export(make_run(), "md", target, number=True) == tmp_path / "run-2.md"
    assert write_export(make_run(), "md", target, number=True) == tmp_path / "run-3.md"
    assert target.read_text(encoding="utf-8") == "mine"
    # ... and no temporary file is left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-2.md", "run-3.md", "run.md"]


def test_write_export_to_an_unwritable_place_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    with pytest.raises(ExportError, match="cannot write"):
        write_export(make_run(), "json", tmp_path / "taken")
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]
