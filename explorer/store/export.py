"""Transcripts of a run: JSON for machines and third parties, Markdown and HTML for people.

The formats are declared once, as data (`EXPORT_FORMATS`), so the TUI's export dialog and the
headless `export` command offer the same choices with the same suffixes.

- JSON is `Run.to_transcript()` (every byte as received, base64, plus the keys used) enriched
  with what a third party needs to check it without this tool's help: each body's SHA-256, its
  RFC 8785 canonical text and that text's digest, and the verdict, standing and explorer version
  at the top. `Run.from_transcript` reads it back, so `verify --offline` re-runs the diff on it.
  Output is deterministic: the same run always exports to the same bytes.
- Markdown and HTML show the five questions with each projection beside the source member it
  points to, mismatches marked in words and symbols (never colour alone), and the standing in
  words. A question the agent did not answer shows its declared members instead ("declared, not
  answered", `questions.<q>.declared`), so a transcript of any agent says what its card says.
  Every agent-supplied string passes through `safe_text`, then is escaped for the format:
  Markdown punctuation is backslash-escaped (no raw HTML passes through), HTML is escaped and the
  page carries a Content-Security-Policy that forbids scripts and remote loads.
- No secret appears in any format: headers are redacted again here, whatever the run holds.
- A run exported from the history can say what changed against its agent's run before it
  (`Change`, in the kinds of CONTRACT "Signatures are proofs"; `signed again` is not a change):
  in the heading facts of Markdown and HTML, and in an unsigned JSON transcript's `summary`
  (a signed one is written exactly as signed, so nothing is added to it).
"""

from __future__ import annotations

import html
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from explorer import __version__
from explorer.core import attestation as att
from explorer.core.canonical import CanonicalError, canonical_text, sha256_hex
from explorer.core.diff import first_differing_span
from explorer.core.jsonshape import mapping_of, member
from explorer.core.run import Run
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as parse_json
from explorer.core.text import safe_text
from explorer.core.view import (
    PROBLEM_PROJECTIONS,
    PROJECTION_MARKS,
    DeclaredMember,
    Finding,
    Probe,
    Projection,
    Question,
    ReportView,
    canonical_or_json,
)
from explorer.store.redact import redact_headers

Format = Literal["json", "md", "html"]


@dataclass(frozen=True)
class ExportFormat:
    """One export format, as offered by the CLI and the TUI."""

    name: str
    label: str
    suffix: str
    media_type: str
    description: str


EXPORT_FORMATS: dict[str, ExportFormat] = {
    "json": ExportFormat(
        "json",
        "JSON transcript",
        ".json",
        "application/json",
        "complete and self-contained: raw and canonical bytes, digests, keys; checks with verify --offline",
    ),
    "md": ExportFormat(
        "md",
        "Markdown report",
        ".md",
        "text/markdown",
        "for people: the five questions, each projection beside its source member, mismatches marked",
    ),
    "html": ExportFormat(
        "html",
        "HTML report",
        ".html",
        "text/html",
        "for people: one self-contained page (inline CSS, no scripts) with the same content as Markdown",
    ),
}
# Only a signed run has one, so it is offered apart from the formats every run exports to.
ATTESTATION_FORMAT = ExportFormat(
    "intoto",
    "Signed attestation",
    ".intoto.json",
    "application/vnd.dsse.envelope.v1+json",
    "a signed run's attestation alone: the runner's DSSE envelope over an in-toto statement",
)
ALL_FORMATS: dict[str, ExportFormat] = {**EXPORT_FORMATS, "intoto": ATTESTATION_FORMAT}
_SUFFIXES = {".json": "json", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html"}
_LONG_SUFFIXES = {".intoto.json": "intoto", ".intoto.jsonl": "intoto", ".dsse.json": "intoto"}

_CSP = "default-src 'none'; style-src 'unsafe-inline'"  # no scripts, no remote loads
_CELL = 160  # characters of a value shown in a table cell
_BLOCK = 2000  # characters of a canonical value shown in full views


@dataclass(frozen=True)
class Change:
    """What a recorded run changed against its agent's run before it (`previous_run`, None for
    the agent's first run): its `RunSummary.kinds`."""

    previous_run: int | None
    kinds: Sequence[str] = ()

    def words(self) -> str:
        """`since run 12: key changed`, `none since run 12: signed again (...)`, ..."""
        from explorer.core.compare import RESIGNED, RESIGNED_WORDS, is_change, kinds_words

        if self.previous_run is None:
            return "the agent's first run in this history"
        since = f"since run {self.previous_run}"
        if is_change(self.kinds):
            return f"{since}: {kinds_words(self.kinds)}"
        if RESIGNED in self.kinds:
            return f"none {since}: signed again ({RESIGNED_WORDS})"
        return f"none {since}"

    def to_json(self) -> dict[str, Any]:
        from explorer.core.compare import is_change

        return {
            "previous_run": self.previous_run,
            "kinds": list(self.kinds),
            "changed": is_change(self.kinds),
            "words": self.words(),
        }


class ExportError(Exception):
    """The export could not be produced or written; str() says why."""


class ExportUnavailable(ExportError):
    """The run has nothing to export in that format (an unsigned run has no attestation): the
    same refusal whether the export was to go to a file or to stdout."""


def format_for_path(path: str | os.PathLike[str]) -> str | None:
    """The format a file name asks for by its suffix, or None."""
    name = Path(path).name.lower()
    for suffix, fmt in _LONG_SUFFIXES.items():
        if name.endswith(suffix):
            return fmt
    return _SUFFIXES.get(Path(path).suffix.lower())


def export(run: Run, fmt: Format | str, *, change: Change | None = None) -> str:
    """The run as a transcript in one of EXPORT_FORMATS; `change`, when given, says what it
    changed against its agent's run before it."""
    if fmt == "json":
        return json.dumps(transcript(run, change=change), ensure_ascii=False, indent=2) + "\n"
    if fmt == "md":
        return _markdown(run, change)
    if fmt == "html":
        return _html(run, change)
    if fmt == "intoto":
        if run.attestation is None:
            raise ExportUnavailable(
                "this run is not signed, so it has no attestation (see verify --sign-key)"
            )
        return json.dumps(dict(run.attestation), ensure_ascii=False, indent=2) + "\n"
    raise ExportUnavailable(f"unknown export format {fmt!r}; choose one of {', '.join(ALL_FORMATS)}")


def write_export(
    run: Run,
    fmt: Format | str,
    path: str | os.PathLike[str],
    *,
    replace: bool = True,
    number: bool = False,
    change: Change | None = None,
) -> Path:
    """Write the export to `path` atomically (temporary file, then rename): never a half-written file.

    An existing file is never overwritten silently: with `replace=False` it is an ExportError,
    with `number=True` the name gains a number (`name-2.md`, `name-3.md`, ...) and the path
    written is returned. Both reserve the name by creating it exclusively (O_EXCL), then rename
    the finished file onto that reservation.
    """
    text = export(run, fmt, change=change)
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            if replace and not number:
                os.replace(tmp, target)
            else:
                target = _claim(Path(tmp), target, number)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


MAX_NUMBERED = 1000


def _claim(tmp: Path, target: Path, number: bool) -> Path:
    """Move `tmp` to `target` (or, with `number`, to the first free numbered name); never replaces
    a file that was there before."""
    if target.is_dir():
        raise ExportError(f"cannot write {target}: it is a directory")
    candidates = [target]
    if number:
        candidates += [target.with_name(f"{target.stem}-{n}{target.suffix}") for n in range(2, MAX_NUMBERED)]
    for candidate in candidates:
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            continue
        os.replace(tmp, candidate)
        return candidate
    if number:
        raise ExportError(f"cannot write {target}: {MAX_NUMBERED} files of that name already exist")
    raise ExportError(f"{target} already exists; choose another file or pass --force to replace it")


# --- JSON ---------------------------------------------------------------------------------------


def _canonical_of(body: bytes | None) -> dict[str, Any]:
    if body is None:
        return {}
    out: dict[str, Any] = {"sha256": sha256_hex(body)}
    if not body:
        return out
    try:
        text = canonical_text(parse_json(body))
    except (StrictJsonError, CanonicalError) as exc:
        out["canonical_error"] = str(exc)
        return out
    out["canonical"] = text
    out["canonical_sha256"] = sha256_hex(text.encode("utf-8"))
    return out


def transcript(run: Run, *, change: Change | None = None) -> dict[str, Any]:
    """The JSON transcript: Run.to_transcript() plus digests and canonical forms, secrets redacted.

    A signed run is written exactly as it was signed (`Run.to_transcript()`, headers already
    redacted before signing) and nothing is added: its `run_attestation` covers every other
    member, so anyone can recompute the digest from the file alone (and whoever reads it decides
    its standing under the runner keys they trust).

    An unsigned run's report is the one recorded (what its own exchanges and keys gave, so the
    file imports again as the same run) with the standing an unsigned transcript has wherever it
    is read: a claim, and for a stated `independent` or `platform` role an `evidence_unverified`
    finding saying it is only a label (CONTRACT "Signed evidence"); its `summary` says what it
    changed when `change` is given."""
    if run.attestation is not None:
        return run.to_transcript()
    recorded = run.signed_report if run.signed_report is not None else run.report
    report = att.apply(recorded, att.unsigned(recorded, live=False))
    data = {**run.to_transcript(), "report": report}
    view = ReportView.of(report)
    for entry, ex in zip(data["exchanges"], run.exchanges, strict=True):
        entry["request_headers"] = [list(h) for h in redact_headers(ex.request_headers)]
        entry["response_headers"] = [list(h) for h in redact_headers(ex.response_headers)]
        entry["request"] = _canonical_of(ex.request_body)
        entry["response"] = _canonical_of(ex.response_body)
    data["exported_with"] = {"explorer_version": __version__}
    data["summary"] = {
        "target": report.get("target"),
        "verdict": report.get("verdict"),
        "standing": report.get("standing"),
        "standing_words": view.standing_words(),
        "ran_by": dict(mapping_of(view.member("ran_by"))),
        "card_sha256": view.member("card", "sha256"),
        "answers_sha256": report.get("answers_sha256"),
        "started_at": report.get("started_at"),
        "finished_at": report.get("finished_at"),
    }
    if change is not None:
        data["summary"]["change"] = change.to_json()
    return data


# --- shared reading of the report: the core's typed view (explorer.core.view) -----------------------


def _source_label(p: Projection | DeclaredMember) -> str:
    document = str(p.document)
    if p.url:
        return f"{document} {p.url} ({p.digest})"
    return document


_NOT_ANSWERED = (
    "Declared, not answered: what the declared documents say for this question, member by member "
    "(the members a conformant answer would project). Nothing here was compared with an answer."
)


def _declared_rows(q: Question) -> tuple[DeclaredMember, ...]:
    """A question's declared members when the agent did not answer it (an answer is shown as is)."""
    return () if q.answered else q.declared_members


def _signed_word(m: DeclaredMember) -> str:
    if m.signed is None:
        return "signature not checked"
    return "signed" if m.signed else "unsigned"


def _facts(view: ReportView, change: Change | None = None) -> list[tuple[str, str]]:
    """(label, plain text) pairs heading every human format; text not yet escaped for the format."""
    card = view.card
    declarations = card.raw.get("declarations_sha256")
    signers = card.raw.get("signers")
    facts = [
        ("Agent", card.url or view.target or "unknown"),
        ("Verdict", view.verdict),
        ("Standing", view.standing_words()),
        ("Attestation", view.attestation_words()),
        (
            "Card",
            f"sha256 {card.sha256}, layout {card.layout}"
            + (f", declarations sha256 {declarations}" if isinstance(declarations, str) else ""),
        ),
        ("Signature", card.signature.words()),
        ("Answers digest", f"sha256 {view.member('answers_sha256')}"),
        (
            "Run",
            f"started {view.member('started_at')}, finished {view.member('finished_at')}, "
            f"attempts {view.member('attempts')}",
        ),
        ("Explorer", f"run with {view.member('explorer_version')}, exported with {__version__}"),
    ]
    if isinstance(signers, list):
        facts.insert(6, ("Signers", ", ".join(str(s) for s in signers) or "none verified"))
    if change is not None:
        facts.insert(2, ("Change", change.words()))
    for p in card.proposals:
        facts.append(("Proposal", f"{p.get('url')} {p.get('digest')}: {p.get('status')}"))
    return facts


def _title(view: ReportView) -> str:
    return view.card.name or view.card.url or view.target or ""


def _where(f: Finding) -> str:
    return " ".join(w for w in (f.question, f.member, f.probe) if w)


def _index(p: Projection) -> str:
    return "" if p.index is None else str(p.index)


def _request_method(probe: Probe) -> Any:
    return member(probe.raw, "request", "method")


# --- Markdown -----------------------------------------------------------------------------------

# Characters that can start inline markup, a table cell, an entity or raw HTML. Values never begin a
# line (they follow a label or a cell border), so block markers such as `#`, `-` or `1.` are inert.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!])")


def _md(value: Any, limit: int = 300) -> str:
    """Agent text as inert Markdown: made printable, then every Markdown/HTML character escaped."""
    return _MD_SPECIAL.sub(r"\\\1", safe_text(value, limit=limit))


def _fence(text: str) -> list[str]:
    """A fenced block longer than any backtick run inside, so the text cannot close it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text, fence]


def _md_label(p: Projection) -> str:
    """The projection's mark and word; a state this explorer does not know is the agent's text."""
    return p.label if p.status in PROJECTION_MARKS else _md(p.label, 60)


def _md_mismatch(p: Projection) -> list[str]:
    answered = safe_text(p.canonical("value"), limit=_BLOCK)
    source = p.canonical("source")
    lines = [
        f"**{_md(p.member, 200)}**: the answer (first line) against the source member (second):",
        "",
    ]
    if source is None:
        return lines + _fence(answered) + ["", "The source member resolves to nothing.", ""]
    declared = safe_text(source, limit=_BLOCK)
    (start, end_a), (_, end_b) = first_differing_span(answered, declared)
    caret = " " * start + "^" * max(1, max(end_a, end_b) - start)
    return lines + _fence("\n".join([answered, declared, caret])) + [""]


def _shown(run: Run) -> ReportView:
    """The report a people format shows: the run as its caller read it, and an unsigned run with the
    standing it has wherever it is read (a file travels: its stated role is only a label)."""
    if run.attestation is not None:
        return ReportView.of(run.report)
    return ReportView.of(att.apply(run.report, att.unsigned(run.report, live=False)))


def _markdown(run: Run, change: Change | None = None) -> str:
    view = _shown(run)
    out = [f"# Interview transcript: {_md(_title(view), 200)}", ""]
    out += [f"- **{label}:** {_md(text, 500)}" for label, text in _facts(view, change)]
    out += [
        "",
        "Conformance is not competence: the interview checks that the agent's answers match "
        "its declared documents, not how well it works.",
        "",
    ]
    for q in view.questions.values():
        status = safe_text(q.status, limit=40)
        out += [f"## {q.name.capitalize()} ({_md(status)})", ""]
        projections = q.projections
        if q.name == "terms" and q.declared is False and not projections:
            out += ["The agent states it has published no terms (`declared: false`).", ""]
            continue
        declared = _declared_rows(q)
        if not projections and declared:
            out += [
                _NOT_ANSWERED,
                "",
                "| # | Source | Member | Signed | Declared value |",
                "|---|---|---|---|---|",
            ]
            for i, m in enumerate(declared, 1):
                out.append(
                    f"| {i} | {_md(_source_label(m), 200)} | {_md(m.member, 200)} | {_signed_word(m)} "
                    f"| {_md(canonical_or_json(m.value), _CELL)} |"
                )
            out.append("")
            continue
        if not projections:
            out += ["No projections.", ""]
            continue
        out += [
            "| # | Status | Source | Member | Answered value | Source member's value |",
            "|---|---|---|---|---|---|",
        ]
        for p in projections:
            out.append(
                f"| {_index(p)} | {_md_label(p)} | {_md(_source_label(p), 200)} "
                f"| {_md(p.member, 200)} | {_md(p.canonical('value'), _CELL)} "
                f"| {_md(p.canonical('source') or '(nothing)', _CELL)} |"
            )
        out.append("")
        for p in projections:
            if p.status in PROBLEM_PROJECTIONS:
                out += _md_mismatch(p)
    out += ["## Probes", ""]
    for probe in view.probes:
        method = _request_method(probe)
        out.append(f"- {_md(probe.name)}: {_md(method, 100)} → {_md(probe.outcome)}")
    for title, items in (
        ("Findings", view.findings),
        ("Other extensions (never change the verdict)", view.extensions),
    ):
        out += ["", f"## {title}", ""]
        if not items:
            out.append("None.")
        for f in items:
            head = f"- **{_md(f.severity)}** {_md(f.code)} {_md(_where(f))}"
            out.append(f"{head}: {_md(f.detail, 500)}")
    out += [
        "",
        "## Exchanges",
        "",
        "| Purpose | Method | URL | Status | Body sha256 |",
        "|---|---|---|---|---|",
    ]
    for ex in run.exchanges:
        outcome = ex.status if ex.error is None else f"{ex.status} {ex.error}"
        out.append(
            f"| {_md(ex.purpose)} | {_md(ex.method)} | {_md(ex.url, 200)} | {_md(outcome, 120)} "
            f"| {sha256_hex(ex.response_body)} |"
        )
    return "\n".join(out) + "\n"


# --- HTML ---------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ccc}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border:1px solid #ccc;padding:.3rem;
vertical-align:top;text-align:left}pre{margin:0;white-space:pre-wrap;word-break:break-all}
tr.mismatch,tr.unresolved{background:#fde8e8}tr.mismatch td.status,tr.unresolved td.status{font-weight:700}
mark{background:#ffd54f;text-decoration:underline wavy;outline:1px solid #b58900}
.standing{font-weight:600}.claim{color:#8a4b00}.evidence{color:#0b6b2e}.note{color:#555}
"""


def _h(value: Any, limit: int = 300) -> str:
    return html.escape(safe_text(value, limit=limit), quote=True)


def _h_marked(text: str, start: int, end: int) -> str:
    return (
        html.escape(text[:start])
        + "<mark>"
        + html.escape(text[start:end])
        + "</mark>"
        + html.escape(text[end:])
    )


def _html_projection(p: Projection) -> str:
    status = p.status
    answered = safe_text(p.canonical("value"), limit=_BLOCK)
    source_text = p.canonical("source")
    declared = safe_text(source_text, limit=_BLOCK) if source_text is not None else None
    if status in PROBLEM_PROJECTIONS and declared is not None:
        (start, end_a), (_, end_b) = first_differing_span(answered, declared)
        value_html, source_html = _h_marked(answered, start, end_a), _h_marked(declared, start, end_b)
    else:
        value_html = html.escape(answered)
        source_html = html.escape(declared) if declared is not None else "<em>(nothing at this member)</em>"
    cls = html.escape(status, quote=True)
    return (
        f'<tr class="{cls}"><td>{_h(_index(p), 10)}</td><td class="status">{_h(p.label, 60)}</td>'
        f"<td>{_h(_source_label(p))}</td><td><code>{_h(p.member, 200)}</code></td>"
        f"<td><pre>{value_html}</pre></td><td><pre>{source_html}</pre></td></tr>"
    )


def _html(run: Run, change: Change | None = None) -> str:
    view = _shown(run)
    standing = view.standing
    body = [f"<h1>Interview transcript: {_h(_title(view), 200)}</h1>", "<dl>"]
    for label, text in _facts(view, change):
        cls = f' class="standing {standing}"' if label == "Standing" else ""
        body.append(f"<dt>{html.escape(label)}</dt><dd{cls}>{_h(text, 500)}</dd>")
    body += [
        "</dl>",
        '<p class="note">Conformance is not competence: the interview checks that the agent\'s '
        "answers match its declared documents, not how well it works.</p>",
    ]
    for q in view.questions.values():
        body.append(f"<h2>{html.escape(q.name.capitalize())} <small>({_h(q.status, 40)})</small></h2>")
        projections = q.projections
        if q.name == "terms" and q.declared is False and not projections:
            body.append("<p>The agent states it has published no terms (<code>declared: false</code>).</p>")
            continue
        declared = _declared_rows(q)
        if not projections and declared:
            body.append(f'<p class="note">{html.escape(_NOT_ANSWERED)}</p>')
            body.append(
                '<table class="declared"><thead><tr><th>#</th><th>Source</th><th>Member</th><th>Signed</th>'
                "<th>Declared value</th></tr></thead><tbody>"
            )
            for i, m in enumerate(declared, 1):
                body.append(
                    f"<tr><td>{i}</td><td>{_h(_source_label(m))}</td>"
                    f"<td><code>{_h(m.member, 200)}</code></td><td>{_signed_word(m)}</td>"
                    f"<td><pre>{_h(canonical_or_json(m.value), _BLOCK)}</pre></td></tr>"
                )
            body.append("</tbody></table>")
            continue
        if not projections:
            body.append("<p>No projections.</p>")
            continue
        body.append(
            "<table><thead><tr><th>#</th><th>Status</th><th>Source</th><th>Member</th>"
            "<th>Answered value</th><th>Source member's value</th></tr></thead><tbody>"
        )
        body += [_html_projection(p) for p in projections]
        body.append("</tbody></table>")
    body.append("<h2>Probes</h2><ul>")
    for probe in view.probes:
        body.append(
            f"<li>{_h(probe.name)}: <code>{_h(_request_method(probe), 100)}</code>"
            f" &rarr; {_h(probe.outcome)}</li>"
        )
    body.append("</ul>")
    for title, items in (
        ("Findings", view.findings),
        ("Other extensions (never change the verdict)", view.extensions),
    ):
        body.append(f"<h2>{html.escape(title)}</h2>")
        if not items:
            body.append("<p>None.</p>")
            continue
        body.append("<ul>")
        for f in items:
            body.append(
                f"<li><strong>{_h(f.severity)}</strong> <code>{_h(f.code)}</code> "
                f"{_h(_where(f))}: {_h(f.detail, 500)}</li>"
            )
        body.append("</ul>")
    body.append(
        "<h2>Exchanges</h2><table><thead><tr><th>Purpose</th><th>Method</th><th>URL</th>"
        "<th>Status</th><th>Body sha256</th></tr></thead><tbody>"
    )
    for ex in run.exchanges:
        status = ex.status if ex.error is None else f"{ex.status} {ex.error}"
        body.append(
            f"<tr><td>{_h(ex.purpose)}</td><td>{_h(ex.method)}</td><td>{_h(ex.url)}</td>"
            f"<td>{_h(status)}</td><td><code>{sha256_hex(ex.response_body)}</code></td></tr>"
        )
    body.append("</tbody></table>")
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>Interview transcript: {_h(_title(view), 120)}</title><style>{_CSS}</style></head><body>"
    )
    return head + "\n".join(body) + "</body></html>\n"
