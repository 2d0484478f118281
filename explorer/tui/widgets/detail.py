"""One projection in full: the answer's value beside the signed member it points to.

Top to bottom: the pointer and the state in words; both canonical (RFC 8785) strings, for a
mismatch with the differing span marked by « », ^ carets and underline (see `diffmarks`), right
under the pointer so that they are on screen even in 80x24; the document (the card, or the
proposal's url and digest) and whether the member is covered by a signature; for terms the clause
grade and the proposal's verification steps; and the two values side by side, highlighted as
JSON (one above the other when the detail is narrower than `SIDE_BY_SIDE_FROM` cells: at 80x24
two boxes side by side would be 19 columns each, too narrow for any JSON value). Every part is
built with its content when the detail is composed, and the canonical rows are wrapped by
`CanonicalDiff` when it is measured, so the first layout of a tab is its final one
and a resize redraws nothing by hand.

The source panel says "signed source" only when a verified signature covers the member (the
card's, or a proposal's provider signature): under an unsigned card or one whose signature fails
it is a "source member", nothing more. A member declared but not answered (`DECLARED`, a
question the agent gave no answer) has no answer panel: its value is the declared one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Static

from explorer.core.view import Projection, ReportView
from explorer.tui import diffmarks, jsonview, model, safe
from explorer.tui.widgets.projections import DECLARED, DECLARED_MARK, NOT_ANSWERED

ABSENT = Content.styled("(nothing at this pointer)", "italic")
SIDE_BY_SIDE_FROM = 64  # cells of detail width; below it the value boxes are stacked


class ValuePanel(Static):
    """A JSON value: drawn plain at once, coloured by pygments on the next frame (so the first
    paint of the interview screen never waits for pygments to load)."""

    HELP = """
## Value

The JSON value, highlighted. The detail scrolls (**up/down**, **pgup/pgdn**); huge values
are cut, and **v** shows the whole value.
"""

    NOTHING: Any = object()  # no value on show (as opposed to a JSON null)

    def __init__(self, value: Any = NOTHING, *, absent: bool = False, **kw: Any) -> None:
        self._value: Any = self.NOTHING
        self.truncated = False
        if absent:
            super().__init__(ABSENT, **kw)
        elif value is self.NOTHING:
            super().__init__("", **kw)
        else:
            shown = jsonview.highlight(value, colour=False)
            super().__init__(shown.content, **kw)
            self._value, self.truncated = value, shown.truncated

    def on_mount(self) -> None:
        if self._value is not self.NOTHING:
            self._colour_later(self._value)

    def show_value(self, value: Any) -> bool:
        """Draw `value`; returns whether it had to be cut."""
        shown = jsonview.highlight(value, colour=False)
        self.update(shown.content)
        self._value, self.truncated = value, shown.truncated
        self._colour_later(value)
        return shown.truncated

    def show_absent(self) -> None:
        self._value = self.NOTHING
        self.truncated = False
        self.update(ABSENT)

    def clear(self) -> None:
        self._value = self.NOTHING
        self.truncated = False
        self.update("")

    def _colour_later(self, value: Any) -> None:
        self.call_after_refresh(self.call_after_refresh, self._colour, value)  # the frame after this one

    def _colour(self, value: Any) -> None:
        if self._value is value:  # still the value on show
            self.update(jsonview.highlight(value).content)


def canonical_content(a: str, b: str, width: int) -> Content:
    """Both canonical strings: one line when identical, else the marked rows wrapped so that each
    row, its label and its caret line fit in `width` cells."""
    if a == b:
        return Content.assemble(("canonical bytes (RFC 8785) identical: ", "dim"), safe.text(a, 400))
    span_a, span_b = model.diff_spans(a, b)
    wrap = max(16, width - CanonicalDiff.LABEL_CELLS)
    return Content("\n").join(
        [
            Content.styled("canonical bytes (RFC 8785), differing span in « » and ^ carets", "bold"),
            Content.styled(
                f"answer: {diffmarks.span_words(span_a, len(a))}; "
                f"source: {diffmarks.span_words(span_b, len(b))}",
                "dim",
            ),
            diffmarks.marked_lines("answer  ", a, span_a, width=wrap),
            diffmarks.marked_lines("source  ", b, span_b, width=wrap),
        ]
    )


class CanonicalDiff(Widget):
    """The two canonical byte strings of a projection, laid out for this widget's own width.

    The rows are wrapped when the widget is measured and drawn, not when the projection is
    chosen, so the first layout already has the final height and a resize needs no redraw (the
    caret rows must be wrapped together with the rows they mark, so the terminal cannot wrap them).
    """

    DEFAULT_CSS = "CanonicalDiff { height: auto; }"
    LABEL_CELLS = 8  # "answer  " and "source  "

    def __init__(self, pair: tuple[str, str] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.pair = pair
        self._laid_out: tuple[int, Content] | None = None

    def show(self, pair: tuple[str, str] | None) -> None:
        if pair != self.pair:
            self.pair = pair
            self._laid_out = None
            self.refresh(layout=True)

    def content_for(self, width: int) -> Content:
        if self.pair is None:
            return Content("")
        if self._laid_out is None or self._laid_out[0] != width:
            self._laid_out = (width, canonical_content(*self.pair, width))
        return self._laid_out[1]

    @property
    def content(self) -> Content:
        """What is on show at the current width (80 before the first layout)."""
        return self.content_for(self.size.width or 80)

    def render(self) -> Content:
        return self.content

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # Textual's own widgets pass their styles here too; its annotation names only the rules mapping.
        return self.content_for(width).get_height(self.styles, width) if width else 0  # type: ignore[arg-type]


class DetailParts(NamedTuple):
    """What the detail shows for one projection, worked out before any widget exists."""

    head: Content  # the pointer and its state
    where: Content  # the document, signature coverage and, for terms, grade and proposal steps
    answer: Any  # a JSON value, or ValuePanel.NOTHING
    source: Any  # a JSON value, or ValuePanel.NOTHING when the pointer names nothing
    source_absent: bool
    pair: tuple[str, str] | None


class ProjectionDetail(VerticalScroll):
    """The selected projection: pointer, document, signature coverage, values, canonical diff."""

    HELP = """
## Projection detail

Left: the **answer value** the agent gave. Right: the **source member** the pointer names in
the card or the committed proposal, titled **signed source** when a verified signature covers
it. A mismatch shows both canonical byte strings (RFC 8785 JCS); the differing span is wrapped
in `«` `»`, underlined, and marked with `^` carets on the line below. A question the agent did
not answer shows each **declared** member alone: what a conformant answer would project.

- **v** view the whole value (for long values), **c** copy pointer, **y** copy value.
"""

    def __init__(self, report: ReportView, projection: Projection | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.report = report
        self.projection = projection

    @property
    def truncated(self) -> bool:
        return any(panel.truncated for panel in self.query(ValuePanel))

    def compose(self) -> ComposeResult:
        # Built with their content, so the first layout is the final one.
        # The canonical strings come right under the pointer: they are the evidence, and on a small
        # terminal they must be on screen without scrolling.
        parts = self._parts()
        yield Static(parts.head, classes="info")
        canonical = CanonicalDiff(parts.pair, classes="canonical")
        canonical.display = not self._declared  # nothing to compare a declared value with
        yield canonical
        yield Static(parts.where, classes="where")
        with Horizontal(classes="values"):
            answer = ValuePanel(parts.answer, classes="value-panel answer")
            answer.border_title = "answer value"
            answer.display = not self._declared
            yield answer
            source = ValuePanel(parts.source, absent=parts.source_absent, classes="value-panel source")
            source.border_title = self._source_title()
            yield source

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(".values").set_class(event.size.width < SIDE_BY_SIDE_FROM, "-stacked")

    @property
    def _declared(self) -> bool:
        """A member declared but not answered is on show (no answer to set beside it)."""
        return self.projection is not None and self.projection.status == DECLARED

    def _source_title(self) -> str:
        """Short enough for 80 columns, and "signed" only when a verified signature covers it."""
        projection = self.projection
        signed = projection is not None and model.signed_text(self.report, projection)[1]
        if self._declared:
            return "declared · signed" if signed else "declared value"
        return "signed source" if signed else "source member"

    def show(self, report: ReportView, projection: Projection | None) -> None:
        self.report = report
        self.projection = projection
        parts = self._parts()
        self.query_one(".info", Static).update(parts.head)
        self.query_one(".where", Static).update(parts.where)
        for selector, value, absent in (
            (".answer", parts.answer, False),
            (".source", parts.source, parts.source_absent),
        ):
            panel = self.query_one(selector, ValuePanel)
            if absent:
                panel.show_absent()
            elif value is ValuePanel.NOTHING:
                panel.clear()
            else:
                panel.show_value(value)
        self.query_one(CanonicalDiff).show(parts.pair)
        self.query_one(".answer", ValuePanel).display = not self._declared
        self.query_one(CanonicalDiff).display = not self._declared
        self.query_one(".source", ValuePanel).border_title = self._source_title()

    def _parts(self) -> DetailParts:
        projection = self.projection
        nothing = ValuePanel.NOTHING
        if projection is None:
            return DetailParts(
                Content.styled("no projection selected", "italic"), Content(""), nothing, nothing, False, None
            )
        label = f"{DECLARED_MARK} {NOT_ANSWERED}" if self._declared else projection.label
        head = Content.assemble(
            ("pointer  ", "dim"),
            safe.text(projection.member or "", 300, "bold"),
            ("   ", ""),
            (label, "bold reverse" if projection.problem and not self._declared else "bold"),
        )
        lines = [self._document_lines(projection)]
        if projection.document == "proposal":
            lines.append(self._terms_lines(projection))
        has_source, source_value = projection.source()
        if self._declared:  # the declared value alone: there is no answer to compare it with
            return DetailParts(head, Content("\n").join(lines), nothing, source_value, False, None)
        a, b = projection.stated_canonical("value"), projection.stated_canonical("source")
        if projection.status == "match" and a is None:  # a match carries no canonical strings
            a = b = projection.canonical()
        return DetailParts(
            head=head,
            where=Content("\n").join(lines),
            answer=projection.value,
            source=source_value if has_source else nothing,
            source_absent=not has_source,
            pair=(a, b) if a is not None and b is not None else None,
        )

    def _document_lines(self, projection: Projection) -> Content:
        if projection.document == "proposal":
            line = Content.assemble(
                ("document ", "dim"),
                ("proposal ", "bold"),
                safe.text(projection.url or "(no url)", 200),
                ("\n         digest ", "dim"),
                safe.text(projection.digest or "(no digest)", 120),
            )
        else:
            url = self.report.card.url or "(the agent's card)"
            line = Content.assemble(("document ", "dim"), ("card ", "bold"), safe.text(url, 200))
        signed, ok = model.signed_text(self.report, projection)
        extra = [("   lossy number: integer beyond ±(2^53-1)", "bold")] if projection.lossy else []
        return Content.assemble(line, ("\nsigned   ", "dim"), (signed, "" if ok else "bold"), *extra)

    def _terms_lines(self, projection: Projection) -> Content:
        grade = model.clause_grade(self.report, projection) or "not stated"
        proposal = model.proposal_for(self.report, projection) or {}
        steps = []
        for step in proposal.get("steps") or []:
            if isinstance(step, Mapping):
                steps.append(f"{'✓' if step.get('ok') else '✗'} {step.get('step', '?')}")
        status = str(proposal.get("status", "not committed by the card"))
        return Content.assemble(
            ("grade    ", "dim"),
            safe.text(grade, 60, "bold"),  # the grade is the agent's word (it sits in the proposal)
            ("   proposal ", "dim"),
            (status.replace("_", " "), "bold" if status != "verified" else ""),
            ("   " + "  ".join(steps) if steps else "", ""),
        )
