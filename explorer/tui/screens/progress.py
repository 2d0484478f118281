"""The interview in progress: which step, which question, and a way to cancel.

The whole interview runs in a worker THREAD with its own event loop: the network, and also
everything that costs CPU (strict parsing, signature checks, the evaluation of every projection,
recording the run), which on a large agent takes most of a second and would otherwise freeze
the screen, keys and Esc included. Progress reaches the screen as messages (posting is
thread-safe). Esc dismisses the screen at once and cancels the procedure's task on the thread's
loop (the procedure is cancellable); a result that arrives after that is dropped. The outcome is
handed back to the app as an `Outcome`: a run (recorded in history when history is on), or a
readable error for the load screen. Progress messages are agent-influenced (URLs) and are drawn
through `safe.text`.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Log, ProgressBar, Static

from explorer.core.view import ReportView
from explorer.tui import collector, model, safe
from explorer.tui.app import context_of
from explorer.tui.errors import ExplorerError

if TYPE_CHECKING:
    from explorer.core.run import Run

# Findings that mean "there is no card to show": the load screen explains them in place.
NO_CARD_CODES = (
    "card_unreachable",
    "card_malformed",
    "timeout",
    "transport_error",
    "body_too_large",
    "address_blocked",
    "redirect_refused",
    "http_status",
)
SHOWN_PROBLEMS = 5  # of a document that is no card: the reason reads on one screen


@dataclass(frozen=True)
class Outcome:
    target: str
    run: Run | None = None
    run_id: int | None = None
    error: str | None = None
    unrecorded: str | None = None  # why the run is not in the history, when it is not


def no_card_reason(report: ReportView) -> str | None:
    """Why a run produced no card (so there is nothing to show but the reason), else None."""
    card = report.card
    if card.sha256 and not card.name and card.problems and report.verdict != "nonconformant":
        first = sorted(card.problems, key=lambda problem: problem.member != "/name")  # why: it has no name
        shown = "; ".join(problem.detail for problem in first[:SHOWN_PROBLEMS])
        more = len(card.problems) - SHOWN_PROBLEMS
        return "not an A2A Agent Card: " + shown + (f"; and {more} more" if more > 0 else "")
    if card.url and card.sha256:
        return None
    details = [
        f"{f.code}: {f.detail}"
        for f in report.findings
        if f.severity == "error" and not f.question and not f.probe
    ]
    preferred = [d for d in details if d.split(":", 1)[0] in NO_CARD_CODES]
    lines = preferred or details
    if not lines and report.verdict != "unreachable":
        return None
    return "\n".join(lines) or "no usable card at this target"


class ProgressUpdate(Message):
    def __init__(self, progress: Any) -> None:
        super().__init__()
        self.progress = progress


class ProgressScreen(ModalScreen[Outcome | None]):
    """A modal that runs one interview and reports every step."""

    CSS_PATH = "progress.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="progress.cancel"),
    ]
    STEPS_ESTIMATE = 17  # card, keys, proposals, 5 questions x 2, 4 probes

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target
        self.asked: set[str] = set()
        self.events = 0
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._interview_task: tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]] | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="progress-box"):
            yield Static(Content.assemble(("Interviewing ", "bold"), safe.text(self.target, 200)), id="what")
            yield Static(id="step")
            yield Static(self._questions_line(), id="questions")
            yield ProgressBar(total=self.STEPS_ESTIMATE, show_eta=False, id="bar")
            yield Log(id="log", max_lines=200)
            with Horizontal(id="progress-buttons"):
                yield Button("Cancel (esc)", id="cancel", variant="error")

    def on_mount(self) -> None:
        if self._cancelled.is_set():
            return  # cancelled before it was drawn: already dismissed, nothing to start
        self.query_one("#step", Static).update(Content.styled("starting…", "italic"))
        collector.pause()  # until the run's screen is drawn, or the app is told it failed
        self.run_worker(self._interview, thread=True, exclusive=True, group="interview", name="interview")

    def _interview(self) -> None:
        """The worker thread: the interview on a loop of its own, then the outcome to the screen."""
        outcome = self._outcome()
        if outcome is not None and not self._cancelled.is_set():
            try:
                self.app.call_from_thread(self._finish, outcome)
            except RuntimeError:
                pass  # the app has closed meanwhile

    def _outcome(self) -> Outcome | None:
        context = context_of(self)

        def report(progress: Any) -> None:
            if not self._cancelled.is_set():
                self.post_message(ProgressUpdate(progress))

        async def interview() -> Run:
            task = asyncio.current_task()
            assert task is not None
            with self._lock:
                self._interview_task = (asyncio.get_running_loop(), task)
            if self._cancelled.is_set():
                task.cancel()
            return await context.interview(self.target, report)

        try:
            run = asyncio.run(interview())
        except asyncio.CancelledError:
            return None
        except ExplorerError as exc:
            return Outcome(self.target, error=str(exc))
        except Exception as exc:  # the procedure should not raise; if it does, say so in place
            return Outcome(self.target, error=f"the interview failed: {type(exc).__name__}: {exc}")
        reason = no_card_reason(ReportView.of(run.report))
        if reason is not None:
            return Outcome(self.target, error=reason)
        if self._cancelled.is_set():
            return None
        run_id = context.record(run)
        return Outcome(self.target, run=run, run_id=run_id, unrecorded=context.record_error)

    def _finish(self, outcome: Outcome) -> None:
        if not self._cancelled.is_set() and self.is_attached:
            self.dismiss(outcome)

    def on_progress_update(self, message: ProgressUpdate) -> None:
        progress = message.progress
        step = str(getattr(progress, "step", "") or "")
        question = getattr(progress, "question", None)
        attempt = getattr(progress, "attempt", 1)
        text = str(getattr(progress, "message", "") or "")
        if question:
            self.asked.add(str(question))
            self.query_one("#questions", Static).update(self._questions_line(str(question)))
        self.events += 1
        bar = self.query_one("#bar", ProgressBar)
        if self.events >= (bar.total or 0):
            bar.total = self.events + 2
        bar.progress = self.events
        self.query_one("#step", Static).update(
            Content.assemble(
                ("step ", "dim"),
                safe.text(step, 40, "bold"),
                (f"   question {question}" if question else "", "bold"),
                (f"   attempt {attempt}", "dim"),
            )
        )
        self.query_one("#log", Log).write_line(safe.visible(f"[{step}] {text}", 300))

    def _questions_line(self, current: str | None = None) -> Content:
        parts: list[tuple[str, str] | str] = [("questions ", "dim")]
        for name in model.QUESTIONS:
            if name == current:
                parts.append((f"▶ {name}  ", "bold reverse"))
            elif name in self.asked:
                parts.append((f"✓ {name}  ", ""))
            else:
                parts.append((f"· {name}  ", "dim"))
        return Content.assemble(*parts)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.action_cancel()

    def action_cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            running = self._interview_task
        if running is not None:
            loop, task = running
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:
                pass  # the thread's loop has already finished
        self.workers.cancel_group(self, "interview")
        self.dismiss(None)
