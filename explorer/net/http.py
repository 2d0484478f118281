"""The one HTTP client of the explorer: every byte from an agent comes through `Fetcher`.

Agents are untrusted (docs/PROTOCOL.md section 8), so each request is bounded in every direction:
connect and read timeouts plus one overall deadline for the whole body (a server trickling a
byte a second is cut at the timeout, not kept alive by it), a streamed size cap, redirects
followed by hand and only within the origin, 429 honoured once and only for a short wait, and
in public-only mode the OpenClasp extension's transport rules (https, port 443, public addresses,
DNS pinned, no redirects).

Nothing here raises for network or HTTP trouble: every outcome is an `Exchange` whose
`status`/`error` say what happened, because a failed fetch is evidence the report must show,
not an exception to unwind. Secret headers (the user's `--header` values) go only to
`secret_origin` and are recorded as `<redacted>`, so a transcript never holds a secret.
Credentials chosen from the card's security schemes (`set_auth`) have their own origin, the
JSON-RPC interface's, and go only on requests that ask for them (`post(..., credentials=True)`,
the interview calls): a card, key set, proposal or discovery document served from that same
origin is still fetched without them, on a re-run too. Every secret value the fetcher knows
(`scrub`: the header values, the credentials, the tokens a token endpoint issues) is replaced by
`<redacted>` in every field of every exchange it keeps, however an agent re-encodes it when it
echoes it back (`explorer.core.scrub`), and callers get the exchange as kept, so nothing they
print or judge holds a secret either; only a token request's caller sees the answer as received.
No cookie is ever kept (neither client has a jar that stores one), so no state set by one origin
travels to another.

A 429 that is waited out leaves two exchanges with the same purpose and attempt: the 429 and
the retry. Readers take the last one as the answer and may report the first as rate limiting.

A run's deadline (`Limits.deadline`, a `Deadline`) bounds all its requests together: each one
gets what is left of it when that is less than its own timeout, and is recorded with the error
`deadline: ...` when that is what cut it; one asked for after the deadline is recorded as not sent,
without touching the network. So a run ends by its deadline whatever the agent does, and the
transcript says exactly which requests the deadline cut.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import ssl
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from explorer import __version__
from explorer.core.run import DEADLINE, REDACTED, Exchange
from explorer.core.scrub import Scrubber, secret_parts, too_short
from explorer.core.when import stamp, utc_now
from explorer.net.gate import HostGate
from explorer.net.origins import Blocked, PinnedTarget, origin, resolve_public
from explorer.net.plain import Answer, PlainError, PlainPool, Target, plain_target

if TYPE_CHECKING:
    import http.cookiejar

    import httpx

MIB = 1024 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CONNECT_FAILURES = (OSError, ValueError, OverflowError, IndexError)
# Connections one Fetcher may have open at once, and keep idle, on either client. More than one
# attempt ever has in flight (16 proposals, 4 key sets, the OpenClasp and the v0.3 card beside a
# round of 5 calls, then 10), so no request of a run waits for a connection of its own client: a
# request's timeout is the agent's time, not a queue of ours.
MAX_CONNECTIONS = 40
MAX_IDLE = 10
# What an answer hands out that must be scrubbed from then on (an OAuth token endpoint's tokens).
Reveals = Callable[[Exchange], Iterable[str]]
# Never sent anywhere in clear in a transcript, whoever supplied them.
_ALWAYS_REDACTED = frozenset({"authorization", "proxy-authorization", "cookie"})


@dataclass(frozen=True)
class Deadline:
    """When a whole run must be over: `seconds` after it started (`at`, on the monotonic clock).

    Shared by every request of one run (`Limits.deadline`): each is bounded by what is left of it
    as well as by its own timeout, a request asked for once it has passed is not sent, and a
    `Retry-After` is waited out only when the wait fits in what is left.
    """

    seconds: float
    at: float

    @classmethod
    def start(cls, seconds: float) -> Deadline:
        return cls(seconds, time.monotonic() + seconds)

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def cut(self) -> str:
        """The error of a request cut at the deadline."""
        return f"{DEADLINE}: cut at the run's deadline ({self.seconds:g} s)"

    def unsent(self) -> str:
        """The error of a request not sent because the deadline had passed."""
        return f"{DEADLINE}: not sent, the run's deadline ({self.seconds:g} s) had passed"


@dataclass(frozen=True)
class Limits:
    """Bounds for every request. `timeout` covers connect plus the whole body; `deadline`, when
    set, bounds every request of the run together."""

    timeout: float = 10.0
    max_bytes: int = 8 * MIB
    max_redirects: int = 3
    public_only: bool = False
    max_retry_wait: float = 5.0
    deadline: Deadline | None = None


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Retry-After as seconds (delta or HTTP date); None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text[:12]))  # a 1000-digit number is still just "too long"
    import email.utils  # only a 429 with a date needs it

    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or utc_now())).total_seconds())


@dataclass(frozen=True)
class _Ask:
    """One logical request as the caller made it; a followed redirect asks again with `replace`."""

    method: str
    url: str
    body: bytes | None
    purpose: str
    attempt: int
    headers: Mapping[str, str] | None
    credentials: bool = False  # carry the `set_auth` credentials (the interview calls only)


@dataclass
class _Hop(Answer):
    """What one request on the wire produced (before redirects and retries are decided)."""

    error: str | None = None


class Fetcher:
    """An async HTTP client with the explorer's limits; use as `async with Fetcher(...) as f`."""

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        secret_headers: Mapping[str, str] | None = None,
        secret_origin: str | None = None,
        secrets: Iterable[str] = (),
        verify: ssl.SSLContext | bool = True,
        gate: HostGate | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self._gate = gate  # a sweep's per-host bound, shared by all its interviews
        self._verify = verify
        self.exchanges: list[Exchange] = []
        self._secrets = dict(secret_headers or {})
        self._secret_origin = origin(secret_origin) if secret_origin else None
        self._clients: dict[str, httpx.AsyncClient] = {}
        self._plain: PlainPool | None = None
        self._open = False
        self._auth: dict[str, str] = {}
        self._auth_origin: str | None = None
        # Every secret of the run: never recorded, however an agent re-encodes it (core.scrub).
        self._scrubber = Scrubber(secrets)
        # A header value under MIN_LENGTH (`X-Debug: 1`; planning refuses one under a credential's
        # name) cannot be told from ordinary text: it is recorded as `<redacted>` where it is sent,
        # and not looked for in what comes back.
        parts = (part for value in self._secrets.values() for part in secret_parts(value))
        self.scrub(part for part in parts if not too_short(part))

    async def __aenter__(self) -> Fetcher:
        self._open = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self._open = False
        clients, self._clients = self._clients, {}
        plain, self._plain = self._plain, None
        if plain is not None:
            await plain.aclose()
        for client in clients.values():
            await client.aclose()

    def _client_for(self, scheme: str) -> httpx.AsyncClient:
        """One httpx client per scheme, made on first use: loading the CA bundle for TLS costs a
        noticeable slice of a short run, and a loopback agent over plain HTTP never needs it
        (nor httpx at all, unless a proxy or an unusual URL sends it this way)."""
        import httpx

        key = "https" if scheme == "https" else "http"
        client = self._clients.get(key)
        if client is None:
            t = self.limits.timeout
            # The plain-HTTP client gets a TLS context that trusts nothing, so if a bug ever
            # routed an https URL to it, certificate checks would fail rather than be skipped.
            verify = self._verify if key == "https" else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            if verify is True:
                verify = shared_tls(trust_env=not self.limits.public_only)
            limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_IDLE)
            # Proxies from the environment would defeat address pinning in public-only mode.
            trust_env = not self.limits.public_only
            client = httpx.AsyncClient(
                timeout=httpx.Timeout(t, connect=t, read=t, write=t, pool=t),
                follow_redirects=False,
                trust_env=trust_env,
                limits=limits,
                verify=verify,
                cookies=_no_cookies(),
            )
            self._clients[key] = client
        return client

    def set_secret_origin(self, url: str | None) -> None:
        """Move where the secret headers may go (the procedure learns the card's origin late)."""
        self._secret_origin = origin(url) if url else None

    @property
    def secret_origin(self) -> str | None:
        return self._secret_origin

    def set_auth(self, headers: Mapping[str, str], url: str | None) -> None:
        """Credential headers for requests to `url`'s origin only (recorded as `<redacted>`)."""
        self._auth = dict(headers)
        self._auth_origin = origin(url) if url and headers else None
        self.scrub(part for value in headers.values() for part in secret_parts(value))

    def scrub(self, values: Iterable[str]) -> None:
        """Never record these values: each is replaced by `<redacted>` in every exchange kept,
        in whatever JSON or URL encoding it comes back (`explorer.core.scrub`)."""
        self._scrubber.add(values)

    def clean_text(self, text: str) -> str:
        """`text` without any secret of this run (progress messages quote what agents sent)."""
        return self._scrubber.clean_text(text)

    def record(self, exchange: Exchange) -> Exchange:
        """Keep an exchange made without a request (a card file, a token request refused), cleaned
        of every secret as every fetched one is; returns it as kept."""
        kept = self._cleaned(exchange)
        self.exchanges.append(kept)
        return kept

    @property
    def has_secrets(self) -> bool:
        return bool(self._secrets)

    def relabel(self, since: int, purpose: str) -> None:
        """Give every exchange recorded from index `since` on a new purpose (a failed try of
        card discovery becomes `card-discovery` once a later try is the one that counts)."""
        self.exchanges[since:] = [replace(e, purpose=purpose) for e in self.exchanges[since:]]

    async def get(
        self, url: str, *, purpose: str, attempt: int = 1, headers: Mapping[str, str] | None = None
    ) -> Exchange:
        return await self._request(_Ask("GET", url, None, purpose, attempt, headers))

    async def post(
        self,
        url: str,
        body: bytes,
        *,
        purpose: str,
        attempt: int = 1,
        headers: Mapping[str, str] | None = None,
        reveals: Reveals | None = None,
        credentials: bool = False,
    ) -> Exchange:
        """A POST. With `credentials`, the `set_auth` credentials go along when the URL is on
        their origin. `reveals` names the secrets an answer hands out (an OAuth token endpoint's
        tokens): they are scrubbed from then on, and the caller alone gets the answer as
        received; otherwise the caller gets the exchange as recorded."""
        ask = _Ask("POST", url, body, purpose, attempt, headers, credentials)
        return await self._request(ask, reveals)

    async def _request(self, ask: _Ask, reveals: Reveals | None = None) -> Exchange:
        deadline = self.limits.deadline
        if deadline is not None and deadline.remaining() <= 0:
            exchange = self._unsent(ask, deadline)
        else:
            exchange = await self._follow(ask)
        if exchange.status == 429 and exchange.error is None:
            wait = retry_after_seconds(exchange.header("retry-after"))
            fits = deadline is None or (wait is not None and wait < deadline.remaining())
            if wait is not None and wait <= self.limits.max_retry_wait and fits:
                self.record(exchange)
                await asyncio.sleep(wait)
                exchange = await self._follow(ask)
        if reveals is not None:
            self.scrub(reveals(exchange))
            self.record(exchange)
            return exchange
        return self.record(exchange)

    def _unsent(self, ask: _Ask, deadline: Deadline) -> Exchange:
        """The record of a request the run's deadline kept from being sent."""
        _sent, recorded = self._headers_for(ask)
        return Exchange(
            purpose=ask.purpose,
            attempt=ask.attempt,
            method=ask.method,
            url=ask.url,
            request_headers=recorded,
            request_body=ask.body,
            error=deadline.unsent(),
            started_at=stamp(),
        )

    def _cleaned(self, ex: Exchange) -> Exchange:
        """The exchange with every secret replaced, in every recorded field (an agent may echo one
        in a header name, a redirect's Location, an error it caused, a URL it made us fetch)."""
        if not self._scrubber:
            return ex
        text = self._scrubber.clean_text
        return replace(
            ex,
            url=text(ex.url),
            request_headers=tuple((text(n), text(v)) for n, v in ex.request_headers),
            request_body=self._scrubber.clean(ex.request_body) if ex.request_body else ex.request_body,
            response_headers=tuple((text(n), text(v)) for n, v in ex.response_headers),
            response_body=self._scrubber.clean(ex.response_body),
            error=text(ex.error) if ex.error is not None else None,
        )

    async def _follow(self, ask: _Ask) -> Exchange:
        """One logical request: follows same-origin redirects and returns the last hop."""
        hops = 0
        while True:
            sent, recorded = self._headers_for(ask)
            started = stamp()
            t0 = time.perf_counter()
            hop = await self._hop(ask, sent)
            exchange = Exchange(
                purpose=ask.purpose,
                attempt=ask.attempt,
                method=ask.method,
                url=ask.url,
                request_headers=recorded,
                request_body=ask.body,
                status=hop.status,
                response_headers=hop.headers,
                response_body=bytes(hop.body),
                truncated=hop.truncated,
                error=hop.error,
                started_at=started,
                elapsed_ms=round((time.perf_counter() - t0) * 1000, 3),
            )
            if hop.error is not None or hop.status not in _REDIRECTS:
                return exchange
            location = exchange.header("location")
            refusal = self._redirect_refusal(ask.url, location, hops)
            if refusal is not None:
                return replace(exchange, error=f"redirect_refused: {refusal}")
            assert location is not None
            ask = replace(ask, url=urljoin(ask.url, location))
            hops += 1
            if hop.status == 303 or (hop.status in (301, 302) and ask.method == "POST"):
                ask = replace(ask, method="GET", body=None)

    def _redirect_refusal(self, url: str, location: str | None, hops: int) -> str | None:
        if self.limits.public_only:
            return "public-only mode follows no redirects"
        if not location:
            return "redirect without a Location header"
        try:
            target = urljoin(url, location)
        except ValueError:
            return f"redirect to an invalid Location {location[:200]!r}"
        if origin(target) is None or origin(target) != origin(url):
            return f"{url} redirects to {target[:500]}, another origin"
        if hops >= self.limits.max_redirects:
            return f"more than {self.limits.max_redirects} redirects (last to {target[:500]})"
        return None

    def _headers_for(self, ask: _Ask) -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
        """Headers to send, and the same headers as recorded (secrets replaced)."""
        sent: dict[str, str] = {
            "User-Agent": f"interview-explorer/{__version__}",
            "Accept": "application/json",
            # Decoded size is what the cap counts; asking for identity keeps bombs out.
            "Accept-Encoding": "identity",
        }
        if ask.body is not None:
            sent["Content-Type"] = "application/json"
        secret_names: set[str] = set()
        sent.update(ask.headers or {})
        # A token request carries the client's own credentials and nothing else of the user's.
        bare = ask.purpose.startswith("auth:")
        here = origin(ask.url)
        if not bare and self._secrets and self._secret_origin is not None and here == self._secret_origin:
            for name, value in self._secrets.items():
                sent[name] = value
                secret_names.add(name.lower())
        credentialed = ask.credentials and not bare and self._auth_origin is not None
        if credentialed and self._auth and here == self._auth_origin:
            for name, value in self._auth.items():
                sent[name] = value
                secret_names.add(name.lower())
        recorded = tuple(
            (name, REDACTED if name.lower() in secret_names or name.lower() in _ALWAYS_REDACTED else value)
            for name, value in sent.items()
        )
        return sent, recorded

    async def _hop(self, ask: _Ask, headers: dict[str, str]) -> _Hop:
        if self._gate is None:
            return await self._hop_now(ask, headers)
        deadline = self.limits.deadline
        try:
            # Waiting for a slot on the host is part of the run too: bounded by its deadline.
            async with asyncio.timeout(None if deadline is None else max(deadline.remaining(), 0)):
                async with self._gate.hold(ask.url, timeout=self.limits.timeout):
                    return await self._hop_now(ask, headers)
        except TimeoutError:
            assert deadline is not None
            return _Hop(error=deadline.cut())

    def _budget(self) -> tuple[float, bool]:
        """How long the next request may take, and whether the run's deadline is what bounds it."""
        deadline = self.limits.deadline
        if deadline is None:
            return self.limits.timeout, False
        left = max(deadline.remaining(), 0.0)
        return (left, True) if left < self.limits.timeout else (self.limits.timeout, False)

    async def _hop_now(self, ask: _Ask, headers: dict[str, str]) -> _Hop:
        if not self._open:  # both clients are made on first use, and only inside `async with`
            raise RuntimeError("Fetcher used outside 'async with'")
        hop = _Hop()
        budget, by_deadline = self._budget()
        try:
            async with asyncio.timeout(budget):
                target = None if self.limits.public_only else plain_target(ask.url)
                if target is not None:
                    await self._send_plain(ask, target, headers, hop)
                else:
                    client, request = await self._build(ask, headers)
                    await self._stream(client, request, hop)
        except Blocked as exc:
            hop.error = f"blocked: {exc}"
        except TimeoutError:
            hop.error = self.limits.deadline.cut() if by_deadline and self.limits.deadline else "timeout"
        except (PlainError, OSError, ValueError, OverflowError) as exc:
            # UnicodeError is a ValueError; a port outside 0-65535 (an agent's URL) is an
            # OverflowError from connect(). Either is this request's failure, never the run's.
            hop.error = f"transport: {_reason(exc)}"
        except ExceptionGroup as group:  # anyio's connect races addresses in a task group
            leaves = _leaves(group)
            if not all(isinstance(leaf, _CONNECT_FAILURES) for leaf in leaves):
                raise
            hop.error = f"transport: ConnectError: {_reason(leaves[0])}"
        except Exception as exc:
            hop.error = _httpx_failure(exc)  # re-raises anything that is not httpx's
        return hop

    async def _send_plain(self, ask: _Ask, target: Target, headers: dict[str, str], hop: _Hop) -> None:
        if self._plain is None:
            self._plain = PlainPool(max_connections=MAX_CONNECTIONS, max_idle=MAX_IDLE)
        await self._plain.send(
            ask.method,
            target,
            headers,
            ask.body,
            hop,
            max_bytes=self.limits.max_bytes,
            headers_only=_REDIRECTS,  # a redirect's body is never needed
        )
        if hop.truncated:
            hop.error = "body_too_large"

    async def _build(self, ask: _Ask, headers: dict[str, str]) -> tuple[httpx.AsyncClient, httpx.Request]:
        import httpx

        if not self.limits.public_only:
            url = httpx.URL(ask.url)  # parsed once: the client takes the parsed URL as it is
            client = self._client_for(url.scheme)
            return client, client.build_request(ask.method, url, headers=headers, content=ask.body)
        pin: PinnedTarget = await resolve_public(ask.url)
        pinned = httpx.URL(ask.url).copy_with(host=pin.address, port=pin.port)
        headers = {**headers, "Host": pin.hostname}
        client = self._client_for("https")
        request = client.build_request(
            ask.method, pinned, headers=headers, content=ask.body, extensions={"sni_hostname": pin.hostname}
        )
        return client, request

    async def _stream(self, client: httpx.AsyncClient, request: httpx.Request, hop: _Hop) -> None:
        response = await client.send(request, stream=True)
        try:
            hop.status = response.status_code
            hop.headers = tuple(response.headers.multi_items())
            if hop.status in _REDIRECTS:
                return  # the body of a redirect is never needed
            async for chunk in response.aiter_bytes():
                room = self.limits.max_bytes - len(hop.body)
                if len(chunk) > room:
                    hop.body += chunk[: max(room, 0)]
                    hop.truncated = True
                    hop.error = "body_too_large"
                    return
                hop.body += chunk
        finally:
            await response.aclose()


def _no_cookies() -> http.cookiejar.CookieJar:
    """A cookie jar that keeps nothing. httpx's default jar matches cookies by host and ignores
    the port, so a cookie one origin set rode along to every other origin of the run on that host
    (a proposal host, a jku, and back to the interface with an attacker's cookie). An interview
    needs no cookie: nothing is stored, so nothing is sent that the user did not give
    (`--header 'Cookie: ...'`, which goes only to the agent's origin). The plain client keeps none.
    Imported here, with httpx: a loopback run over plain HTTP never needs either."""
    import http.cookiejar

    class NoCookies(http.cookiejar.CookieJar):
        def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
            return None

        def extract_cookies(self, response: object, request: object) -> None:
            return None

    return NoCookies()


@functools.cache
def shared_tls(*, trust_env: bool) -> ssl.SSLContext:
    """The certificate-checking TLS context every Fetcher of this process uses, made once.

    Building one loads the CA bundle, about 30 ms of CPU: once per run that was most of the
    client's own cost on an https agent, and a sweep of a thousand https agents paid it a
    thousand times. The context holds only trust settings (no per-connection state), so sharing
    it between runs, event loops and threads is safe. `trust_env` is whether SSL_CERT_FILE and
    friends may choose the CA bundle, as for the client (off in public-only mode)."""
    import httpx

    return httpx.create_ssl_context(trust_env=trust_env)


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    out: list[BaseException] = []
    for inner in group.exceptions:
        out.extend(_leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner])
    return out


def _httpx_failure(exc: Exception) -> str:
    """The words for a failure httpx raised; anything that is not httpx's is raised again."""
    httpx = sys.modules.get("httpx")
    if httpx is None or not isinstance(exc, httpx.HTTPError | httpx.InvalidURL):
        raise exc
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, httpx.InvalidURL):
        return f"transport: invalid URL ({exc})"
    return f"transport: {_reason(exc)}"


def _reason(exc: BaseException) -> str:
    """A short readable reason: the failing step plus the operating system's words when known.

    httpx (through anyio) hides the useful part ("Connection refused") under a generic message,
    and the plain client keeps the operating system's error as the cause too, so the cause
    chain is walked for the innermost OSError with an errno.
    """
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    detail = str(exc).strip()
    for inner in reversed(chain):
        if isinstance(inner, socket.gaierror) and inner.strerror:
            detail = f"cannot resolve the host ({inner.strerror})"
            break
        if isinstance(inner, OSError) and inner.errno and inner.errno > 0:
            detail = os.strerror(inner.errno)
            break
    name = type(exc).__name__
    return f"{name}: {detail}" if detail else name


async def _fetch_once(url: str, limits: Limits, purpose: str) -> Exchange:
    async with Fetcher(limits) as fetcher:
        return await fetcher.get(url, purpose=purpose)


def fetch_once(url: str, limits: Limits | None = None, purpose: str = "card") -> Exchange:
    """One GET with the explorer's limits, for synchronous commands (not inside an event loop)."""
    return asyncio.run(_fetch_once(url, limits or Limits(), purpose))
