"""`interview-explorer card TARGET`: what a card declares and whether its signature holds.

A quick look before an interview: the layout, the interfaces (and which one the interview would
be asked over), the skills, the declared extensions (interview, terms with each committed
proposal, reputation, OpenClasp), each signature with the payload form it verified under, the
members that form leaves unsigned, integers JCS cannot compare exactly, and what the declared
documents say for each of the five questions (`explorer.core.declared`: the members a conformant
answer projects, whether or not the agent offers the interview). It reads a card file or makes the
card GETs discovery needs (a base URL tries `/.well-known/agent-card.json`, then
`/.well-known/agent.json`), plus the `--keys` URLs and the proposals the card's terms entries
commit to (at most `MAX_PROPOSALS`, without credentials), so the terms question can be read from
them; it never fetches a `jku` (`verify --allow-jku` does). A card read from a file stays offline:
its proposals are listed, not fetched, unless `--proposals fetch` asks for them (a card file is
often read precisely because nothing should be contacted); `--proposals skip` keeps a fetched
card's look to that one GET.

Exit status: 0 the card was read, 3 it could not be fetched or is not a JSON object, 2 usage
errors (an unreadable `--keys`, a broken config). Every agent-supplied string goes through
`safe_text` before it reaches the terminal; `--json` prints one object with ASCII escapes.
Heavy modules are imported inside `run()` so `--help` stays instant and textual never loads.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from explorer.commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_home_argument,
    add_setting_arguments,
    config_of,
    load_trusted_keys,
    plan_of,
    print_json,
    print_lines,
    say,
    timeout_hint,
)

if TYPE_CHECKING:
    from explorer.core.card import Card, Extension
    from explorer.core.signatures import SignatureReport
    from explorer.core.sow import ProposalCheck

COMMAND = "card"
EXIT_UNREADABLE = 3
MAX_CARD_BYTES = 8 * 1024 * 1024
MAX_PROPOSALS = 16  # as many as an interview fetches: a card cannot make this fetch the whole internet
SHOWN_DECLARED = 40  # members printed per question; `--json` has every one


class _Unreadable(Exception):
    """No card could be had from the target: exit status 3. `code` is the finding code."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="card file, card URL, base URL, or a config agent name")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument(
        "--proposals",
        choices=("auto", "fetch", "skip"),
        default="auto",
        help="fetch the proposals the card's terms entries commit to: auto (the default) when the "
        "card itself came over the network, fetch always, skip never",
    )
    add_setting_arguments(parser, COMMAND)
    add_home_argument(parser, "config lives", history=False)


def _sources(args: argparse.Namespace) -> tuple[str, list[str], float]:
    """The target to fetch, the key sources (config keys, the agent's keys, then --keys) and the
    timeout, planned as for `verify` but without credentials: the card is fetched without them."""
    target, options = plan_of(args, config_of(args), COMMAND, secrets=False, check=True)
    return target, [k for k in options.keys if isinstance(k, str)], options.timeout


async def _discover(target: str, timeout: float) -> tuple[Any, str, list[Any]]:
    """The card exchange, how it was found, and the earlier discovery tries that failed."""
    from explorer.net.discovery import discover_card
    from explorer.net.http import Fetcher, Limits

    async with Fetcher(Limits(timeout=timeout, max_bytes=MAX_CARD_BYTES)) as fetcher:
        exchange, via = await discover_card(fetcher, target)
        earlier = [e for e in fetcher.exchanges if e.purpose == "card-discovery"]
    return exchange, via, earlier


def _load(target: str, timeout: float) -> tuple[Any, str, str]:
    """(parsed card document, where it came from, how it was found); raises _Unreadable."""
    import asyncio

    from explorer.core.strict_json import StrictJsonError, describe_type
    from explorer.core.strict_json import parse as strict_parse
    from explorer.core.text import safe_text

    exchange, via, earlier = asyncio.run(_discover(target, timeout))
    where = safe_text(exchange.url, limit=300)
    also = "".join(f"; {safe_text(e.url, limit=300)} answered HTTP {e.status}" for e in earlier)
    problem = exchange.problem()
    if problem is not None:
        why = safe_text(problem, limit=300)
        if problem.startswith("timeout"):
            why += f"; {timeout_hint(timeout)}"
        raise _Unreadable("card_unreachable", f"no card at {where}: {why}{also}")
    try:
        doc = strict_parse(exchange.response_body, max_bytes=MAX_CARD_BYTES)
    except StrictJsonError as exc:
        raise _Unreadable("card_malformed", f"the card at {where} is not usable JSON: {exc}") from None
    if not isinstance(doc, dict):
        what = describe_type(doc)
        raise _Unreadable("card_malformed", f"the card at {where} is a JSON {what}, not an object")
    return doc, exchange.url, via


def _committed(card: Card) -> list[tuple[str, str, Any, Any]]:
    """(url, digest, sow, offering) of every well-formed commitment of the card's terms entries,
    once each, in card order."""
    out: list[tuple[str, str, Any, Any]] = []
    for entry in card.terms:
        for ref in entry.proposals:
            if entry.problems or ref.problems or not (ref.url and ref.digest):
                continue
            if all((ref.url, ref.digest) != (url, digest) for url, digest, _, _ in out):
                out.append((ref.url, ref.digest, ref.sow, ref.offering))
    return out


async def _fetch_proposals(urls: list[str], timeout: float) -> dict[str, Any]:
    """Each proposal URL's exchange, fetched at once."""
    import asyncio

    from explorer.net.http import Fetcher, Limits

    async with Fetcher(Limits(timeout=timeout, max_bytes=MAX_CARD_BYTES)) as fetcher:
        fetched = await asyncio.gather(*(fetcher.get(url, purpose="proposal") for url in urls))
    return dict(zip(urls, fetched, strict=True))


def _proposals(card: Card, timeout: float, *, fetch: bool) -> tuple[list[ProposalCheck], list[str]]:
    """The committed proposals, fetched and checked under their own procedure (the terms extension,
    sections 5 and 6): the terms question's declared documents; or, when not to `fetch`, none and
    the URLs that were left alone."""
    import asyncio

    from explorer.core.sow import check_proposal
    from explorer.net.discovery import is_url

    committed = _committed(card)[:MAX_PROPOSALS]
    if not fetch:
        return [], list(dict.fromkeys(url for url, _, _, _ in committed))
    urls = list(dict.fromkeys(url for url, _, _, _ in committed if is_url(url)))
    exchanges = asyncio.run(_fetch_proposals(urls, timeout)) if urls else {}
    checks = []
    for url, digest, sow, offering in committed:
        ex = exchanges.get(url)
        problem = "not an http(s) URL" if ex is None else ex.problem()
        body = ex.response_body if ex is not None and problem is None else None
        checks.append(
            check_proposal(
                body, url=url, committed_digest=digest, fetch_error=problem, sow=sow, offering=offering
            )
        )
    return checks, []


def run(args: argparse.Namespace) -> int:
    from explorer.core.canonical import CanonicalError, canonicalize, sha256_hex
    from explorer.core.card import parse_card, summary_json
    from explorer.core.declared import declared_projections
    from explorer.core.signatures import jku_urls, verify_card
    from explorer.core.strict_json import lossy_integers

    try:
        target, sources, timeout = _sources(args)
        keys = load_trusted_keys(sources, timeout, COMMAND)
        doc, url, via = _load(target, timeout)
    except UsageError as exc:
        say(str(exc), COMMAND)
        return EXIT_USAGE
    except _Unreadable as exc:
        say(exc.detail, COMMAND)
        if args.json:
            print_json({"target": args.target, "error": {"code": exc.code, "detail": exc.detail}})
        return EXIT_UNREADABLE

    card = parse_card(doc)
    report = verify_card(doc, keys)
    try:
        digest: str | None = sha256_hex(canonicalize(doc))
    except CanonicalError:
        digest = None
    lossy = lossy_integers(doc)
    jku = jku_urls(doc)
    fetch = args.proposals == "fetch" or (args.proposals == "auto" and via != "file")
    proposals, not_fetched = _proposals(card, timeout, fetch=fetch)
    declared = declared_projections(
        doc,
        proposals,
        card_signed=True
        if report.status == "verified"
        else None
        if report.status == "unverifiable"
        else False,
        unsigned_members=report.unsigned_members,
    )
    if args.json:
        out = {
            "target": args.target,
            "url": url,
            "discovered_via": via,
            "sha256": digest,
            "card": summary_json(card),
            "signature": report.to_json(),
            "jku": jku,
            "lossy_integers": lossy,
            "keys": {"sources": sources, "count": len(keys["keys"])},
            "proposals": [check.to_json() for check in proposals],
            "proposals_not_fetched": not_fetched,
            "declared": declared,
        }
        print_json(out, indent=2)
        return EXIT_OK
    lines = _text(card, report, url=url, via=via, digest=digest, lossy=lossy, jku=jku, keys=sources)
    declared_lines = _declared_lines(declared, proposals, not_fetched, offered=card.interview is not None)
    print_lines(lines + declared_lines)
    return EXIT_OK


# --- the human form ----------------------------------------------------------------------------


def _s(value: Any, limit: int = 200) -> str:
    from explorer.core.text import safe_text

    return safe_text(value, limit=limit)


def _ext_line(label: str, ext: Extension | None) -> str:
    if ext is None:
        return f"  {label:<11} not declared"
    required = "unset" if ext.required is None else str(ext.required).lower()
    return f"  {label:<11} declared at {ext.pointer} (required: {required})"


def _extension_lines(card: Card) -> list[str]:
    from explorer.core.card import INTERVIEW_URI, REPUTATION_URI, TERMS_URI

    lines = ["Extensions", _ext_line("interview", card.interview)]
    if card.interview is not None and card.interview.required is True:
        lines.append("              ! required must not be true (interview extension 3.1)")
    terms = card.terms
    if not terms:
        lines.append(f"  {'terms':<11} not declared")
    for entry in terms:
        spec = _s(entry.sow_spec, 60) if entry.sow_spec is not None else "missing"
        lines.append(
            f"  {'terms':<11} declared at {entry.extension.pointer} (sow_spec {spec}, "
            f"{len(entry.proposals)} proposal{'s' if len(entry.proposals) != 1 else ''})"
        )
        lines.extend(f"              ! {_s(p, 300)}" for p in entry.problems)
        for proposal in entry.proposals:
            lines.append(f"      {_s(proposal.url or '(no url)', 300)}")
            lines.append(f"        digest {_s(proposal.digest or '(none)', 100)}")
            if proposal.sow is not None or proposal.offering is not None:
                offering = _s(proposal.offering or "-", 100)
                if proposal.offering is not None and proposal.offering not in card.skill_ids:
                    offering += " (not a declared skill id)"
                lines.append(f"        sow {_s(proposal.sow or '-', 100)}, offering {offering}")
            lines.extend(f"        ! {_s(p, 300)}" for p in proposal.problems)
    reputation = card.reputation
    lines.append(_ext_line("reputation", reputation))
    if reputation is not None:
        lines.append(
            f"              params {_s(reputation.params, 300)} (shown, never fetched; an "
            "interview measures consistency, not conduct)"
        )
    openclasp = card.openclasp
    lines.append(_ext_line("openclasp", openclasp))
    if openclasp is not None:
        lines.append(f"              uri {_s(openclasp.uri, 200)}, params {_s(openclasp.params, 300)}")
    known = {INTERVIEW_URI, TERMS_URI, REPUTATION_URI}
    for ext in card.extensions:
        if ext.uri not in known and (openclasp is None or ext.pointer != openclasp.pointer):
            lines.append(f"  {'other':<11} {_s(ext.uri, 200)} at {ext.pointer}")
    return lines


def _signature_lines(report: SignatureReport, jku: list[str], keys: list[str]) -> list[str]:
    lines = [f"Signature  {report.status}" + (f" (payload form {report.form})" if report.form else "")]
    for check in report.checks:
        head = f"  #{check.index} {_s(check.alg or '?', 20)} kid {_s(check.kid or '?', 80)}: {check.status}"
        forms = ", ".join(check.forms) or check.form
        lines.append(head + (f" [{forms}]" if forms else ""))
        lines.append(f"      {_s(check.detail, 400)}")
    if report.status == "unsigned":
        lines.append("  the card carries no signatures; nothing in it is signed")
    elif report.status != "verified" and not keys:
        lines.append("  no trusted keys were given: pass --keys JWKS_FILE_OR_URL")
    for url in jku:
        lines.append(f"  the card names jku {_s(url, 300)} (not fetched here; `verify --allow-jku` does)")
    if report.status == "verified":
        if report.unsigned_members:
            lines.append(f"Not covered by the {report.form} payload ({len(report.unsigned_members)})")
            lines.extend(f"  {_s(m, 300)}" for m in report.unsigned_members)
        else:
            lines.append(f"Every served member is covered by the {report.form} payload")
    from explorer.core.view import Signature

    lines.extend(f"  {line}" for line in Signature.of(report.to_json()).stacks_lines(members=40))
    return lines


def _text(
    card: Card,
    report: SignatureReport,
    *,
    url: str,
    via: str,
    digest: str | None,
    lossy: list[str],
    jku: list[str],
    keys: list[str],
) -> list[str]:
    provider = card.provider
    lines = [
        f"Card       {_s(url, 300)} (via {_s(via, 60)})",
        f"sha256     {digest or 'n/a (no canonical form)'}",
        f"Layout     {card.layout}",
        f"Name       {_s(card.name) if card.name is not None else '(none)'}",
        f"Version    {_s(card.version, 60) if card.version is not None else '(none)'}",
    ]
    if isinstance(provider, Mapping):
        org, home = provider.get("organization", "?"), provider.get("url", "")
        lines.append(f"Provider   {_s(org, 100)} {_s(home, 200)}")
    lines.append(f"Interfaces ({len(card.interfaces)})")
    asked = card.jsonrpc if card.interview is not None else None  # where the interview is asked, if it is
    for iface in card.interfaces:
        mark = "*" if asked is not None and iface == asked else " "
        version = _s(iface.protocol_version, 20) if iface.protocol_version else "-"
        lines.append(f"  {mark} {_s(iface.binding, 30)} {version} {_s(iface.url, 300)}  {iface.pointer}")
    if card.interview is None:
        lines.append("  interview not declared: nothing is asked over this card")
    elif asked is not None:
        lines.append(f"  * the interview is asked here (JSON-RPC, A2A-Version {asked.family})")
    else:
        lines.append("  no JSON-RPC interface: the interview cannot be asked over this card")
    lines.append(f"Skills ({len(card.skills)})")
    for skill in card.skills:
        name = f" ({_s(skill.name, 80)})" if skill.name else ""
        lines.append(f"  {_s(skill.id, 100)}{name}: {_s(skill.description or '', 200)}")
    lines.extend(_extension_lines(card))
    lines.extend(_signature_lines(report, jku, keys))
    if lossy:
        lines.append(f"Integers beyond +-(2^53-1), compared only approximately by JCS ({len(lossy)})")
        lines.extend(f"  {_s(p, 300)}" for p in lossy[:50])
    lines.extend(_problem_lines(card))
    return lines


def _problem_lines(card: Card) -> list[str]:
    """Each problem against the A2A definitions of the card's layouts: its pointer, the layout whose
    definition it breaks, what is wrong (`explorer.core.card_schema`; warnings, never a verdict)."""
    from explorer.core.card_schema import card_problems

    problems = card_problems(card)
    if not problems:
        return ["Problems   none against the A2A definitions of its layout"]
    lines = [f"Problems ({len(problems)}; warnings against the A2A definitions, never part of a verdict)"]
    for problem in problems:
        where = _s(problem.member, 200) if problem.member else "(the card)"
        lines.append(f"  {where} [{_s(problem.layout, 10)} {_s(problem.code, 40)}]")
        lines.append(f"      {_s(problem.detail, 300)}")
    return lines


def _declared_lines(
    declared: Mapping[str, list[dict[str, Any]]],
    proposals: list[ProposalCheck],
    not_fetched: list[str],
    *,
    offered: bool,
) -> list[str]:
    """The five questions as the declared documents answer them: each member a conformant answer
    projects, its value on one line, and whether a verified signature covers it."""
    from explorer.core.canonical import CanonicalError, canonical_text

    asked = "asked by verify" if offered else "the card does not offer the interview, so nothing is asked"
    lines = [f"Declared answers (what the declared documents say for each question; {asked})"]
    for question, members in declared.items():
        lines.append(f"  {question} ({len(members)} member{'s' if len(members) != 1 else ''})")
        source = None
        for entry in members[:SHOWN_DECLARED]:
            if entry["document"] == "proposal" and (entry.get("url"), entry.get("digest")) != source:
                source = (entry.get("url"), entry.get("digest"))
                lines.append(f"    proposal {_s(source[0], 300)} ({_s(source[1], 80)})")
            try:
                value = canonical_text(entry["value"])
            except CanonicalError:
                value = repr(entry["value"])
            signed = {True: "signed", False: "unsigned", None: "signature unchecked"}[entry.get("signed")]
            indent = "      " if source is not None else "    "
            lines.append(f"{indent}{_s(entry['member'], 200)} ({signed}) = {_s(value, 160)}")
        if len(members) > SHOWN_DECLARED:
            lines.append(f"    ... {len(members) - SHOWN_DECLARED} more (--json lists every one)")
        if question == "terms" and not members:
            lines.extend(_terms_silence(proposals, not_fetched))
    return lines


def _terms_silence(proposals: list[ProposalCheck], not_fetched: list[str]) -> list[str]:
    """Why the terms question has nothing declared: no commitment, proposals left unfetched, or
    proposals not as committed."""
    if not_fetched:
        return [
            f"    proposal {_s(url, 200)}: not fetched (--proposals fetch fetches it)" for url in not_fetched
        ]
    if not proposals:
        return ["    no terms entry commits to a proposal: a conformant answer is declared false"]
    return [
        f"    proposal {_s(check.url, 200)}: {_s(check.status.replace('_', ' '), 40)}, nothing to project"
        for check in proposals
    ]
