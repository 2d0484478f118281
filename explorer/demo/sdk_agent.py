"""The `sdk-built` reference agent: the official a2a-sdk server and signer, with the interview in front.

This is how an agent builder who already runs on a2a-sdk adds the extension without forking it:

- the card is an `a2a.types.AgentCard`, signed by the SDK's own `create_agent_card_signer` and
  served by the SDK's own `create_agent_card_routes`. The SDK signs its normalised form of the
  card (docs/PROTOCOL.md section 2, `sdk-normalized`), which is what a verifier must accept;
- interview answers are projected from exactly what that route serves (`agent_card_to_dict` of
  the signed card), never from the dict the card was built from, because the SDK drops defaults
  such as `"required": false` on the way out;
- the SDK's signature covers its normalised form only, which its route does not serve (it still
  serves an API key requirement with no scopes, an empty the signer dropped), so a client
  following A2A section 8.4 would reject it: the card also carries a served-form signature
  (`_sign_other_forms`), and every client stack accepts it (`card.signature.accepted_by`);
- a small front endpoint sits on the JSON-RPC path: requests that activate the interview, or
  name an `interview/*` method, go to the same `Agent.handle_rpc` every other demo agent uses;
  everything else is replayed, byte for byte, into the SDK's own JSON-RPC route.

`sdk-unimplemented` is the same agent without the front's interview half: its card declares the
interview, and every call goes to the SDK, which answers an `interview/*` method -32601 (method
not found) in HTTP 200, as an a2a-sdk agent given the extension in its card but not its methods
does.

Importing a2a-sdk takes about a second, so the fleet builds this agent in the background. The
module imports the SDK only inside `build`, and the fleet skips the agent when it is missing.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message

from explorer.demo import documents
from explorer.demo.agent import PREFIX, Agent
from explorer.demo.app import activated, client_of, not_found, read_capped, to_response, too_large
from explorer.demo.jsonrpc import dumps
from explorer.demo.ratelimit import RateLimiter
from explorer.demo.variants import Variant

REPLY_TEXT = "This demo agent only answers the interview (A2A-Extensions: the interview URI)."


def _names_interview_method(body: bytes) -> bool:
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):
        return False
    method = doc.get("method") if isinstance(doc, dict) else None
    return isinstance(method, str) and method.startswith(PREFIX)


def _replay(body: bytes) -> Any:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _executor() -> Any:
    from a2a.helpers import new_text_message
    from a2a.server.agent_execution import AgentExecutor

    class DemoExecutor(AgentExecutor):
        """Ordinary traffic gets one fixed message; the demo does no work."""

        async def execute(self, context: Any, event_queue: Any) -> None:
            await event_queue.enqueue_event(new_text_message(REPLY_TEXT, context_id=context.context_id))

        async def cancel(self, context: Any, event_queue: Any) -> None:
            return None

    return DemoExecutor()


def _without_httpx_cli() -> None:
    """Import explorer.net before the SDK imports httpx, so httpx leaves its CLI (and rich) out."""
    import explorer.net  # noqa: F401


def _sign_other_forms(
    card: Any, key: documents.CardKey, urls: documents.Urls, served: dict[str, Any]
) -> None:
    """Append a signature over each payload form other stacks verify (the served form of A2A
    section 8.4, the JS SDK's) whose bytes differ from the SDK's own: the SDK drops members its
    route still serves (`securityRequirements: [{"schemes": {"apiKey": {}}}]`, an API key with no
    scopes), so its signature alone is rejected by a client following the spec."""
    from a2a.types import AgentCardSignature

    from explorer.core import signatures

    done = {signatures.payload_bytes(served, "sdk-normalized")}
    signed = served
    for form in ("served", "a2a-js"):
        payload = signatures.payload_bytes(served, form)
        if payload in done:
            continue
        signed = signatures.sign_card(signed, key.key, kid=key.kid, jku=urls.jwks, form=form)
        entry = signed["signatures"][-1]
        card.signatures.append(AgentCardSignature(protected=entry["protected"], signature=entry["signature"]))
        done.add(payload)


def build(
    variant: Variant,
    urls: documents.Urls,
    key: documents.CardKey,
    provider: documents.Provider,
    limiter: RateLimiter,
) -> tuple[Agent, Starlette]:
    """The agent and its Starlette app, built on a2a-sdk."""
    _without_httpx_cli()
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import AgentCard
    from a2a.utils.signing import create_agent_card_signer
    from google.protobuf import json_format

    if variant.unimplemented is not None:
        # The SDK logs each error reply as a warning; here every interview call is one, by design.
        logging.getLogger("a2a.server.routes.jsonrpc_dispatcher").setLevel(logging.ERROR)
    plain = documents.build(dataclasses.replace(variant, signed=False), urls, key, provider)
    card = json_format.ParseDict(plain.card, AgentCard())
    signer = create_agent_card_signer(
        signing_key=key.key.as_pem(private=True),
        protected_header={"kid": key.kid, "alg": "ES256", "jku": urls.jwks, "typ": "JOSE"},
    )
    card = signer(card)
    if variant.stacks_agree:
        _sign_other_forms(card, key, urls, agent_card_to_dict(card))
    served = agent_card_to_dict(card)
    docs = dataclasses.replace(
        plain,
        card=served,
        card_bytes=dumps(served),
        files={**plain.files, documents.JWKS_PATH: dumps(key.jwks)},
    )
    agent = Agent(variant, [docs], limiter)
    handler = DefaultRequestHandler(
        agent_executor=_executor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    sdk_rpc = create_jsonrpc_routes(handler, rpc_url=documents.JSONRPC_PATH)[0].endpoint

    async def front(request: Request) -> Response:
        body = await read_capped(request)
        if body is None:
            return to_response(too_large())
        is_activated = activated(request, legacy=False)
        if variant.unimplemented is None and (is_activated or _names_interview_method(body)):
            return to_response(agent.handle_rpc(body, client=client_of(request), activated=is_activated))
        return await sdk_rpc(Request(request.scope, _replay(body)))

    async def published(request: Request) -> Response:
        body = agent.documents.files.get(request.url.path)
        return not_found() if body is None else Response(body, media_type="application/json")

    routes = [
        *create_agent_card_routes(card),
        Route(documents.JSONRPC_PATH, front, methods=["POST"]),
        Route("/{path:path}", published, methods=["GET"]),
    ]
    return agent, Starlette(routes=routes)
