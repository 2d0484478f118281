"""Regenerate the signed example cards in tests/data/ and examples/ (run by hand, not by pytest).

    .venv/bin/python tests/data/make_cards.py

Each run makes fresh keys, so every signature changes; the private keys are thrown away and only
the public JWKS is written next to each card. The cards are fixtures, so they are kept small and
readable: `steady-card.json` is a v1.0 card with the interview and terms extensions signed
spec-literally (payload form `served`); `merged-card.json` is a v1.0 + v0.3 card signed the way
a2a-sdk >= 1.1.4 signs (payload form `sdk-normalized`, so its v0.3 members are unsigned).
The proposal digest is the known digest of the signed Agent SoW vector in tests/vectors/sow/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from explorer.core.card import INTERVIEW_URI, TERMS_URI
from explorer.core.signatures import generate_key, public_jwks, sign_card

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "examples"
VECTOR_DIGEST = "sha256:078355014bf9a87852e4ca580395ffe123920ae243700c7e8dc5a2853f85d54d"


def steady_card(base: str) -> dict[str, Any]:
    return {
        "name": "Stonework Reconciler",
        "description": "Reconciles statements against ledgers; answers the A2A interview.",
        "version": "1.4.0",
        "provider": {"organization": "Stonework Example Ltd", "url": "https://stonework.example"},
        "supportedInterfaces": [
            {"url": f"{base}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {
            "streaming": False,
            "extensions": [
                {
                    "uri": INTERVIEW_URI,
                    "description": "The five questions, answered from declared documents",
                    "required": False,
                },
                {
                    "uri": TERMS_URI,
                    "required": False,
                    "params": {
                        "sow_spec": "0.18.0-draft",
                        "proposals": [
                            {
                                "url": f"{base}/terms/reconcile-statement.sow.json",
                                "digest": VECTOR_DIGEST,
                                "offering": "reconcile-statement",
                            }
                        ],
                    },
                },
            ],
        },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {
                "id": "reconcile-statement",
                "name": "Reconcile a statement",
                "description": "Matches each statement line against a ledger export.",
                "tags": ["accounting"],
            },
            {
                "id": "flag-exceptions",
                "name": "Flag exceptions",
                "description": "Flags duplicates, outliers and missing receipts.",
                "tags": ["audit"],
            },
        ],
    }


def merged_card(base: str) -> dict[str, Any]:
    card = steady_card(base)
    card["name"] = "Stonework Reconciler (merged layout)"
    card["supportedInterfaces"].append(
        {"url": f"{base}/a2a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
    )
    card["capabilities"]["extensions"][0]["required"] = False
    card.update({"url": f"{base}/a2a/v03", "preferredTransport": "JSONRPC", "protocolVersion": "0.3"})
    return card


def write(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    key = generate_key("ES256", kid="stonework-card-2026")
    steady = sign_card(steady_card("https://stonework.example"), key, kid=key.kid)
    write(HERE / "steady-card.json", steady)
    write(HERE / "steady-keys.jwks", public_jwks(key))

    sdk_key = generate_key("EdDSA", kid="stonework-sdk-2026")
    merged = sign_card(
        merged_card("https://stonework.example"), sdk_key, kid=sdk_key.kid, alg="EdDSA", form="sdk-normalized"
    )
    write(HERE / "merged-card.json", merged)
    write(HERE / "merged-keys.jwks", public_jwks(sdk_key))

    EXAMPLES.mkdir(exist_ok=True)
    example_key = generate_key("ES256", kid="example-agent-2026")
    write(
        EXAMPLES / "agent-card.json",
        sign_card(steady_card("http://127.0.0.1:8000"), example_key, kid=example_key.kid),
    )
    write(EXAMPLES / "agent-keys.jwks", public_jwks(example_key))


if __name__ == "__main__":
    main()
