"""Who may use a served explorer: the token, the cookie it becomes, the Host and Origin it must carry.

textual-serve answers anyone who can reach its port, and a browser can be made to reach a
loopback port by any page it visits. So every request to `interview-explorer serve` passes four
decisions, made here without any I/O so each can be tested on its own:

- Host: the request's `Host` header names one of the addresses the server is reached at (the
  bound one, or `--public-origin`'s). A page on a rebinding domain (attacker.example resolving
  to 127.0.0.1) sends its own name and is refused, whatever else it carries.
- Token: the URL `serve` prints holds `secrets.token_urlsafe(32)`. Opening it exchanges the
  token for a cookie and redirects to `/`, so the token leaves the address bar at once (and,
  with `Referrer-Policy: no-referrer`, is never sent onwards). The token stays valid while the
  server runs, as a notebook server's does, so a second browser or a restarted one can open it.
- Cookie: a second random value, not the token, `HttpOnly` (no script reads it) and
  `SameSite=Strict` (no other site's page or link sends it); `Secure` when browsers use https.
  Its name carries the port, so two servers on one host keep their own.
- Origin: a WebSocket must come from a page of this server. Browsers send `Origin` on every
  WebSocket handshake, and cookies are shared between the ports of one host, so without this
  check a page on another port of 127.0.0.1 could drive the explorer with the user's cookie.

Secrets are compared with `hmac.compare_digest`, so the time a wrong guess takes says nothing
about how much of it was right.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

COOKIE_PREFIX = "interview_explorer_"
TOKEN_BYTES = 32  # token_urlsafe(32): 43 characters, 256 bits
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Address:
    """Where a browser reaches the server: scheme, host (a name or an IP address) and port."""

    scheme: str
    host: str
    port: int

    @property
    def authority(self) -> str:
        """The `Host` header a browser sends for this address (the default port left out)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if DEFAULT_PORTS.get(self.scheme) == self.port else f"{host}:{self.port}"

    @property
    def origin(self) -> str:
        """The `Origin` header a page loaded from this address sends."""
        return f"{self.scheme}://{self.authority}"


def public_address(text: str) -> Address:
    """An origin given as `--public-origin` (`https://explorer.example.org`); ValueError for
    anything that is not exactly a scheme, a host and an optional port."""
    parts = urlsplit(text.strip())
    if parts.scheme not in DEFAULT_PORTS:
        raise ValueError(f"an origin starts with http:// or https://, not {text!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"an origin holds no user name or password: {text!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"an origin has no path, query or fragment: {text!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"the port of {text!r} is not a port number") from None
    host = (parts.hostname or "").lower()
    if not host:
        raise ValueError(f"an origin names a host: {text!r}")
    return Address(parts.scheme, host, port if port is not None else DEFAULT_PORTS[parts.scheme])


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("utf-8"))


@dataclass(frozen=True)
class Guard:
    """The secrets of one server run and the decisions that use them."""

    addresses: tuple[Address, ...]  # the first is the one the printed URL uses
    token: str
    cookie_secret: str

    @classmethod
    def fresh(cls, addresses: tuple[Address, ...]) -> Guard:
        if not addresses:
            raise ValueError("a guard needs the address browsers use")
        return cls(addresses, secrets.token_urlsafe(TOKEN_BYTES), secrets.token_urlsafe(TOKEN_BYTES))

    @property
    def url(self) -> str:
        """The one URL to open: the first address, with the token."""
        return f"{self.addresses[0].origin}/?token={self.token}"

    @property
    def cookie_name(self) -> str:
        return f"{COOKIE_PREFIX}{self.addresses[0].port}"

    @property
    def secure(self) -> bool:
        return self.addresses[0].scheme == "https"

    def host_ok(self, host: str | None) -> bool:
        if not host:
            return False
        wanted = host.strip().lower()
        return any(wanted == address.authority.lower() for address in self.addresses)

    def origin_ok(self, origin: str | None) -> bool:
        if not origin:
            return False
        wanted = origin.strip().lower()
        return any(wanted == address.origin.lower() for address in self.addresses)

    def token_ok(self, given: str | None) -> bool:
        return given is not None and _same(given, self.token)

    def cookie_ok(self, given: str | None) -> bool:
        return given is not None and _same(given, self.cookie_secret)
