"""Reading an optional member of JSON the explorer did not write: one way, said once.

Cards, key sets, envelopes, statements and transcripts arrive as parsed JSON, and any member of
them may be missing or of the wrong type. The explorer reads such a member tolerantly (a missing
or mistyped object reads as empty, never as an exception), and these two helpers are that reading,
so no module spells it inline its own way:

- `mapping_of(value)`: `value` when it is a JSON object, else an empty one;
- `member(doc, *keys)`: `doc[keys[0]][keys[1]]...`, or None as soon as a step is missing or not
  an object.

A report is read through `explorer.core.view.ReportView` instead, which types its members.

Pure: no I/O, and nothing of the explorer imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def mapping_of(value: Any) -> Mapping[str, Any]:
    """`value` when it is a JSON object (any Mapping), else an empty one (a new dict each time)."""
    return value if isinstance(value, Mapping) else {}


def member(doc: Any, *keys: str) -> Any:
    """`doc[keys[0]][keys[1]]...`, or None as soon as a step is missing or not an object."""
    value = doc
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value
