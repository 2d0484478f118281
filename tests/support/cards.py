"""A generic A2A Agent Card (v1.0 layout) as the JSON a test writes to a file or serves.

Most tests that need a card do not test the card: they need one that points the explorer at a
JSON-RPC interface, declares the interview (or not) and lists a few skills, with perhaps a member
of their own (security schemes, a version). `agent_card(...)` writes that card, so the test says only
what matters to it. Cards that are the subject of a test (layouts, hostile members, a signer's
form) stay written out in full where they are used.

The extension URIs are the published ones (docs/PROTOCOL.md), not imported from the explorer, so
tests that meet the explorer only from the outside (the contract audit) can use this too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

INTERVIEW_URI = "https://agentsow.com/extensions/a2a-interview/v1"
TERMS_URI = "https://agentsow.com/extensions/a2a-terms/v1"
SOW_SPEC = "0.18.0-draft"
RPC_URL = "http://127.0.0.1:9/rpc"  # nothing listens on the discard port


def skill(skill_id: str) -> dict[str, Any]:
    """A skill entry with every member a reader expects, named after its id."""
    return {"id": skill_id, "name": skill_id, "description": f"does {skill_id}", "tags": []}


def agent_card(
    name: str,
    *,
    url: str | None = RPC_URL,
    skills: Iterable[str | Mapping[str, Any]] = (),
    interview: bool = True,
    terms: Iterable[Mapping[str, Any]] | None = None,
    **members: Any,
) -> dict[str, Any]:
    """A v1.0 card named `name`, its JSON-RPC 1.0 interface at `url` (None: no interface).

    `skills` are ids (made into whole entries by `skill`) or entries as they are; `interview`
    declares the interview extension (not required); `terms` lists proposals (`url`, `digest`,
    ...) for a terms extension. Other keywords are further members (`version`,
    `securitySchemes`, ...), and replace the built ones of the same name."""
    interfaces = [] if url is None else [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    extensions: list[dict[str, Any]] = []
    if interview:
        extensions.append({"uri": INTERVIEW_URI, "required": False})
    if terms is not None:
        params = {"sow_spec": SOW_SPEC, "proposals": [dict(proposal) for proposal in terms]}
        extensions.append({"uri": TERMS_URI, "required": False, "params": params})
    doc: dict[str, Any] = {
        "name": name,
        "supportedInterfaces": interfaces,
        "capabilities": {"extensions": extensions},
        "skills": [skill(s) if isinstance(s, str) else dict(s) for s in skills],
    }
    doc.update(members)
    return doc
