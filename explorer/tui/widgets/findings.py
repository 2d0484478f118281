"""Every finding of a run, one row each; selecting one jumps to the projection it is about.

Rows carry the severity as a word and a symbol (`✗ error`), the code, the question and member,
and the detail. A root cause comes first with the findings it explains right beneath it, each
indented and marked `↳` (`model.grouped_findings`: CONTRACT `interview_not_implemented`), so the
list says what happened before it lists what followed. Details often quote agent text, so they
go through `safe.text` like the rest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from explorer.core.view import Finding
from explorer.tui import model, safe

BENEATH = "  ↳ "  # the mark of a finding that follows from the root cause above it


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
        safe.text(item.detail, 400, "italic"),
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
        options: list[Option | None] = [
            Option(
                finding_prompt(items[i], beneath=beneath, explains=0 if beneath else causes[items[i].code]),
                id=f"f{i}",  # the finding's place in the report, whatever its place in the list
            )
            for i, beneath in model.grouped_findings(items)
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
