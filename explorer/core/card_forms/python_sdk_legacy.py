"""The `sdk-legacy-sorted` form: what a2a-sdk 1.0.0 to 1.1.3 signed.

Those releases built the same message as `sdk-normalized` (see `python_sdk`) but wrote it with
`json.dumps(sort_keys=True)` instead of JCS, so the bytes differ wherever the two serializations
do: non-ASCII is `\\u`-escaped and doubles print as `1.0`. The same members are signed, so
`forms.unsigned_members` answers this form from `python_sdk`'s tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from explorer.core.card_forms import python_sdk
from explorer.core.card_forms.tracked import plain, sorted_payload


def payload_bytes(card_doc: Mapping[str, Any]) -> bytes:
    return sorted_payload(plain(python_sdk.payload_tree(card_doc)))  # an empty card signs "null"
