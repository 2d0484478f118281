"""One tab of the interview screen: a question's summary, its projections, and the detail.

The left column says how the question went in words (and, for refusals, the boundary and the
closure probes; for terms, the committed proposals), then lists the projections. The right
column is a `ProjectionDetail` that follows the highlighted row.

When the agent gave the question no answer (it does not offer the interview, it is down, it
refused the call for want of a credential, it answered an error), the list holds what the declared
documents say instead (`questions.<q>.declared`), member by member, each marked "declared, not
answered", under the card's signature check (and, for terms, each proposal's): an agent is read
question by question from its signed bytes whether or not it answers. An answered question is
shown exactly as before.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.widgets import OptionList, Static

from explorer.core.view import Projection, ReportView
from explorer.tui import model, safe
from explorer.tui.widgets.detail import ProjectionDetail
from explorer.tui.widgets.projections import NOT_ANSWERED, ProjectionList, declared_items


def _declared_lines(report: ReportView, name: str) -> list[Content]:
    """What stands in for an answer not given: how many members the declared documents give, and
    the card's signature check they rest on."""
    count = len(report.questions[name].declared_members)
    signature = report.card.signature  # the header has the whole badge: the state is enough here
    ok = signature.status == "verified"
    return [
        Content.assemble((f"{NOT_ANSWERED}: ", "bold"), f"{count} member{'s' if count != 1 else ''}"),
        Content.assemble(
            ("card signature ", "dim"),
            safe.text(f"{signature.mark} {signature.status}", 60, "" if ok else "bold"),
        ),
    ]


def summary_lines(report: ReportView, name: str) -> Content:
    state = model.question_state(report, name)
    q = report.questions[name]
    lines: list[Content] = [
        Content.assemble((f"{name}: ", "bold"), (state.summary, "bold" if state.problem else "")),
    ]
    if not q.answered and q.declared_members:
        lines += _declared_lines(report, name)
    if q.status == "error":
        answer = q.answer
        if answer not in (None, ""):
            lines.append(Content.assemble(("answered with an error: ", "dim"), safe.text(answer, 300)))
        else:  # nothing came back (refused connection, timeout, HTTP error): say why, from the findings
            why = [f for f in report.findings if f.severity == "error" and f.question == name]
            lines.append(Content.styled("no answer was received", "bold"))
            for found in why[:3]:
                lines.append(
                    Content.assemble(
                        ("  ", ""), safe.text(found.code, 60, "bold"), ": ", safe.text(found.detail, 300)
                    )
                )
            if not why:
                lines.append(Content.styled("  (see the findings tab for what the call got)", "dim"))
    if name == "terms":
        if q.declared is not None:
            lines.append(Content.styled(f"declared: {str(q.declared).lower()}", "dim"))
        for proposal in report.card.proposals:
            status = str(proposal.get("status", "?"))
            mark = "✓" if status == "verified" else "✗"
            lines.append(
                Content.assemble(
                    (f"{mark} proposal ", "bold" if mark == "✗" else ""),
                    (safe.clip(model.proposal_name(proposal), 40), "bold"),
                    (f": {safe.visible(status.replace('_', ' '), 60)}", "bold" if mark == "✗" else ""),
                )
            )
    if name == "refusals":
        boundary = model.refusal_boundary(report)
        lines.append(
            Content.assemble(
                ("boundary: ", "dim"),
                safe.text(", ".join(boundary) if boundary else "(no skill ids)", 400),
            )
        )
        lines.append(Content.styled("everything outside the boundary gets the standard refusal", "dim"))
        lines.append(Content.styled("closure probes:", "bold"))
        for probe in report.probes:
            words, ok = model.probe_text(probe, report)
            request = probe.request
            params = safe.visible(request["params"], 80) if "params" in request else "(no params)"
            sent = f"{request.get('method', '?')} {params}"
            lines.append(
                Content.assemble(
                    ("  ", ""),
                    safe.text(words, 200, "" if ok else "bold"),
                    ("  sent ", "dim"),
                    safe.text(sent, 120, "dim"),
                )
            )
        if not report.probes:
            lines.append(Content.styled("  (no probes were run)", "dim"))
    return Content("\n").join(lines)


class QuestionPane(Horizontal):
    """Summary + projection list on the left, detail on the right."""

    def __init__(self, report: ReportView, question: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.report = report
        self.question = question
        # An unanswered question lists its declared members (`declared_items`); they are no problem.
        self.declared = declared_items(report.questions[question])
        self.items = self.declared or report.questions[question].projections
        self.start = 0 if self.declared else next((i for i, p in enumerate(self.items) if p.problem), 0)

    def compose(self) -> ComposeResult:
        # Everything is built with its content here (the first problem already chosen), so the
        # tab is laid out once.
        with Vertical(classes="left"):
            yield Static(summary_lines(self.report, self.question), classes="summary")
            yield ProjectionList(self.question, self.report, self.items, id=f"list-{self.question}")
        chosen = self.items[self.start] if self.items else None
        yield ProjectionDetail(self.report, chosen, id=f"detail-{self.question}")

    def on_mount(self) -> None:
        try:
            listing = self.query_one(ProjectionList)
        except NoMatches:
            return  # the pane was replaced (a newer run was shown) before it finished mounting
        if self.items:
            listing.highlighted = self.start

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if isinstance(event.option_list, ProjectionList):
            event.stop()
            detail = self.query_one(ProjectionDetail)
            if detail.projection is not self.selected or detail.projection is None:
                detail.show(self.report, self.selected)

    @property
    def selected(self) -> Projection | None:
        index = self.query_one(ProjectionList).highlighted
        if index is None or not (0 <= index < len(self.items)):
            return None
        return self.items[index]

    def select(self, position: int | None) -> None:
        listing = self.query_one(ProjectionList)
        if position is not None and 0 <= position < len(self.items):
            listing.highlighted = position
        # At once, not `listing.focus()` (which waits its turn after keys already queued): a key
        # typed right after the tab's key (`3`, then Down) goes to this list, not the tab left.
        self.screen.set_focus(listing)
