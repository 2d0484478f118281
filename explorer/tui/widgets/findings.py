"""Every finding of a run, one row each; selecting one jumps to the projection it is about.

Rows carry the severity as a word and a symbol (`✗ error`), the code, the question and member,
and the detail. A root cause comes first with the findings it explains right beneath it, each
indented and marked `↳` (`model.grouped_findings`: CONTRACT `interview_not_implemented`), so the
list says what happened before it lists what followed. Details often quote agent text, so they
go through `safe.text` like the rest.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from explorer.core.view import Finding
from explorer.tui import model, safe

BENEATH = "  ↳ "  # the mark of a finding that follows from the root cause above it
# "projection 3" in a detail: the report counts a question's projections from 0 (`core.diff`);
# a reader counts from 1, as the question tab lists them.
PROJECTION_NUMBER = re.compile(r"\bprojection (\d+)\b")
DIGITS = re.compile(r"(\d+)")


def counted_from_one(detail: str) -> str:
    """`projection 0: ...` as `projection 1: ...` (every projection number in the detail)."""
    return PROJECTION_NUMBER.sub(lambda m: f"projection {int(m.group(1)) + 1}", detail)


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that compares the numbers in `text` as numbers: "projection 2" before
    "projection 10" (the report sorts details as text, where "10" comes before "2")."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in DIGITS.split(text) if part)


def natural_order(items: Sequence[Finding]) -> list[int]:
    """The report's positions in the report's order, except that findings which differ only in
    their detail (same question, probe, member and code: adjacent in the report) are put in the
    natural order of their details."""
    order = list(range(len(items)))
    start = 0
    while start < len(order):
        end = start
        head = items[start]
        same = (head.question, head.probe, head.member, head.code, head.cause)
        while end + 1 < len(items) and (
            (
                items[end + 1].question,
                items[end + 1].probe,
                items[end + 1].member,
                items[end + 1].code,
                items[end + 1].cause,
            )
            == same
        ):
            end += 1
        order[start : end + 1] = sorted(order[start : end + 1], key=lambda i: natural_key(items[i].detail))
        start = end + 1
    return order


def finding_prompt(item: Finding, *, beneath: bool = False, explains: int = 0) -> Content:
    """One finding in two lines; `beneath` a root cause it is indented and marked `↳`, and a root
    cause says how many of the findings below follow from it (`explains`)."""
    where = " ".join(w for w in (item.question, item.probe) if w)
    indent = " " * len(BENEATH) if beneath else ""
    root = ""
    if explains:
        follow = "the finding below follows" if explains == 1 else f"the {explains} findings below follow"
        root = f"  root cause: {follow} from it"
    return Content.assemble(
        (BENEATH if beneath else "", "bold"),
        (f"{item.mark} {item.severity:<7} ", "bold" if item.severity == "error" else ""),
        safe.text(item.code, 60, "bold"),
        (f"  {where}" if where else "", "dim"),
        ("  ", ""),
        safe.text(item.member or "", 80),
        (root, "bold"),
        f"\n    {indent}",
        safe.text(counted_from_one(item.detail), 400, "italic"),
    )


class FindingsList(OptionList):
    """All findings (and the other-extension findings after them), in the CONTRACT order."""

    HELP = """
## Findings

Everything the verifier noticed, errors first within each question, in the report's order.
A root cause (an agent that declares the interview but implements none of it) comes first, and
the findings that follow from it are listed beneath it, indented and marked ↳.
Press **enter** on a finding to jump to the projection (or the probes) it is about.
Findings about other extensions (OpenClasp, reputation) are listed last and never change
the verdict.
"""

    def show(self, items: Sequence[Finding], extensions: Sequence[Finding] = ()) -> None:
        causes = Counter(f.cause for f in items if f.cause)
        order = natural_order(items)
        shown = [items[i] for i in order]
        options: list[Option | None] = [
            Option(
                finding_prompt(shown[i], beneath=beneath, explains=0 if beneath else causes[shown[i].code]),
                id=f"f{order[i]}",  # the finding's place in the report, whatever its place in the list
            )
            for i, beneath in model.grouped_findings(shown)
        ]
        if not items:
            options.append(Option(Content("no findings"), id="none", disabled=True))
        if extensions:
            options.append(
                Option(
                    Content.styled("other extensions (never change the verdict)", "bold"),
                    id="ext-title",
                    disabled=True,
                )
            )
            options.extend(Option(finding_prompt(f), id=f"x{i}") for i, f in enumerate(extensions))
        self.set_options([o for o in options if o is not None])
        if items:
            self.highlighted = 0  # enter works at once: it jumps to the first finding's projection
