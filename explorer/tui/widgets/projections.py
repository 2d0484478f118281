"""The list of one answer's projections: pointer, document and state, one row each.

Each row starts with a symbol and ends with the state in words (`✗ … mismatch`), so the list
reads the same without colour. The pointers are agent text and are rendered through
`safe.text`; the position in the list is the projection's index in the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from explorer.tui import model, safe


def projection_prompt(projection: Mapping[str, Any], grade: str | None = None, source: str = "") -> Content:
    """`✗ /price  proposal reconcile-statement · enforced  mismatch`: state in symbol and word."""
    status = str(projection.get("status", "unverifiable"))
    mark = model.PROJECTION_MARK.get(status, "?")
    document = source or str(projection.get("document", "?"))  # a proposal is named by its offering
    style = "bold" if status != "match" else ""
    parts: list[Content | tuple[str, str] | str] = [
        (f"{mark} ", style),
        safe.text(projection.get("member", ""), 80, style),
        ("  ", ""),
        safe.text(document, 60, "dim"),
    ]
    if grade:
        parts += [(" · ", "italic"), safe.text(grade, 60, "italic")]  # the agent's word
    if projection.get("signed") is False:
        parts.append((" · unsigned", "bold"))
    parts.append((f"  {status}", style or "dim"))
    return Content.assemble(*parts)


class ProjectionList(OptionList):
    """The projections of one question; highlighting one shows it in the detail beside it."""

    HELP = """
## Projections

One row per projection of the agent's answer: the **RFC 6901 pointer** it names, the document
(card or proposal) and whether the value matches the signed member under JCS.

- `✓` match, `✗` mismatch, `?` pointer resolves to nothing, `~` could not be verified.
- **up/down** select; the detail on the right shows both values.
- **n** jumps to the next problem, **c** copies the pointer, **y** copies the value,
  **v** shows the whole value.
"""

    def __init__(
        self, question: str, report: Mapping[str, Any], items: Sequence[Mapping[str, Any]], **kw: Any
    ) -> None:
        super().__init__(*projection_options(question, report, items), **kw)
        self.question = question


def projection_options(
    question: str, report: Mapping[str, Any], items: Sequence[Mapping[str, Any]]
) -> list[Option]:
    options = []
    for position, projection in enumerate(items):
        grade = model.clause_grade(report, projection) if question == "terms" else None
        source = model.proposal_label(report, projection) if projection.get("document") == "proposal" else ""
        options.append(Option(projection_prompt(projection, grade, source), id=f"p{position}"))
    return options
