"""Whether a card may choose where a credential goes (docs/CONTRACT.md, authentication).

A card is a stranger's document, and two URLs in it are places a credential would be sent: a
token URL (the OAuth 2.0 client secret) and its JSON-RPC interface (a bearer token, an API key,
an OAuth 2.0 access token). One rule decides both. A URL the user pinned is used as given: a
token URL (`--oauth2-token-url`, or the agent's config entry), or an interface on the origin the
user pinned (`--interface-origin`, `interface_origin`). A URL the card chose is used only when
the card earns it:

- **signed**: a signature over the card verifies under a key the user trusts (their `--keys` or
  the config's `keys`; a key fetched through the card's own `jku` does not count, or a card
  could vouch for its own spy) and its payload covers the security scheme that names the URL.
  Identity providers usually live on another origin, so then any origin will do;
- **the agent's own origin**: otherwise, the URL is on the origin the card was fetched from (the
  one the user pointed the explorer at; for a card read from a file, its JSON-RPC interface's).
  The credential is bound to this one agent by construction: planning refuses a credential
  given for many agents and bound to none;
- never while the card's signature fails (status `invalid`, as the report states it, with the
  same keys: a known key that does not verify it is evidence of tampering).

Otherwise nothing is sent and the run has `auth_token_url_untrusted` (a token URL,
`card_url_refusal`) or `auth_origin_untrusted` (the interface, `interface_refusal`; then no token
is asked for either, since it could be sent nowhere). An OpenID Connect scheme is judged the same
way at both steps: its discovery URL is the card's choice (not fetched unless
it passes), and the token endpoint the discovery document names passes when the scheme is
signed (the provider the signer named chooses its own endpoints) or is on the agent's own origin.

Pure: the decision depends only on the card, the keys and the URLs, so it is tested without a
socket and an offline re-check of the recorded refusal reads the same words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from explorer.core.card_forms.forms import member_is_signed, unsigned_members
from explorer.core.card_forms.tracked import FormError
from explorer.core.run import Exchange
from explorer.core.signatures import verify_card
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.core.text import safe_text
from explorer.core.urls import origin

Standing = Literal["signed", "unvouched", "failed"]

PIN_HINT = (
    'pin the token URL with --oauth2-token-url URL (config: oauth2_token_url = "URL"), or trust the '
    "key that signs the card with --keys"
)
INTERFACE_PIN_HINT = (
    'pin the interface\'s origin with --interface-origin ORIGIN (config: interface_origin = "ORIGIN" in '
    "the agent's entry), or trust the key that signs the card with --keys"
)


@dataclass(frozen=True)
class Vouch:
    """What the card's signatures say for one security scheme, and why."""

    standing: Standing
    detail: str


def vouch_for(
    card: Mapping[str, Any],
    pointer: str,
    keys: Mapping[str, Any] | None,
    jku_keys: Mapping[str, Mapping[str, Any]] | None = None,
) -> Vouch:
    """Whether a signature under a key the user trusts covers the member at `pointer` (a security
    scheme, an interface; `keys` are the user's; `jku_keys`, the sets fetched from the card's own
    `jku`, can only make a signature fail)."""
    report = verify_card(card, keys or {}, jku_keys=jku_keys)
    if report.status == "invalid":
        return Vouch("failed", f"the card's signature fails ({safe_text(report.detail, limit=300)})")
    for check in report.checks:
        if check.status != "verified" or check.key_source != "user" or check.form is None:
            continue
        try:
            unsigned = unsigned_members(card, check.form)
        except (FormError, ValueError):
            continue
        if member_is_signed(pointer, unsigned):
            return Vouch(
                "signed", f"signature {check.index} verifies under a key you trust and covers {pointer}"
            )
    if report.status == "unsigned":
        why = "the card is unsigned"
    elif any(c.status == "verified" and c.key_source == "user" for c in report.checks):
        why = f"the signature under a key you trust does not cover {pointer}"
    elif any(c.status == "verified" for c in report.checks):
        why = "the card's signature verifies only under the key its own jku serves, which vouches for nothing"
    else:
        why = "no signature of the card verifies under a key you trust"
    return Vouch("unvouched", why)


def card_url_refusal(
    vouch: Vouch, url: str, agent: str | None, what: str = "tokenUrl", secret: str = "the client secret"
) -> str | None:
    """Why `secret` may not go to `url`, a URL the card chose (its `what`), or None.

    `agent` is a URL on the agent's own origin: the card's (where the user pointed the explorer),
    or, for a card read from a file, its JSON-RPC interface's. Not the interface's when the card
    came from a URL: that too is the card's choice, and a card moving its interface and its
    token URL to one host elsewhere would otherwise choose where the secret goes."""
    shown = safe_text(url, limit=300)
    if vouch.standing == "signed":
        return None
    if vouch.standing == "failed":
        return f"{vouch.detail}, so its {what} {shown} is not trusted with {secret}"
    home = origin(agent) if agent else None
    if home is not None and origin(url) == home:
        return None
    where = f"another origin than the agent's own ({home})" if home else "no origin of the agent's"
    return (
        f"the card's {what} {shown} is on {where} and nothing vouches for it ({vouch.detail}); {secret} "
        "goes to a URL the card chose only when a signature under a key you trust covers it or it "
        "is on the agent's own origin"
    )


def interface_refusal(vouch: Vouch, url: str, agent: str | None, pinned: str | None) -> str | None:
    """Why the credentials for the card's security schemes (a bearer token, an API key, an OAuth
    2.0 access token) may not go to `url`, the JSON-RPC interface the card names, or None: on
    the origin the user pinned (`pinned`, any URL on it) they go whatever the card says; else as
    `card_url_refusal` decides for a token URL."""
    if pinned and origin(pinned) is not None and origin(pinned) == origin(url):
        return None
    return card_url_refusal(vouch, url, agent, "JSON-RPC interface", "a credential")


def fetched_key_sets(exchanges: Iterable[Exchange]) -> dict[str, Mapping[str, Any]]:
    """The key sets fetched from the card's `jku` URLs (purpose `jwks`), by URL: what the report's
    signature check uses, so a signature the report calls invalid is invalid here too."""
    found: dict[str, Mapping[str, Any]] = {}
    for ex in exchanges:
        if ex.purpose != "jwks" or ex.problem() is not None:
            continue
        try:
            parsed = strict_parse(ex.response_body)
        except StrictJsonError:
            continue
        if isinstance(parsed, dict):
            found[ex.url] = parsed
    return found
