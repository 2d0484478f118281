"""A canned stdlib HTTP server on 127.0.0.1 for tests that need exact bytes on a real socket.

The tests that use it state their routes in a `BaseHTTPRequestHandler` of their own; this module
only runs it: a `ThreadingHTTPServer` on a free loopback port, in a daemon thread, stopped and
closed when the `with` block ends. It polls for shutdown every 10 ms (the stdlib default of 0.5 s
cost half a second per test at teardown). `silent_listener` is the other kind of agent a test
needs: one that takes the connection and never answers.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], *, backlog: int = 5) -> Iterator[ThreadingHTTPServer]:
    """Serve `handler` on 127.0.0.1 until the block ends; `base_url(server)` is its address.
    `backlog` is the listen queue: raise it where a test opens many connections at once."""
    server_class = type("Server", (ThreadingHTTPServer,), {"request_queue_size": backlog})
    server = server_class(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()  # returns at once when a test already shut it down
        server.server_close()
        thread.join(timeout=5)


def send_json(handler: BaseHTTPRequestHandler, doc: Any, status: int = 200) -> None:
    """Answer a request of `handler` with `doc` as JSON (a whole response, Content-Length set)."""
    body = json.dumps(doc).encode("utf-8")
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def base_url(server: ThreadingHTTPServer) -> str:
    """`http://127.0.0.1:PORT` of a server started by `serving`."""
    return f"http://127.0.0.1:{server.server_address[1]}"


class Spy(BaseHTTPRequestHandler):
    """A host that must never hear a secret: records every request in `seen` (path, headers,
    body) and answers 404. Reset `seen` before each use."""

    seen: ClassVar[list[tuple[str, dict[str, str], bytes]]] = []

    def _record(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        type(self).seen.append((self.path, dict(self.headers.items()), body))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _record

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def silent_listener() -> Iterator[socket.socket]:
    """A socket on 127.0.0.1 that takes connections into its backlog and never answers:
    `accept()` (60 s timeout) returns once a client has connected."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        listener.settimeout(60)
        yield listener
