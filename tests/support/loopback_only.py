"""A guard that keeps the test process on loopback: no name lookup and no connection beyond it.

The tests talk only to 127.0.0.0/8 and ::1 (the reference agents, PostgreSQL, the browser's
driver). A change that makes a command reach further (say, `card` fetching a proposal named by a
card file) would still pass offline, where the lookup just fails, and hit the internet on a
connected machine. So `install()` wraps `socket.getaddrinfo` and `socket.socket.connect` /
`connect_ex` in this process: a lookup of a name other than `localhost`, or a connection to an
address outside loopback, is refused with the error a dead network gives (the code under test
sees an ordinary failure) and is recorded; `tests/conftest.py` fails the test that made it.

Looking up an address literal passes (no resolver is asked; an address filter's tests do it);
connecting to a non-loopback one is what is refused. Subprocesses are not covered (they run the
same code paths the in-process tests cover). Unix sockets pass, and so does a lookup with no
host (a server binding to a wildcard).
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

attempts: list[str] = []

_LOCAL_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost", "ip6-loopback"})
_real_getaddrinfo = socket.getaddrinfo
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _literal(host: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a numeric host spells, in any form the C resolver reads without asking anyone
    (`127.1`, `0x7f000001` and `2130706433` are inet_aton forms), or None for a name."""
    text = (host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)).split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if not text or not all(c.isalnum() or c == "." for c in text):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def is_loopback_host(host: Any) -> bool:
    """Whether `host` (a name, an address literal, or None/empty for "any") stays on this machine."""
    if host in (None, "", b""):
        return True
    text = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
    if text.lower() in _LOCAL_NAMES or text.lower().endswith(".localhost"):
        return True
    address = _literal(host)
    if address is None:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or address.is_unspecified or (mapped is not None and mapped.is_loopback))


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not is_loopback_host(host) and _literal(host) is None:
        attempts.append(f"name lookup of {host!r}")
        raise socket.gaierror(socket.EAI_NONAME, f"the tests' loopback guard refused to look up {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


def _refused(sock: socket.socket, address: Any) -> bool:
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple):
        return False
    if is_loopback_host(address[0]):
        return False
    attempts.append(f"connection to {address!r}")
    return True


def _connect(self: socket.socket, address: Any) -> None:
    if _refused(self, address):
        raise OSError(101, f"the tests' loopback guard refused a connection to {address!r}")
    _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    if _refused(self, address):
        return 101  # ENETUNREACH, as connect_ex reports it
    return _real_connect_ex(self, address)


def install() -> None:
    """Wrap the lookups and connections of this process (once; idempotent)."""
    socket.getaddrinfo = _getaddrinfo
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]


def take() -> list[str]:
    """The attempts recorded since the last call, cleared."""
    taken = list(attempts)
    attempts.clear()
    return taken
