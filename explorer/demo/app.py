"""The HTTP face of a reference agent: a small Starlette app around an `Agent`.

Routes, all exact-match lookups in what the agent published at start-up:

- `GET /.well-known/agent-card.json` (and, for OpenClasp agents, `/agents/{id}/a2a-agent-card.json`):
  the card, as bytes fixed at start-up for each declaration state;
- `GET` of any other published file: the JWKS named by the card signature's `jku`, the proposals
  under `/terms/`, the OpenClasp public card and key, the reputation record;
- `GET /a/{slug}` and `GET /directory/resolve?reference=...`: the OpenClasp profile and resolver;
- `POST /a2a/jsonrpc`: the interview endpoint, with the body capped before it is read in full;
  for a guarded agent, admitted only with its credential (`explorer.demo.guard`);
- `POST /oauth2/token`: a guarded-oauth2 agent's token endpoint (client credentials), and
  `GET /.well-known/openid-configuration` its OpenID Connect discovery document naming it.

A path that was not published is 404; the request path and query are only ever used as dict keys.
Activation is read from `A2A-Extensions` (and `X-A2A-Extensions` on a v0.3 interface): a
comma-separated list of URIs, matched exactly.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from explorer.core.card import INTERVIEW_URI
from explorer.core.openclasp import RESOLVE_PATH
from explorer.demo.agent import Agent, Reply
from explorer.demo.documents import JSONRPC_PATH, OIDC_PATH, TOKEN_PATH
from explorer.demo.guard import Guard
from explorer.demo.jsonrpc import INVALID_REQUEST, MAX_BODY, error_body

JSON = "application/json"


def not_found() -> Response:
    return Response(b'{"error":"not_found"}', status_code=404, media_type=JSON)


def activated(request: Request, *, legacy: bool) -> bool:
    """True when the interview URI is listed in the activation header(s)."""
    names = ("a2a-extensions", "x-a2a-extensions") if legacy else ("a2a-extensions",)
    for name in names:
        for value in request.headers.getlist(name):
            if INTERVIEW_URI in (token.strip() for token in value.split(",")):
                return True
    return False


async def read_capped(request: Request, cap: int = MAX_BODY) -> bytes | None:
    """The request body, or None as soon as it is known to exceed `cap` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def too_large() -> Reply:
    """The 413 answer to a JSON-RPC body over `MAX_BODY` bytes."""
    message = f"Invalid Request: the body exceeds {MAX_BODY} bytes"
    return Reply(413, error_body(None, INVALID_REQUEST, message))


def client_of(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def to_response(reply: Reply) -> Response:
    media = JSON if reply.body else None
    return Response(reply.body, status_code=reply.status, headers=reply.headers, media_type=media)


async def rpc_reply(agent: Agent, request: Request) -> Reply:
    """Read (capped) and answer one JSON-RPC POST."""
    legacy = agent.variant.layout == "v0.3"
    body = await read_capped(request)
    if body is None:
        return too_large()
    return agent.handle_rpc(body, client=client_of(request), activated=activated(request, legacy=legacy))


def _headers(request: Request) -> dict[str, str]:
    return {name.lower(): value for name, value in request.headers.items()}


def build_app(agent: Agent, guard: Guard | None = None) -> Starlette:
    """The Starlette app serving one agent (behind `guard` when it requires authentication)."""

    async def jsonrpc(request: Request) -> Response:
        if guard is not None:
            denied = guard.admit(_headers(request))
            if denied is not None:
                return Response(
                    denied.body, status_code=denied.status, headers=denied.headers, media_type=JSON
                )
        return to_response(await rpc_reply(agent, request))

    async def token(request: Request) -> Response:
        assert guard is not None
        answer = guard.token(_headers(request), await read_capped(request))
        return Response(answer.body, status_code=answer.status, headers=answer.headers, media_type=JSON)

    async def published(request: Request) -> Response:
        path = request.url.path
        if path == JSONRPC_PATH:
            return Response(status_code=405, headers={"Allow": "POST"})
        docs = agent.documents
        if guard is not None and guard.kind == "oauth2" and path == OIDC_PATH:
            return Response(guard.discovery(str(request.base_url).rstrip("/") + TOKEN_PATH), media_type=JSON)
        if path in docs.card_paths:
            return Response(agent.card_fetched(), media_type=JSON)
        body = docs.files.get(path)
        if body is not None:
            return Response(body, media_type=JSON)
        site = docs.site
        if site is not None:
            if path == RESOLVE_PATH:
                found = site.resolutions.get(request.query_params.get("reference", ""))
                return not_found() if found is None else Response(found, media_type=JSON)
            if path == site.profile_path:
                return Response(site.profile_html, media_type="text/html; charset=utf-8")
        return not_found()

    routes = [Route(JSONRPC_PATH, jsonrpc, methods=["POST"])]
    if guard is not None and guard.kind == "oauth2":
        routes.append(Route(TOKEN_PATH, token, methods=["POST"]))
    return Starlette(routes=[*routes, Route("/{path:path}", published, methods=["GET"])])
