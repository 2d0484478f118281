"""Signing a finished run, and reading the standing of a stored or received one.

`sign_run` is what `verify --sign-key` does after the interview: the run's headers are redacted
first (exactly as the history and the exports redact them, so the transcript that is signed is
byte for byte the one every later export writes), the report gains `run_attestation`
(`verified` by construction), the statement is built over the transcript without its
`run_attestation` member, and the envelope is attached to the Run.

`assess_run` / `assess_transcript` apply the CONTRACT rule to a run read back from history or
from a file: verify the envelope under the trusted runner keys, compare the transcript digest,
check the key against the agent's own card signatures, and set `standing`, `run_attestation`
and `evidence_unverified` on the report. The verdict is never taken from the transcript: the
caller recomputes it from the exchanges (`procedure.reverify_offline`) before or after.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from explorer import __version__
from explorer.core import attestation as att
from explorer.core.intoto import build_statement, transcript_sha256
from explorer.core.pointer import printable
from explorer.core.run import Exchange, Run
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.runner_keys import RunnerKey
from explorer.store.redact import redact_headers


class SigningError(Exception):
    """The run could not be signed (it is still a complete, unsigned run)."""


def redacted(run: Run) -> Run:
    """The run with every credential-looking header value replaced, as history stores it."""
    exchanges = tuple(
        replace(
            ex,
            request_headers=redact_headers(ex.request_headers),
            response_headers=redact_headers(ex.response_headers),
        )
        for ex in run.exchanges
    )
    return replace(run, exchanges=exchanges)


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


def with_unsigned_attestation(report: Mapping[str, Any]) -> dict[str, Any]:
    """A live report's `run_attestation` before any signing: `unsigned`, standing by role."""
    return att.apply(report, att.unsigned(report, live=True))


def sign_run(run: Run, key: RunnerKey) -> Run:
    """The run signed by `key`: report with `run_attestation`, envelope in `Run.attestation`."""
    run = redacted(run)
    report = dict(run.report)
    ran_by = report.get("ran_by") if isinstance(report.get("ran_by"), Mapping) else {}
    role = str(ran_by.get("role") or "self")
    runner = str(ran_by.get("name") or "unknown")
    self_attested = att.card_signer_check(card_documents(run.exchanges))(
        att.runner_keys(key.jwks())[key.keyid]
    )
    assessment = att.Assessment(
        "verified",
        key.keyid,
        runner,
        role,
        "evidence" if role in ("independent", "platform") and not self_attested else "claim",
        att.SELF_ATTESTED if self_attested and role != "self" else None,
        "the runner key also signs the agent's own card" if self_attested else "",
    )
    signed_report = att.apply(report, assessment)
    unsigned_run = replace(run, report=signed_report, attestation=None)
    try:
        digest = transcript_sha256(unsigned_run.to_transcript())
    except ValueError as exc:
        raise SigningError(str(exc)) from None
    finished = signed_report.get("finished_at")
    statement = build_statement(
        signed_report,
        run.exchanges,
        digest,
        runner=runner,
        role=role,
        time_verified=finished if isinstance(finished, str) and finished.endswith("Z") else _now(),
        explorer_version=__version__,
    )
    return replace(unsigned_run, attestation=att.sign_statement(statement, key.private_key))


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
    from explorer.core.rederive import first_difference, rederive
    from explorer.core.strict_json import lossy_integers

    found = lossy_integers({key: value for key, value in transcript.items() if key != "run_attestation"})
    if not found:
        return assessment
    outside = next((p for p in found if not p.startswith("/report/")), None)
    if outside is not None or run is None:
        where = printable(outside or found[0])
        return _altered(assessment, f"it holds an integer beyond +-(2^53-1) at {where}, which the "
                        "signature's RFC 8785 bytes cannot tell from its neighbours")
    try:
        difference = first_difference(run.report, rederive(run, run.keys, allow_jku=True))
    except ValueError as exc:
        return _altered(assessment, f"its report cannot be derived from its exchanges ({exc})")
    if difference is None:
        return assessment
    return _altered(assessment, "its report holds integers beyond +-(2^53-1), which the signature's "
                    "RFC 8785 bytes cannot tell apart, and is not what its exchanges give: "
                    + difference.sentence())


def _altered(assessment: att.Assessment, detail: str) -> att.Assessment:
    reason = None if assessment.role == "self" else att.ALTERED
    return replace(assessment, status="invalid", standing="claim", reason=reason, detail=detail)


def assess_run(run: Run, trusted: Mapping[str, bytes]) -> Run:
    """A stored run with its standing re-assessed (the history lists); `explorer.reading` also
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
