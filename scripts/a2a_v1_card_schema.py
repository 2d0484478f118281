"""Write `explorer/core/card_schema_data/a2a-v1.0-agent-card.json`: the v1.0 Agent Card as JSON Schema.

The A2A project's normative v1.0 definition is `specification/a2a.proto` (package `lf.a2a.v1`).
The JSON Schema it publishes for v1.0 is a non-normative build artifact that is not kept in its
repository, and the v1.0 bundle's `$ref`s name files that are not in it. So the v1.0 schema the
explorer checks cards against is derived here, mechanically, from the proto as the official
Python SDK compiles it (`a2a.types.a2a_pb2`, a2a-sdk), the way the project's own pipeline
(`scripts/proto_to_json_schema.sh`, bufbuild's protoc-gen-jsonschema) derives its bundle: one
definition per message reachable from `lf.a2a.v1.AgentCard`, members under their proto3 JSON
names (the original field names accepted too, as protojson parsers do), unknown members refused
(`additionalProperties: false`), scalar types by the proto3 JSON mapping, maps as objects, and,
which the published bundle leaves out, the fields the proto marks `(google.api.field_behavior) =
REQUIRED` as `required`. Nothing card-specific is written by hand.

It also writes the two schemas as fastjsonschema compiles them (`gate_v0_3.py`, `gate_v1_0.py`
beside them): the one fast pass that tells an honest card from one with problems, precompiled so
that no run pays for generating and compiling that code (`explorer/core/card_schema.py`).

    python scripts/a2a_v1_card_schema.py [--check]

`--check` exits 1 when a vendored file differs from what the installed SDK and fastjsonschema
give (tests/core/test_card_problems.py runs it the same way).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "explorer" / "core" / "card_schema_data" / "a2a-v1.0-agent-card.json"
ROOT = "lf.a2a.v1.AgentCard"
PACKAGE = "lf.a2a.v1."
INT32 = {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
DIGITS = {"type": "string", "pattern": "^-?[0-9]+$"}
WELL_KNOWN: dict[str, dict[str, Any]] = {
    "google.protobuf.Struct": {"type": "object"},
    "google.protobuf.Value": {},
    "google.protobuf.ListValue": {"type": "array"},
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Empty": {"type": "object", "maxProperties": 0},
}


def _scalar(field: Any) -> dict[str, Any]:
    from google.protobuf.descriptor import FieldDescriptor as F

    kind = field.type
    if kind == F.TYPE_STRING:
        return {"type": "string"}
    if kind == F.TYPE_BOOL:
        return {"type": "boolean"}
    if kind == F.TYPE_BYTES:
        return {"type": "string", "pattern": "^[A-Za-z0-9+/_-]*={0,2}$"}
    if kind in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
        return {"anyOf": [INT32, DIGITS]}
    if kind in (F.TYPE_UINT32, F.TYPE_FIXED32):
        return {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 2**32 - 1}, DIGITS]}
    if kind in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64, F.TYPE_UINT64, F.TYPE_FIXED64):
        return {"anyOf": [{"type": "integer"}, DIGITS]}
    if kind in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        return {"anyOf": [{"type": "number"}, {"enum": ["NaN", "Infinity", "-Infinity"]}]}
    if kind == F.TYPE_ENUM:
        names = [value.name for value in field.enum_type.values]
        return {"anyOf": [{"enum": names}, INT32]}
    raise ValueError(f"no JSON mapping for field type {kind} of {field.full_name}")


def _name(message: Any) -> str:
    return message.full_name.removeprefix(PACKAGE)


def _value(field: Any, defs: dict[str, Any], todo: list[Any]) -> dict[str, Any]:
    """The schema of one value of `field` (one item, when the field is repeated)."""
    message = field.message_type
    if message is None:
        return _scalar(field)
    if message.full_name in WELL_KNOWN:
        return dict(WELL_KNOWN[message.full_name])
    if message.full_name not in defs:
        defs[message.full_name] = None  # claimed; written when taken from `todo`
        todo.append(message)
    return {"$ref": f"#/$defs/{_name(message)}"}


def _field(field: Any, defs: dict[str, Any], todo: list[Any]) -> dict[str, Any]:
    message = field.message_type
    if message is not None and message.GetOptions().map_entry:
        value = _value(message.fields_by_name["value"], defs, todo)
        return {"type": "object", "additionalProperties": value}
    if field.is_repeated:
        return {"type": "array", "items": _value(field, defs, todo)}
    return _value(field, defs, todo)


def _message(message: Any, defs: dict[str, Any], todo: list[Any]) -> dict[str, Any]:
    from google.api import field_behavior_pb2

    required_behavior = field_behavior_pb2.FieldBehavior.REQUIRED
    properties: dict[str, Any] = {}
    original: dict[str, Any] = {}
    required: list[str] = []
    for field in message.fields:
        schema = _field(field, defs, todo)
        properties[field.json_name] = schema
        if field.name != field.json_name:
            original[f"^({field.name})$"] = schema
        if required_behavior in field.GetOptions().Extensions[field_behavior_pb2.field_behavior]:
            required.append(field.json_name)
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if original:
        out["patternProperties"] = original
    if required:
        out["required"] = required
    return out


def generate() -> dict[str, Any]:
    """The schema, from the descriptor the installed a2a-sdk carries."""
    from importlib.metadata import version

    from a2a.types import a2a_pb2

    root = a2a_pb2.DESCRIPTOR.pool.FindMessageTypeByName(ROOT)
    defs: dict[str, Any] = {root.full_name: None}
    todo = [root]
    while todo:
        message = todo.pop(0)
        defs[message.full_name] = _message(message, defs, todo)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "A2A v1.0 Agent Card",
        "description": (
            "Generated by scripts/a2a_v1_card_schema.py from lf.a2a.v1.AgentCard as compiled "
            f"into a2a-sdk {version('a2a-sdk')} (a2a/types/a2a_pb2.py, from the A2A project's "
            "specification/a2a.proto). Do not edit."
        ),
        "$ref": f"#/$defs/{_name(root)}",
        "$defs": {_name_of(full): schema for full, schema in sorted(defs.items())},
    }


def _name_of(full_name: str) -> str:
    return full_name.removeprefix(PACKAGE)


GATE_HEADER = (
    '"""The {layout} Agent Card schema ({source}) as fastjsonschema compiles it: a precompiled\n'
    "conformance check for explorer/core/card_schema.py. Generated by scripts/a2a_v1_card_schema.py;\n"
    'do not edit."""\n\n# fmt: off\n# ruff: noqa\n# mypy: ignore-errors\n'
)


def _gate(schema: dict[str, Any], layout: str, source: str) -> str:
    import fastjsonschema

    return GATE_HEADER.format(layout=layout, source=source) + fastjsonschema.compile_to_code(schema)


def outputs() -> dict[Path, str]:
    """Every generated file and its text."""
    v10 = generate()
    v03 = json.loads((OUT.parent / "a2a-v0.3.0.json").read_text(encoding="utf-8"))
    v03 = {**v03, "$ref": "#/definitions/AgentCard"}
    return {
        OUT: json.dumps(v10, indent=2, sort_keys=True) + "\n",
        OUT.parent / "gate_v0_3.py": _gate(v03, "v0.3", "a2a-v0.3.0.json"),
        OUT.parent / "gate_v1_0.py": _gate(v10, "v1.0", "a2a-v1.0-agent-card.json"),
    }


def _same_compiler(gate: Path) -> bool:
    import fastjsonschema

    recorded = (
        re.search(r'^VERSION = "([^"]+)"', gate.read_text(encoding="utf-8"), re.M) if gate.exists() else None
    )
    return recorded is None or recorded.group(1) == fastjsonschema.VERSION


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the vendored files")
    args = parser.parse_args()
    stale = 0
    for path, text in outputs().items():
        name = path.relative_to(REPO)
        if args.check and path.name.startswith("gate_") and not _same_compiler(path):
            # The gate is the compiler's output for the vendored schema, compared above; another
            # fastjsonschema release writes other code for the same schema.
            print(f"{name} was compiled by another fastjsonschema release: not compared")
            continue
        if args.check:
            same = path.exists() and path.read_text(encoding="utf-8") == text
            stale += not same
            print(f"{name} is {'up to date' if same else 'stale: run this script'}")
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {name}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
