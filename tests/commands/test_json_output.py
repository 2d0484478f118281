"""The headless commands' JSON output: written in pieces, byte for byte what json.dumps writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.commands.common import json_chunks, print_json
from tests.support.strategies import json_scalars, json_values

_values = json_values(json_scalars(floats=st.floats(allow_nan=False)), list_size=6, max_leaves=40)


@settings(max_examples=200, deadline=None)
@given(_values)
def test_the_pieces_are_json_dumps(value: Any) -> None:
    assert "".join(json_chunks(value)) == json.dumps(value, ensure_ascii=True)


def test_a_large_report_is_written_in_pieces_with_the_same_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    projections = [{"index": i, "member": f"/skills/{i}/id", "value": f"s-{i}\u00e9"} for i in range(2000)]
    report = {
        "verdict": "conformant",
        "questions": {"capabilities": {"projections": projections}},
        "odd": {1: "int key", "t": (1, 2)},
        "empty": [{}, []],
    }
    pieces = list(json_chunks(report))
    assert len(pieces) > 10 and max(len(p) for p in pieces) < len(json.dumps(projections)) / 4
    print_json(report)
    assert capsys.readouterr().out == json.dumps(report, ensure_ascii=True) + "\n"
