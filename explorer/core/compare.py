"""What changed between two reports: the pure core of `compare`, `replay`, `watch` and the compare screen.

Two runs of the same agent are compared the way the interview extension's diff thinks: per question, each
projection is identified by where it claims to come from, `(document, url, member)`, not by its
position in the answer, so an agent that reorders its projections has not "changed" anything,
while one that answers a new member, drops one, or gives a different value (compared as JCS
canonical text) has. Around that sit the document-level facts that explain most changes: the
card's digest and signature, each committed proposal's digest, the answers digest, the verdict,
the standing, and the findings (matched by code, question, member and probe, not by wording).

Timestamps, attempt timings and exchange details are deliberately ignored: two runs of an
unchanged agent compare `identical`. Everything here is plain data in and plain data out;
`lines()` and `summary()` pass agent-supplied text through `safe_text` for terminals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from explorer.core.diff import first_differing_span, marked_excerpt
from explorer.core.findings import QUESTIONS
from explorer.core.text import safe_text
from explorer.core.view import Projection, Question, ReportView

ChangeKind = Literal["same", "added", "removed", "changed"]
ProjectionKey = tuple[str, str | None, str]  # (document, url, member)

_VALUE_WIDTH = 100  # characters of a canonical value shown per line in lines()


@dataclass(frozen=True)
class ProjectionChange:
    """One aligned projection: the same in both runs, or one that appeared, disappeared, or now
    carries another value or status."""

    question: str
    kind: ChangeKind
    document: str
    url: str | None
    member: str
    before: Any = None
    after: Any = None
    before_canonical: str | None = None
    after_canonical: str | None = None
    before_status: str | None = None
    after_status: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "kind": self.kind,
            "document": self.document,
            "url": self.url,
            "member": self.member,
            "before": self.before,
            "after": self.after,
            "before_canonical": self.before_canonical,
            "after_canonical": self.after_canonical,
            "before_status": self.before_status,
            "after_status": self.after_status,
        }


@dataclass(frozen=True)
class QuestionComparison:
    """One question's projections, aligned by source; plus a change of the question's own status.

    `entries` holds every aligned projection, `same` ones included, in display order: the earlier
    run's projections in their order, then those only in the later run. `added`, `removed` and
    `changed` are its differing entries by kind; `same` and the `unchanged` count the rest.
    """

    question: str
    added: tuple[ProjectionChange, ...] = ()
    removed: tuple[ProjectionChange, ...] = ()
    changed: tuple[ProjectionChange, ...] = ()
    status: tuple[str | None, str | None] | None = None  # (before, after) when it differs
    declared: tuple[Any, Any] | None = None
    entries: tuple[ProjectionChange, ...] = ()

    @property
    def same(self) -> tuple[ProjectionChange, ...]:
        return tuple(e for e in self.entries if e.kind == "same")

    @property
    def unchanged(self) -> int:
        return len(self.same)

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed or self.status or self.declared)

    def to_json(self) -> dict[str, Any]:
        return {
            "added": [c.to_json() for c in self.added],
            "removed": [c.to_json() for c in self.removed],
            "changed": [c.to_json() for c in self.changed],
            "unchanged": self.unchanged,
            "status": list(self.status) if self.status else None,
            "declared": list(self.declared) if self.declared else None,
        }


@dataclass(frozen=True)
class ValueChange:
    """A single report-level fact that differs: (what, before, after)."""

    what: str
    before: Any
    after: Any

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class Comparison:
    """Everything that differs from report `a` (before) to report `b` (after)."""

    questions: tuple[QuestionComparison, ...]
    facts: tuple[ValueChange, ...]  # verdict, standing, card digest, signature, answers digest, proposals
    findings_added: tuple[Mapping[str, Any], ...]
    findings_removed: tuple[Mapping[str, Any], ...]

    @property
    def identical(self) -> bool:
        return (
            not self.facts
            and not self.findings_added
            and not self.findings_removed
            and all(q.identical for q in self.questions)
        )

    def fact(self, what: str) -> ValueChange | None:
        """The change of one named fact (`verdict`, `card.sha256`, ...), or None when it did not change."""
        return next((f for f in self.facts if f.what == what), None)

    def question(self, name: str) -> QuestionComparison:
        return next(q for q in self.questions if q.question == name)

    def to_json(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "changes": [f.to_json() for f in self.facts],
            "questions": {q.question: q.to_json() for q in self.questions},
            "findings": {
                "added": [dict(f) for f in self.findings_added],
                "removed": [dict(f) for f in self.findings_removed],
            },
        }

    def summary(self) -> str:
        """One line: what changed, or `no change`."""
        if self.identical:
            return "no change"
        parts = [
            f"{safe_text(f.what, limit=200)} {_short(f.before)} -> {_short(f.after)}" for f in self.facts
        ]
        for q in self.questions:
            counts = [
                f"{len(items)} {label}"
                for label, items in (("changed", q.changed), ("added", q.added), ("removed", q.removed))
                if items
            ]
            if q.status:
                counts.append(f"{_short(q.status[0])} -> {_short(q.status[1])}")
            if q.declared:
                counts.append(f"declared {_short(q.declared[0])} -> {_short(q.declared[1])}")
            if counts:
                parts.append(f"{q.question}: " + ", ".join(counts))
        if self.findings_added or self.findings_removed:
            parts.append(f"findings +{len(self.findings_added)} -{len(self.findings_removed)}")
        return "; ".join(parts)

    def lines(self) -> list[str]:
        """A readable multi-line account, agent text made safe for a terminal."""
        if self.identical:
            return ["identical: same verdict, card, proposals, answers and findings"]
        out = [f"{safe_text(f.what, limit=200)}: {_short(f.before)} -> {_short(f.after)}" for f in self.facts]
        for q in self.questions:
            if q.identical:
                continue
            head = (
                f"{q.question}: {len(q.changed)} changed, {len(q.added)} added, "
                f"{len(q.removed)} removed, {q.unchanged} unchanged"
            )
            if q.status:
                head += f"; status {_short(q.status[0])} -> {_short(q.status[1])}"
            if q.declared:
                head += f"; declared {_short(q.declared[0])} -> {_short(q.declared[1])}"
            out.append(head)
            for c in (*q.changed, *q.added, *q.removed):
                out.extend(_change_lines(c))
        for sign, items in (("+", self.findings_added), ("-", self.findings_removed)):
            for f in items:
                where = " ".join(str(f[k]) for k in ("question", "member", "probe") if f.get(k))
                code = safe_text(f.get("code"), limit=60)
                out.append(f"finding {sign} {code} {safe_text(where, limit=200)}".rstrip())
        return out


def _short(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value):
        return value[:12]
    return safe_text(value, limit=60)


def _change_lines(c: ProjectionChange) -> list[str]:
    where = c.document if c.url is None else f"{c.document} {c.url}"
    label = f"  {c.kind} {safe_text(where, limit=200)} {safe_text(c.member, limit=200)}"
    status = ""
    if c.kind == "changed" and c.before_status != c.after_status:
        status = f" (status {_short(c.before_status)} -> {_short(c.after_status)})"
    lines = [label + status]
    before, after = c.before_canonical, c.after_canonical
    if c.kind == "changed" and before is not None and after is not None and before != after:
        # Where it changes: a window around the first difference of each, marked « » and ^.
        span_a, span_b = first_differing_span(before, after)
        for name, text, span in (("before: ", before, span_a), ("after:  ", after, span_b)):
            line, carets = marked_excerpt(text, span, _VALUE_WIDTH)
            lines.append(f"      {name}{line}")
            lines.append(f"      {' ' * len(name)}{carets}")
        return lines
    if before is not None:
        lines.append(f"      before: {safe_text(before, limit=_VALUE_WIDTH)}")
    if after is not None:
        lines.append(f"      after:  {safe_text(after, limit=_VALUE_WIDTH)}")
    return lines


# --- building a Comparison ------------------------------------------------------------------------


def _key(p: Projection) -> ProjectionKey:
    return (str(p.document), p.url, str(p.member))


def _aligned(projections: Sequence[Projection]) -> dict[tuple[ProjectionKey, int], Projection]:
    """Projections keyed by source, with an occurrence number for a source answered twice."""
    out: dict[tuple[ProjectionKey, int], Projection] = {}
    seen: dict[ProjectionKey, int] = {}
    for p in projections:
        key = _key(p)
        n = seen.get(key, 0)
        seen[key] = n + 1
        out[(key, n)] = p
    return out


def _compare_question(qa: Question, qb: Question) -> QuestionComparison:
    name = qa.name
    before, after = _aligned(qa.projections), _aligned(qb.projections)
    entries: list[ProjectionChange] = []

    def change(
        kind: ChangeKind, key: ProjectionKey, pa: Projection | None, pb: Projection | None
    ) -> ProjectionChange:
        return ProjectionChange(
            question=name,
            kind=kind,
            document=key[0],
            url=key[1],
            member=key[2],
            before=None if pa is None else pa.raw.get("value"),
            after=None if pb is None else pb.raw.get("value"),
            before_canonical=None if pa is None else pa.canonical() or "",
            after_canonical=None if pb is None else pb.canonical() or "",
            before_status=None if pa is None else pa.raw.get("status"),
            after_status=None if pb is None else pb.raw.get("status"),
        )

    for slot, pa in before.items():
        pb = after.get(slot)
        if pb is None:
            entries.append(change("removed", slot[0], pa, None))
        elif pa.canonical() != pb.canonical() or pa.raw.get("status") != pb.raw.get("status"):
            entries.append(change("changed", slot[0], pa, pb))
        else:
            entries.append(change("same", slot[0], pa, pb))
    entries.extend(change("added", slot[0], None, pb) for slot, pb in after.items() if slot not in before)
    status = (qa.raw.get("status"), qb.raw.get("status"))
    declared = (qa.raw.get("declared"), qb.raw.get("declared"))
    return QuestionComparison(
        question=name,
        added=tuple(e for e in entries if e.kind == "added"),
        removed=tuple(e for e in entries if e.kind == "removed"),
        changed=tuple(e for e in entries if e.kind == "changed"),
        status=status if status[0] != status[1] else None,
        declared=declared if declared[0] != declared[1] else None,
        entries=tuple(entries),
    )


def _proposals(view: ReportView) -> dict[str, tuple[Any, Any]]:
    return {str(p.get("url")): (p.get("digest"), p.get("status")) for p in view.card.proposals}


def _facts(a: ReportView, b: ReportView) -> list[ValueChange]:
    facts = []
    for what, path in (
        ("verdict", ("verdict",)),
        ("standing", ("standing",)),
        ("card.url", ("card", "url")),
        ("card.sha256", ("card", "sha256")),
        ("card.layout", ("card", "layout")),
        ("card.signature", ("card", "signature", "status")),
        ("card.signature.form", ("card", "signature", "form")),
        ("answers_sha256", ("answers_sha256",)),
    ):
        before, after = a.member(*path), b.member(*path)
        if before != after:
            facts.append(ValueChange(what, before, after))
    pa, pb = _proposals(a), _proposals(b)
    for url in sorted(pa.keys() | pb.keys()):
        da, sa = pa.get(url, (None, None))
        db, sb = pb.get(url, (None, None))
        if da != db:
            facts.append(ValueChange(f"proposal {url} digest", da, db))
        if sa != sb:
            facts.append(ValueChange(f"proposal {url} status", sa, sb))
    return facts


def _finding_key(f: Mapping[str, Any]) -> tuple[Any, ...]:
    return (f.get("code"), f.get("question"), f.get("member"), f.get("probe"))


def _findings(view: ReportView) -> dict[tuple[Any, ...], Mapping[str, Any]]:
    out: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    for f in view.findings:
        out.setdefault(_finding_key(f.raw), f.raw)
    return out


def compare_reports(a: Mapping[str, Any], b: Mapping[str, Any]) -> Comparison:
    """What differs from report `a` (the earlier run) to report `b` (the later one)."""
    va, vb = ReportView.of(a), ReportView.of(b)
    questions = tuple(_compare_question(va.questions[q], vb.questions[q]) for q in QUESTIONS)
    fa, fb = _findings(va), _findings(vb)
    return Comparison(
        questions=questions,
        facts=tuple(_facts(va, vb)),
        findings_added=tuple(f for k, f in fb.items() if k not in fa),
        findings_removed=tuple(f for k, f in fa.items() if k not in fb),
    )
