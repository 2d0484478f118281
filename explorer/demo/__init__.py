"""Reference agents for the A2A Interview Extension, served on 127.0.0.1, and a builder's guide.

`interview-explorer demo` starts a fleet of small A2A agents, one per row of
`explorer.demo.variants.VARIANTS`: conformant ones (`steady`, `legacy`, `sdk-built`, ...) and
ones that break exactly one rule each (`drifting`, `leaky`, `forged`, ...), every row stating the
verdict and finding codes a correct verifier must reach. They are the explorer's test fixture,
its demo, and a worked example for anyone implementing the extension.

Implementing the interview in your own agent
=============================================

The whole extension is five read-only JSON-RPC methods whose answers are copied out of the
documents you already publish. Nothing in it needs your model; nothing in it may reach your model.

1. Declare it. In the card's `capabilities.extensions`, add
   `{"uri": "https://agentsow.com/extensions/a2a-interview/v1", "description": "...", "required": false}`
   (`required` must never be true). Publish your terms with the terms extension entry
   `{"uri": "https://agentsow.com/extensions/a2a-terms/v1", "params": {"sow_spec": ..., "proposals":
   [{"url", "digest", "sow", "offering"}]}}`, where `digest` is `sha256:` + hex of the RFC 8785
   (JCS) bytes of the exact proposal document you serve at `url`. See `documents.py`.

2. Activate per request. Answer `interview/identity`, `/capabilities`, `/usage`, `/terms` and
   `/refusals` only when the request's `A2A-Extensions` header (also `X-A2A-Extensions` on a v0.3
   interface) lists the URI exactly; echo it in the response's `A2A-Extensions`. Without it, the
   methods do not exist: JSON-RPC error -32601. See `app.activated` and `agent.Agent.handle_rpc`.

3. Project, never compose. Each answer is `{"question", "declared", "projections": [{"source":
   {"document": "card" | "proposal", "member": <RFC 6901 pointer>, "url"?, "digest"?}, "value"}]}`
   and each `value` is read back through its own pointer from the bytes you serve, so it is equal
   under JCS by construction. The member lists per question are in `projection.py`, the module
   to copy. Proposal sources carry the `url` and `digest` of the terms entry they project. With
   no terms entry, `interview/terms` answers `declared: false` with no projections.

4. Close the set. Under activation, any other method, and any `skill` selector that matches no
   declared skill id byte for byte, gets the standard refusal as the `result`:
   `{"refused": true, "reason": "out_of_scope", "detail": "no declared skill matches",
   "declared_skills": [<your skill ids, in card order>]}` (`projection.standard_refusal`).
   The selector is the only input, and it is only ever compared, never interpreted.

5. Be boring on the wire. Malformed requests get -32700 / -32600 / -32602 exactly as JSON-RPC
   2.0 says (`jsonrpc.py`), bodies are capped before they are read, answers are cached per
   declaration state and served as bytes, and each client is rate-limited with 429 and
   `Retry-After` (`ratelimit.py`). Two identical asks of an unchanged agent return identical bytes.

Running your agent through `interview-explorer verify http://127.0.0.1:PORT --allow-jku` tells you
which of these you got wrong, member by member.

Layout of this package
======================

- `variants.py`: the table of agents (behaviour switches and expected results).
- `content.py`: what the agents declare (skills, proposals, hostile strings).
- `documents.py`: builds and signs each agent's card and proposals; `openclasp_site.py`: the
  OpenClasp platform documents for the `openclasp` agents.
- `projection.py`: the reference projection; `faults.py`: how the misbehaving agents deviate.
- `jsonrpc.py`, `ratelimit.py`, `agent.py`: the interview endpoint without HTTP.
- `app.py`: the Starlette app; `sdk_agent.py`: the same endpoint in front of a2a-sdk's server.
- `fleet.py`: `Fleet`, every agent its own uvicorn server on one background event loop.
- `sockets.py`: the listening socket every server binds (TCP, with TCP_NODELAY).
- `hostile_cases.py`: the hostile agent's case table (one way to misbehave per row, with what a
  verifier must conclude); `hostile.py`: the raw HTTP/1.1 server that serves those cases.
"""
