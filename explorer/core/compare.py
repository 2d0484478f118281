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

What changed is also said in kinds (CONTRACT "Signatures are proofs"), decided once here for
every surface, the history's stored rows included (`change_kinds` over two runs' `RunMarks`):
`declarations` (the card without its signatures, or a committed proposal's digest), `key` (the
keys whose signatures verified), `answers` (the answers digest) and `verdict` are changes; a card
that was only signed again (other bytes, the same declarations under the same keys) is
`resigned`: shown as "signed again", never a change. A signature is a proof, not a declaration,
and ECDSA signatures differ at every signing, so every restart of an agent that signs at start-up
would otherwise read as a change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from explorer.core.declarations import holds_signatures
from explorer.core.diff import first_differing_span, marked_excerpt
from explorer.core.findings import QUESTIONS
from explorer.core.text import safe_text
from explorer.core.view import Projection, Question, ReportView

# How one aligned projection compares; `resigned`: its value differs only because the card it
# copies a signature of was signed again (the runs' change kinds say `resigned`).
ChangeKind = Literal["same", "added", "removed", "changed", "resigned"]
ProjectionKey = tuple[str, str | None, str]  # (document, url, member)

_VALUE_WIDTH = 100  # characters of a canonical value shown per line in lines()

# --- what changed between two runs, in kinds ------------------------------------------------------

DECLARATIONS, KEY, ANSWERS, VERDICT, RESIGNED = "declarations", "key", "answers", "verdict", "resigned"
CHANGE_KINDS: tuple[str, ...] = (DECLARATIONS, KEY, ANSWERS, VERDICT)  # each one is a change
KINDS: tuple[str, ...] = (*CHANGE_KINDS, RESIGNED)  # in the order they are listed everywhere
KIND_WORDS: dict[str, str] = {
    DECLARATIONS: "declarations changed",
    KEY: "key changed",
    ANSWERS: "answers changed",
    VERDICT: "verdict changed",
    RESIGNED: "signed again",
}
RESIGNED_WORDS = "the card was signed again over the same declarations under the same key: not a change"
# Findings about a card signed again within a run: the same declarations, so never a change.
SIGNING_FINDINGS = frozenset({"signature_equivalent", "card_resigned"})


@dataclass(frozen=True)
class RunMarks:
    """What a run's change against the one before is judged by (`change_kinds`).

    `declarations_sha256` and `signers` are None when unknown (a report made before they were
    stated); the card digest then stands for the declarations, and a card whose bytes differ
    cannot be shown to be the same key's signing again."""

    verdict: str | None
    card_sha256: str | None
    declarations_sha256: str | None
    signers: tuple[str, ...] | None
    answers_sha256: str | None

    @classmethod
    def of_report(cls, report: Mapping[str, Any]) -> RunMarks:
        """A report's marks: `card.declarations_sha256` and `card.signers` when it states them."""
        view = ReportView.of(report)
        card = view.card.raw
        declared = card.get("declarations_sha256")
        return cls(
            verdict=view.verdict,
            card_sha256=view.card.sha256,
            declarations_sha256=declared if isinstance(declared, str) else None,
            signers=signers_tuple(card.get("signers")),
            answers_sha256=view.answers_sha256,
        )


def signers_tuple(value: Any) -> tuple[str, ...] | None:
    """`card.signers` as a sorted tuple of thumbprints; None unless it is a list of strings."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(sorted(set(value)))


def change_kinds(before: RunMarks, after: RunMarks) -> tuple[str, ...]:
    """How a run differs from the same agent's run before it, as kinds in `KINDS` order.

    `declarations`: the declarations digests differ (the card digests, where either run has no
    declarations digest). `key`: the signers differ (where either run's signers are unknown, a card
    whose bytes differ over the same declarations: nothing shows the same key signed it).
    `answers`, `verdict`: those differ. `resigned`: the card's bytes differ and neither its
    declarations nor its signers do. The PostgreSQL store decides the same in SQL
    (`explorer.store.postgres`), so the two are tested against each other."""
    card = before.card_sha256 != after.card_sha256
    if before.declarations_sha256 is not None and after.declarations_sha256 is not None:
        declarations = before.declarations_sha256 != after.declarations_sha256
    else:
        declarations = card
    if before.signers is not None and after.signers is not None:
        key = before.signers != after.signers
    else:
        key = card and not declarations
    found = {
        DECLARATIONS: declarations,
        KEY: key,
        ANSWERS: before.answers_sha256 != after.answers_sha256,
        VERDICT: before.verdict != after.verdict,
        RESIGNED: card and not declarations and not key,
    }
    return tuple(kind for kind in KINDS if found[kind])


def is_change(kinds: Sequence[str]) -> bool:
    """Whether these kinds hold a change (`resigned` alone is none)."""
    return any(kind in CHANGE_KINDS for kind in kinds)


def kinds_words(kinds: Sequence[str]) -> str:
    """`key changed, answers changed`, `signed again`, ...: the kinds in words, in `KINDS` order
    (a kind this explorer does not know is left out)."""
    return ", ".join(KIND_WORDS[kind] for kind in KINDS if kind in kinds)


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
    resigned: tuple[ProjectionChange, ...] = ()  # values that differ only as the card was signed again

    @property
    def same(self) -> tuple[ProjectionChange, ...]:
        return tuple(e for e in self.entries if e.kind == "same")

    @property
    def unchanged(self) -> int:
        return len(self.same)

    @property
    def differs(self) -> bool:
        """Whether anything differs but signatures of a card signed again."""
        return bool(self.added or self.removed or self.changed or self.status or self.declared)

    @property
    def identical(self) -> bool:
        return not self.differs and not self.resigned

    def to_json(self) -> dict[str, Any]:
        return {
            "added": [c.to_json() for c in self.added],
            "removed": [c.to_json() for c in self.removed],
            "changed": [c.to_json() for c in self.changed],
            "resigned": [c.to_json() for c in self.resigned],
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
    facts: tuple[ValueChange, ...]  # verdict, standing, card digests, signature, signers, answers, proposals
    findings_added: tuple[Mapping[str, Any], ...]
    findings_removed: tuple[Mapping[str, Any], ...]
    kinds: tuple[str, ...] = ()  # what changed, in `KINDS` (`resigned`: signed again, not a change)

    @property
    def identical(self) -> bool:
        """Nothing differs at all, not even the signature bytes of a card signed again."""
        return (
            not self.facts
            and not self.findings_added
            and not self.findings_removed
            and all(q.identical for q in self.questions)
        )

    @property
    def resigned(self) -> bool:
        """The card was signed again over the same declarations under the same key."""
        return RESIGNED in self.kinds

    @property
    def changed(self) -> bool:
        """Whether anything differs but what signing the card again explains: its digest, the
        signatures answered from it, and the findings that say it was signed again. `compare`
        exits 0, and `watch` raises no alarm, when this is False."""
        if is_change(self.kinds) or any(q.differs for q in self.questions):
            return True
        explained = {"card.sha256"} if self.resigned else set()
        if any(f.what not in explained for f in self.facts):
            return True
        return any(
            f.get("code") not in SIGNING_FINDINGS for f in (*self.findings_added, *self.findings_removed)
        )

    def fact(self, what: str) -> ValueChange | None:
        """The change of one named fact (`verdict`, `card.sha256`, ...), or None when it did not change."""
        return next((f for f in self.facts if f.what == what), None)

    def question(self, name: str) -> QuestionComparison:
        return next(q for q in self.questions if q.question == name)

    def to_json(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "changed": self.changed,
            "kinds": list(self.kinds),
            "changes": [f.to_json() for f in self.facts],
            "questions": {q.question: q.to_json() for q in self.questions},
            "findings": {
                "added": [dict(f) for f in self.findings_added],
                "removed": [dict(f) for f in self.findings_removed],
            },
        }

    def summary(self) -> str:
        """One line: what changed, then the kinds in words; `no change`, or `no change: signed
        again` when only signing the card again explains every difference."""
        if self.identical:
            return "no change"
        if not self.changed:
            return f"no change: {KIND_WORDS[RESIGNED]}" if self.resigned else "no change"
        parts = [
            f"{safe_text(f.what, limit=200)} {_short(f.before)} -> {_short(f.after)}" for f in self.facts
        ]
        for q in self.questions:
            counts = [
                f"{len(items)} {label}"
                for label, items in (
                    ("changed", q.changed),
                    ("added", q.added),
                    ("removed", q.removed),
                    (KIND_WORDS[RESIGNED], q.resigned),
                )
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
        if self.kinds:
            parts.append(kinds_words(self.kinds))
        return "; ".join(parts)

    def lines(self) -> list[str]:
        """A readable multi-line account, agent text made safe for a terminal: first what changed
        in kinds (or that the card was only signed again), then each difference."""
        if self.identical:
            return ["identical: same verdict, card, proposals, answers and findings"]
        out = []
        if self.changed:
            words = kinds_words(self.kinds) or "neither declarations, key, answers nor verdict"
            out.append(f"changed: {words}")
            if self.resigned:
                out.append(f"also {KIND_WORDS[RESIGNED]}: {RESIGNED_WORDS}")
        elif self.resigned:
            out.append(f"no change, {KIND_WORDS[RESIGNED]}: {RESIGNED_WORDS}")
        else:
            out.append("no change: only signatures of the same key over the same declarations differ")
        out += [
            f"{safe_text(f.what, limit=200)}: {_short(f.before)} -> {_short(f.after)}" for f in self.facts
        ]
        for q in self.questions:
            if q.identical:
                continue
            head = (
                f"{q.question}: {len(q.changed)} changed, {len(q.added)} added, "
                f"{len(q.removed)} removed, {q.unchanged} unchanged"
            )
            if q.resigned:
                head += f", {len(q.resigned)} {KIND_WORDS[RESIGNED]}"
            if q.status:
                head += f"; status {_short(q.status[0])} -> {_short(q.status[1])}"
            if q.declared:
                head += f"; declared {_short(q.declared[0])} -> {_short(q.declared[1])}"
            out.append(head)
            for c in (*q.changed, *q.added, *q.removed, *q.resigned):
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
    kind = KIND_WORDS[RESIGNED] if c.kind == "resigned" else c.kind
    label = f"  {kind} {safe_text(where, limit=200)} {safe_text(c.member, limit=200)}"
    status = ""
    if c.kind == "changed" and c.before_status != c.after_status:
        status = f" (status {_short(c.before_status)} -> {_short(c.after_status)})"
    lines = [label + status]
    before, after = c.before_canonical, c.after_canonical
    if c.kind in ("changed", "resigned") and before is not None and after is not None and before != after:
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


def _resigned_only(pa: Projection, pb: Projection) -> bool:
    """A card projection of a signature (or of what holds one) whose value alone differs, each
    answer matching its own run's card: it differs because the card was signed again (by a
    restart, or by another replica), asked only when the runs' declarations and signers are the
    same."""
    return (
        pa.document == pb.document == "card"
        and holds_signatures(pa.member)
        and pa.raw.get("status") == pb.raw.get("status") == "match"
    )


def _compare_question(qa: Question, qb: Question, *, same_proofs: bool = False) -> QuestionComparison:
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
            kind: ChangeKind = "resigned" if same_proofs and _resigned_only(pa, pb) else "changed"
            entries.append(change(kind, slot[0], pa, pb))
        else:
            entries.append(change("same", slot[0], pa, pb))
    entries.extend(change("added", slot[0], None, pb) for slot, pb in after.items() if slot not in before)
    status = (qa.raw.get("status"), qb.raw.get("status"))
    declared = (qa.declared, qb.declared)  # what each answer says of itself, not the card's members
    return QuestionComparison(
        question=name,
        added=tuple(e for e in entries if e.kind == "added"),
        removed=tuple(e for e in entries if e.kind == "removed"),
        changed=tuple(e for e in entries if e.kind == "changed"),
        status=status if status[0] != status[1] else None,
        declared=declared if declared[0] != declared[1] else None,
        entries=tuple(entries),
        resigned=tuple(e for e in entries if e.kind == "resigned"),
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
        ("card.declarations_sha256", ("card", "declarations_sha256")),
        ("card.layout", ("card", "layout")),
        ("card.signature", ("card", "signature", "status")),
        ("card.signature.form", ("card", "signature", "form")),
        ("card.signers", ("card", "signers")),
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


def report_kinds(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[str, ...]:
    """The change kinds from report `a` to report `b`: `change_kinds` of their marks, with a
    committed proposal whose digest differs counted as changed declarations."""
    kinds = set(change_kinds(RunMarks.of_report(a), RunMarks.of_report(b)))
    pa, pb = _proposals(ReportView.of(a)), _proposals(ReportView.of(b))
    if {url: d for url, (d, _) in pa.items()} != {url: d for url, (d, _) in pb.items()}:
        kinds.add(DECLARATIONS)
        kinds.discard(RESIGNED)
    return tuple(kind for kind in KINDS if kind in kinds)


def compare_reports(a: Mapping[str, Any], b: Mapping[str, Any]) -> Comparison:
    """What differs from report `a` (the earlier run) to report `b` (the later one)."""
    va, vb = ReportView.of(a), ReportView.of(b)
    kinds = report_kinds(a, b)
    same_proofs = DECLARATIONS not in kinds and KEY not in kinds
    questions = tuple(
        _compare_question(va.questions[q], vb.questions[q], same_proofs=same_proofs) for q in QUESTIONS
    )
    fa, fb = _findings(va), _findings(vb)
    return Comparison(
        questions=questions,
        facts=tuple(_facts(va, vb)),
        findings_added=tuple(f for k, f in fb.items() if k not in fa),
        findings_removed=tuple(f for k, f in fa.items() if k not in fb),
        kinds=kinds,
    )
