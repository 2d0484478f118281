"""What the history keeps of a run to tell its kinds of change apart (CONTRACT "Signatures are proofs").

A run's change against the same agent's run before it is judged by `explorer.core.compare.
change_kinds` over the two runs' marks: verdict, card digest, answers digest, and the two that
tell a card signed again from one that changed: the declarations digest (`card.
declarations_sha256`, the card without its `signatures`) and the signers (`card.signers`, the
thumbprints of the keys whose card signatures verified). A report made by this explorer states
both. One made before they existed (a run recorded by an earlier version, a transcript made by
one) does not, and for it they are derived here from the run's own bytes, as its report would
have stated them: the card its answers were compared with, found among the run's card fetches by
its canonical digest, without its signatures; the signatures of the card it fetched for them,
checked under the keys the run recorded and the key sets it fetched from the card's `jku`.

`signers` is stored as text: the JSON array of the sorted thumbprints (`[]` for a card with no
signature that verified), NULL when unknown.

`refreshed_marks` is what a migration gives an agent's latest run recorded before the marks were:
those two, and the answers digest as this explorer computes it (`explorer.core.rederive`: a run
whose answers project a card signature no longer has their bytes in its answers digest), so that
run's successor is compared with it by the same rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from explorer.core.compare import signers_tuple
from explorer.core.run import Exchange, Run
from explorer.core.view import ReportView

_CARD_FETCHES = ("card", "card-discovery", "card:family", "openclasp:resolve")


def signers_text(signers: Sequence[str] | None) -> str | None:
    """The stored form of signers: a compact JSON array, sorted; None stays None (unknown)."""
    return None if signers is None else json.dumps(sorted(set(signers)), separators=(",", ":"))


def signers_of_text(text: str | None) -> tuple[str, ...] | None:
    """Stored signers read back; None when unknown or not a JSON array of strings."""
    if text is None:
        return None
    try:
        return signers_tuple(json.loads(text))
    except ValueError:
        return None


def change_fields(run: Run) -> dict[str, Any]:
    """The columns a run's kinds of change are told apart by, beside its summary fields."""
    declarations, signers = marks_of_run(run)
    return {"declarations_sha256": declarations, "signers": signers_text(signers)}


def marks_of_run(run: Run) -> tuple[str | None, tuple[str, ...] | None]:
    """(declarations digest, signers) of a run: as its report states them, else from its bytes."""
    stated = _stated_marks(run.report)
    return stated if stated is not None else derived_marks(run)


def _stated_marks(report: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...] | None] | None:
    """(declarations digest, signers) as a report states them; None when it states neither."""
    card = ReportView.of(report).card.raw
    if "declarations_sha256" not in card or "signers" not in card:
        return None
    declared = card.get("declarations_sha256")
    return (declared if isinstance(declared, str) else None), signers_tuple(card.get("signers"))


def derived_marks(run: Run) -> tuple[str | None, tuple[str, ...] | None]:
    """(declarations digest, signers) from the run's bytes, for a report that does not state them.

    No card in the report: (None, ()), as a report stating them says. A card digest that none of
    the run's card fetches has (a body altered when a secret was scrubbed from it, say): unknown
    (None, None), so nothing is claimed about it."""
    from explorer.core.declarations import declarations_sha256, signers_of
    from explorer.core.signatures import verify_card
    from explorer.core.token_trust import fetched_key_sets

    card = ReportView.of(run.report).card.raw
    signed_sha = card.get("sha256")
    if not isinstance(signed_sha, str):
        return None, ()
    compared_sha = card.get("compared_sha256")
    compared_sha = compared_sha if isinstance(compared_sha, str) else signed_sha
    found = _cards_by_digest(run.exchanges, {signed_sha, compared_sha})
    compared, signed = found.get(compared_sha), found.get(signed_sha)
    declarations = None if compared is None else declarations_sha256(compared)
    if signed is None:
        return declarations, None
    checked = verify_card(signed, dict(run.keys or {}), jku_keys=fetched_key_sets(run.exchanges))
    return declarations, tuple(signers_of(checked))


def _cards_by_digest(exchanges: Sequence[Exchange], wanted: set[str]) -> dict[str, Mapping[str, Any]]:
    """The run's fetched cards whose canonical digest is one of `wanted`, the latest fetch first."""
    from explorer.core.attempt import canonical_sha
    from explorer.core.strict_json import StrictJsonError
    from explorer.core.strict_json import parse as strict_parse

    found: dict[str, Mapping[str, Any]] = {}
    for ex in reversed(exchanges):
        if ex.purpose not in _CARD_FETCHES or ex.problem() is not None or not ex.response_body:
            continue
        try:
            doc = strict_parse(ex.response_body)
        except StrictJsonError:
            continue
        digest = canonical_sha(doc) if isinstance(doc, dict) else None
        if digest in wanted and digest not in found:
            found[digest] = doc
            if len(found) == len(wanted):
                break
    return found


def _projects_signatures(report: Mapping[str, Any]) -> bool:
    """Whether any answer projects a card member that is or holds a signature."""
    from explorer.core.declarations import holds_signatures

    return any(
        p.document == "card" and holds_signatures(p.member)
        for question in ReportView.of(report).questions.values()
        for p in question.projections
    )


def refreshed_marks(run: Run) -> tuple[str | None, tuple[str, ...] | None, str | None]:
    """(declarations digest, signers, answers digest) of a run recorded before the marks were, as
    this explorer derives them: its report's own answers digest unless an answer projects a card
    signature, whose digest this version computes otherwise (the run is derived again from its
    bytes under the keys it recorded, as it was judged live). A run that cannot be derived again
    keeps its report's answers digest."""
    from explorer.core.rederive import rederive

    declarations, signers = marks_of_run(run)
    answers = ReportView.of(run.report).answers_sha256
    if not _projects_signatures(run.report):
        return declarations, signers, answers
    try:
        derived = rederive(run, run.keys, allow_jku=True)
    except Exception:  # noqa: BLE001 - a run this version cannot read again keeps what it states
        return declarations, signers, answers
    declarations, signers = _stated_marks(derived) or (declarations, signers)
    answered = derived.get("answers_sha256")
    return declarations, signers, answered if isinstance(answered, str) else answers
