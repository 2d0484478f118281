"""One projection in full: the answer's value beside the signed member it points to.

Top to bottom: the pointer and the state in words; the document (the card, or the proposal's
url and digest) and whether the member is covered by a signature; for terms the clause grade
and the proposal's verification steps; the two values side by side, highlighted as JSON; and,
for a mismatch, both canonical (RFC 8785) strings with the differing span marked by « », ^
carets and underline (see `diffmarks`). The canonical rows are wrapped to the widget's width,
so they are redrawn when it is resized.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from explorer.tui import diffmarks, jsonview, model, safe

ABSENT = Content.styled("(nothing at this pointer)", "italic")


class ValuePanel(VerticalScroll):
    """A JSON value, highlighted, truncated when huge; scrolls when long."""

    HELP = """
## Value

The JSON value, highlighted. Long values scroll here (**up/down**, **pgup/pgdn**); huge ones
are cut, and **v** shows the whole value.
"""

    def compose(self) -> ComposeResult:
        yield Static(classes="json")

    def update(self, content: Content | str) -> None:
        self.query_one(".json", Static).update(content)
        self.scroll_home(animate=False)


class ProjectionDetail(VerticalScroll):
    """The selected projection: pointer, document, signature coverage, values, canonical diff."""

    HELP = """
## Projection detail

Left: the **answer value** the agent gave. Right: the **signed source member** the pointer
names in the card or the committed proposal. A mismatch shows both canonical byte strings
(RFC 8785 JCS); the differing span is wrapped in `«` `»`, underlined, and marked with `^`
carets on the line below.

- **v** view the whole value (for long values), **c** copy pointer, **y** copy value.
"""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.report: Mapping[str, Any] = {}
        self.projection: Mapping[str, Any] | None = None
        self.truncated = False

    def compose(self) -> ComposeResult:
        yield Static(classes="where")
        yield Static(classes="document")
        yield Static(classes="terms")
        with Horizontal(classes="values"):
            answer = ValuePanel(classes="value-panel answer")
            answer.border_title = "answer value"
            yield answer
            source = ValuePanel(classes="value-panel source")
            source.border_title = "signed source member"
            yield source
        yield Static(classes="canonical")

    def show(self, report: Mapping[str, Any], projection: Mapping[str, Any] | None) -> None:
        self.report = report
        self.projection = projection
        self._draw()

    def on_resize(self) -> None:
        if self.projection is not None:
            self._draw_canonical()

    def _draw(self) -> None:
        projection = self.projection
        where = self.query_one(".where", Static)
        if projection is None:
            where.update(Content.styled("no projection selected", "italic"))
            for name in (".document", ".terms", ".canonical"):
                self.query_one(name, Static).update("")
            self.query_one(".answer", ValuePanel).update("")
            self.query_one(".source", ValuePanel).update("")
            return
        status = str(projection.get("status", "unverifiable"))
        mark = model.PROJECTION_MARK.get(status, "?")
        where.update(
            Content.assemble(
                ("pointer  ", "dim"),
                safe.text(projection.get("member", ""), 300, "bold"),
                ("   ", ""),
                (f"{mark} {status.upper()}", "bold reverse" if status != "match" else "bold"),
            )
        )
        self.query_one(".document", Static).update(self._document_lines(projection))
        terms = self.query_one(".terms", Static)
        terms.display = projection.get("document") == "proposal"
        if terms.display:
            terms.update(self._terms_lines(projection))
        value = jsonview.highlight(projection.get("value"))
        self.query_one(".answer", ValuePanel).update(value.content)
        if status != "unresolved" and "source_value" in projection:
            source = jsonview.highlight(projection.get("source_value"))
            self.query_one(".source", ValuePanel).update(source.content)
            self.truncated = value.truncated or source.truncated
        else:
            self.query_one(".source", ValuePanel).update(ABSENT)
            self.truncated = value.truncated
        self._draw_canonical()

    def _document_lines(self, projection: Mapping[str, Any]) -> Content:
        document = str(projection.get("document", "?"))
        if document == "proposal":
            line = Content.assemble(
                ("document ", "dim"),
                ("proposal ", "bold"),
                safe.text(projection.get("url") or "(no url)", 200),
                ("\n         digest ", "dim"),
                safe.text(projection.get("digest") or "(no digest)", 120),
            )
        else:
            url = model.card(self.report).get("url") or "(the agent's card)"
            line = Content.assemble(("document ", "dim"), ("card ", "bold"), safe.text(url, 200))
        signed, ok = model.signed_text(self.report, projection)
        extra = [("   lossy number: integer beyond ±(2^53-1)", "bold")] if projection.get("lossy") else []
        return Content.assemble(line, ("\nsigned   ", "dim"), (signed, "" if ok else "bold"), *extra)

    def _terms_lines(self, projection: Mapping[str, Any]) -> Content:
        grade = model.clause_grade(self.report, projection) or "not stated"
        proposal = model.proposal_for(self.report, projection) or {}
        steps = []
        for step in proposal.get("steps") or []:
            if isinstance(step, Mapping):
                steps.append(f"{'✓' if step.get('ok') else '✗'} {step.get('step', '?')}")
        status = str(proposal.get("status", "not committed by the card"))
        return Content.assemble(
            ("grade    ", "dim"),
            (grade, "bold"),
            ("   proposal ", "dim"),
            (status.replace("_", " "), "bold" if status != "verified" else ""),
            ("   " + "  ".join(steps) if steps else "", ""),
        )

    def _draw_canonical(self) -> None:
        projection = self.projection or {}
        canonical = self.query_one(".canonical", Static)
        a = projection.get("value_canonical")
        b = projection.get("source_canonical")
        if not isinstance(a, str) or not isinstance(b, str):
            canonical.update("")
            return
        width = max(24, (self.size.width or 80) - 12)
        if a == b:
            canonical.update(
                Content.assemble(
                    ("canonical bytes (RFC 8785) identical: ", "dim"),
                    safe.text(a, 400),
                )
            )
            return
        span_a, span_b = model.diff_spans(a, b)
        canonical.update(
            Content("\n").join(
                [
                    Content.styled("canonical bytes (RFC 8785), differing span in « » and ^ carets", "bold"),
                    Content.styled(
                        f"answer: {diffmarks.span_words(span_a, len(a))}; "
                        f"source: {diffmarks.span_words(span_b, len(b))}",
                        "dim",
                    ),
                    diffmarks.marked_lines("answer  ", a, span_a, width=width),
                    diffmarks.marked_lines("source  ", b, span_b, width=width),
                ]
            )
        )
