"""Two runs side by side, per question, aligned by pointer, differences marked.

The rules of what counts as a change belong to `explorer.core.compare.compare_reports`
(projections aligned by (document, url, member), values compared as canonical text, timings
ignored, and what changed said in kinds: CONTRACT "Signatures are proofs"); this screen only
lays its result out. The title says the kinds in words (`changed: key changed, answers changed`),
or `no change: signed again` when the card was only signed again over the same declarations
under the same key, which is shown but is no change. Every pointer of either run gets a row with
a mark in words and symbol (`= same`, `≠ changed`, `+ added`, `- removed`, `~ signed again` for
a signature answered from a card signed again) and both canonical values; the selected row shows
the two values in full below, with the differing span marked by « », carets and underline. Above
the table, the report-level facts that changed (`~` for what signing again explains).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Static

from explorer.core.diff import marked_excerpt
from explorer.core.view import ReportView
from explorer.tui import diffmarks, model, safe
from explorer.tui.app import context_of
from explorer.tui.palette import PaletteCommand
from explorer.tui.widgets.footer import ExplorerFooter
from explorer.tui.widgets.header import standing_words

if TYPE_CHECKING:
    from explorer.core.compare import Comparison
    from explorer.core.run import Run

MARKS = {
    "same": "= same",
    "changed": "≠ changed",
    "added": "+ added",
    "removed": "- removed",
    "resigned": "~ signed again",
}
DIFFERING = ("changed", "resigned")  # rows whose two values are both there and differ
CELL = 48
NARROW = 100  # terminal columns below which a changed status is said in its short form
DETAIL_SHARE = 0.4  # of the screen's height, the most the selected row's values take (compare.tcss)


def change_mark(row: Row, *, narrow: bool = False) -> str:
    """`≠ changed (match→mismatch)`; narrow, `≠ match→mismatch` (the long form took 28 of 80
    columns, and pushed the later run's values off the right edge)."""
    mark = MARKS.get(row.kind, row.kind)
    if row.kind == "changed" and row.before_status != row.after_status:
        if narrow:
            return f"≠ {row.before_status}→{row.after_status}"
        mark += f" ({row.before_status}→{row.after_status})"
    return mark


def value_widths(width: int, change: int, question: int) -> tuple[int, int]:
    """The pointer's and each value's width when the change and question columns take `change`
    and `question` cells: five columns of one cell's padding each side, the scrollbar and the
    screen's padding take 14 more; the pointer gets two fifths of the rest (cut: the detail below
    has it whole) and each value half of what is left, so both runs' values are always on show."""
    rest = width - change - question - 14
    pointer = max(len("pointer · document"), rest * 2 // 5)  # never narrower than its heading
    return pointer, max(8, (rest - pointer) // 2)


def span_context(width: int, rows: int) -> int:
    """How many characters either side of the differing span to show so that two values, each
    wrapped at `width` with a caret row under every row, fit in `rows` lines (the differing
    digit of a long terms value used to fall below the lines on show)."""
    text_rows = max(1, rows // 4)  # two values, each row with its caret row
    return max(8, text_rows * width // 4)


def kinds_headline(comparison: Comparison) -> str:
    """What changed, in kinds, for the title: `identical`, `no change: signed again` (the card was
    only signed again), `changed: key changed, answers changed`."""
    from explorer.core.compare import KIND_WORDS, RESIGNED, kinds_words

    if comparison.identical:
        return "identical"
    if not comparison.changed:
        return f"no change: {KIND_WORDS[RESIGNED]}" if comparison.resigned else "no change"
    words = kinds_words([kind for kind in comparison.kinds if kind != RESIGNED])
    also = f" (also {KIND_WORDS[RESIGNED]})" if comparison.resigned else ""
    return f"changed: {words or 'findings or statuses'}{also}"


@dataclass(frozen=True)
class Row:
    question: str
    kind: str  # same | changed | added | removed | resigned
    document: str
    url: str | None
    member: str
    before: str | None
    after: str | None
    before_status: str | None
    after_status: str | None


def compare_rows(comparison: Comparison) -> list[Row]:
    """One row per projection core aligned, in question order and core's order within a question."""
    return [
        Row(
            q.question,
            entry.kind,
            entry.document,
            entry.url,
            entry.member,
            entry.before_canonical,
            entry.after_canonical,
            entry.before_status,
            entry.after_status,
        )
        for q in comparison.questions
        for entry in q.entries
    ]


def _cell(text: str | None, width: int = CELL, span: tuple[int, int] | None = None) -> Text:
    """A value cut to `width`; a changed one around where it changes, that span in « »."""
    if text is None:
        return Text("(absent)", style="italic")
    if span is None:
        return Text(safe.clip(text, width))
    line, _carets = marked_excerpt(text, span, width)
    return Text(safe.clip(line, width))


def document_label(document: str, url: str | None) -> str:
    """Which document a row's pointer is in: `card`, or `proposal NAME` (the URL's last segment),
    so two proposals' `/parties` rows are told apart."""
    if document != "proposal" or not url:
        return document
    name = url.rstrip("/").rsplit("/", 1)[-1] or url
    return f"proposal {name}"


def fact_value(what: str, value: Any) -> Content:
    """One side of a changed fact; a side that has none says so (a signature that no longer
    verifies has no payload form: `served → (none)`, never an arrow pointing at nothing)."""
    if value is None or value == "":
        return Content.styled("(none)", "italic")
    return safe.text(model.short_digest(value, 16) if "sha" in what else value, 80)


class CompareTable(DataTable):
    HELP = """
## Compare

One row per pointer of either run, per question. **= same**, **≠ changed**, **+ added**
(only in the later run), **- removed** (only in the earlier run), **~ signed again** (a
signature answered from a card that was signed again over the same declarations under the same
key: other bytes, no change). The selected row's values are shown in full below, with the
differing span in « » and marked by ^ carets (a window around it when a value is long: **v**
shows both values whole). The title says what changed in kinds:
declarations, key (named: **key changed**), answers, verdict; or **no change: signed again**.
"""


class CompareScreen(Screen[None]):
    """Run A (earlier) and run B (later), per question and pointer."""

    CSS_PATH = "compare.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="compare.back"),
        Binding("n", "next_change", "Next change", id="compare.next_change"),
        # The detail says "press v for the whole value" when it shows a window of a long value.
        Binding("v", "view_whole", "Whole values", id="compare.view_whole"),
    ]

    def __init__(self, before: Run, before_id: int | None, after: Run, after_id: int | None) -> None:
        super().__init__()
        self.before, self.after = before, after
        self.before_id, self.after_id = before_id, after_id
        self.rows: list[Row] = []
        self.comparison: Any = None

    def compose(self) -> ComposeResult:
        with Vertical(id="compare"):
            yield Static(id="compare-title")
            yield Static(id="compare-facts")
            yield CompareTable(id="compare-table", cursor_type="row")
            with VerticalScroll(id="compare-detail"):
                yield Static(id="compare-values")
        yield ExplorerFooter()

    def on_mount(self) -> None:
        context = context_of(self)
        self.comparison = context.compare(self.before.report, self.after.report)
        self.rows = compare_rows(self.comparison)
        a, b = self._label(self.before_id, "A"), self._label(self.after_id, "B")
        self.query_one("#compare-title", Static).update(
            Content.assemble(
                ("Compare  ", "bold"),
                safe.text(ReportView.of(self.after.report).agent_name, 80, "bold"),
                (f"   {a} (earlier)  vs  {b} (later)   ", "dim"),
                (kinds_headline(self.comparison), "bold"),
            )
        )
        self.query_one("#compare-facts", Static).update(self._facts())
        table = self.query_one(CompareTable)
        table.add_columns("change", "question", "pointer · document", a, b)
        width = self.app.size.width
        marks = [change_mark(row, narrow=width < NARROW) for row in self.rows]
        change = max([len("change"), *(len(mark) for mark in marks)])
        question = max([len("question"), *(len(row.question) for row in self.rows)])
        pointer, cell = value_widths(width, change, question)
        for index, (row, mark) in enumerate(zip(self.rows, marks, strict=True)):
            spans: tuple[Any, Any] = (None, None)
            if row.kind in DIFFERING and row.before is not None and row.after is not None:
                spans = model.diff_spans(row.before, row.after)
            where = f"{row.member} · {document_label(row.document, row.url)}"  # the pointer first
            table.add_row(
                Text(mark, style="bold" if row.kind != "same" else ""),
                Text(row.question),
                Text(safe.clip(where, pointer)),
                _cell(row.before, cell, spans[0]),
                _cell(row.after, cell, spans[1]),
                key=str(index),
            )
        # The first change; a signature only signed again when nothing else differs.
        first_change = next(
            (i for i, r in enumerate(self.rows) if r.kind not in ("same", "resigned")),
            next((i for i, r in enumerate(self.rows) if r.kind != "same"), 0),
        )
        if self.rows:
            table.move_cursor(row=first_change)
            self._show(first_change)
        table.focus()

    @staticmethod
    def _label(run_id: int | None, letter: str) -> str:
        return f"{letter} run #{run_id}" if run_id is not None else f"{letter} (unrecorded)"

    def _facts(self) -> Content:
        from explorer.core.compare import KIND_WORDS, RESIGNED, RESIGNED_WORDS, SIGNING_FINDINGS

        comparison = self.comparison
        lines: list[Content] = []
        if comparison.resigned:
            lines.append(Content.assemble((f"~ {KIND_WORDS[RESIGNED]}: ", "bold"), RESIGNED_WORDS))
        for fact in comparison.facts:
            # The card's digest differs when it was signed again; nothing else is explained so.
            again = comparison.resigned and fact.what == "card.sha256"
            lines.append(
                Content.assemble(
                    ("~ " if again else "≠ ", "bold"),
                    safe.text(fact.what, 100, "bold"),
                    ": ",
                    fact_value(fact.what, fact.before),
                    " → ",
                    fact_value(fact.what, fact.after),
                )
            )
        for sign, items in (("+", comparison.findings_added), ("-", comparison.findings_removed)):
            for item in items:
                where = " ".join(str(item[k]) for k in ("question", "member", "probe") if item.get(k))
                note = f" ({KIND_WORDS[RESIGNED]}: no change)" if item.get("code") in SIGNING_FINDINGS else ""
                lines.append(
                    Content.assemble(
                        (f"{sign} finding ", "bold"),
                        safe.text(item.get("code", ""), 60),
                        " ",
                        safe.text(where, 120),
                        (note, "dim"),
                    )
                )
        if not lines:
            lines.append(
                Content.styled("= verdict, card, proposals, answers and findings are the same", "dim")
            )
        # Each run's standing, re-derived here (a signed run is evidence only under a trusted key).
        # The mark says claim or evidence; the sentence after it says why, without saying it again.
        for letter, run in (("A", self.before), ("B", self.after)):
            report = ReportView.of(run.report)
            lines.append(
                Content.assemble(
                    (f"{letter} standing ", "dim"),
                    (report.standing_mark(), "bold"),
                    ("  ", ""),
                    safe.text(standing_words(report).split(": ", 1)[-1], 160),
                )
            )
        return Content("\n").join(lines)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def _show(self, index: int) -> None:
        if not (0 <= index < len(self.rows)):
            return
        row = self.rows[index]
        values = self.query_one("#compare-values", Static)
        head = Content.assemble(
            (MARKS.get(row.kind, row.kind) + "  ", "bold"),
            (f"{row.question}  ", "dim"),
            safe.text(row.member, 200, "bold"),
            ("  ", ""),
            safe.text(row.document + (f" {row.url}" if row.url else ""), 200, "dim"),
        )
        width = max(24, (values.size.width or 100) - 12)
        # Both runs' spans on show: each value a window around its span when whole they would
        # not fit in the lines the detail has (the head takes one, its rule another).
        rows = max(4, int(self.size.height * DETAIL_SHARE) - 2)
        context = span_context(width, rows)
        before = row.before if row.before is not None else ""
        after = row.after if row.after is not None else ""
        span_a, span_b = model.diff_spans(before, after) if row.kind != "same" else ((0, 0), (0, 0))
        body = [head]
        if row.kind == "same":
            body.append(Content.assemble(("both     ", "bold"), safe.text(before, 2000)))
        else:
            body.append(
                diffmarks.marked_lines(
                    f"{self._label(self.before_id, 'A')}  ", before, span_a, width=width, context=context
                )
                if row.before is not None
                else Content.styled("A: (absent)", "italic")
            )
            body.append(
                diffmarks.marked_lines(
                    f"{self._label(self.after_id, 'B')}  ", after, span_b, width=width, context=context
                )
                if row.after is not None
                else Content.styled("B: (absent)", "italic")
            )
        values.update(Content("\n").join(body))

    def action_next_change(self) -> None:
        """The next row that differs (a signature only signed again included: it is shown)."""
        table = self.query_one(CompareTable)
        start = table.cursor_row if table.cursor_row is not None else -1
        changes = [i for i, r in enumerate(self.rows) if r.kind != "same"]
        if not changes:
            self.notify("the two runs do not differ")
            return
        after = [i for i in changes if i > start]
        table.move_cursor(row=(after or changes)[0])

    def action_view_whole(self) -> None:
        """Both runs' values of the selected row in full (the detail shows a window of long ones)."""
        from explorer.tui.jsonview import neutralise
        from explorer.tui.screens.value import ValueScreen

        table = self.query_one(CompareTable)
        if not (0 <= table.cursor_row < len(self.rows)):
            return
        row = self.rows[table.cursor_row]
        sections = []
        for label, value in (
            (self._label(self.before_id, "A"), row.before),
            (self._label(self.after_id, "B"), row.after),
        ):
            sections += [label, value if value is not None else "(absent)", ""]
        title = f"{row.member} · {document_label(row.document, row.url)}"
        self.app.push_screen(
            ValueScreen(title, neutralise("\n".join(sections).rstrip()), heading="both values")
        )

    def action_back(self) -> None:
        self.dismiss()

    def palette_commands(self) -> list[PaletteCommand]:
        return [
            PaletteCommand("show: next change", "select the next differing pointer", self.action_next_change)
        ]
