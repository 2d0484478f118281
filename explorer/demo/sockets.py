"""Listening sockets for the reference agents: real TCP sockets whose connections set TCP_NODELAY.

Every server the demo package runs (the fleet's uvicorn servers, the hostile agent's raw asyncio
server) binds its socket here, because of one trap: a socket made with
`socket.socket(AF_INET, SOCK_STREAM)` has protocol 0, not IPPROTO_TCP, and asyncio only turns on
TCP_NODELAY for accepted connections whose protocol is IPPROTO_TCP. Without it, a reply written in
two pieces (headers, then body) waits for the client's delayed ACK, about 40 ms a request on
loopback. So the socket is created with the protocol named, and the option is also set on the
listener (Linux copies it to each accepted connection), which covers servers that never ask
asyncio to set it.
"""

from __future__ import annotations

import socket

__all__ = ["listening_socket"]


def listening_socket(host: str, port: int, backlog: int = 128) -> socket.socket:
    """A bound, listening IPv4 TCP socket with SO_REUSEADDR and TCP_NODELAY (OSError if it cannot)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock
