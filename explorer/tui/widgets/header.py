"""The interview header: who the agent is, what its card proved, and what the run concluded.

Four facts a reader must not miss are spelled out in words as well as marked: the signature
status with its payload form and key id, the verdict, and the standing (a self-run result is a
claim, never evidence: interview extension, sections 8 and 9). The agent's name and URL are untrusted and go
through `safe.text`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.content import Content
from textual.widgets import Static

from explorer.tui import model, safe


class InterviewHeader(Static):
    """Agent name, card URL, layout, signature badge, verdict and standing."""

    HELP = """
## Interview header

- **signature**: whether the card's JWS verified, under which payload form and key id.
- **verdict**: conformant, nonconformant, churn, not offered or unreachable.
- **standing**: a *claim* when the agent's own side ran the interview, *evidence* when an
  independent party or a platform recorded it.
"""

    def __init__(
        self,
        report: Mapping[str, Any],
        *,
        run_id: int | None = None,
        origin: str = "",
        unrecorded: str | None = None,
        **kw: Any,
    ) -> None:
        self.report = report
        self.run_id = run_id
        self.origin = origin
        self.unrecorded = unrecorded  # why the run is not in the history (a full disk, ...)
        super().__init__(self.render_header(), **kw)

    def render_header(self) -> Content:
        report = self.report
        card = model.card(report)
        badge, ok = model.signature_badge(report)
        verdict = str(report.get("verdict", "unknown"))
        verdict_style = "bold reverse" if verdict in ("nonconformant", "unreachable") else "bold"
        line1 = Content.assemble(
            safe.text(model.agent_name(report), 120, "bold"),
            ("   card ", "dim"),
            safe.text(card.get("url") or report.get("target") or "(no card)", 160),
        )
        line2 = Content.assemble(
            ("layout ", "dim"),
            model.layout_text(report),
            ("   signature ", "dim"),
            safe.text(badge, 200, "" if ok else "bold"),
        )
        run = f"run #{self.run_id}" if self.run_id is not None else "run not recorded"
        attempts = report.get("attempts")
        line3 = Content.assemble(
            ("verdict ", "dim"),
            (model.verdict_text(report).upper(), verdict_style),
            ("   standing ", "dim"),
            safe.text(model.standing_text(report), 160),
            ("   ", ""),
            (f"{run}" + (f" · {self.origin}" if self.origin else ""), "dim"),
            (f" · attempts {attempts}" if isinstance(attempts, int) else "", "dim"),
        )
        lines = [line1, line2, line3]
        if self.unrecorded:
            lines.append(
                Content.assemble(("✗ run not recorded: ", "bold"), safe.text(self.unrecorded, 300, "bold"))
            )
        return Content("\n").join(lines)
