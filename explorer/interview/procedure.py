"""The interview as procedure (the interview extension, section 8): fetch, ask, probe, and re-run on conflict.

This module does the I/O and nothing else. Per attempt it finds the card, reads it only far
enough to know what to fetch next (a `jku` key set when allowed, every committed proposal, the
OpenClasp public card and key when declared, the JSON-RPC endpoint), asks the five questions
twice and probes the closure. The documents the card names are fetched while the first round is
asked (neither needs the other; with credentials to install, the documents come first so they
never carry them), and each round's calls go out together. Every judgement, from "is the
signature valid" to the verdict, belongs to the pure `explorer.core.evaluate.evaluate`, which
sees nothing but the recorded exchanges and the keys: that is what lets `verify --offline`
rebuild the same report from a transcript.

Time is bounded on purpose. Each request is bounded by `Options.timeout`; the first round of
questions is asked before the second and the probes, and if every call of a round failed (an agent that
accepts connections and never answers), or every one was answered HTTP 5xx or 429 (an agent that
is down), the run stops there and is reported, instead of paying the timeout again for the second
round, the probes and a re-run. A hanging agent therefore ends within about twice the timeout.
The whole run, re-runs included, has one deadline besides (`run_deadline`: `Options.deadline`,
else DEADLINE_FACTOR x the timeout) that every request shares (`explorer.net.http.Deadline`), so
an agent answering each request just under the timeout, or a card naming many key sets,
proposals or discovery documents, cannot hold a run longer either (CONTRACT.md). What can be
fetched at once is: the key sets, the proposals and the discovery documents are each fetched
together, beside the first round.

Secrets (the user's headers) go only to the card's origin (for a card read from a file, to its
JSON-RPC endpoint's origin); a jku, proposal or OpenClasp host elsewhere never sees them.
Credentials for the card's security schemes (`Options.secrets`, see `explorer.net.auth`) are
chosen once the card is read, which is itself fetched without them, and go only to the JSON-RPC
interface's origin; the client secret goes to a token URL the card names only when the card
earns it (`explorer.core.token_trust`, with the user's keys and the `jku` sets this attempt
fetched). When every question of the first round is refused with 401 or 403 the run
stops there: the questions could not be put (verdict `unreachable`, finding `auth_required`).
"""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

from explorer import __version__
from explorer.core import attestation
from explorer.core.card import Card, CardError, parse_card
from explorer.core.evaluate import FAMILY_CARD, UNDEFINED_METHOD, UNMATCHED_SELECTOR, evaluate
from explorer.core.findings import QUESTIONS
from explorer.core.jsonshape import mapping_of, member
from explorer.core.openclasp import KEY_PATH, classify_reference
from explorer.core.outage import all_down
from explorer.core.rederive import rederive
from explorer.core.run import Exchange, Run
from explorer.core.security import read_security
from explorer.core.signatures import jku_urls, signature_kids
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.core.token_trust import Vouch, fetched_key_sets, vouch_for
from explorer.core.verdict import ROLES
from explorer.core.when import stamp
from explorer.interview.options import Options
from explorer.net.auth import SHARED_TOKENS, AuthSession
from explorer.net.discovery import CARD_REQUEST_HEADERS, card_for_version, discover_card, is_url
from explorer.net.gate import HostGate
from explorer.net.http import Deadline, Fetcher, Limits
from explorer.net.jsonrpc import call_headers, rpc_body
from explorer.net.keys import load_keys, user_keys
from explorer.net.origins import is_loopback_host, origin, site_of

MAX_PROPOSALS = 16  # a card cannot make the verifier fetch the whole internet
MAX_JKU = 4
# A run's deadline, unless `Options.deadline` sets one: this many times the per-request timeout
# (docs/CONTRACT.md). An honest agent answering every request just under the timeout is asked in
# about three of them (the card, the first round beside the documents, the second round with the
# probes), five with a discovery document and a token to fetch first; an agent that stalls, or a
# card naming more than the procedure can fetch at once, is cut here instead of holding the run
# for dozens of timeouts.
DEADLINE_FACTOR = 6

Stop = Literal["asked", "unreachable", "not_offered", "no_jsonrpc"]


@dataclass(frozen=True)
class Progress:
    """One step of a running interview, for a status line or a log."""

    step: str
    question: str | None
    attempt: int
    message: str
    request: bool = False  # the outcome of one request (a status line's worth, not a note for a log)


ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class _Call:
    purpose: str
    question: str | None
    method: str
    params: Mapping[str, Any] | None  # None: the request carries no `params` member
    activated: bool


def _calls(round_number: int) -> list[_Call]:
    return [_Call(f"ask:{q}#{round_number}", q, f"interview/{q}", {}, True) for q in QUESTIONS]


PROBES: tuple[_Call, ...] = (
    _Call("probe:undefined_method", None, UNDEFINED_METHOD, {}, True),
    _Call("probe:unmatched_selector", "usage", "interview/usage", {"skill": UNMATCHED_SELECTOR}, True),
    _Call("probe:unactivated_call", "identity", "interview/identity", {}, False),
    _Call("probe:unactivated_call_no_params", "identity", "interview/identity", None, False),
)


def probes_for(card: Card) -> list[_Call]:
    """The probes of one attempt: the closure probes and the unactivated calls, and the
    valid-selector probe (`interview/usage` with the first declared skill id in card order, which
    must be answered, not refused) when the card declares a skill."""
    calls = list(PROBES)
    if card.skill_ids:
        valid = _Call("probe:valid_selector", "usage", "interview/usage", {"skill": card.skill_ids[0]}, True)
        calls.insert(2, valid)
    return calls


def run_deadline(options: Options) -> float:
    """The seconds a whole run may take: `Options.deadline`, else DEADLINE_FACTOR x the timeout."""
    return options.deadline if options.deadline is not None else DEADLINE_FACTOR * options.timeout


def default_runner() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


class _Teller:
    """Sends Progress for one attempt; a failing callback never breaks the interview. Messages
    quote what agents sent (URLs, errors), so each is cleaned of the run's secrets (`clean`)."""

    def __init__(self, callback: ProgressCallback | None) -> None:
        self._callback = callback
        self.attempt = 1
        self.clean: Callable[[str], str] = str

    def __call__(
        self, step: str, message: str, question: str | None = None, *, request: bool = False
    ) -> None:
        if self._callback is None:
            return
        try:
            self._callback(Progress(step, question, self.attempt, self.clean(message), request))
        except Exception:  # noqa: BLE001 - a UI hook must not abort a verification
            self._callback = None


def _failed_at_transport(ex: Exchange) -> bool:
    return ex.error is not None and ex.error != "body_too_large"


def _auth_refused(ex: Exchange) -> bool:
    return ex.error is None and ex.status in (401, 403)


def _outcome(ex: Exchange) -> str:
    if ex.error is not None:
        return ex.error
    return f"HTTP {ex.status} in {ex.elapsed_ms:.0f} ms"


# --- what a card asks us to fetch ------------------------------------------------------------


def jku_refusal(url: str) -> str | None:
    """Why a jku may not be fetched: https only, plain http only on loopback."""
    scheme = urlsplit(url).scheme.lower()
    if scheme == "https":
        return None
    if scheme == "http" and is_loopback_host(url):
        return None
    return "a jku is fetched only over https (or plain http on loopback)"


def proposal_urls(card: Card) -> list[str]:
    out: list[str] = []
    for entry in card.terms:
        for proposal in entry.proposals:
            if isinstance(proposal.url, str) and proposal.url not in out:
                out.append(proposal.url)
    return out


def _endpoint(card: Card, card_ex: Exchange) -> tuple[str, str] | None:
    """The JSON-RPC URL (absolute) and protocol family the interview is asked over."""
    iface = card.jsonrpc
    if iface is None:
        return None
    try:
        url = iface.url if card_ex.method == "FILE" else urljoin(card_ex.url, iface.url)
    except ValueError:  # a malformed URL in the card: asked as written, each call records why it fails
        url = iface.url
    return (url, iface.family) if is_url(url) else None


# --- one attempt -----------------------------------------------------------------------------


class _Attempt:
    def __init__(
        self,
        fetcher: Fetcher,
        target: str,
        options: Options,
        attempt: int,
        tell: _Teller,
        keys: Mapping[str, Any] | None = None,
    ) -> None:
        self.fetcher = fetcher
        self.target = target
        self.options = options
        self.attempt = attempt
        self.tell = tell
        self.keys = keys  # the user's trusted keys: what may vouch for a token URL the card names

    async def run(self) -> Stop:
        card_ex, via = await discover_card(
            self.fetcher,
            self.target,
            attempt=self.attempt,
            openclasp_base=self.options.openclasp_base,
            say=lambda message: self.tell("card", message),
        )
        if not card_ex.usable:
            self.tell("card", f"no usable card ({_outcome(card_ex)}); stopping")
            return "unreachable"
        try:
            doc = strict_parse(card_ex.response_body, max_bytes=self.options.max_bytes)
            card = parse_card(doc)
        except (StrictJsonError, CardError) as exc:
            self.tell("card", f"the card cannot be read: {exc}; stopping")
            return "unreachable"
        self.tell("card", f"card from {card_ex.url} ({via}); layout {card.layout}")
        endpoint = _endpoint(card, card_ex)
        home = card_ex.url if card_ex.method != "FILE" else (endpoint[0] if endpoint else None)
        self.fetcher.set_secret_origin(home)
        # The key set, the proposals and the OpenClasp documents are fetched while the first
        # round of questions is asked: neither waits for the other, so the run pays one wait
        # for both instead of two in a row. When credentials are to be installed the documents
        # are fetched first, as before, so they never carry the interface's credentials.
        async with asyncio.TaskGroup() as group:
            documents = group.create_task(self._documents(doc, card, card_ex, endpoint))
            if self._has_credentials():
                await documents
            return await self._interview(doc, card, card_ex, endpoint)

    async def _documents(
        self, doc: Mapping[str, Any], card: Card, card_ex: Exchange, endpoint: tuple[str, str] | None
    ) -> None:
        await asyncio.gather(
            self._jwks(doc),
            self._proposals(card),
            self._openclasp(card),
            self._family_card(card, card_ex, endpoint),
        )

    async def _family_card(self, card: Card, card_ex: Exchange, endpoint: tuple[str, str] | None) -> None:
        """The card as served to the protocol version the interview calls speak, when that is
        not the version it was fetched with: an SDK's compatibility layer may serve v0.3 clients
        a translation, and the agent answers about the card its caller was shown."""
        if card.interview is None or endpoint is None or card_ex.method == "FILE":
            return
        version = call_headers(endpoint[1], activated=False)["A2A-Version"]
        if version == CARD_REQUEST_HEADERS["A2A-Version"]:
            return
        ex = await card_for_version(
            self.fetcher, card_ex.url, version, purpose=FAMILY_CARD, attempt=self.attempt
        )
        self.tell(
            "card", f"the card as served to A2A-Version {version} clients: {_outcome(ex)}", request=True
        )

    def _has_credentials(self) -> bool:
        secrets = self.options.secrets
        return secrets is not None and bool(secrets.values() or secrets.oauth2)

    async def _interview(
        self, doc: Mapping[str, Any], card: Card, card_ex: Exchange, endpoint: tuple[str, str] | None
    ) -> Stop:
        if card.interview is None:
            self.tell("card", "the card does not declare the interview extension; nothing is asked")
            return "not_offered"
        if endpoint is None:
            self.tell("card", "the card offers no JSON-RPC interface; the interview cannot be asked")
            return "no_jsonrpc"
        url, family = endpoint
        if self.fetcher.has_secrets and origin(url) != self.fetcher.secret_origin:
            self.tell("ask", f"your headers are not sent to {origin(url)}: they go only to the card's origin")
        auth = await self._authenticate(doc, card_ex.url, url, card.jsonrpc.pointer if card.jsonrpc else None)
        if auth is False:
            self.tell("auth", "no credentials for the interview calls; stopping")
            return "unreachable"
        first = await self._round(url, family, _calls(1))
        if all(_auth_refused(ex) for ex in first) and auth is not None and auth.from_cache:
            self.tell("auth", "the cached access token was refused; requesting a new one")
            if not await auth.ensure(renew=True):
                return "unreachable"
            first = await self._round(url, family, _calls(1))
        if all(_failed_at_transport(ex) for ex in first):
            self.tell("ask", "every call of the first round failed; stopping")
            return "unreachable"
        if all(_auth_refused(ex) or _failed_at_transport(ex) for ex in first):
            self.tell("auth", "every call of the first round was refused (HTTP 401/403); stopping")
            return "unreachable"
        if all_down(first):
            self.tell(
                "ask",
                "every call of the first round was answered HTTP 5xx or 429; the agent is down, "
                "not dishonest; stopping",
            )
            return "unreachable"
        if auth is not None and not auth.valid_now() and not await auth.ensure():
            return "unreachable"
        rest = await self._round(url, family, _calls(2) + probes_for(card), first_id=len(first) + 1)
        if all(_failed_at_transport(ex) for ex in rest[: len(QUESTIONS)]):
            self.tell("ask", "every call of the second round failed; stopping")
            return "unreachable"
        return "asked"

    async def _authenticate(
        self, doc: Mapping[str, Any], card_url: str, endpoint: str, interface: str | None
    ) -> AuthSession | None | Literal[False]:
        """The attempt's credentials installed for `endpoint` (named by the card's member at
        `interface`): the session, None when the user gave none, False when they may not go there
        or a token was needed and could not be had."""
        security = read_security(doc)
        secrets = self.options.secrets
        if secrets is None or not self._has_credentials():
            if security.declared and not security.satisfiable():
                self.tell("auth", "the card declares only security schemes the explorer cannot satisfy")
            return None
        session = AuthSession(
            self.fetcher,
            secrets,
            self.options.tokens or SHARED_TOKENS,
            attempt=self.attempt,
            say=lambda message: self.tell("auth", message),
        )
        # The key sets the card's jku served (this attempt's, fetched before any credential) only
        # let the check see a signature fail as the report will; they never vouch for anything.
        mine = [e for e in self.fetcher.exchanges if e.attempt == self.attempt]
        jku = fetched_key_sets(mine)

        def vouch(pointer: str) -> Vouch:
            return vouch_for(doc, pointer, self.keys, jku)

        return session if await session.start(security, card_url, endpoint, vouch, interface) else False

    async def _round(
        self, url: str, family: str, calls: Sequence[_Call], first_id: int = 1
    ) -> list[Exchange]:
        async def one(call: _Call, request_id: int) -> Exchange:
            step = "probe" if call.purpose.startswith("probe:") else "ask"
            ex = await self.fetcher.post(
                url,
                rpc_body(request_id, call.method, call.params),
                purpose=call.purpose,
                attempt=self.attempt,
                headers=call_headers(family, activated=call.activated),
                credentials=True,  # only the calls: never the card, key set or proposals
            )
            label = call.purpose.split(":", 1)[1]
            self.tell(step, f"{label}: {_outcome(ex)}", call.question, request=True)
            return ex

        return list(await asyncio.gather(*(one(c, first_id + i) for i, c in enumerate(calls))))

    async def _jwks(self, doc: Mapping[str, Any]) -> None:
        urls = jku_urls(doc)
        if urls and not self.options.allow_jku:
            # Advice only where the jku would help: not when the user's keys hold a signer's kid.
            held = {key.get("kid") for key in (self.keys or {}).get("keys") or () if isinstance(key, Mapping)}
            if held.isdisjoint(signature_kids(doc)):
                self.tell("jwks", "the card names a jku key set; not fetched (allow it with --allow-jku)")
            return
        fetchable = []
        for url in urls[:MAX_JKU]:
            refusal = jku_refusal(url)
            if refusal is not None:
                self.tell("jwks", f"jku {url} not fetched: {refusal}")
            else:
                fetchable.append(url)

        async def one(url: str) -> None:
            ex = await self.fetcher.get(url, purpose="jwks", attempt=self.attempt)
            self.tell("jwks", f"key set from the card's own jku {url}: {_outcome(ex)}", request=True)

        await asyncio.gather(*(one(u) for u in fetchable))  # neither needs another: all at once

    async def _proposals(self, card: Card) -> None:
        urls = proposal_urls(card)
        if len(urls) > MAX_PROPOSALS:
            self.tell(
                "proposal", f"the card commits to {len(urls)} proposals; fetching the first {MAX_PROPOSALS}"
            )
        fetchable = [u for u in urls[:MAX_PROPOSALS] if is_url(u)]
        for url in urls[:MAX_PROPOSALS]:
            if url not in fetchable:
                self.tell("proposal", f"proposal url {url!r} is not an http(s) URL; not fetched")

        async def one(url: str) -> None:
            ex = await self.fetcher.get(url, purpose="proposal", attempt=self.attempt)
            self.tell("proposal", f"proposal {url}: {_outcome(ex)}", request=True)

        await asyncio.gather(*(one(u) for u in fetchable))

    async def _openclasp(self, card: Card) -> None:
        ext = card.openclasp
        if ext is None:
            return
        card_url = mapping_of(ext.params).get("openClaspCardUrl")
        if not isinstance(card_url, str) or not is_url(card_url):
            self.tell("openclasp", "the OpenClasp entry names no public card URL")
            return
        ex = await self.fetcher.get(card_url, purpose="openclasp:public_card", attempt=self.attempt)
        self.tell("openclasp", f"OpenClasp public card {card_url}: {_outcome(ex)}", request=True)
        if not ex.usable:
            return
        key_url = f"{site_of(card_url)}{KEY_PATH}"
        try:
            public = strict_parse(ex.response_body, max_bytes=self.options.max_bytes)
        except StrictJsonError:
            public = None
        named = member(public, "verification", "verificationKeyUrl")
        if isinstance(named, str) and named:
            try:
                key_url = urljoin(card_url, named)
            except ValueError:  # a malformed URL in the agent's document: fetched as written, and fails
                key_url = named
        if not is_url(key_url):
            self.tell("openclasp", f"OpenClasp key URL {key_url!r} is not an http(s) URL; not fetched")
            return
        key_ex = await self.fetcher.get(key_url, purpose="openclasp:key", attempt=self.attempt)
        self.tell("openclasp", f"OpenClasp key {key_url}: {_outcome(key_ex)}", request=True)


# --- the whole run ---------------------------------------------------------------------------


async def _trusted_keys(items: Sequence[Any], limits: Limits, tell: _Teller) -> dict[str, Any]:
    """The user's keys as one public JWKS. Raises KeysError for an unusable source."""
    sources = [item for item in items if isinstance(item, str)]
    loaded: dict[str, Any] = {"keys": []}
    notes: list[str] = []
    if sources:
        loaded, notes = await load_keys(
            sources, Limits(timeout=limits.timeout, public_only=limits.public_only, deadline=limits.deadline)
        )
    keys, dropped = user_keys(items, loaded)
    for note in (*notes, *dropped):
        tell("keys", note)
    return keys


def _has_errors(report: Mapping[str, Any]) -> bool:
    return any(isinstance(f, Mapping) and f.get("severity") == "error" for f in report.get("findings") or [])


def _evaluate(
    exchanges: Sequence[Exchange],
    keys: Mapping[str, Any],
    target: str,
    ran_by: Mapping[str, Any],
    started_at: str,
    finished_at: str,
) -> dict[str, Any]:
    report = evaluate(
        list(exchanges),
        dict(keys),
        target=target,
        ran_by=dict(ran_by),
        started_at=started_at,
        finished_at=finished_at,
        explorer_version=__version__,
    )
    # Every report says whether the run is signed; signing (explorer.evidence) replaces this.
    return attestation.apply(report, attestation.unsigned(report, live=True))


def failed_report(target: str, options: Options, error: str) -> dict[str, Any]:
    """The report of an interview that raised (a bug of ours, never the agent's doing: network
    trouble is in a report, not raised): unreachable, nothing asked, `error` naming what failed,
    and every member the contract requires, so a sweep's NDJSON line is still a complete report."""
    role = options.role if options.role in ROLES else "self"
    ran_by = {"name": options.runner or default_runner(), "role": role}
    now = stamp()
    report = _evaluate([], {}, target, ran_by, now, now)
    return {**report, "error": f"the interview could not be run: {error}"}


async def run_interview(
    target: str, options: Options, progress: ProgressCallback | None = None, *, gate: HostGate | None = None
) -> Run:
    """Run the whole procedure against a target and return the Run (cancellable as a task).

    `gate` is a sweep's per-host bound on requests in flight, shared by all its interviews.

    Raises KeysError when a key source in `options.keys` cannot be used and ValueError for an
    unknown role; network trouble never raises, it is in the report.
    """
    if options.role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {options.role!r}")
    tell = _Teller(progress)
    started = stamp()
    limits = Limits(
        timeout=options.timeout,
        max_bytes=options.max_bytes,
        public_only=options.public_only,
        deadline=Deadline.start(run_deadline(options)),
    )
    keys = await _trusted_keys(options.keys, limits, tell)
    ran_by = {"name": options.runner or default_runner(), "role": options.role}
    # Before the card is known, secrets may go only where the user pointed, and not to an
    # OpenClasp platform that merely resolves a reference to someone else's card.
    plain_url = is_url(target) and classify_reference(target).kind == "other"
    secret_origin = target if plain_url else None
    report: dict[str, Any] | None = None
    credentials = options.secrets.values() if options.secrets is not None else ()
    fetcher = Fetcher(
        limits,
        secret_headers=dict(options.headers),
        secret_origin=secret_origin,
        secrets=credentials,
        gate=gate,
    )
    tell.clean = fetcher.clean_text
    async with fetcher:
        attempt = 1
        while True:
            tell.attempt = attempt
            stop = await _Attempt(fetcher, target, options, attempt, tell, keys).run()
            if stop != "asked" or attempt > options.reruns:
                report = None
                break
            this_attempt = [e for e in fetcher.exchanges if e.attempt == attempt]
            report = _evaluate(this_attempt, keys, target, ran_by, started, stamp())
            if not _has_errors(report):
                break
            tell("rerun", "error findings on this attempt; fetching and asking again (churn check)")
            attempt += 1
        exchanges = tuple(fetcher.exchanges)
    if report is None or attempt > 1:
        # The report of a single clean attempt already covers every exchange; otherwise all
        # attempts are judged together (the verdict depends on their order).
        report = _evaluate(exchanges, keys, target, ran_by, started, stamp())
    tell("done", f"verdict: {report.get('verdict')}")
    return Run(report=report, exchanges=exchanges, keys=keys)


def run_interview_sync(target: str, options: Options, progress: ProgressCallback | None = None) -> Run:
    """`run_interview` for synchronous callers (not from inside a running event loop)."""
    return asyncio.run(run_interview(target, options, progress))


def reverify_offline(run: Run) -> Run:
    """The report this run's own exchanges and keys give (no network): what its maker's trust
    gave them, so that a report a transcript states can be checked against it (`history
    import`). The keys a run carries are data, not trust: what a reader is shown is derived under
    the reader's own keys (`explorer.evidence.reading`). Raises TranscriptError for a stated label (target,
    `ran_by`, times) of the wrong type."""
    report = rederive(run, run.keys, allow_jku=True)
    report = attestation.apply(report, attestation.unsigned(report, live=False))
    return Run(report=report, exchanges=run.exchanges, keys=run.keys)
