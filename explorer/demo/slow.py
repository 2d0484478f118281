"""A loopback agent that answers every request just under the timeout: the shapes a run's deadline exists for.

The reference fleet answers at once; this agent answers everything after `delay` seconds, and
serves one card per shape, each under its own path prefix (`/{shape}/.well-known/agent-card.json`):

- `answers`: nothing else to fetch; every JSON-RPC call gets an error, so the procedure re-runs,
  and with re-runs to spare a run is as long as the agent makes it (attempts x a few answers);
- `schemes`: forty OpenID Connect security schemes, each with its own discovery document (which
  names a token endpoint that issues a token), as a card may declare;
- `proposals`: sixteen committed proposals, each answered 429 with a long `Retry-After`;
- `jku`: four signatures, each naming its own `jku` key set.

It is the agent `tests/test_deadline.py` cuts and `bench/deadline.py` times; neither belongs in
the fleet, whose agents must answer quickly. Run on its own (`python -m explorer.demo.slow
--delay 0.85`) it prints its base URL and serves until interrupted. Requests are recorded in
`SlowAgent.seen` ("GET /schemes/oidc/0"), so a test can count what the verifier asked for;
`SlowAgent.prepare(root)` builds the cards before the first request.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from explorer.core.card import INTERVIEW_URI, TERMS_URI
from explorer.core.signatures import generate_key, sign_card

SHAPES = ("answers", "schemes", "proposals", "jku")
SCHEMES, PROPOSALS, JKU = 40, 16, 4
TOKEN = {"access_token": "slow-token-0123456789", "token_type": "Bearer", "expires_in": 3600}


def card_for(base: str, shape: str) -> dict[str, Any]:
    """The card of one shape, for the agent at `base` (e.g. `http://127.0.0.1:PORT/answers`)."""
    extensions: list[dict[str, Any]] = [{"uri": INTERVIEW_URI, "required": False}]
    if shape == "proposals":
        committed = [
            {
                "url": f"{base}/terms/{n}.sow.json",
                "digest": "sha256:" + f"{n:064x}",
                "sow": f"sow_{n}",
                "offering": "slow",
            }
            for n in range(PROPOSALS)
        ]
        extensions.append(
            {
                "uri": TERMS_URI,
                "required": False,
                "params": {"sow_spec": "0.18.0-draft", "proposals": committed},
            }
        )
    card: dict[str, Any] = {
        "name": f"Slow Agent ({shape})",
        "supportedInterfaces": [
            {"url": f"{base}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"extensions": extensions},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "slow", "name": "Slow", "description": "answers slowly", "tags": []}],
    }
    if shape == "schemes":
        card["securitySchemes"] = {
            f"oidc{n}": {"openIdConnectSecurityScheme": {"openIdConnectUrl": f"{base}/oidc/{n}"}}
            for n in range(SCHEMES)
        }
    if shape == "jku":
        key = generate_key("ES256", kid="slow-1")
        for n in range(JKU):
            card = sign_card(card, key, kid="slow-1", jku=f"{base}/jwks/{n}")
    return card


class SlowAgent(BaseHTTPRequestHandler):
    """Every answer after `delay` seconds (class attributes: set them before serving)."""

    delay: ClassVar[float] = 0.85
    retry_after: ClassVar[str] = "5"
    seen: ClassVar[list[str]] = []
    _cards: ClassVar[dict[str, bytes]] = {}
    _lock = threading.Lock()

    def log_message(self, *_args: Any) -> None:
        pass

    def _send(self, status: int, doc: Any, headers: dict[str, str] | None = None) -> None:
        body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the verifier gave up on this request: what a deadline is for

    def _where(self) -> tuple[str, str, str]:
        """(shape, the agent's base URL, the rest of the path)."""
        _, shape, rest = (self.path.split("/", 2) + ["", ""])[:3]
        address = self.server.server_address
        assert isinstance(address, tuple)  # an IPv4 server's (host, port)
        return shape, f"http://127.0.0.1:{address[1]}/{shape}", "/" + rest

    @classmethod
    def prepare(cls, root: str) -> None:
        """Build (and sign) every shape's card for the server at `root` before it is asked, so
        the first card request costs `delay` like every other, not a key generation too."""
        with cls._lock:
            for shape in SHAPES:
                cls._cards[f"{root}/{shape}"] = json.dumps(card_for(f"{root}/{shape}", shape)).encode()

    def _card(self, shape: str, base: str) -> bytes:
        with self._lock:
            if base not in SlowAgent._cards:
                SlowAgent._cards[base] = json.dumps(card_for(base, shape)).encode()
            return SlowAgent._cards[base]

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        SlowAgent.seen.append(f"GET {self.path}")
        time.sleep(type(self).delay)
        shape, base, rest = self._where()
        if shape not in SHAPES:
            self._send(404, {"error": "not_found"})
        elif rest == "/.well-known/agent-card.json":
            self._send(200, self._card(shape, base))
        elif rest.startswith("/oidc/"):
            self._send(200, {"issuer": base, "token_endpoint": f"{base}/token"})
        elif rest.startswith("/jwks/"):
            self._send(200, {"keys": []})
        elif rest.startswith("/terms/"):
            self._send(429, {"error": "slow down"}, {"Retry-After": type(self).retry_after})
        else:
            self._send(404, {"error": "not_found"})

    def do_POST(self) -> None:  # noqa: N802
        SlowAgent.seen.append(f"POST {self.path}")
        body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 65536))
        time.sleep(type(self).delay)
        if self._where()[2] == "/token":
            self._send(200, TOKEN)
            return
        try:
            request_id = json.loads(body).get("id")
        except (ValueError, AttributeError):
            request_id = None
        self._send(200, {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m explorer.demo.slow", description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.85, help="seconds before every answer")
    args = parser.parse_args(argv)
    SlowAgent.delay = args.delay
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowAgent)
    server.daemon_threads = True
    root = f"http://127.0.0.1:{server.server_address[1]}"
    SlowAgent.prepare(root)
    print(root, flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
