"""Finding codes, their severities and the fixed order findings are reported in.

The codes are a public API (CONTRACT.md): scripts match on them, so they are only ever added,
never renamed. Severity is a property of the code, not of the place that raises it, which is
why a finding is built with `finding(code, ...)` and never given a severity by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]

QUESTIONS: tuple[str, ...] = ("identity", "capabilities", "usage", "terms", "refusals")

CODES: dict[str, Severity] = {
    "card_unreachable": "error",
    "card_malformed": "error",
    "card_unsigned": "warning",
    "card_signature_invalid": "error",
    "card_signature_unverifiable": "warning",
    "member_unsigned": "warning",
    "member_unsigned_empty": "info",
    "no_jsonrpc_interface": "error",
    "interview_not_declared": "info",
    "interview_required_true": "error",
    "interview_not_implemented": "error",
    "terms_not_declared": "info",
    "terms_entry_invalid": "error",
    "activation_not_echoed": "info",
    "unactivated_call_answered": "error",
    "method_error": "error",
    "answer_shape_invalid": "error",
    "answer_extra_member": "error",
    "answer_malformed": "error",
    "source_invalid": "error",
    "pointer_unresolved": "error",
    "projection_mismatch": "error",
    # An answered value that differs from the card only by signatures equivalent to the card's
    # (CONTRACT.md "Signatures are proofs, not declarations"; card_resigned is the same between fetches).
    "signature_equivalent": "info",
    "lossy_number": "warning",
    "proposal_not_committed": "error",
    "proposal_unreachable": "error",
    "proposal_digest_mismatch": "error",
    "proposal_unsigned": "error",
    "proposal_signature_invalid": "error",
    "proposal_not_standing": "warning",
    "terms_fabricated": "error",
    "terms_declared_wrong": "error",
    "refusals_boundary_mismatch": "error",
    "nondeterministic_answer": "error",
    "closure_method_not_refused": "error",
    "closure_selector_not_refused": "error",
    "selector_refused": "error",
    "refusal_shape_invalid": "error",
    "refusal_skills_mismatch": "error",
    "refusal_as_error": "warning",
    "http_status": "error",
    "timeout": "error",
    "deadline": "error",
    "body_too_large": "error",
    "transport_error": "error",
    "redirect_refused": "error",
    "address_blocked": "error",
    "rate_limited": "warning",
    "auth_required": "error",
    "auth_failed": "error",
    "auth_scheme_unsupported": "warning",
    "auth_token_url_untrusted": "error",
    "auth_origin_untrusted": "error",
    "card_changed": "info",
    "card_resigned": "info",
    "churn": "info",
    # A transcript that presents evidence which cannot be checked (CONTRACT.md "Signed evidence").
    "evidence_unverified": "warning",
    # Other declared extensions: reported in the `extensions` list, never in the verdict.
    "openclasp_attestation_invalid": "error",
    "openclasp_attestation_missing": "error",
    "openclasp_key_unreachable": "error",
    "openclasp_card_unreachable": "error",
    "openclasp_inconsistent": "error",
    "openclasp_verified": "info",
    "openclasp_unsigned_card": "info",
    "reputation_declared": "info",
}

PROBES: tuple[str, ...] = (
    "undefined_method",
    "unmatched_selector",
    "valid_selector",
    "unactivated_call",
    "unactivated_call_no_params",
)
# The probes sent without the activation header: each must get -32601 (the interview extension,
# section 3 rule 2). JSON-RPC 2.0 lets a request omit `params`, so the unactivated call is sent
# with `params: {}` and without.
UNACTIVATED_PROBES: frozenset[str] = frozenset({"unactivated_call", "unactivated_call_no_params"})
# What each probe must draw (the report's `outcome`): the closure probes the standard refusal, the
# unactivated calls -32601, and a selector equal to a declared skill id an answer (section 4 rule 3
# refuses only a selector that matches no id).
EXPECTED_OUTCOME: dict[str, str] = {
    name: "method_not_found"
    if name in UNACTIVATED_PROBES
    else "answered"
    if name == "valid_selector"
    else "refused"
    for name in PROBES
}

# Root causes: a finding that explains others (they stay, each naming it in `cause`) leads the
# list, before the card-level findings, so that what happened is the first thing read.
LEADING: frozenset[str] = frozenset({"interview_not_implemented"})


@dataclass(frozen=True)
class Finding:
    """One thing the verifier noticed, tied to a question, a probe and/or a member when it can be."""

    code: str
    severity: Severity
    detail: str
    question: str | None = None
    member: str | None = None
    probe: str | None = None
    # The code of the finding that explains this one (a root cause of `LEADING`), when one does.
    cause: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "severity": self.severity}
        if self.question is not None:
            out["question"] = self.question
        if self.member is not None:
            out["member"] = self.member
        if self.probe is not None:
            out["probe"] = self.probe
        if self.cause is not None:
            out["cause"] = self.cause
        out["detail"] = self.detail
        return out


def finding(
    code: str,
    detail: str,
    *,
    question: str | None = None,
    member: str | None = None,
    probe: str | None = None,
) -> Finding:
    """Build a finding; the severity comes from the code table, and an unknown code is a bug."""
    if code not in CODES:
        raise KeyError(f"unknown finding code {code!r}")
    return Finding(code, CODES[code], detail, question, member, probe)


def _sort_key(f: Finding) -> tuple[int, int, str, str, str]:
    if f.code in LEADING:
        group = -1
    elif f.probe is not None:
        group = len(QUESTIONS) + 1 + (PROBES.index(f.probe) if f.probe in PROBES else len(PROBES))
    elif f.question in QUESTIONS:
        group = 1 + QUESTIONS.index(f.question)
    else:
        group = 0
    return (group, 0 if f.member is None else 1, f.member or "", f.code, f.detail)


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    """The CONTRACT order: a root cause first (`LEADING`), then card- and run-level findings, then
    identity .. refusals, then probes; members lexicographic within a group. Exact duplicates are
    dropped."""
    seen: set[Finding] = set()
    unique = []
    for f in findings:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return sorted(unique, key=_sort_key)


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)
