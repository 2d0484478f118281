"""The interview screen's reason tab: what decided the verdict when no answer conflicts.

A run whose answers all match can still be nonconformant, unreachable or not offered, and a
screen that opened on "identity: all match" (or on five empty panes) would hide why. So when
`explorer.tui.model.verdict_reason` finds what decided it (a root cause such as
`interview_not_implemented` with the findings it explains, an invalid card signature, how each
call of an unreachable agent was answered, or, for an agent that does not offer the interview,
that absence says nothing and what its card does declare), the screen opens on this tab. The
words are the model's; agent text in them has been neutralised there and is drawn as text here.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from explorer.core.view import ReportView
from explorer.tui import model, safe


def reason_head(report: ReportView, reason: model.VerdictReason) -> Content:
    """What the reason is about, then the sentence that says it."""
    return Content.assemble(
        ("why ", "dim"),
        (report.verdict_label.replace("_", " "), "bold"),  # words, as the header says it
        (": ", "dim"),
        (reason.summary, "bold"),
        "\n",
        safe.text(reason.heading, 800, "bold"),
    )


def reason_line(line: model.ReasonLine) -> Static:
    """One detail line, indented by its depth (a wrapped line keeps the indent)."""
    shown = Static(safe.text(line.text, 800, "bold" if line.problem else ""), classes="reason-line")
    shown.styles.padding = (0, 0, 0, 2 * line.depth)
    return shown


class ReasonPane(VerticalScroll, can_focus=True):
    """What decided the verdict, scrollable (a card with many skills says them all)."""

    HELP = """
## Why this verdict

No answer conflicts with the card, so the screen opens on what decided the verdict instead:

- an agent that declares the interview but implements none of it: that root cause, and the
  findings that follow from it;
- an unreachable agent: how each call was answered (HTTP status or transport error);
- an agent that does not offer the interview: absence says nothing about it, and what its card
  does declare (name, skills, extensions);
- an invalid card signature: each signature and why it does not verify.

**up/down** scroll; **f** lists every finding; **1**-**5** show the questions.
"""

    def __init__(self, report: ReportView, reason: model.VerdictReason, **kw: Any) -> None:
        super().__init__(**kw)
        self.report = report
        self.reason = reason

    def compose(self) -> ComposeResult:
        yield Static(reason_head(self.report, self.reason), classes="reason-head")
        for line in self.reason.lines:
            yield reason_line(line)
        keys = Content.styled("f lists every finding; 1-5 show the questions", "dim")
        yield Static(keys, classes="reason-keys")
