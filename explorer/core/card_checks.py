"""The card and the documents it declares, judged for one attempt (a part of `explorer.core.evaluate`).

This is the report's `card` member and what the card commits to, rebuilt from recorded exchanges:
how the card was found and whether it could be read strictly, its signatures, which card the
answers are compared with (`FAMILY_CARD`, docs/CONTRACT.md "Which card the answers are compared
with"), the terms extension and each committed proposal, the reputation record, and the OpenClasp
attestation (`extension_results` and the `extensions` findings). Each function writes into the
attempt's `Attempt` record and returns what the later parts need, so `evaluate` can run the card
checks first and hand their results to the questions and probes as plain values.

Reading of the texts where they are silent: terms entries that are malformed commit to nothing,
but the card still *carries* terms, so a `declared: false` terms answer is still
`terms_declared_wrong` (the flag `check_terms` returns).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from explorer.core import pointer as jp
from explorer.core.attempt import Attempt, last_of, parse_body, show, transport_code
from explorer.core.card import WELL_KNOWN, Card, Extension, parse_card
from explorer.core.card_schema import CardProblem
from explorer.core.declarations import Equivalence, card_digests, signers_of
from explorer.core.diff import CardPair
from explorer.core.findings import finding
from explorer.core.openclasp import consistency_problems, verify_attestation
from explorer.core.run import REDACTED, Exchange
from explorer.core.signatures import verify_card
from explorer.core.sow import ProposalCheck, check_proposal
from explorer.core.strict_json import StrictJsonError, describe_type
from explorer.core.strict_json import parse as strict_parse
from explorer.core.token_trust import fetched_key_sets

# The card served to the protocol version the interview calls speak, when that is not the version
# the card was fetched with for its signatures (docs/CONTRACT.md, "Which card the answers are
# compared with").
FAMILY_CARD = "card:family"
UNSIGNED = "the card carries no signatures"  # `card_unsigned`, before any projection was compared


# --- the card --------------------------------------------------------------------------------


def _discovered_via(exs: Sequence[Exchange], card_ex: Exchange | None) -> str | None:
    if card_ex is None:
        return None
    if card_ex.method == "FILE":
        return "file"
    if any(e.purpose == "openclasp:resolve" for e in exs):
        return "openclasp"
    path = urlsplit(card_ex.url).path
    for known in WELL_KNOWN:
        if path.endswith(known):
            return known
    return "card-url"


def card_section(exs: Sequence[Exchange], card_ex: Exchange | None, via: str | None) -> dict[str, Any]:
    """The report's `card` member before the card is read: where it came from, every other member empty."""
    return {
        "url": card_ex.url if card_ex is not None else None,
        "discovered_via": via or _discovered_via(exs, card_ex),
        "layout": None,
        "sha256": None,
        "declarations_sha256": None,
        "name": None,
        "jsonrpc_url": None,
        "protocol_version": None,
        "compared_layout": None,
        "compared_sha256": None,
        "compared_served_to": None,
        "signature": {
            "status": "unverifiable",
            "form": None,
            "alg": None,
            "kid": None,
            "key_source": None,
            "signatures": [],
            "unsigned_members": [],
        },
        "signers": [],
        "interview": {"declared": False, "required": None},
        "terms": {"declared": False, "proposals": []},
        "reputation": None,
        "problems": [],
    }


def read_card(a: Attempt, exs: Sequence[Exchange], card_ex: Exchange | None) -> dict[str, Any] | None:
    """The card document, or None after reporting why there is no usable card."""
    if card_ex is None:
        tried = [f"{show(e.url)} ({e.problem() or 'no card'})" for e in exs if e.purpose == "card-discovery"]
        a.add("card_unreachable", "no card was fetched" + (": tried " + ", ".join(tried) if tried else ""))
        return None
    tried = [f"{show(e.url)} ({e.problem()})" for e in exs if e.purpose == "card-discovery"]
    earlier = f" (also tried {', '.join(tried)})" if tried else ""
    problem = card_ex.problem()
    where = show(card_ex.url)
    # One cause, one message: a refused connection or an HTTP error is said once, by
    # card_unreachable; a more specific cause (timeout, refused redirect, blocked address, size
    # cap) keeps its own code with the detail, and card_unreachable only names it.
    if problem is not None and (card_ex.error is not None or card_ex.truncated):
        code = transport_code(problem)
        if code == "transport_error":
            a.add("card_unreachable", f"no card at {where}: {show(problem, 300)}{earlier}")
            return None
        a.add(code, f"card {where}: {show(problem, 300)}")
        if code == "body_too_large":
            a.add("card_malformed", f"the card at {where} exceeds the size cap")
        else:
            a.add("card_unreachable", f"no card at {where} ({code}){earlier}")
        return None
    if problem is not None:
        a.add("card_unreachable", f"no card at {where}: {problem}{earlier}")
        return None
    try:
        doc = strict_parse(card_ex.response_body)
    except StrictJsonError as exc:
        a.add("card_malformed", f"the card at {where} is refused: {exc} ({exc.reason})")
        return None
    if not isinstance(doc, dict):
        a.add("card_malformed", f"the card at {where} is a JSON {describe_type(doc)}, not an object")
        return None
    return doc


def _version_sent(ex: Exchange | None) -> str | None:
    """The `A2A-Version` a card request announced (None for a card read from a file)."""
    if ex is None or ex.method == "FILE":
        return None
    return next((value for name, value in ex.request_headers if name.lower() == "a2a-version"), None)


def compared_card(
    a: Attempt, exs: Sequence[Exchange], doc: dict[str, Any], card_ex: Exchange | None
) -> tuple[dict[str, Any], CardPair | None]:
    """The card the answers are compared with: the card served to the protocol version the
    interview calls speak (`FAMILY_CARD`, fetched when that is not the version the card was
    fetched with), and the signed card beside it when the two differ (docs/CONTRACT.md, "Which
    card the answers are compared with"). The report's card says which (`compared_*`)."""
    a.card.update(
        compared_layout=a.card.get("layout"),
        compared_sha256=a.card_sha,
        compared_served_to=_version_sent(card_ex),
    )
    family_ex, _ = last_of(exs, FAMILY_CARD)
    if family_ex is None:
        return doc, None
    version = _version_sent(family_ex) or "0.3"
    problem = family_ex.problem()
    family: Any = None
    if problem is None:
        try:
            family = strict_parse(family_ex.response_body)
        except StrictJsonError as exc:
            problem = f"refused: {exc}"
    if problem is None and not isinstance(family, dict):
        problem = f"a JSON {describe_type(family)}, not an object"
    if problem is not None:
        a.card["problems"].append(
            CardProblem(
                "family_card_unreadable",
                "",
                "v0.3" if version.startswith("0.") else "v1.0",
                f"the card served to A2A-Version {version} could not be read "
                f"({show(problem, 300)}); the answers are compared with the card fetched "
                "for its signatures",
            ).to_json()
        )
        return doc, None
    sha, declared = card_digests(family)
    a.card["compared_served_to"] = version
    if sha is None or sha == a.card_sha:
        return doc, None  # the same card whoever asks
    a.card.update(
        compared_layout=parse_card(family).layout, compared_sha256=sha, declarations_sha256=declared
    )
    return family, CardPair(doc, version, _version_sent(card_ex) or "1.0")


def check_signature(
    a: Attempt, exs: Sequence[Exchange], doc: dict[str, Any], keys: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The card's signatures checked under the trusted keys (and any fetched jku key sets); the
    keys that signed it (`card.signers`), and the judge of signatures against it (`a.equivalence`)."""
    jku_keys = fetched_key_sets(exs)
    report = verify_card(doc, keys or {}, jku_keys=jku_keys)
    sig = report.to_json()
    a.card["signature"] = sig
    a.card["signers"] = signers_of(report)
    a.equivalence = Equivalence(doc, report, keys, jku_keys)
    status = sig.get("status")
    why = _signature_detail(sig)
    if status == "unsigned":
        a.add("card_unsigned", UNSIGNED)  # `unsigned_compared` adds the projections, once there are any
    elif status == "invalid":
        a.add(
            "card_signature_invalid",
            "a card signature fails with a known key under every payload form" + why + _scrubbed_note(exs),
            member="/signatures",
        )
    elif status == "unverifiable":
        a.add(
            "card_signature_unverifiable",
            "the card signature cannot be checked (no key for its kid, or "
            "an algorithm outside the allow-list)" + why + _unread_key_sets(exs),
            member="/signatures",
        )
    return sig


def _unread_key_sets(exs: Sequence[Exchange]) -> str:
    """Why a key set the card's `jku` names gave no key: each fetch that failed, with its reason
    (a refused redirect, a timeout, an HTTP status), so the finding says what a log line would."""
    failed = [(ex.url, ex.problem()) for ex in exs if ex.purpose == "jwks" and ex.problem() is not None]
    if not failed:
        return ""
    said = "; ".join(f"{show(url, 200)} gave no keys ({show(problem, 200)})" for url, problem in failed[:3])
    more = f"; {len(failed) - 3} more" if len(failed) > 3 else ""
    return f"; jku key set {said}{more}"


def unsigned_compared(a: Attempt) -> None:
    """`card_unsigned` completed once the answers are judged: it speaks of card projections only
    when some were compared (a card that declares nothing, or an agent that answered nothing, was
    compared with nothing)."""
    compared = sum(
        1
        for entry in (*a.questions.values(), *a.probes)
        for p in entry.get("projections") or ()
        if p.get("document") == "card" and p.get("status") in ("match", "mismatch")
    )
    if not compared:
        return
    said = (
        f"the {compared} card projections were compared with unsigned bytes"
        if compared > 1
        else "the one card projection was compared with unsigned bytes"
    )
    a.findings[:] = [
        replace(f, detail=f"{UNSIGNED}; {said}") if f.code == "card_unsigned" else f for f in a.findings
    ]


def _scrubbed_note(exs: Sequence[Exchange]) -> str:
    """Why a signature may fail over the recorded card: a secret of the run was replaced in it."""
    card_ex, _ = last_of(exs, "card")
    if card_ex is None or REDACTED.encode() not in card_ex.response_body:
        return ""
    return (
        f"; the card as recorded holds {REDACTED} where a secret of this run was replaced (an agent "
        "that echoes one, or a header value that also occurs in the card): the bytes signed did not"
    )


def _signature_detail(sig: Mapping[str, Any]) -> str:
    detail = sig.get("detail")
    return f" ({show(detail, 300)})" if detail else ""


# --- declared extensions -----------------------------------------------------------------------


def check_terms(
    a: Attempt, exs: Sequence[Exchange], card: Card
) -> tuple[set[tuple[str, str]], dict[tuple[str, str], ProposalCheck], bool]:
    """The terms entries and their proposals: the (url, digest) pairs committed, each committed
    proposal checked, and whether the card carries terms at all."""
    entries = card.terms
    committed: list[tuple[str, str, Any, Any]] = []
    for entry in entries:
        for problem in entry.problems:
            a.add("terms_entry_invalid", show(problem, 300), member=entry.extension.pointer)
        for ref in entry.proposals:
            for problem in ref.problems:
                a.add("terms_entry_invalid", show(problem, 300), member=ref.pointer)
            if not entry.problems and not ref.problems and ref.url and ref.digest:
                committed.append((ref.url, ref.digest, ref.sow, ref.offering))
    if card.interview is not None and not entries:
        a.add(
            "terms_not_declared",
            "the interview is declared but the terms extension is not; the terms "
            "answer must then say declared: false (interview extension 3.3 and 4.4)",
        )
    proposals: dict[tuple[str, str], ProposalCheck] = {}
    for url, digest, sow, offering in committed:
        if (url, digest) in proposals:
            continue
        ex = _proposal_exchange(exs, url)
        if ex is None and card.interview is None:
            continue  # nothing is asked, so the proposals were never needed
        fetch_problem = "not fetched" if ex is None else ex.problem()
        body = ex.response_body if ex is not None and fetch_problem is None else None
        check = check_proposal(
            body, url=url, committed_digest=digest, fetch_error=fetch_problem, sow=sow, offering=offering
        )
        proposals[(url, digest)] = check
        a.findings.extend(check.findings)
    a.card["terms"] = {"declared": bool(entries), "proposals": [c.to_json() for c in proposals.values()]}
    return {(u, d) for u, d, _, _ in committed}, proposals, bool(entries)


def _proposal_exchange(exs: Sequence[Exchange], url: str) -> Exchange | None:
    found = [e for e in exs if e.purpose == "proposal" and e.url == url]
    return found[-1] if found else None


def _raw_entry(doc: Mapping[str, Any], ext: Extension) -> Any:
    resolution = jp.resolve(doc, ext.pointer)
    return resolution.value if resolution.found else None


def check_reputation(a: Attempt, doc: Mapping[str, Any], card: Card) -> None:
    """The reputation record the card points at, shown verbatim."""
    ext = card.reputation
    if ext is None:
        return
    entry = _raw_entry(doc, ext)
    a.card["reputation"] = entry
    a.extension_results["reputation"] = entry
    a.extensions.append(
        finding(
            "reputation_declared",
            "the card points at a reputation record (shown verbatim; nothing is fetched). An interview "
            "measures consistency with declarations, not conduct: what counterparties concluded about the "
            "agent is the reputation record's business (interview extension 9.1)",
            member=ext.pointer,
        )
    )


def check_openclasp(
    a: Attempt,
    exs: Sequence[Exchange],
    doc: dict[str, Any],
    card: Card,
    card_ex: Exchange | None,
    sig_status: Any,
) -> None:
    """The OpenClasp extension: the platform's attestation of its public card, and that card's
    consistency with the A2A card (`extension_results.openclasp`, `extensions` findings)."""
    ext = card.openclasp
    if ext is None:
        return
    params = ext.params if isinstance(ext.params, Mapping) else {}
    result: dict[str, Any] = {
        "uri": ext.uri,
        "agent_id": params.get("agentId"),
        "card_url": params.get("openClaspCardUrl"),
        "public_card_url": None,
        "key_url": None,
        "attestation": None,
        "consistent": None,
        "problems": [],
        "verified": False,
    }
    a.extension_results["openclasp"] = result

    def add(code: str, detail: str) -> None:
        a.extensions.append(finding(code, detail, member=ext.pointer))

    if sig_status == "unsigned":
        add(
            "openclasp_unsigned_card",
            "the A2A card carries no signatures; its trust comes from the platform attestation",
        )
    public_ex, _ = last_of(exs, "openclasp:public_card")
    if public_ex is None or public_ex.problem() is not None:
        why = "not fetched" if public_ex is None else public_ex.problem()
        add("openclasp_card_unreachable", f"the OpenClasp public card could not be read: {show(why, 300)}")
        return
    result["public_card_url"] = public_ex.url
    public_card = parse_body(public_ex.response_body)
    if not isinstance(public_card, dict):
        add(
            "openclasp_card_unreachable",
            f"the OpenClasp public card at {show(public_ex.url)} is not a JSON object",
        )
        return
    key_ex, _ = last_of(exs, "openclasp:key")
    key_doc: Any = None
    if key_ex is not None:
        result["key_url"] = key_ex.url
    if "platformAttestation" not in public_card:
        add("openclasp_attestation_missing", "the OpenClasp public card carries no platformAttestation")
    elif key_ex is None or key_ex.problem() is not None:
        why = "not fetched" if key_ex is None else key_ex.problem()
        add(
            "openclasp_key_unreachable",
            f"the platform's verification key could not be read: {show(why, 300)}",
        )
    else:
        key_doc = parse_body(key_ex.response_body)
        att = verify_attestation(public_card, key_doc)
        result["attestation"] = att.to_json()
        if att.status == "verified":
            result["verified"] = True
            add(
                "openclasp_verified",
                f"the OpenClasp public card is attested by the platform: {show(att.detail, 300)}",
            )
        elif att.status == "bad_key":
            add(
                "openclasp_key_unreachable",
                f"the platform's verification key is unusable: {show(att.detail, 300)}",
            )
        elif att.status == "missing":
            add("openclasp_attestation_missing", show(att.detail, 300))
        else:
            add("openclasp_attestation_invalid", show(att.detail, 300))
    a2a_url = card_ex.url if card_ex is not None and card_ex.method != "FILE" else None
    problems = consistency_problems(doc, ext.params, public_card, a2a_card_url=a2a_url)
    result["problems"] = problems
    result["consistent"] = not problems
    for problem in problems:
        add("openclasp_inconsistent", show(problem, 300))
