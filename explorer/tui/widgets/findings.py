"""Every finding of a run, one row each; selecting one jumps to the projection it is about.

Rows carry the severity as a word and a symbol (`✗ error`), the code, the question and member,
and the detail. Details often quote agent text, so they go through `safe.text` like the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from explorer.core.view import Finding
from explorer.tui import safe


def finding_prompt(item: Finding) -> Content:
    where = " ".join(w for w in (item.question, item.probe) if w)
    return Content.assemble(
        (f"{item.mark} {item.severity:<7} ", "bold" if item.severity == "error" else ""),
        safe.text(item.code, 60, "bold"),
        (f"  {where}" if where else "", "dim"),
        ("  ", ""),
        safe.text(item.member or "", 80),
        "\n    ",
        safe.text(item.detail, 400, "italic"),
    )


class FindingsList(OptionList):
    """All findings (and the other-extension findings after them), in the CONTRACT order."""

    HELP = """
## Findings

Everything the verifier noticed, errors first within each question, in the report's order.
Press **enter** on a finding to jump to the projection (or the probes) it is about.
Findings about other extensions (OpenClasp, reputation) are listed last and never change
the verdict.
"""

    def show(self, items: Sequence[Finding], extensions: Sequence[Finding] = ()) -> None:
        options: list[Option | None] = [Option(finding_prompt(f), id=f"f{i}") for i, f in enumerate(items)]
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
