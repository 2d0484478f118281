"""The report as typed data, and the words and marks every surface shows it with, defined once.

The report (docs/CONTRACT.md) is JSON, and the one a surface is given may come from this run,
an old history row, an imported or hand-edited transcript: any member may be missing or of the
wrong type. `ReportView.of(report)` reads it once, tolerantly (a missing or mistyped member
becomes a neutral value, never an exception), into frozen dataclasses, so the TUI
(`explorer.tui.model`), the exports (`explorer.store.export`) and the CLI summary
(`explorer.core.report.summary_lines`) read typed fields instead of probing a mapping each
their own way. Members the view does not type yet (helpers keep adding some: `target`,
`run_attestation`, auth findings, a churn explanation) stay reachable through `raw`, and
`ReportView.member(...)` reads any path tolerantly.

The facts a person reads are decided here and nowhere else:

- the projection marks and words (`✓ match`, `✗ MISMATCH`, `? UNRESOLVED`, `~ unverifiable`):
  every state has its own symbol and word, so nothing is told by colour alone;
- the verdict marks and the sentence explaining each verdict;
- the standing: a self-run result is a claim and never reads as evidence (the interview
  extension, sections 8 and 9), spelled out with who ran it and, for a signed result, who signed
  it with which key or why it is only a claim; an unsigned result that is evidence live says on
  the same line that it is unsigned, a claim to anyone else until signed, and how to sign it.

Pure: no I/O, and every agent-supplied string in a sentence built here goes through `safe_text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from explorer.core.canonical import CanonicalError, canonical_text
from explorer.core.card_schema import CardProblem
from explorer.core.findings import QUESTIONS
from explorer.core.text import safe_text
from explorer.core.verdict import ROLES

# --- marks and words ----------------------------------------------------------------------------

PROJECTION_MARKS: dict[str, str] = {"match": "✓", "mismatch": "✗", "unresolved": "?", "unverifiable": "~"}
PROBLEM_PROJECTIONS = ("mismatch", "unresolved")  # shown in capitals: they are what to look at

VERDICT_MARKS: dict[str, str] = {
    "conformant": "✓",
    "nonconformant": "✗",
    "churn": "≈",
    "not_offered": "–",
    "unreachable": "!",
}
VERDICT_WORDS: dict[str, str] = {
    "conformant": "the live answers match the declared documents",
    "nonconformant": "a conflict with the declared documents survived the re-run",
    "churn": "a conflict on the first attempt did not survive the re-run",
    "not_offered": "the card does not declare the interview; absence says nothing about the agent",
    "unreachable": "no usable card, or the questions could not be put",
}
SEVERITY_MARKS: dict[str, str] = {"error": "✗", "warning": "!", "info": "·"}
SIGNATURE_MARKS: dict[str, str] = {"verified": "✓", "unsigned": "–", "invalid": "✗", "unverifiable": "?"}

# `self` is what a runner that declared no independent role gets (the default): it says nothing
# about who ran it, only that nobody vouched for being independent of the agent.
STANDING_WORDS: dict[str, str] = {
    "self": "claim: no independent role declared",
    "independent": "evidence: run by an independent party",
    "platform": "evidence: recorded by a platform",
}
DECLARE_ROLE = "--as independent declares one"
# Said on the same line as `evidence` whenever the run is not signed: live, the runner stands
# behind it, but anyone who reads it later reads a claim (CONTRACT.md "Signed evidence").
UNSIGNED_EVIDENCE = "unsigned: a claim to anyone else until signed"
SIGN_HOW = "--sign-key KEY signs it; interview-explorer keygen makes a key"
_ROLE_NOUNS = {"independent": "an independent party", "platform": "a platform"}


def _s(value: Any, limit: int = 200) -> str:
    return safe_text(value, limit=limit)


def projection_mark(status: Any) -> str:
    """The symbol of a projection state; `?` for a state this explorer does not know."""
    return PROJECTION_MARKS.get(str(status), "?")


def projection_label(status: Any) -> str:
    """`✓ match`, `✗ MISMATCH`, `? UNRESOLVED`, `~ unverifiable`: symbol and word, problems in capitals."""
    word = _s(status, 40)
    return f"{projection_mark(status)} {word.upper() if status in PROBLEM_PROJECTIONS else word}"


def verdict_label(verdict: Any) -> str:
    """`✓ conformant`, `✗ nonconformant`, ...; `? <word>` for a verdict this explorer does not know."""
    return f"{VERDICT_MARKS.get(str(verdict), '?')} {_s(verdict if verdict else 'unknown', 40)}"


# --- the typed report ---------------------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def _maps(value: Any) -> tuple[Mapping[str, Any], ...]:
    return tuple(v for v in value if isinstance(v, Mapping)) if isinstance(value, (list, tuple)) else ()


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def canonical_or_json(value: Any) -> str:
    """A value's RFC 8785 text; one JCS cannot encode (an integer beyond a double, say) falls
    back to sorted JSON, so it can still be shown and compared."""
    import json

    try:
        return canonical_text(value)
    except CanonicalError:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


@dataclass(frozen=True)
class Signature:
    """`card.signature`: how the card's signature checked out."""

    status: str = "unknown"
    form: str | None = None
    alg: str | None = None
    kid: str | None = None
    key_source: str | None = None
    # What the keys a recorded run carries would say (`explorer.evidence.reading`), when it differs:
    # shown as a fact about the file, never trusted.
    with_recorded_keys: Mapping[str, Any] = field(default_factory=dict)
    accepted_by: tuple[str, ...] = ()  # the client stacks whose verifier accepts it
    disagreements: tuple[Mapping[str, Any], ...] = ()  # {stack, member, detail, fix} per rejecting member

    @classmethod
    def of(cls, data: Any) -> Signature:
        d = _map(data)
        return cls(
            status=_str(d.get("status")) or "unknown",
            form=_str(d.get("form")),
            alg=_str(d.get("alg")),
            kid=_str(d.get("kid")),
            key_source=_str(d.get("key_source")),
            with_recorded_keys=_map(d.get("with_recorded_keys")),
            accepted_by=tuple(_s(x, 40) for x in _list(d.get("accepted_by")) if isinstance(x, str)),
            disagreements=_maps(d.get("disagreements")),
        )

    def stacks_lines(self, *, members: int = 6) -> list[str]:
        """Which client stacks accept the signature and, where they disagree, the members that make
        the others reject it and the fix (docs/CONTRACT.md "Card checks and declared answers");
        nothing when no signature verified."""
        if not self.accepted_by:
            return []
        lines = [f"accepted by: {', '.join(self.accepted_by)}"]
        rejecting = list(dict.fromkeys(_s(d.get("stack"), 40) for d in self.disagreements))
        if not rejecting:
            return [lines[0] + " (every client stack)"]
        lines[0] += f"; rejected by: {', '.join(rejecting)}"
        for stack in rejecting:
            mine = [d for d in self.disagreements if _s(d.get("stack"), 40) == stack]
            for d in mine[:members]:
                member, detail = _s(d.get("member"), 120), _s(d.get("detail"), 300)
                said = detail if member and detail.startswith(member) else f"{member or 'the card'}: {detail}"
                lines.append(f"  {stack}: {said}")
            if len(mine) > members:
                lines.append(f"  {stack}: and {len(mine) - members} more (card.signature.disagreements)")
            fix = _s(mine[0].get("fix"), 400) if mine else ""
            if fix:
                lines.append(f"  fix for {stack}: {fix}")
        return lines

    def stacks_note(self) -> str | None:
        """One sentence for a header: only when the stacks disagree."""
        rejecting = list(dict.fromkeys(_s(d.get("stack"), 40) for d in self.disagreements))
        if not self.accepted_by or not rejecting:
            return None
        members = list(dict.fromkeys(_s(d.get("member"), 80) for d in self.disagreements if d.get("member")))
        shown = members[0] + (f" and {len(members) - 1} more" if len(members) > 1 else "") if members else ""
        return (
            f"signature rejected by {', '.join(rejecting)} (accepted by {', '.join(self.accepted_by)})"
            + (f": {shown}" if shown else "")
            + "; `card` gives the fix"
        )

    @property
    def mark(self) -> str:
        return SIGNATURE_MARKS.get(self.status, "?")

    def words(self) -> str:
        """`verified (form served, alg ES256, kid k1)`, naming a key from the card's own jku as such."""
        parts = [
            f"{name} {_s(value, 80)}"
            for name, value in (("form", self.form), ("alg", self.alg), ("kid", self.kid))
            if value
        ]
        if self.key_source == "jku":
            parts.append("key from the card's own jku")
        return _s(self.status, 40) + (f" ({', '.join(parts)})" if parts else "")

    def hint(self) -> str | None:
        """What would make the signature checkable, in words (None when nothing would): the
        signer's public key given with `--keys` (or the config's `keys`), or `--allow-jku` for the
        key set the card names; for a recorded run, also what the keys it carries say, which are
        not trusted."""
        recorded = _str(self.with_recorded_keys.get("status"))
        kid = f" (kid {_s(self.kid, 80)})" if self.kid else ""
        if recorded == "verified" and self.status == "invalid":
            return (
                f"the key set recorded with this run verifies it, but the key you trust{kid} does "
                "not: the card was signed by another key under the same kid"
            )
        if self.status != "unverifiable" or not (self.kid or self.alg):
            return None  # no card, or a card without signatures: nothing to check
        how = (
            f"--keys JWKS_FILE_OR_URL with the signer's public key{kid}, or keys in the config, "
            "or --allow-jku to trust the key set the card names"
        )
        if recorded == "invalid":
            return (
                f"the keys recorded with this run found the signature invalid, but keys a recorded "
                f"run carries are not trusted here; to check it: {how}"
            )
        if recorded != "verified":
            return f"to check it: {how}"
        jku = self.with_recorded_keys.get("key_source") == "jku"
        where = "a key set from its card's own jku" if jku else "the keys it carries"
        return (
            f"verified by {where} when recorded, but keys a recorded run carries are not trusted "
            f"here; to check it: {how}"
        )


@dataclass(frozen=True, slots=True)  # slots: an answer may carry 10,000 of them, typed at once
class Projection:
    """One projection of an answer: the member it copies, where from, and how it compared."""

    index: Any
    member: str | None
    document: str | None
    status: str  # match | mismatch | unresolved | unverifiable (or an unknown word, kept)
    url: str | None
    digest: str | None
    signed: bool | None
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Projection:
        signed = data.get("signed")
        return cls(
            index=data.get("index"),
            member=_str(data.get("member")),
            document=_str(data.get("document")),
            status=_str(data.get("status")) or "unverifiable",
            url=_str(data.get("url")),
            digest=_str(data.get("digest")),
            signed=signed if isinstance(signed, bool) else None,
            raw=data,
        )

    @property
    def mark(self) -> str:
        return projection_mark(self.status)

    @property
    def label(self) -> str:
        return projection_label(self.status)

    @property
    def problem(self) -> bool:
        return self.status != "match"

    @property
    def value(self) -> Any:
        """The answered value (any JSON)."""
        return self.raw.get("value")

    @property
    def lossy(self) -> bool:
        """A number in the answer or the source is an integer beyond ±(2^53-1)."""
        return bool(self.raw.get("lossy"))

    @property
    def unsigned_empty(self) -> tuple[str, ...]:
        """Empty members under this one that the signer's canonical form drops (so a signature
        covers the member except them)."""
        return tuple(m for m in _list(self.raw.get("unsigned_empty")) if isinstance(m, str))

    def source(self) -> tuple[bool, Any]:
        """(whether the source member was read, its value). A match carries its value once, as
        `value` (the member holds the same); other states carry `source_value` when it was read,
        and an unresolved member has none."""
        if self.status == "unresolved":
            return False, None
        if "source_value" in self.raw:
            return True, self.raw["source_value"]
        if self.status == "match":
            return True, self.raw.get("value")
        return False, None

    def stated_canonical(self, which: Literal["value", "source"] = "value") -> str | None:
        """The canonical text of the answered value, or of the source member's value, as the report
        states it (`value_canonical`, `source_canonical`); None when it states none."""
        return _str(self.raw.get(f"{which}_canonical"))

    def canonical(self, which: Literal["value", "source"] = "value") -> str | None:
        """The canonical text of the answered value, or of the source member's value: the report's
        own string when present, else recomputed. None for a source that resolved to nothing."""
        given = self.stated_canonical(which)
        if given is not None:
            return given
        if which == "value":
            return canonical_or_json(self.raw.get("value"))
        found, value = self.source()
        if not found or (value is None and "source_value" in self.raw):
            return None
        return canonical_or_json(value)


@dataclass(frozen=True, slots=True)
class DeclaredMember:
    """One member a conformant answer to a question projects, as the declared documents hold it
    (`questions.<q>.declared`, CONTRACT "Card checks and declared answers")."""

    member: str | None
    document: str | None  # card | proposal
    url: str | None
    digest: str | None
    signed: bool | None
    value: Any

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> DeclaredMember:
        signed = data.get("signed")
        return cls(
            member=_str(data.get("member")),
            document=_str(data.get("document")),
            url=_str(data.get("url")),
            digest=_str(data.get("digest")),
            signed=signed if isinstance(signed, bool) else None,
            value=data.get("value"),
        )


@dataclass(frozen=True)
class Question:
    """One of the five questions: how it went and the projections of its answer (typed when
    first asked for; counting them does not need that)."""

    name: str
    status: str  # answered | refused | error | not_asked
    declared: bool | None  # what the answer says of itself (`answer.declared`), when it says it
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def of(cls, name: str, data: Any) -> Question:
        d = _map(data)
        said = _map(d.get("answer")).get("declared") if d.get("status") == "answered" else None
        if not isinstance(said, bool):  # a report from before `declared` held the declared members
            said = d.get("declared")
        return cls(
            name=name,
            status=_str(d.get("status")) or "not_asked",
            declared=said if isinstance(said, bool) else None,
            raw=d,
        )

    @cached_property
    def declared_members(self) -> tuple[DeclaredMember, ...]:
        """What the declared documents say for this question, answered or not (empty in a report
        from before they were reported)."""
        return tuple(DeclaredMember.of(m) for m in _maps(self.raw.get("declared")))

    @property
    def answered(self) -> bool:
        """Whether the agent gave this question an answer (a refusal or an error is not one)."""
        return self.status == "answered"

    @cached_property
    def projections(self) -> tuple[Projection, ...]:
        return tuple(Projection.of(p) for p in _maps(self.raw.get("projections")))

    @property
    def answer(self) -> Any:
        return self.raw.get("answer")

    def counts(self) -> dict[str, int]:
        """Projections per state, in the contract's order of states (unknown states as unverifiable)."""
        out = dict.fromkeys(PROJECTION_MARKS, 0)
        for p in _maps(self.raw.get("projections")):
            status = p.get("status")
            out[status if isinstance(status, str) and status in out else "unverifiable"] += 1
        return out

    def has_projections(self) -> bool:
        return bool(_maps(self.raw.get("projections")))


@dataclass(frozen=True)
class Finding:
    """A finding (or an `extensions` finding) as the report carries it."""

    code: str
    severity: str
    detail: str
    question: str | None
    member: str | None
    probe: str | None
    raw: Mapping[str, Any] = field(repr=False)
    cause: str | None = None  # the code of the root cause that explains this finding, if any

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Finding:
        member = data.get("member")
        return cls(
            code=_str(data.get("code")) or "?",
            severity=_str(data.get("severity")) or "?",
            detail=_str(data.get("detail")) or "",
            question=_str(data.get("question")),
            member=None if member is None else str(member),
            probe=_str(data.get("probe")),
            raw=data,
            cause=_str(data.get("cause")),
        )

    @property
    def mark(self) -> str:
        return SEVERITY_MARKS.get(self.severity, "·")


@dataclass(frozen=True)
class Probe:
    """A closure probe or unactivated call: what was sent, what came back, how it was judged."""

    name: str
    outcome: str
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Probe:
        return cls(_str(data.get("name")) or "probe", _str(data.get("outcome")) or "unknown", data)

    @property
    def request(self) -> Mapping[str, Any]:
        """The JSON-RPC request the probe sent (method and params), empty when not recorded."""
        return _map(self.raw.get("request"))


@dataclass(frozen=True)
class Card:
    """`card`: where it was, what it is, and how its signature and terms checked out."""

    url: str | None
    name: str | None
    layout: str | None
    protocol_version: str | None
    sha256: str | None
    signature: Signature
    proposals: tuple[Mapping[str, Any], ...]
    problems: tuple[CardProblem, ...]  # {code, member, layout, detail}: warnings, never the verdict
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def of(cls, data: Any) -> Card:
        d = _map(data)
        return cls(
            url=_str(d.get("url")),
            name=_str(d.get("name")),
            layout=_str(d.get("layout")),
            protocol_version=_str(d.get("protocol_version")),
            sha256=_str(d.get("sha256")),
            signature=Signature.of(d.get("signature")),
            proposals=_maps(_map(d.get("terms")).get("proposals")),
            problems=tuple(
                CardProblem.of(p, _str(d.get("layout"))) for p in _list(d.get("problems")) if p is not None
            ),
            raw=d,
        )


@dataclass(frozen=True)
class ReportView:
    """A report read once, tolerantly; `raw` keeps every member, typed here or not.

    The heading facts are read at once; the questions, probes and findings when first asked
    for (and then kept), so a list that only wants the verdict or the standing of many runs
    never types thousands of projections (a 5,000-skill card's answers)."""

    verdict: str
    standing: str  # claim | evidence (a claim whenever the report does not say evidence)
    runner: str | None
    role: str  # self | independent | platform (unknown or missing reads as self)
    target: str | None
    attempts: int | None
    answers_sha256: str | None
    card: Card
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def of(cls, report: Any) -> ReportView:
        r = _map(report)
        ran_by = _map(r.get("ran_by"))
        role = ran_by.get("role") if ran_by.get("role") in ROLES else "self"
        return cls(
            verdict=_str(r.get("verdict")) or "unknown",
            standing="evidence" if r.get("standing") == "evidence" else "claim",
            runner=_str(ran_by.get("name")),
            role=str(role),
            target=_str(r.get("target")),
            attempts=_int(r.get("attempts")),
            answers_sha256=_str(r.get("answers_sha256")),
            card=Card.of(r.get("card")),
            raw=r,
        )

    @cached_property
    def questions(self) -> dict[str, Question]:
        """The five questions, in question order, each typed (a missing one reads as not asked)."""
        questions = _map(self.raw.get("questions"))
        return {q: Question.of(q, questions.get(q)) for q in QUESTIONS}

    @cached_property
    def probes(self) -> tuple[Probe, ...]:
        return tuple(Probe.of(p) for p in _maps(self.raw.get("probes")))

    @cached_property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(Finding.of(f) for f in _maps(self.raw.get("findings")))

    @cached_property
    def extensions(self) -> tuple[Finding, ...]:
        """Findings about the card's other extensions (they never change the verdict)."""
        return tuple(Finding.of(f) for f in _maps(self.raw.get("extensions")))

    def member(self, *path: str) -> Any:
        """`raw[path[0]][path[1]]...`, or None as soon as a step is missing or not an object."""
        data: Any = self.raw
        for key in path:
            if not isinstance(data, Mapping):
                return None
            data = data.get(key)
        return data

    @property
    def verdict_label(self) -> str:
        return verdict_label(self.verdict)

    @property
    def verdict_words(self) -> str | None:
        """The sentence explaining the verdict, or None for a verdict this explorer does not know.
        A nonconformant run says what made it so: a conflict that survived the re-run, a conflict
        on the only attempt, or (no answer in conflict) the error findings by code."""
        if self.verdict != "nonconformant":
            return VERDICT_WORDS.get(self.verdict)
        counts = [q.counts() for q in self.questions.values()]
        conflicts = any(c[state] for c in counts for state in PROBLEM_PROJECTIONS)
        if conflicts:
            return (
                VERDICT_WORDS["nonconformant"]
                if (self.attempts or 1) > 1
                else ("a conflict with the declared documents (asked once)")
            )
        codes = list(dict.fromkeys(_s(f.code, 60) for f in self.findings if f.severity == "error"))
        if codes:
            return f"error finding{'s' if len(codes) > 1 else ''}: {', '.join(codes[:4])}"
        return VERDICT_WORDS["nonconformant"]

    @property
    def agent_name(self) -> str:
        return self.card.name or self.target or "(unnamed agent)"

    def standing_words(self, *, how_to_declare: bool = True) -> str:
        """ "claim: run by alice, no independent role declared (--as independent declares one)" and the like,
        with the runner's name when known, and for a signed or checked result who signed it with
        which key, or why it is only a claim. `how_to_declare=False` leaves out the options that
        would change it (a role to declare, a key to sign with), where room is short."""
        run_att = _map(self.raw.get("run_attestation"))
        reason = run_att.get("reason")
        name = self.runner
        if self.standing == "claim" and self.role != "self" and isinstance(reason, str):
            return f"claim, {_s(reason, 40)}: {_claim_reason(run_att, reason, name)}"
        if self.standing == "claim" and self.role != "self":  # never print evidence for a claim
            who = _s(name, 80) if name else "the runner"
            return f"claim: {who} says it ran this as {_ROLE_NOUNS[self.role]}, but that cannot be checked"
        if self.role == "self":
            said = (
                f"claim: run by {_s(name, 80)}, no independent role declared"
                if name
                else STANDING_WORDS["self"]
            )
            return f"{said} ({DECLARE_ROLE})" if how_to_declare else said
        words = STANDING_WORDS[self.role]
        if self.standing_signed:
            signer = _s(run_att.get("runner") or name or "an unnamed runner", 80)
            how = words.split(": ", 1)[1]
            return f"evidence: signed by {signer} ({_key(run_att.get('keyid'))}, trusted); {how}"
        said = f"{words} ({_s(name, 80)})" if name else words
        return f"{said}; {UNSIGNED_EVIDENCE}" + (f" ({SIGN_HOW})" if how_to_declare else "")

    @property
    def standing_signed(self) -> bool:
        """Whether a runner's signature over the run verified (the report's `standing_signed`, read
        from `run_attestation`, which every reader sets again)."""
        return _map(self.raw.get("run_attestation")).get("status") == "verified"

    def standing_mark(self) -> str:
        """The short form lists use: `✓ evidence · signed`, `evidence · unsigned` (a live run, a
        claim to anyone else), `claim · undeclared` (no independent role declared), `claim ·
        unknown signer`."""
        run_att = _map(self.raw.get("run_attestation"))
        if self.standing == "evidence" and self.role != "self":
            return "✓ evidence · signed" if self.standing_signed else "evidence · unsigned"
        if self.role == "self":
            return "claim · undeclared"
        reason = run_att.get("reason")
        return f"claim · {_s(reason, 40) if isinstance(reason, str) and reason else 'unverified'}"

    def attestation_words(self) -> str:
        """`run_attestation` in words: `verified (key <thumbprint>, runner ci)`."""
        run_att = self.raw.get("run_attestation")
        if not isinstance(run_att, Mapping):
            return "not recorded (a run from before signed evidence)"
        status = _s(run_att.get("status", "unknown"), 40).replace("_", " ")
        parts = [f"key {_s(run_att['keyid'], 80)}"] if run_att.get("keyid") else []
        if run_att.get("runner"):
            parts.append(f"runner {_s(run_att['runner'], 80)}")
        if run_att.get("reason") and run_att.get("reason") != status:
            parts.append(f"evidence unverified: {_s(run_att['reason'], 40)}")
        return status + (f" ({', '.join(parts)})" if parts else "")


def _key(keyid: Any) -> str:
    return f"key {_s(keyid[:6], 12)}…" if isinstance(keyid, str) and keyid else "no key id"


def _claim_reason(run_att: Mapping[str, Any], reason: str, name: Any) -> str:
    signer = _s(run_att.get("runner") or name or "an unnamed runner", 80)
    key = _key(run_att.get("keyid"))
    said = f"{_s(name, 80)} says it ran this as {_ROLE_NOUNS.get(str(run_att.get('role')), 'an outsider')}"
    reasons = {
        "unsigned": f"{said}, but the result is not signed, so that is only a label",
        "unknown signer": f"signed by {signer} ({key}, not a runner key you trust)",
        "bad signature": f"the signature does not verify ({key}), so who ran it is unknown",
        "altered transcript": f"signed by {signer} ({key}), but the transcript changed after signing",
        "self-attested": f"signed by {signer} ({key}), the same key that signs the agent's own card",
    }
    return reasons.get(reason, f"{said}, but its evidence cannot be checked")
