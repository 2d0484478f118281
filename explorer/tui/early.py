"""The launch target's interview, begun before the TUI exists, so the verdict waits for no import.

`interview-explorer URL` used to import textual, parse the stylesheets, build the load screen,
push the progress screen, and only then start asking the agent: the interview (a tenth of a
second of mostly waiting on the network) came after about two thirds of a second of start-up,
and the verdict was drawn at 4.5 times the time `verify` takes to find it (issue 31,
bench/open_to_verdict.py). Now `explorer.tui.launch.run_tui` starts it in a thread of its own
(`EarlyInterview.start`), right after the arguments and the config are checked and before textual
is imported; the waiting on the agent overlaps the imports and the first paint.

The progress screen does not know: it asks `AppContext.interview(target, progress)` as for any
interview, and the context hands it this one (`EarlyInterview.claim`) when the target is the
same: the steps said so far are replayed to the screen's callback, later ones go straight to it,
and the screen's Esc cancels this interview's task as it would cancel its own. Everything after
the interview (recording, the interview screen) is the screen's, as before. Nothing here imports
textual: it runs while textual is being imported.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.core.run import Run

Progress = Callable[[Any], None]


class EarlyInterview:
    """One interview running on a thread with an event loop of its own, claimed at most once."""

    def __init__(self, target: str, interview: Callable[[Progress], Coroutine[Any, Any, Run]]) -> None:
        self.target = target
        self._interview = interview
        self._lock = threading.Lock()
        self._said: list[Any] = []  # progress before anyone listened
        self._listener: Progress | None = None
        self._finished = threading.Event()
        self._run: Run | None = None
        self._error: BaseException | None = None
        self._task: tuple[asyncio.AbstractEventLoop, asyncio.Task[Run]] | None = None
        self._on_finish: list[Callable[[], None]] = []
        self.claimed = False

    def start(self) -> EarlyInterview:
        thread = threading.Thread(target=self._work, name="early-interview", daemon=True)
        thread.start()
        return self

    def _work(self) -> None:
        async def main() -> Run:
            task = asyncio.current_task()
            assert task is not None
            with self._lock:
                self._task = (asyncio.get_running_loop(), task)
            return await self._interview(self._tell)

        try:
            self._run = asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever claims it, raised there
            self._error = exc
        with self._lock:
            self._finished.set()
            waiting, self._on_finish = self._on_finish, []
        for wake in waiting:
            wake()

    def _tell(self, progress: Any) -> None:
        with self._lock:
            listener = self._listener
            if listener is None:
                self._said.append(progress)
                return
        listener(progress)

    def done(self) -> bool:
        return self._finished.is_set()

    def cancel(self) -> None:
        with self._lock:
            running = self._task
        if running is not None:
            loop, task = running
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:
                pass  # its loop has finished already

    def finished_run(self, wanted: Callable[[Run], bool]) -> Run | None:
        """The run, claimed, when the interview has finished with one that is `wanted`; else None
        and unclaimed (still running, failed, or not wanted: for `claim` to hand over as it
        would any interview)."""
        with self._lock:
            if not self._finished.is_set() or self._run is None or self.claimed or not wanted(self._run):
                return None
            self.claimed = True
            return self._run

    async def claim(self, progress: Progress | None) -> Run:
        """The run, awaited on the caller's event loop (any thread): the steps said so far are
        replayed to `progress`, later ones reach it as they happen. Cancelling the caller cancels
        the interview. Raises what the interview raised."""
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()

        def settle() -> None:
            if not finished.done():
                finished.set_result(None)

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(settle)
            except RuntimeError:
                pass  # the caller's loop closed: nobody waits any more

        with self._lock:
            self.claimed = True
            said, self._said = self._said, []
            self._listener = progress
            if progress is not None:  # under the lock: no later step can overtake these
                for step in said:
                    progress(step)
            if self._finished.is_set():
                finished.set_result(None)
            else:
                self._on_finish.append(wake)
        try:
            await finished
        except asyncio.CancelledError:
            self.cancel()
            raise
        if self._error is not None:
            raise self._error
        assert self._run is not None
        return self._run
