"""The admission check of the guarded reference agents, and their loopback OAuth 2.0 token endpoint.

Three reference agents require authentication before they answer interview calls, each with one
of the schemes real agents use (interview extension section 10: "an agent MAY require
authentication before answering, exactly as it may for any method"): `guarded-bearer` (a fixed
bearer token),
`guarded-apikey` (an API key in the `X-Api-Key` header), `guarded-oauth2` (OAuth 2.0 client
credentials, RFC 6749 section 4.4). The card and every published document stay public; only the
JSON-RPC endpoint is guarded, and once admitted each agent is as honest as `steady`.

The token endpoint checks the client id and secret (HTTP Basic, or the request body), the grant
type and the scope, answers RFC 6749 section 5.2 errors (`invalid_client` with 401,
`unsupported_grant_type`, `invalid_scope`, `invalid_request` with 400), and issues short-lived
opaque tokens (`lifetime` seconds) that the guard then accepts until they expire. `accept_basic`
can be switched off to model a server that only reads client credentials from the body.

The demo credentials are generated at start-up and handed to the explorer the way a user would:
through environment variables (`ENV` names them per agent), referenced as `env:VAR`.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import threading
import time
from typing import Literal
from urllib.parse import parse_qsl, unquote

from explorer.config.credentials import Credentials
from explorer.demo.agent import Reply

Kind = Literal["bearer", "apikey", "oauth2"]

API_KEY_HEADER = "X-Api-Key"
SCOPE = "interview:read"
CLIENT_ID = "interview-explorer-demo"
MAX_FORM = 8 * 1024

# Environment variables that hold each guarded agent's demo secret.
ENV: dict[Kind, str] = {
    "bearer": "INTERVIEW_EXPLORER_DEMO_BEARER",
    "apikey": "INTERVIEW_EXPLORER_DEMO_API_KEY",
    "oauth2": "INTERVIEW_EXPLORER_DEMO_OAUTH2_SECRET",
}


def _json(status: int, doc: dict[str, object], headers: dict[str, str] | None = None) -> Reply:
    body = json.dumps(doc, separators=(",", ":")).encode("utf-8")
    return Reply(status, body, {"Cache-Control": "no-store", **(headers or {})})


def _oauth_error(status: int, error: str, description: str, headers: dict[str, str] | None = None) -> Reply:
    return _json(status, {"error": error, "error_description": description}, headers)


class Guard:
    """One guarded agent's secret, its issued tokens, and the checks."""

    def __init__(self, kind: Kind, *, lifetime: int = 120) -> None:
        self.kind = kind
        self.secret = secrets.token_urlsafe(24)
        self.client_id = CLIENT_ID
        self.lifetime = lifetime
        self.accept_basic = True
        self.token_requests = 0  # for tests: how many times a token was asked for
        self.tokens_issued = 0
        self._tokens: dict[str, float] = {}
        self._lock = threading.Lock()

    # --- what the demo hands the explorer --------------------------------------------------------

    @property
    def env(self) -> dict[str, str]:
        """The environment variable that carries this agent's demo secret, and its value."""
        return {ENV[self.kind]: self.secret}

    @property
    def credentials(self) -> Credentials:
        """The explorer settings that use the secret (references only)."""
        ref = f"env:{ENV[self.kind]}"
        if self.kind == "bearer":
            return Credentials(bearer=ref)
        if self.kind == "apikey":
            return Credentials(api_key=ref)
        return Credentials(oauth2_client_id=self.client_id, oauth2_client_secret=ref)

    # --- admission --------------------------------------------------------------------------------

    def admit(self, headers: dict[str, str]) -> Reply | None:
        """None when the request may pass; otherwise the 401 to send (headers lower-cased)."""
        if self.kind == "apikey":
            given = headers.get(API_KEY_HEADER.lower(), "")
            if secrets.compare_digest(given.encode(), self.secret.encode()):
                return None
            return _json(
                401, {"error": "unauthorized", "detail": f"an API key in {API_KEY_HEADER} is required"}
            )
        scheme, _, token = headers.get("authorization", "").partition(" ")
        ok = scheme.lower() == "bearer" and self._accepts(token.strip())
        if ok:
            return None
        challenge = 'Bearer realm="interview"' + (', error="invalid_token"' if token else "")
        return _json(
            401,
            {"error": "unauthorized", "detail": "a bearer token is required"},
            {"WWW-Authenticate": challenge},
        )

    def _accepts(self, token: str) -> bool:
        if not token:
            return False
        if self.kind == "bearer":
            return secrets.compare_digest(token.encode(), self.secret.encode())
        with self._lock:
            expires = self._tokens.get(token)
            if expires is None:
                return False
            if expires <= time.monotonic():
                del self._tokens[token]
                return False
            return True

    def discovery(self, token_endpoint: str) -> bytes:
        """The OpenID Connect discovery document of this agent's token endpoint (issuer minimal)."""
        doc = {
            "issuer": token_endpoint.rsplit("/", 2)[0],
            "token_endpoint": token_endpoint,
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "scopes_supported": [SCOPE],
        }
        return json.dumps(doc, separators=(",", ":")).encode("utf-8")

    def revoke_all(self) -> None:
        """Forget every issued token (a server restart, a key rotation): they are refused from now."""
        with self._lock:
            self._tokens.clear()

    # --- the token endpoint -----------------------------------------------------------------------

    def token(self, headers: dict[str, str], body: bytes | None) -> Reply:
        """Reply one token request (RFC 6749 section 4.4) from its headers and form body."""
        with self._lock:
            self.token_requests += 1
        if body is None or len(body) > MAX_FORM:
            return _oauth_error(400, "invalid_request", "the form body is missing or too large")
        if "application/x-www-form-urlencoded" not in headers.get("content-type", ""):
            return _oauth_error(400, "invalid_request", "the body must be application/x-www-form-urlencoded")
        try:
            form = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False))
        except UnicodeDecodeError:
            return _oauth_error(400, "invalid_request", "the body is not UTF-8")
        client = self._client(headers, form)
        if client is None:
            return _oauth_error(
                401,
                "invalid_client",
                "unknown client or wrong secret",
                {"WWW-Authenticate": 'Basic realm="token"'},
            )
        if form.get("grant_type") != "client_credentials":
            return _oauth_error(400, "unsupported_grant_type", "only client_credentials is supported")
        asked = form.get("scope", "").split()
        if any(scope != SCOPE for scope in asked):
            return _oauth_error(400, "invalid_scope", f"the only scope is {SCOPE}")
        token = secrets.token_urlsafe(24)
        with self._lock:
            now = time.monotonic()
            self._tokens = {t: e for t, e in self._tokens.items() if e > now}
            self._tokens[token] = now + self.lifetime
            self.tokens_issued += 1
        return _json(
            200, {"access_token": token, "token_type": "Bearer", "expires_in": self.lifetime, "scope": SCOPE}
        )

    def _client(self, headers: dict[str, str], form: dict[str, str]) -> str | None:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "basic":
            if not self.accept_basic:
                return None
            try:
                decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return None
            client_id, _, secret = decoded.partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        if client_id == self.client_id and secrets.compare_digest(secret.encode(), self.secret.encode()):
            return client_id
        return None
