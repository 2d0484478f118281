"""Every server socket the reference agents create sends small replies at once (TCP_NODELAY).

Without the option, a reply written in two pieces waits for the client's delayed ACK, about 40 ms
per request on loopback, which made every demo interview slow and every benchmark floor dishonest.
The tests look at the server's end of a real accepted connection, found among this process's own
file descriptors (the servers run in background threads of the test process), and read the
option from it: a fact about the socket, not a timing.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.demo.fleet import Fleet
from explorer.demo.hostile import HostileServer
from explorer.demo.sockets import listening_socket

FDS = Path("/proc/self/fd")
pytestmark = pytest.mark.skipif(not FDS.is_dir(), reason="needs /proc/self/fd to find the accepted socket")


def _sockets() -> Iterator[socket.socket]:
    for entry in os.listdir(FDS):
        try:
            if not os.readlink(FDS / entry).startswith("socket:"):
                continue
            yield socket.socket(fileno=os.dup(int(entry)))
        except OSError:
            continue  # closed meanwhile


def _accepted_end(client: socket.socket, timeout: float = 5.0) -> socket.socket:
    """The server's socket of `client`'s connection (a duplicate descriptor of it)."""
    ours, theirs = client.getsockname(), client.getpeername()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for sock in _sockets():
            try:
                if sock.getsockname() == theirs and sock.getpeername() == ours:
                    return sock
            except OSError:
                pass
            sock.close()
        time.sleep(0.01)
    raise AssertionError(f"no accepted socket for {ours} -> {theirs} within {timeout} s")


def _nodelay(sock: socket.socket) -> bool:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def _assert_accepted_connection_has_nodelay(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
        assert not _nodelay(client)  # the client did not ask for it, so the check below means something
        with _accepted_end(client) as accepted:
            assert accepted.proto == socket.IPPROTO_TCP
            assert _nodelay(accepted)


@pytest.mark.parametrize("name", ["steady", "sdk-built"])
def test_fleet_agents_accept_connections_with_nodelay(name: str) -> None:
    with Fleet([name]) as fleet:
        if name in fleet.skipped:
            pytest.skip(fleet.skipped[name])
        assert fleet.wait_ready(timeout=60)
        port = int(fleet.agents[name].base_url.rsplit(":", 1)[1])
        _assert_accepted_connection_has_nodelay(port)


def test_hostile_server_accepts_connections_with_nodelay() -> None:
    with HostileServer() as server:
        _assert_accepted_connection_has_nodelay(server.port)


def test_listening_socket_is_tcp_with_nodelay_and_released_on_failure() -> None:
    with listening_socket("127.0.0.1", 0) as sock:
        assert sock.proto == socket.IPPROTO_TCP
        assert _nodelay(sock)
        taken = sock.getsockname()[1]
        with pytest.raises(OSError):
            listening_socket("127.0.0.1", taken)
