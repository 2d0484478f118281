"""From what the user typed to the bytes of one Agent Card.

A target is a base URL (try `/.well-known/agent-card.json`, then the older
`/.well-known/agent.json`), a full card URL (fetched as is), a local card file, or an OpenClasp
reference (a profile URL `/a/{slug}`, the public card `/agents/{id}/card.json`, the A2A card
`/agents/{id}/a2a-agent-card.json`, or a bare slug or agent id resolved by the platform's
`/directory/resolve`).

Every try is recorded: the exchange that counts carries the purpose `card`, earlier failed
tries are relabelled `card-discovery`, so the report can say which path answered and why the
others did not. Discovery judges nothing about the card's content; it only finds it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from explorer.core.card import WELL_KNOWN
from explorer.core.openclasp import OpenClaspRef, classify_reference, resolution_card
from explorer.core.run import Exchange
from explorer.core.strict_json import StrictJsonError, parse
from explorer.core.when import stamp
from explorer.net.files import read_capped
from explorer.net.http import Fetcher
from explorer.net.origins import site_of

Say = Callable[[str], None]


def is_url(target: str) -> bool:
    """Whether `target` is an http(s) URL, by its scheme. Never raises: a URL an agent wrote
    with a malformed authority ("http://[::1/rpc") is still a URL, and fetching it records why
    it cannot be fetched (a finding), where a ValueError here would end the run."""
    try:
        scheme = urlsplit(target).scheme
    except ValueError:
        scheme = target.partition(":")[0].strip()
    return scheme.lower() in ("http", "https")


def read_card_file(path: Path, max_bytes: int, attempt: int = 1) -> Exchange:
    """A local card as an Exchange (method FILE), size-capped like a fetch."""
    started, t0 = stamp(), time.perf_counter()
    error: str | None = None
    body = b""
    truncated = False
    try:
        body, truncated = read_capped(path, max_bytes)
        if truncated:
            error = "body_too_large"
    except OSError as exc:
        error = f"transport: cannot read {path}: {exc.strerror or exc}"
    return Exchange(
        purpose="card",
        attempt=attempt,
        method="FILE",
        url=str(path),
        response_body=body,
        truncated=truncated,
        error=error,
        started_at=started,
        elapsed_ms=round((time.perf_counter() - t0) * 1000, 3),
    )


def _path_base(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


# Servers that negotiate the card by protocol version (@a2a-js/sdk with `legacyCompat`) serve
# the v0.3 translation to a request without this header, and that translation carries the v1.0
# card's signature and drops members the interview answers project. The official JS client
# announces 1.0 on every card fetch; servers that do not negotiate ignore it (docs/PROTOCOL.md
# section 3).
CARD_REQUEST_HEADERS = {"A2A-Version": "1.0"}


async def _get_card(fetcher: Fetcher, url: str, attempt: int) -> Exchange:
    return await fetcher.get(url, purpose="card", attempt=attempt, headers=CARD_REQUEST_HEADERS)


async def card_for_version(
    fetcher: Fetcher, url: str, version: str, *, purpose: str, attempt: int
) -> Exchange:
    """The card at `url` as it is served to a client announcing `A2A-Version: version` (the
    version the interview calls speak), which a negotiating server may translate
    (docs/PROTOCOL.md section 3). Fetched without credentials, like the card itself."""
    return await fetcher.get(url, purpose=purpose, attempt=attempt, headers={"A2A-Version": version})


async def _well_known(fetcher: Fetcher, base: str, attempt: int, say: Say) -> tuple[Exchange, str]:
    root = _path_base(base)
    for index, path in enumerate(WELL_KNOWN):
        mark = len(fetcher.exchanges)
        ex = await _get_card(fetcher, root + path, attempt)
        if ex.usable:
            say(f"card found at {ex.url}")
            return ex, path
        # Only a "not here" answer is worth a second path; a timeout or a refused connection
        # would just cost the same again on the same host.
        if index + 1 < len(WELL_KNOWN) and ex.error is None and ex.status is not None:
            say(f"{ex.url} answered HTTP {ex.status}; trying {WELL_KNOWN[index + 1]}")
            fetcher.relabel(mark, "card-discovery")
            continue
        break
    say(f"no card under {root}: {ex.problem()}")
    return ex, path


async def _resolve(fetcher: Fetcher, url: str, attempt: int, say: Say) -> tuple[str | None, str]:
    """Ask the platform which agent a reference names: (A2A card URL, "") or (None, why not)."""
    ex = await fetcher.get(url, purpose="openclasp:resolve", attempt=attempt)
    problem = ex.problem()
    if problem is not None:
        return None, problem
    try:
        doc = parse(ex.response_body, max_bytes=fetcher.limits.max_bytes)
    except StrictJsonError as exc:
        return None, f"the resolve response is not valid JSON ({exc})"
    card, problem = resolution_card(doc)
    if card is None:
        return None, problem or "no card"
    a2a = card.get("a2aAgentCardUrl")
    if isinstance(a2a, str) and is_url(a2a):
        return a2a, ""
    agent_id = card.get("agentId")
    if isinstance(agent_id, str) and agent_id:
        return f"{site_of(url)}/agents/{quote(agent_id, safe='')}/a2a-agent-card.json", ""
    return None, "the resolved card names no A2A card"


def _failed_card(target: str, attempt: int, error: str) -> Exchange:
    return Exchange(
        purpose="card", attempt=attempt, method="GET", url=target, error=error, started_at=stamp()
    )


async def discover_card(
    fetcher: Fetcher,
    target: str,
    *,
    attempt: int = 1,
    openclasp_base: str | None = None,
    say: Say | None = None,
) -> tuple[Exchange, str]:
    """Find and fetch the card a target names. Returns the `card` exchange (check its
    status/error) and how it was found: a well-known path, "card-url", "file", or
    "openclasp:<kind>". Never raises for network trouble."""
    tell: Say = say or (lambda _message: None)
    target = target.strip()
    if not is_url(target):
        path = Path(target).expanduser()
        if path.is_file():
            tell(f"reading the card from the file {path}")
            ex = read_card_file(path, fetcher.limits.max_bytes, attempt)
            ex = fetcher.record(ex)
            return ex, "file"
    reference = classify_reference(target)
    if reference.kind in ("profile", "public_card", "a2a_card") or (
        reference.kind == "slug_or_id" and openclasp_base
    ):
        return await _openclasp(fetcher, reference, attempt, openclasp_base, tell)
    if not is_url(target):
        if re.match(r"^[A-Za-z0-9.-]+\.[A-Za-z]{2,}(:\d+)?(/.*)?$", target):
            target = "https://" + target
        else:
            ex = _failed_card(
                target,
                attempt,
                f"transport: {target!r} is not a URL, an existing card file or a known agent "
                "(for an OpenClasp slug or id, give --openclasp BASE_URL)",
            )
            ex = fetcher.record(ex)
            return ex, "none"
    if urlsplit(target).path.endswith(".json"):
        tell(f"fetching the card URL {target}")
        return await _get_card(fetcher, target, attempt), "card-url"
    tell(f"looking for a card under {target}")
    return await _well_known(fetcher, target, attempt, tell)


async def _openclasp(
    fetcher: Fetcher, ref: OpenClaspRef, attempt: int, base: str | None, say: Say
) -> tuple[Exchange, str]:
    via = f"openclasp:{ref.kind}"
    if ref.kind == "a2a_card":
        say(f"OpenClasp A2A card URL (agent {ref.agent_id}); fetching it as is")
        return await _get_card(fetcher, ref.reference, attempt), via
    if ref.kind == "public_card" and ref.base_url and ref.agent_id:
        a2a = f"{ref.base_url}/agents/{quote(ref.agent_id, safe='')}/a2a-agent-card.json"
        say(f"OpenClasp public card URL (agent {ref.agent_id}); the A2A card is {a2a}")
        return await _get_card(fetcher, a2a, attempt), via
    resolve_url = ref.resolve_url(base)
    what = f"profile {ref.slug!r}" if ref.kind == "profile" else f"reference {ref.reference!r}"
    if resolve_url is None:
        ex = _failed_card(ref.reference, attempt, "transport: no OpenClasp base URL to resolve the reference")
        ex = fetcher.record(ex)
        return ex, via
    say(f"OpenClasp {what}; resolving it at {resolve_url}")
    card_url, problem = await _resolve(fetcher, resolve_url, attempt, say)
    if card_url is None:
        say(f"OpenClasp could not resolve the {what}: {problem}")
        error = f"transport: OpenClasp could not resolve the {what} ({problem})"
        ex = _failed_card(ref.reference, attempt, error)
        ex = fetcher.record(ex)
        return ex, via
    say(f"OpenClasp resolved the {what}; the card comes from {card_url}")
    return await _get_card(fetcher, card_url, attempt), via
