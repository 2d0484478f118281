"""Where `serve` listens, and the addresses browsers reach it by: decided before anything is bound.

The default is 127.0.0.1, where only this machine's users can connect. Any loopback address
(127.0.0.0/8, ::1) is as private, and a second one (`--host 127.0.0.2`) is even a host of its own
for the browser's cookies. Any other address is reachable from other machines, and the token
then travels in clear text over http; so it takes `--expose` as well, an acknowledgement that
says so, and `serve` prints a warning to put a reverse proxy with TLS and authentication in
front. An unspecified address (0.0.0.0, ::) is no address a browser can open, so it also needs
`--public-origin`, the origin browsers use (the proxy's, `https://explorer.example.org`).

Only IP addresses are taken (and `localhost`, as 127.0.0.1): a host name can resolve to several
addresses, some of them public, and the Host and Origin checks need the one name browsers use.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from explorer.web.guard import Address, public_address

DEFAULT_HOST = "127.0.0.1"
EXPOSE_FLAG = "--expose"


@dataclass(frozen=True)
class Binding:
    host: str  # the IP address to listen on
    port: int  # 0: any free port
    public: Address | None = None  # the origin browsers use, when not the bound address
    warning: str | None = None  # said on stderr before serving, when the server is reachable from elsewhere

    def addresses(self, port: int) -> tuple[Address, ...]:
        """The addresses browsers may use once bound to `port`; the first is the one to print."""
        out: list[Address] = [self.public] if self.public is not None else []
        if not ipaddress.ip_address(self.host).is_unspecified:
            out.append(Address("http", self.host, port))
        return tuple(out)


def plan_binding(host: str, port: int, *, expose: bool = False, public_origin: str | None = None) -> Binding:
    """The binding these options ask for; ValueError with the message for the user otherwise."""
    host = DEFAULT_HOST if host.strip().lower() == "localhost" else host.strip().strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"--host takes an IP address (127.0.0.1, ::1, 0.0.0.0, ...), not {host!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"--port takes 0 to 65535, not {port}")
    public = public_address(public_origin) if public_origin else None
    if address.is_loopback:
        return Binding(str(address), port, public)
    if not expose:
        raise ValueError(
            f"--host {address} is reachable from other machines, and the explorer in a browser can "
            f"interview agents and read the history as you: add {EXPOSE_FLAG} to say that is intended "
            "(and put it behind a reverse proxy with TLS and authentication)"
        )
    if address.is_unspecified and public is None:
        raise ValueError(
            f"--host {address} listens on every interface, which is no address a browser can open: "
            "give --public-origin with the origin browsers will use (the reverse proxy's)"
        )
    warning = (
        f"WARNING: listening on {address}, reachable from other machines. The token is the only "
        "protection, and over plain http it travels in clear text: put this server behind a reverse "
        "proxy with TLS and real authentication, and let only the proxy reach this port."
    )
    return Binding(str(address), port, public, warning)
