"""JUnit XML for a sweep (`verify --junit FILE`), as CONTRACT.md "Many agents in one run" shapes it.

One `testsuite` per agent, one `testcase` per question and per probe, plus a `card`
testcase for what concerns the card itself (unreachable, malformed, a signature that fails):
those findings name no question, and a CI page must still show them as failures. Each
error-severity finding is a `failure` whose type is the code and whose message names the code
and the member; a `not_offered` agent is a skipped suite (every testcase skipped, neutral as in
the verdict rule), and on an unreachable agent a testcase with nothing to say is skipped as not
asked rather than passed.

Everything here is text in, text out, so the writer can stream one suite per finished run and
never hold the reports. Agent-supplied strings go through `safe_text` (controls and bidi
escaped, length bounded), then every character XML 1.0 (section 2.2) forbids or discourages is
written as `<U+XXXX>`, then XML escaping. `safe_text` is a terminal's rule and lets through
noncharacters such as U+FFFE and U+FFFF, which no XML parser accepts: one agent with one of them
in an error message would make a whole sweep's file unreadable. The XML rule is this module's
own, applied to text `safe_text` has already bounded, so it costs little and holds whatever the
terminal rule becomes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from explorer.core.findings import PROBES, QUESTIONS
from explorer.core.text import safe_text
from explorer.core.view import ReportView

# Every probe the report lists (the closure probes and the unactivated call with and without
# `params`): a finding of a probe missing here would be filed under `card` instead.
PROBE_NAMES: tuple[str, ...] = PROBES
CASES: tuple[str, ...] = ("card", *QUESTIONS, *(f"probe:{name}" for name in PROBE_NAMES))


@dataclass(frozen=True)
class Suite:
    """One agent's suite as XML text, with the counts the `testsuites` root adds up."""

    xml: str
    tests: int
    failures: int
    skipped: int


def _not_xml_ranges() -> str:
    """A character class of what XML 1.0 forbids (outside its `Char` production) or discourages."""
    ranges = [
        "\x00-\x08\x0b\x0c\x0e-\x1f",  # C0 controls but tab, LF and CR: forbidden
        "\x7f-\x84\x86-\x9f",  # DEL and C1 controls but NEL: discouraged
        "\ud800-\udfff",  # surrogates, which only a lone one can be in a str: forbidden
        "\ufdd0-\ufdef",  # noncharacters: discouraged
        "\ufffe\uffff",  # noncharacters: forbidden
    ]
    # The last two code points of planes 1 to 16 are noncharacters: discouraged.
    ranges += [f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(1, 17)]
    return "[" + "".join(ranges) + "]"


_NOT_XML = re.compile(_not_xml_ranges())


def _xml_chars(text: str) -> str:
    return _NOT_XML.sub(lambda match: f"<U+{ord(match.group()):04X}>", text)


def _attr(value: Any, limit: int = 300) -> str:
    return quoteattr(_xml_chars(safe_text(value, limit=limit)))


def _text(value: Any, limit: int = 2000) -> str:
    return escape(_xml_chars(safe_text(value, limit=limit)))


def _case_of(item: Mapping[str, Any]) -> str:
    probe = item.get("probe")
    if isinstance(probe, str) and f"probe:{probe}" in CASES:
        return f"probe:{probe}"
    question = item.get("question")
    if isinstance(question, str) and question in QUESTIONS:
        return question
    return "card"


def _failure(item: Mapping[str, Any]) -> str:
    code = str(item.get("code"))
    member = item.get("member")
    message = f"{code} at {member}" if isinstance(member, str) and member else code
    return f"<failure type={_attr(code, 80)} message={_attr(message)}>{_text(item.get('detail'))}</failure>"


def suite(report: Mapping[str, Any], *, name: str | None = None, seconds: float = 0.0) -> Suite:
    """The `testsuite` element of one agent's report."""
    verdict = str(report.get("verdict"))
    target = name or report.get("target") or "(unknown agent)"
    failures: dict[str, list[str]] = {case: [] for case in CASES}
    for item in report.get("findings") or []:
        if isinstance(item, Mapping) and item.get("severity") == "error":
            failures[_case_of(item)].append(_failure(item))
    skip_all = verdict == "not_offered"
    not_asked = verdict == "unreachable"
    cases: list[str] = []
    skipped = failed = 0
    for case in CASES:
        head = f'<testcase classname={_attr(target)} name="{case}"'
        if skip_all:
            cases.append(
                f'{head}><skipped message="not_offered: the card does not declare the interview"/></testcase>'
            )
            skipped += 1
        elif failures[case]:
            cases.append(f"{head}>{''.join(failures[case])}</testcase>")
            failed += 1
        elif not_asked and case != "card":
            cases.append(f'{head}><skipped message="not asked: the agent was unreachable"/></testcase>')
            skipped += 1
        else:
            cases.append(f"{head}/>")
    card = ReportView.of(report).card
    properties = {
        "verdict": verdict,
        "standing": report.get("standing"),
        "card_url": card.url,
        "card_sha256": card.sha256,
        "answers_sha256": report.get("answers_sha256"),
    }
    props = "".join(
        f"<property name={_attr(k)} value={_attr(v)}/>" for k, v in properties.items() if isinstance(v, str)
    )
    xml = (
        f'<testsuite name={_attr(target)} tests="{len(CASES)}" failures="{failed}" errors="0" '
        f'skipped="{skipped}" time="{seconds:.3f}"><properties>{props}</properties>'
        + "".join(cases)
        + "</testsuite>"
    )
    return Suite(xml, len(CASES), failed, skipped)


def document_head(tests: int, failures: int, skipped: int, seconds: float) -> str:
    """The XML declaration and the opening `testsuites` tag with the sweep's totals."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name="interview-explorer verify" tests="{tests}" failures="{failures}" '
        f'errors="0" skipped="{skipped}" time="{seconds:.3f}">\n'
    )


DOCUMENT_TAIL = "</testsuites>\n"
