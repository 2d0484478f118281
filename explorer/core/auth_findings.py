"""The authentication findings, judged from recorded exchanges and the card (docs/CONTRACT.md).

- `auth_required` (error): an interview call got 401 or 403. The detail names the card's
  declared schemes and the option that supplies each, and says whether a credential was sent
  (the recorded request shows the header it went in, always as `<redacted>`).
- `auth_failed` (error): the token endpoint refused or failed; its OAuth `error` code is quoted,
  never a secret (the exchange was recorded with the client secret and tokens redacted).
- `auth_scheme_unsupported` (warning): the card declares only schemes the explorer cannot
  satisfy (an API key in a query or cookie, HTTP basic, OpenID Connect, mutual TLS, ...).
- `auth_token_url_untrusted` (error): no token URL was pinned and the card's was not vouched for
  (`core.token_trust`), so no client secret was sent. The procedure records the request it did
  not make with an `error` that starts `untrusted: ` and says why; the finding quotes it.
- `auth_origin_untrusted` (error): the card names its JSON-RPC interface where no credential may
  go (not the card's own origin, not one the user pinned, not covered by a signature under a key
  the user trusts, or the card's signature fails), so none was sent and no token was asked for.
  Recorded the same way, as an `auth:interface` request not made.

Kept apart from `evaluate` so the wording and the rules live in one small place; pure, like the
rest of core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from explorer.core.findings import Finding, finding
from explorer.core.run import REDACTED, Exchange
from explorer.core.security import Security, declared_summary, read_security
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.core.text import safe_text

TOKEN_PURPOSE = "auth:token"
INTERFACE_PURPOSE = "auth:interface"  # the credentials not sent to the card's interface
UNTRUSTED = "untrusted: "  # how a token request refused for its URL's trust is recorded
AUTH_STATUSES = (401, 403)


def refused_for_auth(ex: Exchange) -> bool:
    """An interview call answered 401 or 403."""
    return ex.error is None and ex.status in AUTH_STATUSES


def scheme_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """`auth_scheme_unsupported` when no declared way in is one the explorer can take."""
    security = read_security(doc)
    if not security.declared or security.satisfiable():
        return []
    names = ", ".join(s.describe() for s in security.schemes.values()) or "(requirements name no scheme)"
    return [
        finding(
            "auth_scheme_unsupported",
            f"the card only declares security the explorer cannot satisfy: {safe_text(names, limit=400)}",
            member="/securitySchemes" if security.schemes else None,
        )
    ]


def _credential_sent(ex: Exchange, security: Security) -> list[str]:
    """The credential headers a refused request carried (by name; values are never recorded)."""
    names = {"authorization"} | {s.header.lower() for s in security.schemes.values() if s.header}
    return sorted({n for n, v in ex.request_headers if n.lower() in names and v == REDACTED})


def required_finding(
    refused: Sequence[tuple[str, Exchange]], doc: Mapping[str, Any], *, probe: str | None = None
) -> Finding | None:
    """One `auth_required` for the calls in `refused` ((label, exchange) pairs)."""
    if not refused:
        return None
    security = read_security(doc)
    statuses = sorted({ex.status for _, ex in refused if ex.status is not None})
    labels = ", ".join(dict.fromkeys(label for label, _ in refused))
    sent = sorted({h for _, ex in refused for h in _credential_sent(ex, security)})
    said = (
        f"a credential was sent ({', '.join(sent)}: {REDACTED}) and refused"
        if sent
        else "no credential was sent"
    )
    http = "/".join(str(s) for s in statuses)
    declared = safe_text(declared_summary(security), limit=600)
    detail = f"the agent answered HTTP {http} to {labels}; {said}; {declared}"
    return finding("auth_required", detail, probe=probe)


def oauth_error(ex: Exchange) -> tuple[str | None, str | None]:
    """The OAuth `error` and `error_description` of a token endpoint's answer (RFC 6749 5.2)."""
    try:
        doc = strict_parse(ex.response_body) if ex.response_body else None
    except StrictJsonError:
        return None, None
    if not isinstance(doc, dict):
        return None, None
    error, description = doc.get("error"), doc.get("error_description")
    return (error if isinstance(error, str) else None, description if isinstance(description, str) else None)


def token_problem(ex: Exchange) -> str | None:
    """Why a token request yielded no usable bearer token, or None when it did (RFC 6749 5.1)."""
    where = safe_text(ex.url, limit=200)
    if ex.error is not None:
        return f"no access token from {where}: {safe_text(ex.error, limit=400)}"
    error, description = oauth_error(ex)
    if error is not None or ex.status is None or not 200 <= ex.status < 300:
        code = f"OAuth error {safe_text(error, limit=80)}" if error else "no OAuth error code"
        more = f" ({safe_text(description, limit=200)})" if description else ""
        return f"the token endpoint {where} answered HTTP {ex.status}, {code}{more}"
    try:
        doc = strict_parse(ex.response_body)
    except StrictJsonError:
        return f"the token endpoint {where} answered, but not with JSON"
    if not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str) or not doc["access_token"]:
        return f"the token endpoint {where} answered, but with no access_token"
    token_type = doc.get("token_type")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        kind = safe_text(token_type, limit=40)
        return f"the token endpoint {where} answered, but the token type is {kind}, not Bearer"
    return None


def token_findings(exchanges: Sequence[Exchange]) -> list[Finding]:
    """`auth_failed` when the last token request of the attempt did not yield a token;
    `auth_token_url_untrusted` when it was not made because the card's token URL is not trusted;
    `auth_origin_untrusted` when no credential went to the card's interface (`INTERFACE_PURPOSE`)."""
    withheld = [
        e
        for e in exchanges
        if e.purpose == INTERFACE_PURPOSE and e.status is None and (e.error or "").startswith(UNTRUSTED)
    ]
    if withheld:
        why = safe_text((withheld[-1].error or "")[len(UNTRUSTED) :], limit=900)
        return [finding("auth_origin_untrusted", why)]
    tries = [e for e in exchanges if e.purpose == TOKEN_PURPOSE]
    last = tries[-1] if tries else None
    if last is not None and last.status is None and (last.error or "").startswith(UNTRUSTED):
        why = safe_text((last.error or "")[len(UNTRUSTED) :], limit=900)
        return [finding("auth_token_url_untrusted", why)]
    problem = token_problem(last) if last is not None else None
    return [finding("auth_failed", problem)] if problem is not None else []
