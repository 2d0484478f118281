"""Authenticating interview calls the way the card says: which credential goes where, and tokens.

The card's security declaration (`core.security`) decides what is sent: an API key in the
header its scheme names, a bearer token as `Authorization: Bearer`, or an OAuth 2.0 access
token obtained with the client credentials grant (RFC 6749 section 4.4) from the flow's
`tokenUrl` (or `--oauth2-token-url`; for an OpenID Connect scheme, the `token_endpoint` of its
discovery document, fetched without credentials) for the requested scopes (else the scopes the card's
requirement lists). `AuthSession.start` makes that choice once the card is read and hands the
headers to the `Fetcher`, which sends them only to the JSON-RPC interface's origin.

The OAuth 2.0 protocol pieces come from Authlib (`authlib.oauth2`: the token request body, the
client authentication encodings, token expiry), but the request itself goes through the
explorer's own `Fetcher`, so the token endpoint gets the same timeout, size cap, redirect rules
and, under `--public-only`, the same transport rules as every other request, and the exchange is
recorded (as `auth:token`, with the client secret and the issued tokens replaced by
`<redacted>`) for the evaluation to judge offline. Client authentication is HTTP Basic first
(RFC 6749 section 2.3.1); a server that answers `invalid_client` or 401 is asked again with the
credentials in the body.

A token URL (or OpenID Connect discovery URL) the card chose is a place the client secret would
go, so `Judge` asks `core.token_trust` first: it passes only when a signature under a key the
user trusts covers the scheme, or, with nothing vouching for the card, when it is on the
agent's own origin (the card's); never while a card signature fails. A refusal is recorded as a token
request not made (`auth_token_url_untrusted`), and a URL the user pinned is used as given.
The JSON-RPC interface is the card's choice too, and the place every other credential goes (a
bearer token, an API key, the access token), so one rule decides it before anything is sent or
asked for: the origin the user pinned (`Secrets.interface_origin`), or as for a token URL. A
refusal is recorded as a credential not sent (`auth:interface`, `auth_origin_untrusted`), and no
token is requested.

`Secrets`, the resolved credential values of one run, is declared here, beside what consumes it
(`explorer.config.credentials` builds it from references; `procedure.Options.secrets` carries it).
What counts as a usable token answer is core's rule (`core.auth_findings.token_problem`), the
same one the evaluation reports `auth_failed` by.

Tokens live in a `TokenCache`, keyed by the agent's origin, the token URL, the client, a digest
of its secret and the scopes: one token serves every call of a run, every attempt, and every
interview of the same agent in a sweep, until it expires (then a new one is fetched). The cache
is in memory only; nothing is written.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urljoin, urlsplit

from explorer.core.auth_findings import (
    INTERFACE_PURPOSE,
    TOKEN_PURPOSE,
    UNTRUSTED,
    oauth_error,
    token_problem,
)
from explorer.core.jsonshape import mapping_of
from explorer.core.run import Exchange
from explorer.core.scrub import MIN_LENGTH, secret_parts, too_short
from explorer.core.security import Scheme, Security
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.core.token_trust import INTERFACE_PIN_HINT, PIN_HINT, Vouch, card_url_refusal, interface_refusal
from explorer.net.http import Fetcher
from explorer.net.origins import is_loopback_host, origin

if TYPE_CHECKING:
    # Authlib is imported where a token is requested or read, not here: a run without OAuth 2.0
    # settings (nearly every run) never needs it, and importing it is a noticeable slice of a
    # short `verify`'s start-up.
    from authlib.oauth2.rfc6749 import OAuth2Token

_TOKEN_MEMBERS = ("access_token", "refresh_token", "id_token")
DISCOVERY_PURPOSE = "auth:discovery"
Say = Callable[[str], None]


@dataclass(frozen=True)
class Secrets:
    """Resolved credential values for one run; repr never shows a value."""

    bearer: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scopes: tuple[str, ...] = ()
    token_url: str | None = None
    interface_origin: str | None = None  # the origin the user pinned for the JSON-RPC interface

    def values(self) -> tuple[str, ...]:
        """Every secret value held (what must never be written anywhere)."""
        return tuple(v for v in (self.bearer, self.api_key, self.client_secret) if v)

    @property
    def oauth2(self) -> bool:
        return self.client_id is not None and self.client_secret is not None


@dataclass(frozen=True)
class TokenRequest:
    """What one OAuth 2.0 client credentials grant asks for."""

    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...] = ()

    def key(self, agent_origin: str | None) -> tuple[str, ...]:
        digest = hashlib.sha256(self.client_secret.encode("utf-8")).hexdigest()
        return (agent_origin or "", self.token_url, self.client_id, digest, " ".join(self.scopes))


@dataclass(frozen=True)
class Choice:
    """What to send for one card: fixed headers, and/or a token to obtain first."""

    scheme_names: tuple[str, ...] = ()
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    token: TokenRequest | None = None
    problem: str | None = None  # why a declared token request cannot be made (recorded as auth_failed)
    note: str = ""
    problem_url: str | None = None  # the token URL the refused request would have gone to
    untrusted: bool = False  # the problem is the card's URL not being vouched for


class Judge:
    """Whether the card may choose a URL a credential goes to (`core.token_trust`), for the agent
    whose own origin is `agent`'s. `vouch` says what the card's signatures say for the member at
    a pointer; each member's is asked once."""

    def __init__(self, vouch: Callable[[str], Vouch] | None, agent: str | None) -> None:
        self._vouch = vouch
        self._agent = agent
        self._seen: dict[str, Vouch] = {}

    def _vouch_at(self, pointer: str | None) -> Vouch:
        if self._vouch is None or pointer is None:
            return Vouch("unvouched", "the card's signatures were not checked")
        if pointer not in self._seen:
            self._seen[pointer] = self._vouch(pointer)
        return self._seen[pointer]

    def refusal(self, scheme: Scheme, url: str, what: str) -> str | None:
        """Why the client secret may not go to `url`, which `scheme` names (its `what`)."""
        return card_url_refusal(self._vouch_at(scheme.pointer), url, self._agent, what)

    def interface_refusal(self, pointer: str | None, url: str, pinned: str | None) -> str | None:
        """Why no credential may go to the JSON-RPC interface `url`, the member at `pointer`."""
        return interface_refusal(self._vouch_at(pointer), url, self._agent, pinned)


def _lifetime_leeway(token: Mapping[str, Any]) -> int:
    """Seconds before expiry at which a token counts as expired: a tenth of its life, at least 1 s
    (so a token is never sent in its last second, when a round of calls could outlive it) and at
    most 30 s."""
    try:
        lifetime = int(token.get("expires_in") or 0)
    except (TypeError, ValueError):
        lifetime = 0
    return max(1, min(30, lifetime // 10))


class TokenCache:
    """Access tokens by (agent origin, token URL, client, secret digest, scopes), until expiry.

    Safe to share between interviews in one process, also across event loops (each loop gets
    its own lock per key), so two interviews of one agent in a sweep fetch one token between them.
    """

    def __init__(self) -> None:
        self._tokens: dict[tuple[str, ...], OAuth2Token] = {}
        # Per event loop (a lock belongs to one loop), forgotten with the loop.
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, ...], asyncio.Lock]]
        self._locks = weakref.WeakKeyDictionary()
        self._guard = threading.Lock()
        self.fetches = 0  # tokens obtained, for tests and the sweep summary

    def lock(self, key: tuple[str, ...]) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._guard:
            return self._locks.setdefault(loop, {}).setdefault(key, asyncio.Lock())

    def valid(self, key: tuple[str, ...]) -> OAuth2Token | None:
        token = self._tokens.get(key)
        if token is None or token.is_expired(leeway=_lifetime_leeway(token)):
            return None
        return token

    def put(self, key: tuple[str, ...], token: OAuth2Token) -> None:
        self._tokens[key] = token
        self.fetches += 1

    def drop(self, key: tuple[str, ...]) -> None:
        self._tokens.pop(key, None)


SHARED_TOKENS = TokenCache()


# --- choosing what to send -------------------------------------------------------------------


def _join(base: str, url: str) -> str:
    """`url` resolved against `base`; as written when the card's URL is malformed (`http://[::1`),
    so `token_url_refusal` refuses it with a finding instead of a ValueError ending the run."""
    try:
        return urljoin(base, url)
    except ValueError:
        return url


def token_url_refusal(url: str) -> str | None:
    """Why a client secret may not be sent to this token URL: https, or plain http on loopback."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port outside 0-65535
    except ValueError as exc:
        return f"the token URL {url[:300]} is not a valid URL ({exc}); the client secret is not sent"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and is_loopback_host(url):
        return None
    return (
        f"the token URL {url[:300]} is not https (plain http only on loopback); the client secret is not sent"
    )


def _fits(scheme: Scheme | None, secrets: Secrets) -> bool:
    if scheme is None or not scheme.supported:
        return False
    if scheme.kind == "apiKey":
        return secrets.api_key is not None
    if scheme.kind == "bearer":
        return secrets.bearer is not None
    return secrets.oauth2  # oauth2 with a clientCredentials flow, or OpenID Connect


def _first_way(security: Security, secrets: Secrets) -> dict[str, tuple[str, ...]] | None:
    """The way in (security requirement) `choose` takes: the first whose every scheme the
    credentials fit; None when there is none."""
    for way in security.alternatives():
        if way and all(_fits(security.schemes.get(name), secrets) for name in way):
            return way
    return None


def choose(security: Security, secrets: Secrets, card_url: str, judge: Judge | None = None) -> Choice:
    """What to send, given the card's declaration and the user's credentials.

    The first way in (a security requirement) whose every scheme the credentials satisfy wins.
    Otherwise nothing is sent and `note` says why. A card that declares no scheme gets nothing
    either: the card says where each credential goes, and in a sweep one `--bearer` serves many
    agents, so a token given for the agents that declare bearer must not reach those that do
    not. A person who wants a header sent regardless says so with `--header` (`env:VAR` values).
    A token URL the card chose is used only when `judge` passes it (none given: only one on the
    agent's own origin, which then cannot be known, so none).
    """
    judge = judge or Judge(None, None)
    for way in security.alternatives():
        schemes = [security.schemes.get(name) for name in way]
        if not way or not all(_fits(s, secrets) for s in schemes):
            continue
        headers: dict[str, str] = {}
        token = _Token()
        for scheme, scopes in zip(schemes, way.values(), strict=True):
            assert scheme is not None
            if scheme.kind == "apiKey" and scheme.header and secrets.api_key:
                headers[scheme.header] = secrets.api_key
            elif scheme.kind == "bearer" and secrets.bearer:
                headers["Authorization"] = f"Bearer {secrets.bearer}"
            elif scheme.kind in ("oauth2", "openIdConnect"):
                token = _token_request(scheme, secrets, scopes, card_url, judge)
        names = tuple(way)
        note = f"authenticating as the card's {', '.join(names)}"
        problem_url = token.url if token.problem else None
        return Choice(names, headers, token.request, token.problem, note, problem_url, token.untrusted)
    if not security.declared:
        return Choice(
            note="the card declares no security scheme, so no credential is sent (to send a header "
            "anyway: --header 'Authorization: Bearer env:VAR')"
        )
    declared = ", ".join(s.describe() for s in security.schemes.values()) or "none"
    return Choice(
        note=f"the credentials given fit none of the card's security requirements (declared: "
        f"{declared}); nothing is sent"
    )


@dataclass(frozen=True)
class _Token:
    """The token request for one scheme, or why it cannot be made, and the URL concerned."""

    request: TokenRequest | None = None
    problem: str | None = None
    url: str | None = None
    untrusted: bool = False


def _token_request(
    scheme: Scheme, secrets: Secrets, scopes: tuple[str, ...], card_url: str, judge: Judge
) -> _Token:
    """The token request, or why it cannot be made. A token URL the user pinned is used as given;
    one the card chose (or its discovery document named) only when `judge` passes it."""
    assert secrets.client_id is not None and secrets.client_secret is not None
    oidc = scheme.kind == "openIdConnect"
    if secrets.token_url:
        url = secrets.token_url
    else:
        base = card_url if _is_web(card_url) else ""
        discovery = _join(base, scheme.discovery_url) if oidc and scheme.discovery_url else None
        refused = judge.refusal(scheme, discovery, "openIdConnectUrl") if discovery else None
        if refused is not None:
            return _Token(problem=f"{refused}; no secret was sent; {PIN_HINT}", url=discovery, untrusted=True)
        if not scheme.token_url:
            where = (
                "the OpenID Connect discovery document names no usable token_endpoint"
                if oidc
                else "the card's OAuth 2.0 client credentials flow names no tokenUrl"
            )
            return _Token(problem=f"{where}; give one with --oauth2-token-url", url=card_url)
        url = _join(discovery or base, scheme.token_url)
        refused = judge.refusal(scheme, url, "OpenID Connect token endpoint" if oidc else "tokenUrl")
        if refused is not None:
            return _Token(problem=f"{refused}; no secret was sent; {PIN_HINT}", url=url, untrusted=True)
    refusal = token_url_refusal(url)
    if refusal is not None:
        return _Token(problem=refusal, url=url)
    wanted = secrets.scopes or scopes
    return _Token(TokenRequest(url, secrets.client_id, secrets.client_secret, tuple(wanted)), url=url)


# --- obtaining a token -------------------------------------------------------------------------


class _Members(list[tuple[str, Any]]):
    """A JSON object as its members in order, duplicates kept (json's `object_pairs_hook`)."""


def _is_token_name(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TOKEN_MEMBERS or lowered == "token" or lowered.endswith("_token")


def issued_secrets(ex: Exchange) -> list[str]:
    """Every token a token endpoint's answer hands out, however it is written: JSON (every member
    named like a token at any depth, each of duplicate members), or a form (`access_token=...`,
    as some servers answer). These are scrubbed before the exchange is recorded; what the answer
    is judged by (`core.auth_findings.token_problem`) stays strict."""
    body = ex.response_body
    if not body:
        return []
    found: list[str] = []
    try:
        doc = json.loads(body, object_pairs_hook=_Members)
    except (ValueError, RecursionError):
        doc = None
    if doc is not None:
        stack = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, _Members):
                for name, value in node:
                    if isinstance(value, str) and _is_token_name(name):
                        found.append(value)
                    else:
                        stack.append(value)
            elif isinstance(node, list):
                stack.extend(node)
        return found
    text = body.decode("utf-8", "replace")
    pairs = parse_qsl(text, keep_blank_values=True)
    return [value for name, value in pairs if value and _is_token_name(name)]


def _is_web(url: str) -> bool:
    return url.startswith(("http://", "https://"))


def _token_endpoint(ex: Exchange) -> str | None:
    """The `token_endpoint` of an OpenID Connect discovery document, when the exchange holds one."""
    if ex.problem() is not None:
        return None
    try:
        doc = strict_parse(ex.response_body)
    except StrictJsonError:
        return None
    found = mapping_of(doc).get("token_endpoint")
    return found if isinstance(found, str) and found else None


def _read_token(ex: Exchange) -> OAuth2Token | None:
    if token_problem(ex) is not None:
        return None
    from authlib.oauth2.rfc6749 import OAuth2Token

    try:
        return OAuth2Token(dict(strict_parse(ex.response_body)))
    except (StrictJsonError, TypeError, ValueError):
        return None


async def _ask_token(fetcher: Fetcher, request: TokenRequest, method: str, attempt: int) -> Exchange:
    from authlib.oauth2.auth import ClientAuth
    from authlib.oauth2.rfc6749.parameters import prepare_token_request

    body = prepare_token_request("client_credentials", scope=list(request.scopes) or None)
    client = ClientAuth(request.client_id, request.client_secret, method)
    url, headers, body = client.prepare("POST", request.token_url, {}, body)
    fetcher.scrub(part for value in headers.values() for part in secret_parts(value))  # Basic id:secret
    return await fetcher.post(
        url,
        body.encode("utf-8"),
        purpose=TOKEN_PURPOSE,
        attempt=attempt,
        headers={"Content-Type": "application/x-www-form-urlencoded", **headers},
        reveals=issued_secrets,
    )


async def fetch_token(fetcher: Fetcher, request: TokenRequest, attempt: int = 1) -> OAuth2Token | None:
    """One client credentials grant: HTTP Basic first, the request body when the server says so."""
    fetcher.scrub([request.client_secret])
    ex = await _ask_token(fetcher, request, "client_secret_basic", attempt)
    if ex.error is None and (ex.status == 401 or oauth_error(ex)[0] == "invalid_client"):
        ex = await _ask_token(fetcher, request, "client_secret_post", attempt)
    return _read_token(ex)


def record_refusal(
    fetcher: Fetcher,
    url: str,
    problem: str,
    attempt: int,
    *,
    untrusted: bool = False,
    purpose: str = TOKEN_PURPOSE,
) -> None:
    """Record a request that was not made, so the report (and an offline re-check) says why: a
    token request (`auth_token_url_untrusted` when the card's URL was not vouched for, else
    `auth_failed`), or, with `purpose` INTERFACE_PURPOSE, the credentials not sent to the
    interface (`auth_origin_untrusted`)."""
    error = f"{UNTRUSTED}{problem}" if untrusted else f"refused: {problem}"
    fetcher.record(Exchange(purpose=purpose, attempt=attempt, method="POST", url=url, error=error))


class AuthSession:
    """The credentials of one interview attempt: chosen once the card is read, renewed on expiry."""

    def __init__(
        self,
        fetcher: Fetcher,
        secrets: Secrets,
        tokens: TokenCache,
        *,
        attempt: int,
        say: Say,
    ) -> None:
        self.fetcher = fetcher
        self.secrets = secrets
        self.tokens = tokens
        self.attempt = attempt
        self.say = say
        self.choice: Choice | None = None
        self.endpoint: str | None = None
        self.from_cache = False

    @property
    def _key(self) -> tuple[str, ...] | None:
        if self.choice is None or self.choice.token is None:
            return None
        return self.choice.token.key(origin(self.endpoint) if self.endpoint else None)

    async def start(
        self,
        security: Security,
        card_url: str,
        endpoint: str,
        vouch: Callable[[str], Vouch] | None = None,
        interface: str | None = None,
    ) -> bool:
        """Choose and install the credentials for calls to `endpoint`; False when they may not go
        there (`auth_origin_untrusted`) or a token was needed and could not be had (the questions
        cannot be put). `vouch` says what the card's signatures, under the user's keys, say for
        the member at a pointer (`core.token_trust.vouch_for`); `interface` is the pointer of the
        member that names `endpoint`."""
        self.fetcher.scrub(self.secrets.values())
        self.endpoint = endpoint
        judge = Judge(vouch, card_url if _is_web(card_url) else endpoint)  # the agent's own origin
        if _first_way(security, self.secrets) is not None:  # something would be sent to `endpoint`
            refused = judge.interface_refusal(interface, endpoint, self.secrets.interface_origin)
            if refused is not None:
                problem = f"{refused}; nothing was sent; {INTERFACE_PIN_HINT}"
                record_refusal(
                    self.fetcher, endpoint, problem, self.attempt, untrusted=True, purpose=INTERFACE_PURPOSE
                )
                self.say(f"no credential sent: {problem}")
                return False
        if self.secrets.oauth2 and not self.secrets.token_url:
            security = await self._discover(security, card_url, judge)
        self.choice = choose(security, self.secrets, card_url, judge)
        self.say(self.choice.note)
        if self.choice.problem is not None:
            where = self.choice.problem_url or card_url
            untrusted = self.choice.untrusted
            record_refusal(self.fetcher, where, self.choice.problem, self.attempt, untrusted=untrusted)
            self.say(f"no access token: {self.choice.problem}")
            return False
        return await self.ensure()

    async def _discover(self, security: Security, card_url: str, judge: Judge) -> Security:
        """The declaration with the token endpoint of each OpenID Connect scheme that `choose`
        will use filled in from its discovery document (fetched without credentials, https or
        loopback http only, and only when the card may choose it: `judge`). Only the schemes of
        the way in the credentials fit are looked up, all at once: a card declaring forty
        schemes costs one round trip, not forty in a row."""
        schemes = dict(security.schemes)
        way = _first_way(security, self.secrets)

        async def one(name: str, scheme: Scheme, discovery_url: str) -> None:
            url = _join(card_url, discovery_url) if _is_web(card_url) else discovery_url
            if judge.refusal(scheme, url, "openIdConnectUrl") is not None:
                self.say(f"OpenID Connect discovery {url[:300]} not fetched: nothing vouches for it")
                return
            if token_url_refusal(url) is not None:
                self.say(f"OpenID Connect discovery {url[:300]} not fetched: not https (or loopback http)")
                return
            ex = await self.fetcher.get(url, purpose=DISCOVERY_PURPOSE, attempt=self.attempt)
            found = _token_endpoint(ex)
            said = "token endpoint found" if found else f"no token_endpoint ({ex.problem() or 'none named'})"
            self.say(f"OpenID Connect discovery {url[:300]}: {said}")
            if found:
                schemes[name] = replace(scheme, token_url=_join(url, found))

        wanted = [(name, security.schemes[name]) for name in way or ()]
        await asyncio.gather(
            *(
                one(name, scheme, scheme.discovery_url)
                for name, scheme in wanted
                if scheme.kind == "openIdConnect" and scheme.discovery_url
            )
        )
        return replace(security, schemes=schemes)

    async def ensure(self, *, renew: bool = False) -> bool:
        """Install a valid token (fetching one if there is none, it expired, or `renew`)."""
        choice = self.choice
        if choice is None:
            return True
        if choice.token is None:
            self.fetcher.set_auth(choice.headers, self.endpoint)
            return True
        key = self._key
        assert key is not None
        async with self.tokens.lock(key):
            if renew:
                self.tokens.drop(key)
            token = self.tokens.valid(key)
            self.from_cache = token is not None
            if token is None:
                self.say(f"requesting an access token from {choice.token.token_url}")
                token = await fetch_token(self.fetcher, choice.token, self.attempt)
                if token is None:
                    self.say("the token endpoint did not issue an access token")
                    return False
                if too_short(str(token["access_token"])):
                    self._refuse_short(choice.token.token_url, len(str(token["access_token"])))
                    return False
                self.tokens.put(key, token)
            else:
                self.fetcher.scrub([str(token["access_token"])])
        headers = {**choice.headers, "Authorization": f"Bearer {token['access_token']}"}
        self.fetcher.set_auth(headers, self.endpoint)
        return True

    def _refuse_short(self, url: str, length: int) -> None:
        """An access token too short to be told from ordinary text in what the agent sends back
        could not be kept out of the records, so it is never sent (`auth_failed` says why)."""
        problem = (
            f"the token endpoint issued an access token of {length} character(s); one under {MIN_LENGTH} "
            "cannot be kept out of what is recorded, so it is not sent"
        )
        record_refusal(self.fetcher, url, problem, self.attempt)
        self.say(f"no access token: {problem}")

    def valid_now(self) -> bool:
        """False when the installed token has expired (the caller then calls `ensure`)."""
        key = self._key
        return key is None or self.tokens.valid(key) is not None
