"""The standing of a stored or received run: who ran it, whether its signature holds, claim or evidence.

`assess_run` / `assess_transcript` apply the CONTRACT rule to a run read back from history or
from a file: verify the envelope under the trusted runner keys, compare the transcript digest,
check the key against the agent's own card signatures, and set `standing`, `run_attestation`
and `evidence_unverified` on the report. The verdict is never taken from the transcript: the
caller recomputes it from the exchanges (`procedure.reverify_offline`) before or after. Signing
a finished run is `explorer.evidence.signing`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from explorer.core import attestation as att
from explorer.core.pointer import printable
from explorer.core.run import Exchange, Run
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse


def card_documents(exchanges: Sequence[Exchange]) -> list[Mapping[str, Any]]:
    """The parsed cards the run fetched (every attempt), for the self-attestation check."""
    docs = []
    for ex in exchanges:
        if ex.purpose != "card" or not ex.response_body:
            continue
        try:
            doc = strict_parse(ex.response_body)
        except StrictJsonError:
            continue
        if isinstance(doc, Mapping):
            docs.append(doc)
    return docs


def read_back_report(report: Mapping[str, Any]) -> Mapping[str, Any]:
    """A report as it reads back from a history or a file: an unsigned run's stated role is only
    a label (a claim); a signed or already assessed one is left as it is (a live signed run's
    signer trusts the key it signed with). What a live run is compared with an old one as."""
    run_attestation = report.get("run_attestation")
    if isinstance(run_attestation, Mapping) and run_attestation.get("status") != "unsigned":
        return report
    return att.apply(report, att.unsigned(report, live=False))


def assess_transcript(
    transcript: Mapping[str, Any],
    report: Mapping[str, Any],
    trusted: Mapping[str, bytes],
    *,
    run: Run | None = None,
    may_hold_lossy_integers: bool = True,
) -> dict[str, Any]:
    """`report` (normally recomputed from this transcript's exchanges) with the standing the
    transcript earns under the trusted runner keys: the one rule every surface applies (CONTRACT
    "Signed evidence"). `transcript` is the JSON as received (as recorded, for a stored run);
    `may_hold_lossy_integers=False` says its bytes hold no integer RFC 8785 would round (no run
    of 16 digits), which spares a walk of a large transcript; `run` is the run it records, when the
    caller has it at hand."""
    run = run if run is not None else _run_of(transcript)
    check = att.card_signer_check(card_documents(run.exchanges if run is not None else ()))
    assessment = att.assess({**transcript, "report": transcript.get("report") or {}}, trusted, check)
    if assessment.status == "verified" and run is None:
        assessment = _altered(assessment, "its exchanges cannot be read as a transcript's")
    elif assessment.status == "verified" and may_hold_lossy_integers:
        assessment = _unbound_integers(transcript, run, assessment)
    return att.apply(report, assessment)


def _run_of(transcript: Mapping[str, Any]) -> Run | None:
    try:
        return Run.from_transcript(transcript)
    except ValueError:
        return None


def _unbound_integers(
    transcript: Mapping[str, Any], run: Run | None, assessment: att.Assessment
) -> att.Assessment:
    """A signed transcript whose integers beyond +-(2^53-1) its signature cannot bind is altered
    unless each is what its exchanges give. RFC 8785 writes numbers as doubles, so two such
    integers can share their canonical bytes and the signed digest cannot tell them apart; the
    exchanges' raw bytes (base64 text) it binds exactly, so the report's integers are checked
    against the report those bytes give, and such an integer anywhere else is refused."""
    from explorer.core.rederive import rederive, stated_report_difference
    from explorer.core.strict_json import lossy_integers

    found = lossy_integers({key: value for key, value in transcript.items() if key != "run_attestation"})
    if not found:
        return assessment
    outside = next((p for p in found if not p.startswith("/report/")), None)
    if outside is not None or run is None:
        where = printable(outside or found[0])
        return _altered(
            assessment,
            f"it holds an integer beyond +-(2^53-1) at {where}, which the "
            "signature's RFC 8785 bytes cannot tell from its neighbours",
        )
    try:
        difference = stated_report_difference(run.report, rederive(run, run.keys, allow_jku=True))
    except ValueError as exc:
        return _altered(assessment, f"its report cannot be derived from its exchanges ({exc})")
    if difference is None:
        return assessment
    return _altered(
        assessment,
        "its report holds integers beyond +-(2^53-1), which the signature's "
        "RFC 8785 bytes cannot tell apart, and is not what its exchanges give: " + difference.sentence(),
    )


def _altered(assessment: att.Assessment, detail: str) -> att.Assessment:
    reason = None if assessment.role == "self" else att.ALTERED
    return replace(assessment, status="invalid", standing="claim", reason=reason, detail=detail)


def assess_run(run: Run, trusted: Mapping[str, bytes]) -> Run:
    """A stored run with its standing re-assessed (the history lists); `explorer.evidence.reading` also
    re-derives the report a stored run is shown with."""
    report = assess_transcript(run.to_transcript(), run.report, trusted, run=_as_recorded(run))
    return replace(run, report=report, signed_report=run.recorded_report)


def _as_recorded(run: Run) -> Run:
    return replace(run, report=run.recorded_report, signed_report=None)


def read_back(
    history: Any, summaries: Sequence[Any], trusted: Mapping[str, bytes]
) -> dict[int, dict[str, Any]]:
    """Run id -> `{"ran_by", "standing", "run_attestation"}` as each listed run reads back here:
    an unsigned run is judged from its summary alone (a claim by the rule), and only a signed
    one is loaded to check its signature. `history` is an open `History`; HistoryError passes."""
    signed = history.signed([s.id for s in summaries])
    out: dict[int, dict[str, Any]] = {}
    for summary in summaries:
        if summary.id in signed:
            report = assess_run(history.load(summary.id), trusted).report
        else:
            role = summary.role if summary.role in ("independent", "platform") else "self"
            report = {"ran_by": {"name": summary.runner, "role": role}, "findings": []}
            report = att.apply(report, att.unsigned(report, live=False))
        out[summary.id] = {key: report.get(key) for key in ("ran_by", "standing", "run_attestation")}
    return out
