"""The card screen: everything a card declares, section by section, for any agent.

Most A2A agents do not offer the interview; what a user came to inspect is then the card itself.
The interview screen's `d` opens this screen on the card the run fetched, interviewed or not:
its identity, its interfaces, its capabilities, its security schemes and requirements, its
skills with their modes and examples, every extension with its parameters, the terms
extension's committed proposals as the run checked them under their own procedure (fetched,
digest, provider signature, standing, each clause's grade), the reputation pointer (shown, never
fetched), the card signature, the problems found with the card, and the top-level members none
of these name. Each kind is a section with a title (`n` and `b` walk them), in one scrollable
column that reads at 80x24.

What is shown is worked out first, as plain lines (`card_sections`), from the run's report and
the card bytes it recorded: testable without a terminal, and every agent-supplied string
neutralised (`safe_text`) before it becomes a line, then drawn as text, never as markup. A card
with thousands of skills lists the first `SHOWN_SKILLS`; `interview-explorer card --json` has
them all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from explorer.core.card import INTERVIEW_URI, REPUTATION_URI, TERMS_URI
from explorer.core.text import safe_text
from explorer.core.view import ReportView
from explorer.tui import model, safe
from explorer.tui.model import ReasonLine
from explorer.tui.widgets.footer import ExplorerFooter

SHOWN_SKILLS = 200  # skills listed in full; the rest are counted
SHOWN_ITEMS = 100  # entries of any other list (examples, interfaces, schemes, clauses)
_VALUE = 400  # characters of one JSON value on a line
_TEXT = 600  # characters of one agent-written sentence

# Top-level members a section below shows; any other is listed under "other members".
_SHOWN_MEMBERS = frozenset(
    {
        "name",
        "description",
        "version",
        "provider",
        "documentationUrl",
        "iconUrl",
        "protocolVersion",
        "supportedInterfaces",
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "capabilities",
        "securitySchemes",
        "securityRequirements",
        "security",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
        "signatures",
    }
)
_KNOWN_EXTENSIONS = {
    INTERVIEW_URI: "the interview extension",
    TERMS_URI: "the terms extension",
    REPUTATION_URI: "the reputation extension",
}


class CardSection(NamedTuple):
    """One kind of declaration: its title (with a count where it has one) and its lines."""

    key: str
    title: str
    lines: tuple[ReasonLine, ...]


def _s(value: Any, limit: int = _TEXT) -> str:
    return safe_text(value, limit=limit)


def _json(value: Any, limit: int = _VALUE) -> str:
    """A JSON value on one line, neutralised and cut."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return _s(text, limit)


def _objects(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _line(text: str, depth: int = 0, problem: bool = False) -> ReasonLine:
    return ReasonLine(text, problem, depth)


def _more(items: Sequence[Any], shown: int, depth: int) -> list[ReasonLine]:
    return [_line(f"… {len(items) - shown} more", depth)] if len(items) > shown else []


def _overview(report: ReportView, card: Mapping[str, Any]) -> CardSection:
    lines = [_line(f"url: {_s(report.card.url or '(unknown)', 300)}")]
    digest = model.short_digest(report.card.sha256, 16)
    lines.append(_line(f"layout: {_s(report.card.layout or 'unknown', 20)} · sha256 {digest}"))
    for label in ("name", "description", "version", "protocolVersion", "documentationUrl", "iconUrl"):
        if label in card:
            lines.append(
                _line(f"{label}: {_s(card[label]) if isinstance(card[label], str) else _json(card[label])}")
            )
    provider = card.get("provider")
    if isinstance(provider, Mapping):
        org, home = provider.get("organization"), provider.get("url")
        said = " ".join(_s(v, 300) for v in (org, home) if isinstance(v, str))
        lines.append(_line(f"provider: {said or _json(provider)}"))
    elif provider is not None:
        lines.append(_line(f"provider: {_json(provider)} (not an object)", problem=True))
    return CardSection("card", "Card", tuple(lines))


def _interfaces(card: Mapping[str, Any]) -> CardSection:
    lines: list[ReasonLine] = []
    listed = card.get("supportedInterfaces")
    if isinstance(listed, list):
        for iface in _objects(listed)[:SHOWN_ITEMS]:
            binding = iface.get("protocolBinding", iface.get("transport", "?"))
            version = iface.get("protocolVersion", "-")
            lines.append(
                _line(f"{_s(binding, 40)} {_s(version, 20)} {_s(iface.get('url', '(no url)'), 300)}")
            )
            extra = {k: v for k, v in iface.items() if k not in ("protocolBinding", "protocolVersion", "url")}
            if extra:
                lines.append(_line(_json(extra), 1))
        lines += _more(listed, SHOWN_ITEMS, 0)
    if "url" in card:
        transport = card.get("preferredTransport", "JSONRPC (unstated)")
        lines.append(_line(f"{_s(transport, 40)} {_s(card['url'], 300)} (the card's url, v0.3)"))
    for iface in _objects(card.get("additionalInterfaces"))[:SHOWN_ITEMS]:
        lines.append(_line(f"{_s(iface.get('transport', '?'), 40)} {_s(iface.get('url', '(no url)'), 300)}"))
    if not lines:
        lines.append(_line("none declared: nothing says where the agent is spoken to", problem=True))
    return CardSection("interfaces", f"Interfaces ({len(lines)})", tuple(lines))


def _capabilities(card: Mapping[str, Any]) -> CardSection:
    capabilities = card.get("capabilities")
    lines: list[ReasonLine] = []
    if isinstance(capabilities, Mapping):
        for name, value in capabilities.items():
            if name != "extensions":
                lines.append(_line(f"{_s(name, 80)}: {_json(value)}"))
    elif capabilities is not None:
        lines.append(_line(f"capabilities is {_json(capabilities)}, not an object", problem=True))
    for label in ("defaultInputModes", "defaultOutputModes"):
        if label in card:
            lines.append(_line(f"{label}: {_modes(card[label])}"))
    return CardSection(
        "capabilities", "Capabilities and default modes", tuple(lines or [_line("none declared")])
    )


def _modes(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(_s(v, 100) for v in value[:SHOWN_ITEMS]) or "(none)"
    return _json(value)


def _security(card: Mapping[str, Any]) -> CardSection:
    lines: list[ReasonLine] = []
    schemes = card.get("securitySchemes")
    if isinstance(schemes, Mapping):
        for name, scheme in list(schemes.items())[:SHOWN_ITEMS]:
            lines.append(_line(f"scheme {_s(name, 80)}: {_json(scheme)}"))
    elif schemes is not None:
        lines.append(_line(f"securitySchemes is {_json(schemes)}, not an object", problem=True))
    for label in ("securityRequirements", "security"):
        requirements = card.get(label)
        if isinstance(requirements, list):
            lines.append(_line(f"{label} ({len(requirements)}): any one of them admits a caller"))
            lines += [_line(_json(r), 1) for r in requirements[:SHOWN_ITEMS]]
        elif requirements is not None:
            lines.append(_line(f"{label}: {_json(requirements)}"))
    if not lines:
        lines.append(_line("none declared: the agent asks for no credential"))
    count = len(schemes) if isinstance(schemes, Mapping) else 0
    return CardSection("security", f"Security schemes ({count})", tuple(lines))


def _skills(card: Mapping[str, Any]) -> CardSection:
    skills = card.get("skills")
    listed = skills if isinstance(skills, list) else []
    lines: list[ReasonLine] = []
    for index, skill in enumerate(listed[:SHOWN_SKILLS]):
        if not isinstance(skill, Mapping):
            lines.append(_line(f"/skills/{index}: {_json(skill)} (not an object)", problem=True))
            continue
        named = [_s(skill[k], 120) for k in ("id", "name") if isinstance(skill.get(k), str)]
        lines.append(_line(f"/skills/{index}  " + (" · ".join(named) or "(no id or name)")))
        if isinstance(skill.get("description"), str):
            lines.append(_line(_s(skill["description"]), 1))
        for label in ("tags", "inputModes", "outputModes"):
            if label in skill:
                lines.append(_line(f"{label}: {_modes(skill[label])}", 1))
        examples = skill.get("examples")
        if isinstance(examples, list) and examples:
            lines.append(_line(f"examples ({len(examples)}):", 1))
            lines += [_line(_s(e) if isinstance(e, str) else _json(e), 2) for e in examples[:SHOWN_ITEMS]]
            lines += _more(examples, SHOWN_ITEMS, 2)
        other = {k: v for k, v in skill.items() if k not in _SKILL_SHOWN}
        if other:
            lines.append(_line(f"also: {_json(other)}", 1))
    lines += _more(listed, SHOWN_SKILLS, 0)
    if not listed:
        lines.append(_line("none declared" if skills is None else f"skills is {_json(skills)}, not a list"))
    return CardSection("skills", f"Skills ({len(listed)})", tuple(lines))


_SKILL_SHOWN = frozenset({"id", "name", "description", "tags", "inputModes", "outputModes", "examples"})


def _extensions(card: Mapping[str, Any]) -> CardSection:
    capabilities = card.get("capabilities")
    extensions = _objects(capabilities.get("extensions")) if isinstance(capabilities, Mapping) else []
    lines: list[ReasonLine] = []
    for index, extension in enumerate(extensions[:SHOWN_ITEMS]):
        uri = extension.get("uri")
        known = _KNOWN_EXTENSIONS.get(uri) if isinstance(uri, str) else None
        required = extension.get("required")
        said = (
            "required"
            if required is True
            else "not required"
            if required in (False, None)
            else _json(required)
        )
        head = f"{_s(uri if uri is not None else '(no uri)', 300)}" + (f" ({known})" if known else "")
        lines.append(_line(head, problem=required is True and uri == INTERVIEW_URI))
        lines.append(_line(f"at /capabilities/extensions/{index} · {said}", 1))
        if isinstance(extension.get("description"), str):
            lines.append(_line(_s(extension["description"]), 1))
        if "params" in extension:
            lines.append(_line(f"params: {_json(extension['params'], 800)}", 1))
    lines += _more(extensions, SHOWN_ITEMS, 0)
    if not extensions:
        lines.append(_line("none declared"))
    return CardSection("extensions", f"Extensions ({len(extensions)})", tuple(lines))


def _proposals(report: ReportView, card: Mapping[str, Any]) -> CardSection:
    lines: list[ReasonLine] = []
    for proposal in report.card.proposals[:SHOWN_ITEMS]:
        status = str(proposal.get("status", "?"))
        ok = status == "verified"
        name = model.proposal_name(proposal)
        lines.append(
            _line(f"{'✓' if ok else '✗'} {_s(name, 120)}: {_s(status.replace('_', ' '), 60)}", problem=not ok)
        )
        lines.append(_line(f"url {_s(proposal.get('url'), 300)}", 1))
        lines.append(_line(f"digest {_s(proposal.get('digest'), 100)}", 1))
        for step in _objects(proposal.get("steps")):
            mark = "✓" if step.get("ok") else "✗"
            words = f"{mark} {_s(step.get('step', '?'), 30)}: {_s(step.get('detail', ''), 300)}"
            lines.append(_line(words, 2, problem=not step.get("ok")))
        if isinstance(proposal.get("signer"), str):
            lines.append(_line(f"provider key {_s(proposal['signer'], 120)}", 1))
        clauses = _objects(proposal.get("clauses"))
        if clauses:
            graded = ", ".join(
                f"{_s(c.get('member'), 80)} {_s(c.get('grade') or '-', 30)}" for c in clauses[:SHOWN_ITEMS]
            )
            lines.append(_line(f"clauses ({len(clauses)}): {graded}", 1))
    if not lines:
        declared = report.member("card", "terms", "declared") is True
        lines.append(
            _line(
                "the terms extension commits to no proposal this run could check"
                if declared
                else "no terms extension: the agent publishes no standing terms"
            )
        )
    return CardSection("terms", f"Terms proposals ({len(report.card.proposals)})", tuple(lines))


def _reputation(report: ReportView) -> CardSection:
    pointer = report.member("card", "reputation")
    if pointer is None:
        return CardSection("reputation", "Reputation", (_line("no reputation pointer"),))
    lines = (
        _line(_json(pointer, 1200)),
        _line("shown verbatim, never fetched: the interview measures consistency, not conduct", 1),
    )
    return CardSection("reputation", "Reputation", lines)


def _signature(report: ReportView) -> CardSection:
    badge, ok = model.signature_badge(report)
    lines = [_line(badge, problem=not ok)]
    for item in _objects(report.member("card", "signature", "signatures")):
        named = " · ".join(_s(item[k], 80) for k in ("alg", "kid") if isinstance(item.get(k), str))
        status = _s(item.get("status", "?"), 40)
        detail = f", {_s(item['detail'], 300)}" if isinstance(item.get("detail"), str) else ""
        lines.append(
            _line(f"signature {item.get('index', '?')} ({named}): {status}{detail}", 1, status != "verified")
        )
    hint = report.card.signature.hint()
    if hint:
        lines.append(_line(_s(hint, 400), 1))
    unsigned = [m for m in report.member("card", "signature", "unsigned_members") or [] if isinstance(m, str)]
    if unsigned:
        lines.append(_line(f"not covered by the matched payload form ({len(unsigned)}):"))
        lines += [_line(_s(m, 300), 1, True) for m in unsigned[:SHOWN_ITEMS]]
    return CardSection("signature", "Signature", tuple(lines))


def _problems(report: ReportView) -> CardSection:
    problems = report.member("card", "problems")
    lines: list[ReasonLine] = []
    for problem in problems if isinstance(problems, list) else []:
        if isinstance(problem, Mapping):  # {code, member, layout, detail}
            where = " ".join(_s(problem[k], 120) for k in ("code", "member", "layout") if problem.get(k))
            lines.append(_line(f"{where}: {_s(problem.get('detail', ''))}", problem=True))
        else:
            lines.append(_line(_s(problem), problem=True))
    return CardSection("problems", f"Card problems ({len(lines)})", tuple(lines or [_line("none found")]))


def _others(card: Mapping[str, Any]) -> CardSection:
    others = [name for name in card if name not in _SHOWN_MEMBERS]
    lines = [_line(f"{_s(name, 120)}: {_json(card[name])}") for name in others[:SHOWN_ITEMS]]
    return CardSection("other", f"Other members ({len(others)})", tuple(lines or [_line("none")]))


def card_sections(report: ReportView, card: Mapping[str, Any] | None) -> list[CardSection]:
    """Everything the card declares, a section per kind; the report's checks where it has them
    (the signature, the proposals, the problems). Without the card's bytes (a record without
    its exchanges) only the checks the report kept."""
    checks = [_proposals(report, card or {}), _reputation(report), _signature(report), _problems(report)]
    if card is None:
        missing = CardSection(
            "card", "Card", (_line("the card's bytes are not in this record: only its checks are"),)
        )
        return [missing, *checks]
    parts = [_overview(report, card), _interfaces(card), _capabilities(card), _security(card), _skills(card)]
    return [*parts, _extensions(card), *checks, _others(card)]


def section_content(section: CardSection) -> Content:
    """A section's lines as one text: a line's depth indents it, a problem is bold (never colour alone)."""
    rows = [
        Content.assemble(("  " * line.depth, ""), safe.text(line.text, 1600, "bold" if line.problem else ""))
        for line in section.lines
    ]
    return Content("\n").join(rows)


class CardScreen(Screen[None]):
    """What the run's card declares, every kind of it, scrollable."""

    CSS_PATH = "card.tcss"
    AUTO_FOCUS = "#card-sections"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="card.back"),
        Binding("n", "section(1)", "Next section", id="card.next_section"),
        Binding("b", "section(-1)", "Previous", id="card.previous_section"),
    ]

    HELP = """
## What the card declares

Every kind of declaration on the agent's card, whether or not it offers the interview: the
card, its interfaces, capabilities, security schemes, skills (modes, examples), extensions
(with their parameters), the terms proposals as checked under their own procedure, the
reputation pointer (never fetched), the signature and the card's problems.

**n**/**b** next and previous section, **up/down**/**pgup/pgdn** scroll, **escape** back.
"""

    def __init__(self, report: ReportView, card: Mapping[str, Any] | None) -> None:
        super().__init__()
        self.report = report
        self.sections = card_sections(report, card)

    def compose(self) -> ComposeResult:
        head = Content.assemble(
            ("card  ", "bold"),
            safe.text(self.report.agent_name, 120, "bold"),
            ("  ", ""),
            safe.text(safe.middle(self.report.card.url or "", 80), 100, "dim"),
        )
        yield Static(head, id="card-head")
        with VerticalScroll(id="card-sections", can_focus=True):
            for section in self.sections:
                yield Static(
                    Content.styled(section.title, "bold underline"),
                    classes="card-title",
                    id=f"section-{section.key}",
                )
                yield Static(section_content(section), classes="card-body")
        yield ExplorerFooter()

    def action_section(self, step: int) -> None:
        """Scroll to the next (1) or previous (-1) section's title."""
        scroller = self.query_one("#card-sections", VerticalScroll)
        titles = list(self.query(".card-title").results(Static))
        tops = [title.virtual_region.y for title in titles]
        here = round(scroller.scroll_y)
        if step > 0:
            later = [top for top in tops if top > here]
            target = later[0] if later else tops[-1]
        else:
            earlier = [top for top in tops if top < here]
            target = earlier[-1] if earlier else 0
        scroller.scroll_to(y=target, animate=False)

    def action_back(self) -> None:
        self.dismiss()
