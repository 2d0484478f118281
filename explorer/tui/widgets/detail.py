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


class ValuePanel(Static):
    """A JSON value: drawn plain at once, coloured by pygments on the next frame (so the first
    paint of the interview screen never waits for pygments to load)."""

    HELP = """
## Value

The JSON value, highlighted. The detail scrolls (**up/down**, **pgup/pgdn**); huge values
are cut, and **v** shows the whole value.
"""

    _NOTHING = object()

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._value: Any = self._NOTHING

    def show_value(self, value: Any) -> bool:
        """Draw `value`; returns whether it had to be cut."""
        shown = jsonview.highlight(value, colour=False)
        self.update(shown.content)
        self._value = value
        self.call_after_refresh(self.call_after_refresh, self._colour, value)  # the frame after this one
        return shown.truncated

    def show_absent(self) -> None:
        self._value = self._NOTHING
        self.update(ABSENT)

    def clear(self) -> None:
        self._value = self._NOTHING
        self.update("")

    def _colour(self, value: Any) -> None:
        if self._value is value:  # still the value on show
            self.update(jsonview.highlight(value).content)


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
        yield Static(classes="info")
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
        # Only a mismatch is wrapped to the width; an identical pair reads the same at any width.
        projection = self.projection or {}
        if projection.get("value_canonical") != projection.get("source_canonical"):
            self._draw_canonical()

    def _draw(self) -> None:
        projection = self.projection
        info = self.query_one(".info", Static)
        if projection is None:
            info.update(Content.styled("no projection selected", "italic"))
            self.query_one(".canonical", Static).update("")
            self.query_one(".answer", ValuePanel).clear()
            self.query_one(".source", ValuePanel).clear()
            return
        status = str(projection.get("status", "unverifiable"))
        mark = model.PROJECTION_MARK.get(status, "?")
        lines = [
            Content.assemble(
                ("pointer  ", "dim"),
                safe.text(projection.get("member", ""), 300, "bold"),
                ("   ", ""),
                (f"{mark} {status.upper()}", "bold reverse" if status != "match" else "bold"),
            ),
            self._document_lines(projection),
        ]
        if projection.get("document") == "proposal":
            lines.append(self._terms_lines(projection))
        info.update(Content("\n").join(lines))
        cut = self.query_one(".answer", ValuePanel).show_value(projection.get("value"))
        source = self.query_one(".source", ValuePanel)
        if status != "unresolved" and "source_value" in projection:
            cut = source.show_value(projection.get("source_value")) or cut
        else:
            source.show_absent()
        self.truncated = cut
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
