"""The A2A Agent Card as the explorer reads it: layout, interfaces, skills, declared extensions.

Two card layouts are in use and one card may carry both (docs/PROTOCOL.md section 1): v0.3 puts the
endpoint in `url` + `preferredTransport` + `additionalInterfaces`, v1.0 lists
`supportedInterfaces`, and a2a-sdk 1.3 serves a merged card whenever an interface speaks 0.3.
`parse_card` detects the layout, picks the JSON-RPC interface the interview is asked over, and
collects the extension entries this tool cares about (interview, terms, reputation, OpenClasp).

A card is a stranger's document, so the model is built to never crash on one: the only thing
refused outright (`CardError`) is a document that is not a JSON object. Every other oddity, a
`skills` that is a string, a `name` that is a number, an extension that is not an object, is
skipped where it stands and described in `problems`, so the user sees the card as far as it can
be read together with a list of what was wrong with it. Each element keeps the RFC 6901 pointer
of the member it was read from, because findings and projections name members by pointer.

`raw` keeps the document as parsed: interview answers are compared with the card as served,
never with this model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from explorer.core.card_schema import CardProblem, card_problems
from explorer.core.pointer import join
from explorer.core.strict_json import describe_type

__all__ = [
    "INTERVIEW_URI",
    "OPENCLASP_URI",
    "REPUTATION_URI",
    "TERMS_URI",
    "Card",
    "CardError",
    "Extension",
    "Interface",
    "Layout",
    "ProposalRef",
    "Skill",
    "TermsEntry",
    "parse_card",
    "summary_json",
]

INTERVIEW_URI = "https://agentsow.com/extensions/a2a-interview/v1"
TERMS_URI = "https://agentsow.com/extensions/a2a-terms/v1"
REPUTATION_URI = "https://agentreputations.com/extensions/a2a-reputation/v1"
OPENCLASP_URI = "https://openclasp.vercel.app/extensions/trust/v0.1"
# Where a card is looked up under a base URL, in order (the v0.3 name last).
WELL_KNOWN = ("/.well-known/agent-card.json", "/.well-known/agent.json")

JSONRPC = "JSONRPC"
Layout = Literal["v0.3", "v1.0", "mixed"]

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# Members that only one layout defines; finding any of them tells which layout a card speaks.
_V03_MARKERS = (
    "url",
    "preferredTransport",
    "additionalInterfaces",
    "protocolVersion",
    "supportsAuthenticatedExtendedCard",
    "security",
)
_V10_MARKERS = ("supportedInterfaces", "securityRequirements")


class CardError(ValueError):
    """The document cannot be read as a card at all (it is not a JSON object)."""


@dataclass(frozen=True)
class Interface:
    """One endpoint the card declares, from either layout."""

    url: str
    binding: str
    protocol_version: str | None
    pointer: str

    @property
    def family(self) -> Literal["1.0", "0.3"]:
        """The protocol family to speak to it (the `A2A-Version` header): v0.3-layout members are
        always 0.3; a v1.0 entry is 0.3 only when its `protocolVersion` says 0.x."""
        if not self.pointer.startswith("/supportedInterfaces/"):
            return "0.3"
        if self.protocol_version is not None and self.protocol_version.startswith("0."):
            return "0.3"
        return "1.0"


@dataclass(frozen=True)
class Skill:
    id: str
    name: str | None
    description: str | None
    pointer: str
    input_modes: tuple[str, ...] = ()
    output_modes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Extension:
    """One `capabilities.extensions` entry; `params` is kept exactly as declared."""

    uri: str
    required: bool | None
    params: Any
    description: str | None
    pointer: str


@dataclass(frozen=True)
class ProposalRef:
    """One committed standing proposal of a terms entry (`params.proposals[n]`)."""

    url: str | None
    digest: str | None
    sow: str | None
    offering: str | None
    pointer: str
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class TermsEntry:
    """A terms extension entry, validated as docs/PROTOCOL.md section 5 says."""

    extension: Extension
    sow_spec: str | None
    proposals: tuple[ProposalRef, ...]
    problems: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        """No problem in the entry nor in any of its proposals."""
        return not self.problems and not any(p.problems for p in self.proposals)


@dataclass(frozen=True)
class Card:
    raw: Mapping[str, Any]
    layout: Layout
    name: str | None
    description: str | None
    version: str | None
    provider: Mapping[str, Any] | None
    interfaces: tuple[Interface, ...]
    jsonrpc: Interface | None
    skills: tuple[Skill, ...]
    skill_ids: tuple[str, ...]
    extensions: tuple[Extension, ...]
    problems: tuple[CardProblem, ...] = ()  # what the reader could not read; `card_problems` adds the rest

    def extension(self, uri: str) -> Extension | None:
        """The first entry declaring exactly this URI (consumers match URIs exactly)."""
        return next((e for e in self.extensions if e.uri == uri), None)

    @property
    def interview(self) -> Extension | None:
        return self.extension(INTERVIEW_URI)

    @property
    def terms(self) -> tuple[TermsEntry, ...]:
        return tuple(_terms_entry(e) for e in self.extensions if e.uri == TERMS_URI)

    @property
    def reputation(self) -> Extension | None:
        return self.extension(REPUTATION_URI)

    @property
    def openclasp(self) -> Extension | None:
        """The OpenClasp trust entry: its default URI, or (the URI is configurable per
        deployment) any entry whose params carry both `agentId` and `openClaspCardUrl`."""
        found = self.extension(OPENCLASP_URI)
        if found is not None:
            return found
        for ext in self.extensions:
            params = ext.params
            if isinstance(params, Mapping) and "agentId" in params and "openClaspCardUrl" in params:
                return ext
        return None


def _member_layout(member: str, layout: Layout) -> str:
    """The layout a member read from a card of `layout` belongs to: its own layout's, when only
    one layout defines its top-level member, else the card's (v1.0 for a mixed card)."""
    top = member.split("/")[1] if member.count("/") else ""
    if top in _V03_MARKERS:
        return "v0.3"
    if top in _V10_MARKERS:
        return "v1.0"
    return "v1.0" if layout == "mixed" else layout


class _Reader:
    """Collects problems while reading typed members out of untrusted objects."""

    def __init__(self, layout: Layout = "v1.0") -> None:
        self.layout = layout
        self.problems: list[CardProblem] = []

    def note(self, text: str, member: str, code: str = "wrong_type") -> None:
        self.problems.append(CardProblem(code, member, _member_layout(member, self.layout), text))

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(p.detail for p in self.problems)

    def string(self, obj: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
        if key not in obj:
            if required:
                self.note(f"{where}/{key} is missing", f"{where}{join(key)}", "member_missing")
            return None
        value = obj[key]
        if isinstance(value, str):
            return value
        self.note(f"{where}/{key} should be a string, not {describe_type(value)}", f"{where}{join(key)}")
        return None

    def boolean(self, obj: Mapping[str, Any], key: str, where: str) -> bool | None:
        if key not in obj or obj[key] is None:
            return None
        value = obj[key]
        if isinstance(value, bool):
            return value
        self.note(f"{where}/{key} should be true or false, not {describe_type(value)}", f"{where}{join(key)}")
        return None

    def array(self, obj: Mapping[str, Any], key: str, where: str) -> list[Any]:
        if key not in obj or obj[key] is None:
            return []
        value = obj[key]
        if isinstance(value, list):
            return value
        self.note(f"{where}/{key} should be an array, not {describe_type(value)}", f"{where}{join(key)}")
        return []

    def objects(
        self, obj: Mapping[str, Any], key: str, where: str
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(pointer, entry) for each object in the array `obj[key]`; any other entry is noted."""
        for i, entry in enumerate(self.array(obj, key, where)):
            pointer = f"{where}{join(key, i)}"
            if isinstance(entry, Mapping):
                yield pointer, entry
            else:
                self.note(f"{pointer} should be an object, not {describe_type(entry)}", pointer)

    def obj(self, parent: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any] | None:
        if key not in parent or parent[key] is None:
            return None
        value = parent[key]
        if isinstance(value, Mapping):
            return value
        self.note(f"{where}/{key} should be an object, not {describe_type(value)}", f"{where}{join(key)}")
        return None

    def strings(self, obj: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        out = []
        for i, item in enumerate(self.array(obj, key, where)):
            if isinstance(item, str):
                out.append(item)
            else:
                self.note(
                    f"{where}/{key}/{i} should be a string, not {describe_type(item)}",
                    f"{where}{join(key, i)}",
                )
        return tuple(out)


def _layout(doc: Mapping[str, Any]) -> Layout:
    v03 = any(k in doc for k in _V03_MARKERS)
    v10 = any(k in doc for k in _V10_MARKERS)
    if v03 and v10:
        return "mixed"
    return "v0.3" if v03 else "v1.0"


def _interfaces(doc: Mapping[str, Any], r: _Reader) -> tuple[list[Interface], Interface | None]:
    """Every declared interface, v1.0 entries first, and the one the interview is asked over."""
    v10: list[Interface] = []
    for where, entry in r.objects(doc, "supportedInterfaces", ""):
        url = r.string(entry, "url", where, required=True)
        binding = r.string(entry, "protocolBinding", where, required=True)
        version = r.string(entry, "protocolVersion", where)
        if url is not None and binding is not None:
            v10.append(Interface(url, binding, version, where))

    top_version = r.string(doc, "protocolVersion", "")
    main: Interface | None = None
    if "url" in doc:
        url = r.string(doc, "url", "")
        transport = r.string(doc, "preferredTransport", "")
        if "preferredTransport" not in doc:
            transport = JSONRPC  # the v0.3 default
        if url is not None and transport is not None:
            main = Interface(url, transport, top_version, "/url")
    additional: list[Interface] = []
    for where, entry in r.objects(doc, "additionalInterfaces", ""):
        url = r.string(entry, "url", where, required=True)
        transport = r.string(entry, "transport", where, required=True)
        if url is not None and transport is not None:
            additional.append(Interface(url, transport, top_version, where))

    interfaces = v10 + ([main] if main is not None else []) + additional
    chosen = next((i for i in v10 if i.binding == JSONRPC), None)
    if chosen is None and main is not None and main.binding == JSONRPC:
        chosen = main
    if chosen is None:
        chosen = next((i for i in additional if i.binding == JSONRPC), None)
    if not interfaces:
        member = "/url" if _layout(doc) == "v0.3" else "/supportedInterfaces"
        r.note("the card declares no interface (neither supportedInterfaces nor url)", member, "no_interface")
    return interfaces, chosen


def _skills(doc: Mapping[str, Any], r: _Reader) -> list[Skill]:
    skills: list[Skill] = []
    seen: set[str] = set()
    for where, entry in r.objects(doc, "skills", ""):
        skill_id = r.string(entry, "id", where, required=True)
        if skill_id is None:
            continue
        if skill_id in seen:
            r.note(f"{where}/id {skill_id!r} repeats an earlier skill id", f"{where}/id", "skill_id_repeated")
        seen.add(skill_id)
        skills.append(
            Skill(
                id=skill_id,
                name=r.string(entry, "name", where),
                description=r.string(entry, "description", where),
                pointer=where,
                input_modes=r.strings(entry, "inputModes", where),
                output_modes=r.strings(entry, "outputModes", where),
            )
        )
    return skills


def _extensions(doc: Mapping[str, Any], r: _Reader) -> list[Extension]:
    caps = r.obj(doc, "capabilities", "")
    if caps is None:
        return []
    out: list[Extension] = []
    for where, entry in r.objects(caps, "extensions", "/capabilities"):
        uri = r.string(entry, "uri", where, required=True)
        if uri is None:
            continue
        out.append(
            Extension(
                uri=uri,
                required=r.boolean(entry, "required", where),
                params=entry.get("params"),
                description=r.string(entry, "description", where),
                pointer=where,
            )
        )
    return out


def _proposal(entry: Any, where: str) -> ProposalRef:
    if not isinstance(entry, Mapping):
        problem = f"{where} should be an object, not {describe_type(entry)}"
        return ProposalRef(None, None, None, None, where, (problem,))
    r = _Reader()
    url = r.string(entry, "url", where, required=True)
    digest = r.string(entry, "digest", where, required=True)
    if url == "":
        r.note(f"{where}/url is empty", f"{where}/url")
    if digest is not None and _DIGEST.fullmatch(digest) is None:
        r.note(f"{where}/digest must be 'sha256:' followed by 64 lowercase hex digits", f"{where}/digest")
    return ProposalRef(
        url=url,
        digest=digest,
        sow=r.string(entry, "sow", where),
        offering=r.string(entry, "offering", where),
        pointer=where,
        problems=r.words,
    )


def _terms_entry(ext: Extension) -> TermsEntry:
    r = _Reader()
    where = ext.pointer
    if ext.required is True:
        r.note(f"{where}/required is true; the terms extension must never be required", f"{where}/required")
    params = ext.params
    if not isinstance(params, Mapping):
        what = "missing" if params is None else f"{describe_type(params)}, not an object"
        r.note(f"{where}/params is {what}; it must carry sow_spec and proposals", f"{where}/params")
        return TermsEntry(ext, None, (), r.words)
    pwhere = f"{where}/params"
    sow_spec = r.string(params, "sow_spec", pwhere, required=True)
    if sow_spec == "":
        r.note(f"{pwhere}/sow_spec is empty", f"{pwhere}/sow_spec")
    proposals: list[ProposalRef] = []
    if "proposals" not in params:
        r.note(f"{pwhere}/proposals is missing", f"{pwhere}/proposals")
    elif not isinstance(params["proposals"], list):
        r.note(
            f"{pwhere}/proposals should be an array, not {describe_type(params['proposals'])}",
            f"{pwhere}/proposals",
        )
    elif not params["proposals"]:
        r.note(f"{pwhere}/proposals is empty; at least one proposal is required", f"{pwhere}/proposals")
    else:
        proposals = [_proposal(p, f"{pwhere}/proposals/{i}") for i, p in enumerate(params["proposals"])]
    return TermsEntry(ext, sow_spec, tuple(proposals), r.words)


def parse_card(doc: Any) -> Card:
    """Read a parsed JSON document as a card. Raises CardError only if it is not an object."""
    if not isinstance(doc, Mapping):
        raise CardError(f"an agent card must be a JSON object, not {describe_type(doc)}")
    r = _Reader(_layout(doc))
    name = r.string(doc, "name", "", required=True)
    description = r.string(doc, "description", "")
    version = r.string(doc, "version", "")
    provider = r.obj(doc, "provider", "")
    interfaces, chosen = _interfaces(doc, r)
    skills = _skills(doc, r)
    extensions = _extensions(doc, r)
    return Card(
        raw=doc,
        layout=_layout(doc),
        name=name,
        description=description,
        version=version,
        provider=provider,
        interfaces=tuple(interfaces),
        jsonrpc=chosen,
        skills=tuple(skills),
        skill_ids=tuple(s.id for s in skills),
        extensions=tuple(extensions),
        problems=tuple(r.problems),
    )


def _interface_json(iface: Interface, chosen: Interface | None) -> dict[str, Any]:
    return {
        "url": iface.url,
        "binding": iface.binding,
        "protocol_version": iface.protocol_version,
        "family": iface.family,
        "pointer": iface.pointer,
        "jsonrpc": iface == chosen,
    }


def _extension_json(ext: Extension | None) -> dict[str, Any] | None:
    if ext is None:
        return None
    return {
        "uri": ext.uri,
        "required": ext.required,
        "description": ext.description,
        "params": ext.params,
        "pointer": ext.pointer,
    }


def _terms_json(entry: TermsEntry, skill_ids: tuple[str, ...]) -> dict[str, Any]:
    return {
        "pointer": entry.extension.pointer,
        "required": entry.extension.required,
        "sow_spec": entry.sow_spec,
        "valid": entry.valid,
        "problems": list(entry.problems),
        "proposals": [
            {
                "url": p.url,
                "digest": p.digest,
                "sow": p.sow,
                "offering": p.offering,
                "offering_is_skill": None if p.offering is None else p.offering in skill_ids,
                "pointer": p.pointer,
                "problems": list(p.problems),
            }
            for p in entry.proposals
        ],
    }


def summary_json(card: Card) -> dict[str, Any]:
    """The card model as one JSON-safe object (what `interview-explorer card --json` prints)."""
    known = {INTERVIEW_URI, TERMS_URI, REPUTATION_URI}
    openclasp = card.openclasp
    return {
        "layout": card.layout,
        "name": card.name,
        "description": card.description,
        "version": card.version,
        "provider": dict(card.provider) if card.provider is not None else None,
        "interfaces": [_interface_json(i, card.jsonrpc) for i in card.interfaces],
        "jsonrpc_url": card.jsonrpc.url if card.jsonrpc else None,
        "protocol_version": card.jsonrpc.family if card.jsonrpc else None,
        "skills": [
            {
                "id": s.id,
                "name": s.name,
                "description": s.description,
                "pointer": s.pointer,
                "input_modes": list(s.input_modes),
                "output_modes": list(s.output_modes),
            }
            for s in card.skills
        ],
        "extensions": {
            "interview": _extension_json(card.interview),
            "terms": [_terms_json(t, card.skill_ids) for t in card.terms],
            "reputation": _extension_json(card.reputation),
            "openclasp": _extension_json(openclasp),
            "other": [
                _extension_json(e)
                for e in card.extensions
                if e.uri not in known and (openclasp is None or e.pointer != openclasp.pointer)
            ],
        },
        "problems": [problem.to_json() for problem in card_problems(card)],
    }
