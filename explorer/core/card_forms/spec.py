"""The `served` form: A2A section 8.4 read literally, the served card minus `signatures`, in JCS.

A signer that follows the spec to the letter signs RFC 8785 (JCS) bytes of exactly the JSON it
serves, without `signatures`. Nothing is read into a model first, so no member is dropped,
renamed or coerced: every served member is signed, and a card only fails this form when JCS
itself refuses a value (a number it cannot represent, say).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from explorer.core.card_forms.tracked import canonical_payload, require_card_object


def payload_bytes(card_doc: Mapping[str, Any]) -> bytes:
    require_card_object(card_doc)
    return canonical_payload({k: v for k, v in card_doc.items() if k != "signatures"})
