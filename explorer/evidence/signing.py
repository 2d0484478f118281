"""Signing a finished run: `verify --sign-key` after the interview.

`sign_run` redacts the run's headers first (exactly as the history and the exports redact them,
so the transcript that is signed is byte for byte the one every later export writes), gives the
report `run_attestation` (`verified` by construction), builds the in-toto statement over the
transcript without its `run_attestation` member, and attaches the DSSE envelope to the Run. How a
signed run reads back later is `explorer.evidence.standing`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from explorer import __version__
from explorer.core import attestation as att
from explorer.core.intoto import build_statement, transcript_sha256
from explorer.core.run import Run
from explorer.core.view import ReportView
from explorer.core.when import stamp
from explorer.evidence.runner_keys import RunnerKey
from explorer.evidence.standing import card_documents
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


def with_unsigned_attestation(report: Mapping[str, Any]) -> dict[str, Any]:
    """A live report's `run_attestation` before any signing: `unsigned`, standing by role."""
    return att.apply(report, att.unsigned(report, live=True))


def sign_run(run: Run, key: RunnerKey) -> Run:
    """The run signed by `key`: report with `run_attestation`, envelope in `Run.attestation`."""
    run = redacted(run)
    report = dict(run.report)
    view = ReportView.of(report)
    role = str(view.member("ran_by", "role") or "self")
    runner = str(view.member("ran_by", "name") or "unknown")
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
        time_verified=finished if isinstance(finished, str) and finished.endswith("Z") else stamp(),
        explorer_version=__version__,
    )
    return replace(unsigned_run, attestation=att.sign_statement(statement, key.private_key))
