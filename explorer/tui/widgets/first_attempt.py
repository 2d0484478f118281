"""The "churned" tab: what a churn's first attempt found, both values of each conflict.

After `churn` every question tab shows the re-run, where everything matches; the only trace of
what churned used to be a list of codes. This tab lists each error of the first attempt from the
report's `first_attempt` member, and for a projection the two canonical strings it saw then,
marked the same way as a mismatch (the differing span in « » with ^ carets). Everything shown is
agent text and goes through the safe renderers.
"""

from __future__ import annotations

from typing import Any

from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from explorer.core.report import first_attempt_conflicts
from explorer.core.view import ReportView
from explorer.tui import safe
from explorer.tui.widgets.detail import canonical_content

HELP = """\
### First attempt

A conflict on the first attempt makes the explorer fetch the card and ask again. This tab lists
what the **first attempt** found, with both canonical values it compared then; the question tabs
show the re-run. If the re-run was clean the verdict is **churn**.

**n** selects the next conflict (after any problem of the re-run), **u** opens this tab.
"""


def first_attempt_parts(report: ReportView, width: int) -> tuple[Content, list[Content]]:
    """The lead sentence, and each first-attempt conflict: where, which code, and both values
    marked where they differ."""
    conflicts = first_attempt_conflicts(report.raw)
    churn = report.verdict == "churn"
    lead = (
        "these conflicts of the first attempt were gone on the re-run (churn)"
        if churn
        else "the first attempt found these conflicts; the question tabs show the re-run"
    )
    parts: list[Content] = []
    for number, found in enumerate(conflicts, 1):
        where = " ".join(w for w in (found.question, found.probe, found.member) if w) or "the card"
        head = Content.assemble(
            (f"✗ {number}/{len(conflicts)}  ", "bold"),
            safe.text(where, 200, "bold"),
            "  ",
            safe.text(found.code, 60),
        )
        a, b = found.raw.get("value_canonical"), found.raw.get("source_canonical")  # as the conflict saw them
        if isinstance(a, str) and isinstance(b, str):
            body = canonical_content(a, b, width)
        else:
            body = safe.text(found.detail, 1000, single_line=False)
        parts.append(Content("\n").join([head, body]))
    return Content.styled(lead, "bold"), parts


class FirstAttempt(VerticalScroll, can_focus=True):
    """The first attempt's conflicts, scrollable; one of them selected at a time (`select`)."""

    HELP = HELP

    def __init__(self, report: ReportView, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report = report
        self.selected: int | None = None

    @property
    def count(self) -> int:
        return len(first_attempt_conflicts(self.report.raw))

    def compose(self) -> Any:
        width = max(40, self.app.size.width - 10)
        lead, parts = first_attempt_parts(self.report, width)
        yield Static(lead, id="first-attempt-lead")
        for index, part in enumerate(parts):
            yield Static(part, classes="churned-conflict", id=f"churned-{index}")

    def select(self, index: int) -> None:
        """Mark conflict `index` (0-based) and scroll it into view."""
        items = list(self.query(".churned-conflict").results(Static))
        if not items:
            return
        self.selected = index % len(items)
        for position, item in enumerate(items):
            item.set_class(position == self.selected, "-selected")
        self.scroll_to_widget(items[self.selected], top=True, animate=False)
