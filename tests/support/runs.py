"""Synthetic runs shaped like the procedure's, for the history, compare and export tests (no tests here).

They follow docs/ARCHITECTURE.md's report and Run shapes closely enough that storage, comparison
and exports are exercised on realistic data without starting any agent: a card, the five
questions with projections, probes, findings, and an exchange per request with a `Date` header
and a bearer token that the fetcher *failed* to redact, so the store's own redaction is tested.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from explorer.core.run import Exchange, Run

SECRET = "Bearer s3cr3t-t0ken-never-stored"
CARD_URL = "http://127.0.0.1:9/.well-known/agent-card.json"
PROPOSAL_URL = "http://127.0.0.1:9/terms/reconcile.sow.json"


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def make_card(name: str = "Steady Agent", description: str = "Reconciles statements") -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "version": "1.0.0",
        "provider": {"organization": "Stonework", "url": "https://stonework.example"},
        "skills": [
            {"id": "reconcile-statement", "name": "Reconcile", "description": description},
            {"id": "flag-exceptions", "name": "Flag", "description": "Flags exceptions"},
        ],
    }


def _projection(
    q: str, i: int, member: str, value: Any, source: Any, document: str = "card"
) -> dict[str, Any]:
    same = _canon(value) == _canon(source)
    return {
        "index": i,
        "question": q,
        "document": document,
        "member": member,
        "url": PROPOSAL_URL if document == "proposal" else None,
        "digest": "sha256:" + "ab" * 32 if document == "proposal" else None,
        "status": "match" if same else "mismatch",
        "value": value,
        "source_value": source,
        "value_canonical": _canon(value),
        "source_canonical": _canon(source),
        "signed": True,
        "lossy": False,
        "diff": None if same else [0, 1],
    }


def make_run(
    *,
    name: str = "Steady Agent",
    answered_name: str | None = None,
    verdict: str = "conformant",
    role: str = "self",
    runner: str = "tester",
    card_url: str = CARD_URL,
    started_at: str = "2025-01-01T00:00:00.000Z",
    elapsed_ms: float = 3.25,
    extra_skill: bool = False,
    price: int = 2500000,
) -> Run:
    """A complete Run; `answered_name` differing from `name` makes identity mismatch."""
    card = make_card(name)
    card_bytes = json.dumps(card, indent=2).encode()
    said = name if answered_name is None else answered_name
    projections = {
        "identity": [
            _projection("identity", 0, "/name", said, name),
            _projection("identity", 1, "/version", "1.0.0", "1.0.0"),
        ],
        "capabilities": [
            _projection("capabilities", i, f"/skills/{i}/id", s["id"], s["id"])
            for i, s in enumerate(card["skills"])
        ],
        "usage": [],
        "terms": [
            _projection("terms", 0, "/price", {"per_task": price}, {"per_task": price}, document="proposal")
        ],
        "refusals": [
            _projection("refusals", i, f"/skills/{i}/id", s["id"], s["id"])
            for i, s in enumerate(card["skills"])
        ],
    }
    if extra_skill:
        projections["capabilities"].append(_projection("capabilities", 2, "/skills/2/id", "sneaky", None))
    answers = {
        q: {
            "question": q,
            "declared": True,
            "projections": [
                {"source": {"document": p["document"], "member": p["member"]}, "value": p["value"]}
                for p in ps
            ],
        }
        for q, ps in projections.items()
    }
    findings = []
    if said != name:
        findings.append(
            {
                "code": "projection_mismatch",
                "severity": "error",
                "question": "identity",
                "member": "/name",
                "detail": "the answer differs from the card",
            }
        )
    report = {
        "report_version": 1,
        "explorer_version": "0.1.0",
        "target": card_url,
        "started_at": started_at,
        "finished_at": started_at,
        "verdict": verdict,
        "ran_by": {"name": runner, "role": role},
        "standing": "claim" if role == "self" else "evidence",
        "attempts": 1,
        "card": {
            "url": card_url,
            "discovered_via": "card-url",
            "layout": "v1.0",
            "sha256": hashlib.sha256(_canon(card).encode()).hexdigest(),
            "name": name,
            "jsonrpc_url": card_url.rsplit("/.well-known", 1)[0] + "/a2a",
            "protocol_version": "1.0",
            "signature": {
                "status": "verified",
                "form": "served",
                "alg": "EdDSA",
                "kid": "k1",
                "key_source": "user",
                "signatures": [],
                "unsigned_members": [],
            },
            "interview": {"declared": True, "required": False},
            "terms": {
                "declared": True,
                "proposals": [
                    {
                        "url": PROPOSAL_URL,
                        "digest": "sha256:" + "ab" * 32,
                        "sow": None,
                        "offering": None,
                        "status": "verified",
                        "computed_digest": "sha256:" + "ab" * 32,
                        "standing": True,
                        "signer": None,
                        "steps": [],
                        "clauses": [{"member": "/price", "grade": "enforced"}],
                    }
                ],
            },
            "reputation": None,
        },
        "questions": {
            q: {"status": "answered", "answer": answers[q], "declared": True, "projections": ps}
            for q, ps in projections.items()
        },
        "probes": [
            {
                "name": "undefined_method",
                "request": {"method": "interview/undefined", "params": {}, "activated": True},
                "response": {
                    "refused": True,
                    "reason": "out_of_scope",
                    "detail": "no declared skill matches",
                    "declared_skills": ["reconcile-statement", "flag-exceptions"],
                },
                "status": 200,
                "outcome": "refused",
            },
        ],
        "findings": findings,
        "extensions": [],
        "extension_results": {"openclasp": None, "reputation": None},
        "answers_sha256": hashlib.sha256(_canon(answers).encode()).hexdigest(),
    }
    date = f"Wed, 01 Jan 2025 00:00:{int(elapsed_ms) % 60:02d} GMT"
    exchanges = [
        Exchange(
            purpose="card",
            attempt=1,
            method="GET",
            url=card_url,
            request_headers=(("Accept", "application/json"), ("Authorization", SECRET)),
            status=200,
            response_headers=(("content-type", "application/json"), ("date", date)),
            response_body=card_bytes,
            started_at=started_at,
            elapsed_ms=elapsed_ms,
        )
    ]
    for n, q in enumerate(answers):
        body = json.dumps({"jsonrpc": "2.0", "id": n, "method": f"interview/{q}", "params": {}}).encode()
        reply = json.dumps({"jsonrpc": "2.0", "id": n, "result": answers[q]}).encode()
        exchanges.append(
            Exchange(
                purpose=f"ask:{q}#1",
                attempt=1,
                method="POST",
                url=report["card"]["jsonrpc_url"],
                request_headers=(
                    ("A2A-Extensions", "https://agentsow.com/extensions/a2a-interview/v1"),
                    ("X-Api-Key", "key-should-vanish"),
                ),
                request_body=body,
                status=200,
                response_headers=(
                    ("content-type", "application/json"),
                    ("Date", date),
                    ("Set-Cookie", "session=abc"),
                ),
                response_body=reply,
                started_at=started_at,
                elapsed_ms=elapsed_ms + n,
            )
        )
    keys = {
        "keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": "k1"}
        ]
    }
    return Run(report=report, exchanges=tuple(exchanges), keys=keys)
