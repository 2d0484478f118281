"""The interview header: who the agent is, what its card proved, and what the run concluded.

Four facts a reader must not miss are spelled out in words as well as marked: the signature
status with its payload form and key id, the verdict, and the standing (a self-run result is a
claim, never evidence: interview extension, sections 8 and 9). The agent's name and URL are untrusted and go
through `safe.text`.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.content import Content
from textual.widgets import Static

from explorer.core.view import ReportView
from explorer.tui import model, safe


class InterviewHeader(Static):
    """Agent name, card URL, layout, signature badge, verdict and standing."""

    HELP = """
## Interview header

- **signature**: whether the card's JWS verified, under which payload form and key id; when no
  key you trust could check it, the line below says what would (`--keys`, or `--allow-jku`).
- **verdict**: conformant, nonconformant, churn, not offered or unreachable.
- **standing**: a *claim* when the runner declared no independent role (`--as independent`
  declares one) or its word cannot be checked, *evidence* when an independent party or a
  platform recorded it (signed, under a runner key you trust).
"""

    def __init__(
        self,
        report: ReportView,
        *,
        run_id: int | None = None,
        origin: str = "",
        unrecorded: str | None = None,
        **kw: Any,
    ) -> None:
        self.report = report
        self.run_id = run_id
        self.origin = origin
        self.unrecorded = unrecorded  # why the run is not in the history (a full disk, ...)
        super().__init__(self.render_header(), **kw)

    def on_resize(self, event: events.Resize) -> None:
        self.update(self.render_header(event.size.width - self.styles.gutter.width))

    def render_header(self, width: int = 0) -> Content:
        """The header for `width` columns (0: unbounded). Each fact is kept whole on one line
        (a label never parts from its value, a URL is shortened in the middle rather than
        broken), and facts move to the next line when the width runs out."""
        room = width if width > 0 else 10_000
        report = self.report
        badge, ok = model.signature_badge(report)
        verdict_style = "bold reverse" if report.verdict in ("nonconformant", "unreachable") else "bold"
        url = report.card.url or report.target or "(no card)"
        first = [
            ("", safe.text(report.agent_name, 120, "bold")),
            ("   ", Content.assemble(("card ", "dim"), safe.middle(url, max(room - 5, 8)))),
        ]
        parts = badge.split(" · ")
        second = [("", Content.assemble(("layout ", "dim"), model.layout_text(report)))]
        second.append(("   ", Content.assemble(("signature ", "dim"), (parts[0], "" if ok else "bold"))))
        second += [(" · ", safe.text(part, 200, "" if ok else "bold")) for part in parts[1:]]
        run = f"run #{self.run_id}" if self.run_id is not None else "run not recorded"
        standing = standing_words(report)
        if len("standing ") + len(standing) > room:  # F1 says how to declare a role; the fact stays whole
            standing = standing_words(report, how_to_declare=False)
        third = [
            ("", Content.assemble(("verdict ", "dim"), (verdict_words(report.verdict_label), verdict_style))),
            ("   ", Content.assemble(("standing ", "dim"), safe.text(standing, 160))),
            ("   ", Content.styled(f"{run}" + (f" · {self.origin}" if self.origin else ""), "dim")),
        ]
        if report.attempts is not None and report.attempts > 1:  # a re-run happened; one is the rule
            third.append((" · ", Content.styled(f"attempts {report.attempts}", "dim")))
        hint = report.card.signature.hint()  # what would make it checkable
        notes = [("", Content.styled(safe.visible(hint, 400), "dim"))] if hint else []
        stacks = report.card.signature.stacks_note()  # only when client stacks disagree on it
        if stacks:
            notes.append(("   ", Content.styled(safe.visible(stacks, 300), "dim")))
        lines = [*pack(first, room), *pack(second, room), *(pack(notes, room) if notes else [])]
        lines += pack(third, room)
        if self.unrecorded:
            lines.append(
                Content.assemble(("✗ run not recorded: ", "bold"), safe.text(self.unrecorded, 300, "bold"))
            )
        return Content("\n").join(lines)


def verdict_words(label: str) -> str:
    """`✓ conformant`, `– not offered`: the verdict as words (the report's `not_offered` read as a
    code, and in capitals as a shout); its weight is in the style, not the letters."""
    return label.replace("_", " ")


def standing_words(report: ReportView, *, how_to_declare: bool = True) -> str:
    """The standing in plain words. With no independent role declared, the runner is named as the
    person it is (the name recorded is, unless told otherwise, the OS user); when that name is the
    user running the explorer now, it says "run by you (user root)". Only here: an export travels,
    and "you" in it would name whoever reads it."""
    words = report.standing_words(how_to_declare=how_to_declare)
    name = report.runner
    undeclared = f"claim: run by {name}, no independent role declared" if name else None
    if report.role != "self" or undeclared is None or not words.startswith(undeclared):
        return words
    who = f"you (user {name})" if name == current_user() else name
    said = f"claim: run by {safe.visible(who, 90)}, no independent role declared"
    return f"{said} (--as independent declares one)" if how_to_declare else said


def current_user() -> str | None:
    """The OS user running the explorer (the runner a run records unless told otherwise)."""
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


def pack(facts: list[tuple[str, Content]], width: int) -> list[Content]:
    """Facts (each with the separator that goes before it) on as few lines as `width` allows;
    a fact wider than a line gets a line of its own (and wraps by words there)."""
    lines: list[Content] = []
    line = Content("")
    for separator, fact in facts:
        if not line.cell_length:
            line = fact
        elif line.cell_length + len(separator) + fact.cell_length <= width:
            line = Content.assemble(line, (separator, "dim"), fact)
        else:
            lines.append(line)
            line = fact
    lines.append(line)
    return lines
