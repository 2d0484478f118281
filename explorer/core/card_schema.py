"""What is wrong with a card under the A2A project's own definitions of the layouts it claims.

Every card the explorer reads (the `card` command, `verify`, sweeps, the TUI) gets its
`card.problems` here: a list of `CardProblem` `{code, member, layout, detail}`, warnings that never
change the interview verdict (docs/CONTRACT.md "Card checks and declared answers"). Three sources,
in this order:

1. the official definitions, vendored in `card_schema_data/` (its README says where each comes
   from): the v0.3 Agent Card of the A2A project's `specification/json/a2a.json` (tag v0.3.0), and
   the v1.0 Agent Card of its `specification/a2a.proto` as the official SDK compiles it
   (`scripts/a2a_v1_card_schema.py`). No rule of theirs is restated here: a JSON Schema validator
   applies them and each of its errors becomes a problem (`_schema_problems`);
2. what those definitions say in words but cannot express as a schema (`_rule_problems`): input
   and output modes are media types, members named as URLs hold absolute URLs, the protocol
   version a layout names is one of its own;
3. what the card reader itself could not read (`explorer.core.card.Card.problems`), where neither
   of the above already names the same member.

A mixed card (docs/PROTOCOL.md section 1) is checked against both definitions; the members one
layout defines are not unknown members under the other, and each problem says which layout's
definition it breaks.

Why two validator libraries: an honest card must cost almost nothing to check (a 5,000-skill
card is 2.9 MB), and a bad one must be described in full. `fastjsonschema` compiles each schema
to Python once per process and says in one fast pass whether the card conforms; only when it
does not, `jsonschema` lists every error with its path. Both are imported on first use, never
when the module is, so `verify --help` and the start-up of every command stay as they were.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from explorer.core.pointer import PointerError, join, parse
from explorer.core.strict_json import describe_type
from explorer.core.text import safe_text

if TYPE_CHECKING:
    from explorer.core.card import Card

__all__ = ["LAYOUTS", "MAX_PROBLEMS", "PROBLEM_CODES", "CardProblem", "card_problems", "check_card"]

V03 = "v0.3"
V10 = "v1.0"
LAYOUTS = (V03, V10)
MAX_PROBLEMS = 100  # then one `problems_truncated`: a card cannot make the report grow without bound

# Every `code` a problem can carry, and what it means (docs/CONTRACT.md lists the same).
PROBLEM_CODES: dict[str, str] = {
    "member_missing": "a member the layout's definition requires is absent",
    "member_unknown": "a member the layout's definition does not have",
    "wrong_type": "a member of another JSON type than the definition gives",
    "value_not_allowed": "a value outside the definition's enumeration",
    "schema_violation": "any other constraint of the definition (the detail names it)",
    "mode_not_media_type": "an input or output mode that is not a media type (RFC 6838 type/subtype)",
    "url_not_absolute": "a URL member that is not an absolute URL",
    "protocol_version_invalid": "a protocol version that is not a version of the layout declaring it",
    "skill_id_repeated": "two skills with one id",
    "no_interface": "no interface to speak to the agent over",
    "family_card_unreadable": "the card served to another A2A-Version could not be read",
    "problems_truncated": f"more than {MAX_PROBLEMS} problems; the rest are not listed",
    "card_problem": "a problem recorded in words only, by an explorer older than these codes",
}

_DATA = "card_schema_data"
_V03_FILE = "a2a-v0.3.0.json"
_V10_FILE = "a2a-v1.0-agent-card.json"
# RFC 6838 section 4.2 restricted names, `type "/" subtype`, optionally followed by parameters.
_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_MEDIA_TYPE = re.compile(rf"{_NAME}/{_NAME}(\s*;.*)?", re.DOTALL)
_VERSION = re.compile(r"(\d+)\.(\d+)(\.\d+)?")
_MODE_MEMBERS = ("defaultInputModes", "defaultOutputModes", "inputModes", "outputModes")
# Members whose contents are not A2A's to define: an extension's own parameters, a JWS header.
_FOREIGN = ("params", "header", "metadata")


@dataclass(frozen=True)
class CardProblem:
    """One problem with a card: the pointer of the member, the layout whose definition it breaks."""

    code: str
    member: str  # RFC 6901 pointer into the card; "" for the whole document
    layout: str  # v0.3 | v1.0
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "member": self.member, "layout": self.layout, "detail": self.detail}

    @classmethod
    def of(cls, data: Any, layout: str | None = None) -> CardProblem:
        """A problem as a report holds it, read tolerantly; a report made before problems were
        objects held a sentence (`card_problem`, the card's own layout)."""
        if isinstance(data, Mapping):
            return cls(
                code=str(data.get("code") or "card_problem"),
                member=str(data.get("member") or ""),
                layout=str(data.get("layout") or layout or ""),
                detail=str(data.get("detail") or ""),
            )
        return cls("card_problem", "", layout or "", str(data))


# --- the vendored definitions ------------------------------------------------------------------


@cache
def _schema(name: str) -> dict[str, Any]:
    doc = json.loads(resources.files("explorer.core").joinpath(_DATA, name).read_text(encoding="utf-8"))
    if name == _V03_FILE:  # the bundle defines every A2A type; a card is its AgentCard
        doc = {**doc, "$ref": "#/definitions/AgentCard"}
    assert isinstance(doc, dict)
    return doc


def _schema_of(layout: str) -> dict[str, Any]:
    return _schema(_V03_FILE if layout == V03 else _V10_FILE)


@cache
def _declared_names(layout: str) -> frozenset[str]:
    """Every member name any definition of the layout declares (a mixed card carries them)."""
    schema = _schema_of(layout)
    names: set[str] = set()
    for definition in (schema.get("definitions") or schema.get("$defs") or {}).values():
        names.update((definition.get("properties") or {}) if isinstance(definition, dict) else ())
    return frozenset(names)


@cache
def _top_members(layout: str) -> frozenset[str]:
    schema = _schema_of(layout)
    card = (schema.get("definitions") or schema.get("$defs") or {})["AgentCard"]
    return frozenset(card.get("properties") or ())


def _fast_check(layout: str) -> Any:
    """The layout's schema precompiled by fastjsonschema (`card_schema_data/gate_*.py`)."""
    from importlib import import_module

    name = "gate_v0_3" if layout == V03 else "gate_v1_0"
    return import_module(f"explorer.core.card_schema_data.{name}").validate


@cache
def _validator(layout: str) -> Any:
    from jsonschema import Draft7Validator, Draft202012Validator

    schema = _schema_of(layout)
    return (Draft7Validator if layout == V03 else Draft202012Validator)(schema)


def _conforms(doc: Any, layout: str) -> bool:
    from fastjsonschema import JsonSchemaException

    try:
        _fast_check(layout)(doc)
    except JsonSchemaException:
        return False
    return True


# --- 1. the definitions ------------------------------------------------------------------------


def _pointer(path: Sequence[Any]) -> str:
    return join(*path) if path else ""


def _schema_problems(doc: Mapping[str, Any], layout: str, other: str | None) -> Iterator[CardProblem]:
    """Each error of the layout's schema; under a mixed card (`other` the second layout), members
    the other layout declares are not unknown."""
    if _conforms(doc, layout):
        return
    tolerated = _declared_names(other) if other is not None else frozenset()
    for error in _validator(layout).iter_errors(doc):
        yield from _from_error(error, layout, tolerated)


def _from_error(error: Any, layout: str, tolerated: frozenset[str]) -> Iterator[CardProblem]:
    where = _pointer(list(error.absolute_path))
    keyword = error.validator
    instance = error.instance
    if keyword == "required" and isinstance(instance, Mapping):
        for name in error.validator_value:
            if name not in instance:
                member = where + join(name)
                yield CardProblem(
                    "member_missing", member, layout, f"{member} is required by the {layout} Agent Card"
                )
    elif keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, Mapping):
        schema = error.schema
        known = schema.get("properties") or {}
        patterns = [re.compile(p) for p in schema.get("patternProperties") or ()]
        for name in instance:
            if name in known or name in tolerated or any(p.search(name) for p in patterns):
                continue
            member = where + join(name)
            yield CardProblem(
                "member_unknown",
                member,
                layout,
                f"{_show(member)} is not a member of the {layout} Agent Card",
            )
    elif keyword == "type":
        expected = error.validator_value
        words = " or ".join(expected) if isinstance(expected, list) else str(expected)
        yield CardProblem(
            "wrong_type",
            where,
            layout,
            f"{_show(where) or 'the card'} should be {_article(words)}, not {describe_type(instance)}",
        )
    elif keyword in ("enum", "const"):
        allowed = error.validator_value if keyword == "enum" else [error.validator_value]
        yield CardProblem(
            "value_not_allowed",
            where,
            layout,
            f"{_show(where)} is {_show(json.dumps(instance), 80)}, not one of "
            + ", ".join(json.dumps(a) for a in allowed[:8]),
        )
    else:
        yield CardProblem(
            "schema_violation", where, layout, f"{_show(where) or 'the card'}: {_show(error.message, 240)}"
        )


def _article(words: str) -> str:
    return ("an " if words[:1] in "aeio" else "a ") + words


def _show(text: str, limit: int = 160) -> str:
    return safe_text(text, limit=limit)


# --- 2. what the definitions say in words ------------------------------------------------------


def _scan(node: Any, path: list[str | int], found: list[tuple[str, tuple[str | int, ...], str]]) -> None:
    """Collect ("mode" | "url", path, value) for each mode that is not a media type and each URL
    member that is not absolute, below `node`, skipping contents A2A does not define. Written as one
    plain recursion, not a generator of every member: a 5,000-skill card is walked in milliseconds."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if isinstance(value, str):
                if (key == "url" or key.endswith(("Url", "_url"))) and not _absolute(value):
                    found.append(("url", (*path, key), value))
            elif isinstance(value, list):
                if key in _MODE_MEMBERS:
                    for index, mode in enumerate(value):
                        if isinstance(mode, str) and _MEDIA_TYPE.fullmatch(mode) is None:
                            found.append(("mode", (*path, key, index), mode))
                else:
                    path.append(key)
                    _scan(value, path, found)
                    path.pop()
            elif isinstance(value, Mapping) and key not in _FOREIGN:
                path.append(key)
                _scan(value, path, found)
                path.pop()
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if isinstance(value, (Mapping, list)):
                path.append(index)
                _scan(value, path, found)
                path.pop()


def _layouts_of(path: tuple[str | int, ...], claimed: Sequence[str]) -> list[str]:
    """The claimed layouts whose definition has the member's top-level member."""
    top = str(path[0]) if path else ""
    return [layout for layout in claimed if top in _top_members(layout)]


def _rule_problems(doc: Mapping[str, Any], claimed: Sequence[str]) -> Iterator[CardProblem]:
    found: list[tuple[str, tuple[str | int, ...], str]] = []
    _scan(doc, [], found)
    for kind, path, value in found:
        member = _pointer(path)
        for layout in _layouts_of(path, claimed):
            if kind == "mode":
                yield CardProblem(
                    "mode_not_media_type",
                    member,
                    layout,
                    f"{_show(member)} is {_show(json.dumps(value), 80)}, not a media type such as "
                    '"text/plain" or "application/json"',
                )
            else:
                yield CardProblem(
                    "url_not_absolute",
                    member,
                    layout,
                    f"{_show(member)} is {_show(json.dumps(value), 120)}, not an absolute URL",
                )
    yield from _version_problems(doc, claimed)


def _absolute(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(parts.scheme) and bool(parts.netloc) and value == value.strip()


def _version_problems(doc: Mapping[str, Any], claimed: Sequence[str]) -> Iterator[CardProblem]:
    version = doc.get("protocolVersion")
    if V03 in claimed and isinstance(version, str):
        match = _VERSION.fullmatch(version)
        if match is None or match.group(1) != "0":
            yield CardProblem(
                "protocol_version_invalid",
                "/protocolVersion",
                V03,
                f"/protocolVersion is {_show(json.dumps(version), 40)}: the v0.3 layout speaks "
                'A2A 0.x, so it names a version such as "0.3.0"',
            )
    interfaces = doc.get("supportedInterfaces")
    if V10 in claimed and isinstance(interfaces, list):
        for index, entry in enumerate(interfaces):
            value = entry.get("protocolVersion") if isinstance(entry, Mapping) else None
            if isinstance(value, str) and _VERSION.fullmatch(value) is None:
                member = join("supportedInterfaces", index, "protocolVersion")
                yield CardProblem(
                    "protocol_version_invalid",
                    member,
                    V10,
                    f"{member} is {_show(json.dumps(value), 40)}, not a protocol version such as "
                    '"1.0" or "0.3"',
                )


# --- all of it ---------------------------------------------------------------------------------


def claimed_layouts(layout: str | None) -> tuple[str, ...]:
    """The layouts a card's detected layout claims (a mixed card claims both)."""
    if layout == "mixed":
        return (V03, V10)
    return (layout,) if layout in LAYOUTS else (V10,)


def check_card(
    doc: Mapping[str, Any], layout: str | None, read_problems: Sequence[CardProblem] = ()
) -> tuple[CardProblem, ...]:
    """Every problem of the card `doc`, whose detected layout is `layout`, at most `MAX_PROBLEMS`
    and then `problems_truncated`; the reader's own problems where nothing else names the member."""
    claimed = claimed_layouts(layout)
    out: list[CardProblem] = []
    seen: set[tuple[str, str, str]] = set()

    def gather() -> Iterator[CardProblem]:
        for own in claimed:
            other = next((c for c in claimed if c != own), None)
            yield from _schema_problems(doc, own, other)
        yield from _rule_problems(doc, claimed)

    for problem in gather():
        key = (problem.code, problem.member, problem.layout)
        if key in seen:
            continue
        seen.add(key)
        out.append(problem)
        if len(out) > MAX_PROBLEMS:
            break
    # The reader's words where it says what a schema says of the same member (`/name is missing`).
    said = {(p.member, p.code) for p in read_problems if p.code in _SCHEMA_CODES}
    out = [p for p in out if (p.member, p.code) not in said]
    out.extend(read_problems)
    out.sort(key=lambda p: (p.member, p.layout, p.code))  # the validator's own order is its schema's
    if len(out) > MAX_PROBLEMS:
        rest = len(out) - MAX_PROBLEMS
        out = out[:MAX_PROBLEMS]
        out.append(
            CardProblem(
                "problems_truncated",
                "",
                claimed[0],
                f"more problems than the {MAX_PROBLEMS} listed ({rest} or more not shown)",
            )
        )
    return tuple(out)


# The reader's problems that the schemas also find: theirs are the words kept.
_SCHEMA_CODES = frozenset({"member_missing", "wrong_type"})


def card_problems(card: Card) -> tuple[CardProblem, ...]:
    """`check_card` of a parsed card (its document, its detected layout, its reader's problems)."""
    return check_card(card.raw, card.layout, card.problems)


def problem_pointer_ok(member: str) -> bool:
    """Whether `member` is an RFC 6901 pointer (what `validate_report` asks of each problem)."""
    try:
        parse(member)
    except PointerError:
        return False
    return True
