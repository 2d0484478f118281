"""The wire form of interview calls: JSON-RPC bodies and the activation headers.

Kept apart from the procedure so the exact bytes and headers a verifier sends are stated once
(docs/PROTOCOL.md section 3): `A2A-Extensions` carries the interview URI when the extension is
activated (plus `X-A2A-Extensions` for a v0.3 interface, whose SDKs read the older name), and
`A2A-Version` names the interface's protocol family on every call, activated or not, so the
unactivated probe differs from a real call by the activation alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from explorer.core.card import INTERVIEW_URI


def rpc_body(request_id: int, method: str, params: Mapping[str, Any] | None = None) -> bytes:
    """A JSON-RPC 2.0 request body (compact, deterministic); `params` None omits the member,
    which JSON-RPC 2.0 allows (the unactivated probe is sent both ways)."""
    doc: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        doc["params"] = dict(params)
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def call_headers(family: str, *, activated: bool) -> dict[str, str]:
    """Headers for an interview call on an interface of this family ("1.0" or "0.3")."""
    headers = {"A2A-Version": "0.3" if family == "0.3" else "1.0", "Content-Type": "application/json"}
    if activated:
        headers["A2A-Extensions"] = INTERVIEW_URI
        if family == "0.3":
            headers["X-A2A-Extensions"] = INTERVIEW_URI
    return headers
