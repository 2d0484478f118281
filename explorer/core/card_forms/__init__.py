"""Which bytes a card signature covers, under each payload form signers use (docs/PROTOCOL.md section 2).

The A2A spec says a card signature covers "the card minus `signatures`, canonicalized", but the
signers in real use disagree on what "the card" is before canonicalization, so a verifier that
only knows the spec-literal reading calls every card signed by the official Python SDK tampered.
This package rebuilds the payload the way each signer builds it, one module per signer:

- `spec.py`, form `served`: RFC 8785 (JCS) of the served JSON minus `signatures`.
- `python_sdk.py`, form `sdk-normalized`: a2a-sdk >= 1.1.4, the card read into and written back
  out of its protobuf message, then JCS.
- `python_sdk_legacy.py`, form `sdk-legacy-sorted`: a2a-sdk 1.0.0 to 1.1.3, the same message
  written with `json.dumps(sort_keys=True)`.
- `sdk_v03.py`, form `sdk-0.3`: a2a-sdk 0.3.x, the card through its pydantic models.
- `a2a_js.py`, form `a2a-js`: @a2a-js/sdk 1.x `canonicalizeAgentCard` (ts-proto).

`forms.py` is the face the rest of the explorer uses: `FORMS` in the order a verifier tries them,
`payload_bytes`, `unsigned_members` and what follows from them. What the SDK forms share lives
below the form modules: `tracked.py` (the payload tree whose every scalar remembers the served
member it came from, the SDKs' empty-dropping, `FormError`) and `schemas.py` (the card's message
shapes in v1.0 and v0.3, as the SDKs declare them).

The SDK behaviour is reproduced from the SDKs' source as data tables and small functions, not by
importing the SDKs: the core stays pure and the SDKs are only test dependencies.
`tests/test_sdk_interop.py` and `tests/test_js_interop.py` hold this emulation to the real SDKs
byte for byte, including on generated hostile cards.
"""
