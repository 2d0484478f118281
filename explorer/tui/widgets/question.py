"""One tab of the interview screen: a question's summary, its projections, and the detail.

The left column says how the question went in words (and, for refusals, the boundary and the
closure probes; for terms, the committed proposals), then lists the projections. The right
column is a `ProjectionDetail` that follows the highlighted row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.widgets import OptionList, Static

from explorer.tui import model, safe
from explorer.tui.widgets.detail import ProjectionDetail
from explorer.tui.widgets.projections import ProjectionList


def summary_lines(report: Mapping[str, Any], name: str) -> Content:
    state = model.question_state(report, name)
    q = model.question(report, name)
    lines: list[Content] = [
        Content.assemble((f"{name}: ", "bold"), (state.summary, "bold" if state.problem else "")),
    ]
    if q.get("status") == "error":
        answer = q.get("answer")
        if answer not in (None, ""):
            lines.append(Content.assemble(("answered with an error: ", "dim"), safe.text(answer, 300)))
        else:  # nothing came back (refused connection, timeout, HTTP error): say why, from the findings
            errors = [f for f in model.findings(report) if f.get("severity") == "error"]
            why = [f for f in errors if f.get("question") == name]
            lines.append(Content.styled("no answer was received", "bold"))
            for found in why[:3]:
                lines.append(Content.assemble(("  ", ""), safe.text(found.get("code"), 60, "bold"), ": ",
                                              safe.text(found.get("detail"), 300)))
            if not why:
                lines.append(Content.styled("  (see the findings tab for what the call got)", "dim"))
    if name == "terms":
        declared = q.get("declared")
        if declared is not None:
            lines.append(Content.styled(f"declared: {str(declared).lower()}", "dim"))
        for proposal in model.proposals(report):
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
        for probe in model.probes(report):
            words, ok = model.probe_text(probe, report)
            request = probe.get("request") if isinstance(probe.get("request"), Mapping) else {}
            params = safe.visible(request["params"], 80) if "params" in request else "(no params)"
            sent = f"{request.get('method', '?')} {params}"
            lines.append(Content.assemble(("  ", ""), safe.text(words, 200, "" if ok else "bold"),
                                          ("  sent ", "dim"), safe.text(sent, 120, "dim")))
        if not model.probes(report):
            lines.append(Content.styled("  (no probes were run)", "dim"))
    return Content("\n").join(lines)


class QuestionPane(Horizontal):
    """Summary + projection list on the left, detail on the right."""

    def __init__(self, report: Mapping[str, Any], question: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.report = report
        self.question = question
        self.items = model.projections(report, question)
        self.start = next((i for i, p in enumerate(self.items) if p.get("status") != "match"), 0)

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
    def selected(self) -> Mapping[str, Any] | None:
        index = self.query_one(ProjectionList).highlighted
        if index is None or not (0 <= index < len(self.items)):
            return None
        return self.items[index]

    def select(self, position: int | None) -> None:
        listing = self.query_one(ProjectionList)
        if position is not None and 0 <= position < len(self.items):
            listing.highlighted = position
        listing.focus()
