"""Reading and forgetting stored runs from a screen without blocking the event loop.

A history may be a PostgreSQL database across a network, where one run takes tens of
milliseconds to read (and a signed one to check); a screen that read it on the event loop would
stop drawing and taking keys meanwhile. These helpers do the store's part in a worker thread
and hand the result back to the screen on the event loop, or say what went wrong in a toast
(never a traceback). The result is dropped when the screen has gone meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from explorer.tui.app import context_of, explorer_of
from explorer.tui.errors import ExplorerError

if TYPE_CHECKING:
    from textual.screen import Screen

    from explorer.core.run import Run


def with_runs(screen: Screen[Any], run_ids: Sequence[int], then: Callable[[list[Run]], Any]) -> None:
    """Load these runs (`AppContext.load`) in a worker thread, then call `then(runs)`."""
    context = context_of(screen)
    wanted = list(run_ids)

    def work() -> None:
        try:
            runs = [context.load(run_id) for run_id in wanted]
        except ExplorerError as exc:
            _hand_back(screen, screen.notify, str(exc), severity="error", markup=False)
            return
        _hand_back(screen, then, runs)

    screen.run_worker(work, thread=True, group="stored-runs", name="load runs")


def open_run(screen: Screen[Any], run_id: int) -> None:
    """Open a stored run offline on its interview screen, read in a worker thread."""
    with_runs(
        screen,
        [run_id],
        lambda runs: explorer_of(screen).show_run(runs[0], run_id, origin="from history (offline)"),
    )


def forget_run(screen: Screen[Any], run_id: int, then: Callable[[], Any]) -> None:
    """Delete a run from the history in a worker thread, then call `then()`."""
    context = context_of(screen)

    def work() -> None:
        try:
            context.forget(run_id)
        except Exception as exc:  # noqa: BLE001 - HistoryError or a driver's, said in a toast
            _hand_back(
                screen,
                screen.notify,
                f"could not delete run #{run_id}: {exc}",
                severity="error",
                markup=False,
            )
            return
        _hand_back(screen, then)

    screen.run_worker(work, thread=True, group="stored-runs", name="forget run")


def _hand_back(screen: Screen[Any], call: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    def on_loop() -> None:
        if screen.is_attached:
            call(*args, **kwargs)

    screen.app.call_from_thread(on_loop)
