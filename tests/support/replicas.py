"""One a2a-sdk agent deployed as production deploys it: replicas behind one round-robin front.

`replicated(count, ...)` starts, on 127.0.0.1, a front (a small reverse proxy that sends each
request to the next replica, in turn) and `count` replicas behind it, each its own uvicorn server
on its own port, and yields the front's address. Every replica is the `sdk-built` reference agent
(`explorer.demo.sdk_agent.build`): at its own start it builds the card, signs it with the
official a2a-sdk signer (`create_agent_card_signer`, ES256) under the one key all replicas share,
serves it with the SDK's own card route, and answers the interview by projecting the card it
serves, `/signatures` included. ECDSA signatures are randomized, so every replica serves
different signature bytes over the same declarations, as real replicas (or restarts) do.

Two ways a replica can depart from its siblings, one per keyword, each naming the replicas by
index: `described` serves (and signs, and projects) another card description, so its
signatures prove another payload; `forged` serves the honest card but answers the interview with
`/signatures` it did not earn ("another key": signed over the same card by a key the verifier
also trusts; "altered": the card's own signature with one character changed).

The card names the front's address, so a verifier fetches, asks and probes through the front
only; `keys` is the JWKS to pass with `verify --keys`. The SDK is imported when a replica is
built, so this module imports without it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from explorer.core.signatures import generate_key, public_jwks, sign_card
from explorer.demo import documents, sdk_agent
from explorer.demo.ratelimit import RateLimiter
from explorer.demo.sockets import listening_socket
from explorer.demo.variants import VARIANTS

Forgery = Literal["another key", "altered"]
HOST = "127.0.0.1"
# Hop-by-hop and length headers the front recomputes instead of copying.
_NOT_FORWARDED = frozenset({"host", "content-length", "transfer-encoding", "connection", "content-encoding"})


@dataclass(frozen=True)
class Deployment:
    """What a test needs from a running deployment: the front's address and the trusted keys."""

    url: str
    keys: dict[str, Any]
    forger: Any  # the other trusted key ("another key" forgeries are signed with it)


class _Server:
    """An ASGI app served by uvicorn on an already listening socket, in a daemon thread."""

    def __init__(self, app: Any, sock: socket.socket) -> None:
        config = uvicorn.Config(
            app, log_level="error", lifespan="off", access_log=False, ws="none", timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.sock = sock
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[sock])), daemon=True
        )

    def start(self) -> str:
        """Serve; the server's address once it is serving."""
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return f"http://{HOST}:{self.sock.getsockname()[1]}"

    def stop(self) -> None:
        """Ask to stop; `join` waits (several servers stop together: each takes a tenth of a second)."""
        self.server.should_exit = True

    def join(self) -> None:
        self.thread.join(timeout=10)
        self.sock.close()


def round_robin(upstreams: list[str]) -> Starlette:
    """The front: every request, whatever its method and path, goes to the next upstream in turn."""
    turn = itertools.count()

    async def forward(request: Request) -> Response:
        upstream = upstreams[next(turn) % len(upstreams)]
        target = upstream + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _NOT_FORWARDED]
        body = await request.body()
        async with httpx.AsyncClient(timeout=30) as client:
            reply = await client.request(request.method, target, headers=headers, content=body)
        kept = {k: v for k, v in reply.headers.items() if k.lower() not in _NOT_FORWARDED}
        return Response(reply.content, status_code=reply.status_code, headers=kept)

    return Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST"])])


def _forged(card: Mapping[str, Any], how: Forgery, forger: Any) -> dict[str, Any]:
    """The card with signatures that do not prove it as the card's key does."""
    if how == "another key":
        unsigned = {k: v for k, v in card.items() if k != "signatures"}
        return {
            **card,
            "signatures": sign_card(unsigned, forger, kid=forger.kid, form="sdk-normalized")["signatures"],
        }
    first = dict(card["signatures"][0])
    text = first["signature"]
    first["signature"] = text[:10] + ("A" if text[10] != "A" else "B") + text[11:]
    return {**card, "signatures": [first, *card["signatures"][1:]]}


def _replica(
    front: str,
    key: documents.CardKey,
    provider: documents.Provider,
    *,
    description: str | None,
    forgery: Forgery | None,
    forger: Any,
) -> Starlette:
    """One replica, built (and its card signed by the SDK) now: what it serves and answers."""
    variant = VARIANTS["sdk-built"]
    if description is not None:
        variant = dataclasses.replace(variant, description=description)
    agent, app = sdk_agent.build(variant, documents.Urls(front), key, provider, RateLimiter())
    if forgery is not None:
        # Answers are projected from the agent's declaration state: only the answers lie.
        state = agent.states[0]
        agent.states = (dataclasses.replace(state, card=_forged(state.card, forgery, forger)),)
    return app


@contextmanager
def replicated(
    count: int, *, described: Mapping[int, str] | None = None, forged: Mapping[int, Forgery] | None = None
) -> Iterator[Deployment]:
    """`count` replicas of one SDK agent behind a round-robin front; yields the front (see the module)."""
    key = documents.CardKey(generate_key("ES256", kid="replicas-card-1"), "replicas-card-1")
    forger = generate_key("ES256", kid="replicas-other-1")
    provider = documents.Provider()
    front_socket = listening_socket(HOST, 0)
    front = f"http://{HOST}:{front_socket.getsockname()[1]}"
    servers: list[_Server] = []
    try:
        upstreams = []
        for index in range(count):
            app = _replica(
                front,
                key,
                provider,
                description=(described or {}).get(index),
                forgery=(forged or {}).get(index),
                forger=forger,
            )
            servers.append(_Server(app, listening_socket(HOST, 0)))
            upstreams.append(servers[-1].start())
        servers.append(_Server(round_robin(upstreams), front_socket))
        servers[-1].start()
        yield Deployment(front, public_jwks(key.key, forger), forger)
    finally:
        for server in servers:
            server.stop()
        for server in servers:
            server.join()
        front_socket.close()
