"""The list of one answer's projections: pointer, document and state, one row each.

Each row starts with a symbol and ends with the state in words (`✗ … mismatch`), so the list
reads the same without colour. The pointers are agent text and are rendered through
`safe.text`; the position in the list is the projection's index in the report.

Lazy, because a large agent answers with 10,000 projections: each row's prompt is built the
first time it is drawn or read (`_LazyOption`), and every row is one line high, so the list
neither measures nor wraps rows it does not show (Textual's OptionList would build and measure
every prompt when it mounts, about a second for 10,000 rows, with the screen frozen).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from textual.content import Content
from textual.geometry import Size
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from explorer.core.view import Projection, Question, ReportView
from explorer.tui import model, safe

_WIDEST = 400  # cells of one row; the whole pointer is in the detail beside the list

# A question the agent did not answer lists what its declared documents say instead
# (`questions.<q>.declared`), each member as a projection in this state: never a match, never
# a problem, only what a conformant answer would project.
DECLARED = "declared"
DECLARED_MARK = "◇"
NOT_ANSWERED = "declared, not answered"


def declared_items(question: Question) -> tuple[Projection, ...]:
    """The declared members of a question the agent did not answer, as rows of the list (state
    `DECLARED`, the document's value as both value and source); () when it answered or nothing is
    declared: an answer is shown as it was, nothing else."""
    if question.answered:
        return ()
    items = []
    for member in question.declared_members:
        raw = {
            "member": member.member,
            "document": member.document,
            "url": member.url,
            "digest": member.digest,
            "status": DECLARED,
            "value": member.value,
            "source_value": member.value,
            "signed": member.signed,
        }
        items.append(Projection.of(raw))
    return tuple(items)


def projection_prompt(projection: Projection, grade: str | None = None, source: str = "") -> Content:
    """`✗ /price  proposal reconcile-statement · enforced  mismatch`: state in symbol and word."""
    document = source or projection.document or "?"  # a proposal is named by its offering
    if projection.status == DECLARED:
        return _declared_prompt(projection, grade, document)
    style = "bold" if projection.problem else ""
    parts: list[Content | tuple[str, str] | str] = [
        (f"{projection.mark} ", style),
        safe.text(projection.member or "", 80, style),
        ("  ", ""),
        safe.text(document, 60, "dim"),
    ]
    if grade:
        parts += [(" · ", "italic"), safe.text(grade, 60, "italic")]  # the agent's word
    if projection.signed is False:
        parts.append((" · unsigned", "bold"))
    parts.append((f"  {projection.status}", style or "dim"))
    return Content.assemble(*parts)


def _declared_prompt(projection: Projection, grade: str | None, document: str) -> Content:
    """`◇ /skills/0/id  card · signed  declared, not answered`: a member a conformant answer
    would project, which the agent did not answer."""
    parts: list[Content | tuple[str, str] | str] = [
        (f"{DECLARED_MARK} ", ""),
        safe.text(projection.member or "", 80),
        ("  ", ""),
        safe.text(document, 60, "dim"),
    ]
    if grade:
        parts += [(" · ", "italic"), safe.text(grade, 60, "italic")]
    if projection.signed is not None:
        parts.append((" · signed", "") if projection.signed else (" · unsigned", "bold"))
    parts.append((f"  {NOT_ANSWERED}", "dim italic"))
    return Content.assemble(*parts)


class ProjectionList(OptionList):
    """The projections of one question; highlighting one shows it in the detail beside it."""

    HELP = """
## Projections

One row per projection of the agent's answer: the **RFC 6901 pointer** it names, the document
(card or proposal) and whether the value matches the signed member under JCS.

- `✓` match, `✗` mismatch, `?` pointer resolves to nothing, `~` could not be verified.
- `◇` declared, not answered: the agent gave no answer, and this is what its declared
  documents say (what a conformant answer would project).
- **up/down** select; the detail on the right shows both values.
- **n** jumps to the next problem, **c** copies the pointer, **y** copies the value,
  **v** shows the whole value.
"""

    def __init__(self, question: str, report: ReportView, items: Sequence[Projection], **kw: Any) -> None:
        super().__init__(*projection_options(question, report, items), **kw)
        self.question = question

    # One line per row, known without building a prompt (OptionList measures every one).
    def _update_lines(self) -> None:
        if not self.scrollable_content_region:
            return
        cache = self._line_cache
        count, start = len(self.options), len(cache.lines)
        if start < count:
            cache.lines.extend((index, 0) for index in range(start, count))
            cache.heights.update(dict.fromkeys(range(start, count), 1))
            cache.index_to_line.update(zip(range(start, count), range(start, count), strict=True))
        width = self.scrollable_content_region.width - self._get_left_gutter_width()
        if Size(width, count) != self.virtual_size:
            self.virtual_size = Size(width, count)
            self._scroll_update(self.virtual_size)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.options)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width  # the pane's width, not the widest of 10,000 prompts


class _LazyOption(Option):
    """An option whose prompt is built on first use."""

    def __init__(self, build: Callable[[], Content], id: str) -> None:
        super().__init__("", id=id)
        self._build: Callable[[], Content] | None = build

    @property
    def prompt(self) -> Any:
        if self._build is not None:
            self._prompt, self._build = self._build().truncate(_WIDEST, ellipsis=True), None
        return self._prompt


def projection_options(question: str, report: ReportView, items: Sequence[Projection]) -> list[Option]:
    def build(projection: Projection) -> Callable[[], Content]:
        def prompt() -> Content:
            grade = model.clause_grade(report, projection) if question == "terms" else None
            proposal = projection.document == "proposal"
            source = model.proposal_label(report, projection) if proposal else ""
            return projection_prompt(projection, grade, source)

        return prompt

    return [_LazyOption(build(projection), f"p{position}") for position, projection in enumerate(items)]
