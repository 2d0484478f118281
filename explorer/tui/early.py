"""The launch target's interview, begun before the TUI exists, so the verdict waits for no import.

`interview-explorer URL` used to import textual, parse the stylesheets, build the load screen,
push the progress screen, and only then start asking the agent: the interview (a tenth of a
second of mostly waiting on the network) came after about two thirds of a second of start-up,
and the verdict was drawn at 4.5 times the time `verify` takes to find it (issue 31,
bench/open_to_verdict.py). Now `explorer.tui.launch.run_tui` starts it right after the arguments
and the config are checked, before textual is imported (`EarlyInterview.start`).

Where it runs: in a forked child process on Linux, when this process is still single-threaded
and runs no event loop (the command line's case); on a thread of its own otherwise (other
systems, where fork without exec is unsafe, and tests that build the app inside a running
loop). On a thread it shared the interpreter's lock and its import lock with the textual import
on the main thread: its own imports (the procedure, the evaluation, h11) and its work ran one
after the other with textual's, and the interview that takes 20 ms in a warm process took about
280 ms there. A child runs them on another core. It plans nothing (the parent planned: the
history, the config and any warning stay the parent's) and touches no terminal; it sends each
progress step and then the run (or the error) back over a pipe, pickled (the pipe joins this
process to its own fork: nothing else writes to it), and exits without running the parent's
exit handlers. Warnings the interview adds to the session's list (a run that could not be
signed) are carried back with the run. Token caches filled in the child stay there: a later
interview of the same agent asks for its token again.

A child also records its run in the history (`record`, the session's own store opened in the
child, each write a transaction as always) and sends the run's id with it: opening the store
imports the store and much of the core, about 25 ms the parent would otherwise spend after
textual's import, right before the verdict can be drawn, while the child has a core to itself.
`AppContext.record` then hands out that id for that run instead of recording it again. A run
the child finished and recorded is in the history even when the screen that asked for it is
left before it is shown, as a run the progress screen received would be.

The progress screen does not know: it asks `AppContext.interview(target, progress)` as for any
interview, and the context hands it this one (`EarlyInterview.claim`) when the target is the
same: the steps said so far are replayed to the screen's callback, later ones go straight to it,
and the screen's Esc cancels this interview (its task, or its process) as it would cancel its
own. Everything after the interview (recording, the interview screen) is the screen's, as
before. Nothing here imports textual: it runs while textual is being imported.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import struct
import sys
import threading
from collections.abc import Callable, Coroutine
from types import SimpleNamespace
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.core.run import Run

Progress = Callable[[Any], None]
Recorded = tuple[int | None, str | None]  # a run's id in the history, or why it is not there

_FRAME = struct.Struct(">Q")  # each message on the pipe: its length, then its pickle


def can_fork() -> bool:
    """Whether the interview may run in a forked child here: Linux, this the only thread and no
    event loop running in it (a forked running loop cannot be left, nor a held lock released)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    if threading.active_count() != 1:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


class EarlyInterview:
    """One interview running in a child process or on a thread, claimed at most once. (The
    launch's reading of a stored run rides on it too, `AppContext.start_early_load`: any work
    that ends in a `Run`.)"""

    def __init__(
        self,
        target: str,
        interview: Callable[[Progress], Coroutine[Any, Any, Run]],
        *,
        carried: list[str] | None = None,
        process: bool = True,
        record: Callable[[Run], Recorded] | None = None,
    ) -> None:
        self.target = target
        self._interview = interview
        self._carried = carried  # the session's warnings: what a child adds comes back with its run
        self._process = process  # in a child process where `can_fork` allows
        self._record = record  # a child records its run itself (never raises): `recorded`
        self._lock = threading.Lock()
        self._said: list[Any] = []  # progress before anyone listened
        self._listener: Progress | None = None
        self._finished = threading.Event()
        self._run: Run | None = None
        self._error: BaseException | None = None
        self._task: tuple[asyncio.AbstractEventLoop, asyncio.Task[Run]] | None = None
        self._on_finish: list[Callable[[], None]] = []
        self._cancelled = False
        self._reaped = False
        self.pid: int | None = None  # the child's, when it runs in one
        self.claimed = False
        self.recorded: Recorded | None = None  # (run id, why not) when the child recorded the run
        self._reader: threading.Thread | None = None  # the parent's end of a child's pipe

    def start(self) -> EarlyInterview:
        if self._process and can_fork():
            _import_shared()
            try:
                self._start_child()
                return self
            except OSError:
                pass  # no process to be had (a limit): a thread, as on other systems
        thread = threading.Thread(target=self._work, name="early-interview", daemon=True)
        thread.start()
        return self

    # ---- on a thread -----------------------------------------------------------------------
    def _work(self) -> None:
        async def main() -> Run:
            task = asyncio.current_task()
            assert task is not None
            with self._lock:
                self._task = (asyncio.get_running_loop(), task)
            return await self._interview(self._tell)

        try:
            run, error = asyncio.run(main()), None
        except BaseException as exc:  # noqa: BLE001 - handed to whoever claims it, raised there
            run, error = None, exc
        self._finish(run, error)

    # ---- in a child process ----------------------------------------------------------------
    def _start_child(self) -> None:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            code = 1
            try:
                self._child(write_fd)
                code = 0
            finally:
                os._exit(code)  # never the parent's exit handlers, buffers or finalizers
        os.close(write_fd)
        self.pid = pid
        reader = threading.Thread(target=self._read, args=(read_fd, pid), name="early-interview", daemon=True)
        self._reader = reader
        reader.start()

    def _child(self, fd: int) -> None:
        """The child's whole life: the interview, each step and then its outcome on the pipe."""
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # `cancel` ends it at once
        carried = self._carried
        before = len(carried) if carried is not None else 0
        with os.fdopen(fd, "wb") as pipe:

            def tell(progress: Any) -> None:
                # A step crosses as its fields: unpickling the procedure's own Progress type would
                # import the whole interview in the parent, beside textual's import.
                fields = getattr(progress, "__dict__", None)
                try:
                    if fields is not None:
                        _send(pipe, "step", dict(fields))
                    else:
                        _send(pipe, "progress", progress)
                except (pickle.PicklingError, TypeError, AttributeError):
                    pass  # a step that cannot cross: the log misses one line, the run is whole

            try:
                run = asyncio.run(self._interview(tell))
            except (KeyboardInterrupt, SystemExit):
                return  # interrupted with its parent: no outcome, the parent says so
            except BaseException as exc:  # noqa: BLE001 - the parent raises it where it is claimed
                _send(pipe, "error", _portable(exc))
                return
            if carried is not None and len(carried) > before:
                _send(pipe, "warnings", carried[before:])
            if self._record is not None:
                _send(pipe, "recorded", self._record(run))
            _send(pipe, "run", run)

    def _read(self, fd: int, pid: int) -> None:
        """The parent's end: steps to `_tell` as they come, then the outcome; reaps the child."""
        run: Any = None
        error: BaseException | None = None
        try:
            with os.fdopen(fd, "rb") as pipe:
                for kind, value in _received(pipe):
                    if kind == "step":
                        self._tell(SimpleNamespace(**value))  # read by its attributes, as Progress is
                    elif kind == "progress":
                        self._tell(value)
                    elif kind == "warnings" and self._carried is not None:
                        self._carried.extend(value)
                    elif kind == "recorded":
                        self.recorded = value
                    elif kind == "run":
                        run = value
                    elif kind == "error":
                        error = value
        except Exception as exc:  # noqa: BLE001 - a broken pipe is this interview's failure, said where claimed
            error = RuntimeError(f"the interview's process could not be read: {type(exc).__name__}: {exc}")
        with self._lock:
            self._reaped = True  # from here `cancel` sends no signal: the pid may be reused once reaped
        status = _reap(pid)
        if run is None and error is None:
            if self._cancelled:
                error = asyncio.CancelledError()
            else:
                error = RuntimeError(f"the interview's process ended without a result ({status})")
        self._finish(run, error)

    # ---- either way --------------------------------------------------------------------------
    def _finish(self, run: Run | None, error: BaseException | None) -> None:
        self._run, self._error = run, error
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

    def wait(self, timeout: float) -> bool:
        """Block until the interview has finished or `timeout` seconds have passed; `done()`."""
        finished = self._finished.wait(timeout)
        if finished:
            self._join_reader()
        return finished

    def _join_reader(self) -> None:
        """Once finished, the reader thread is at its last line: let it end, so the process is
        single-threaded again and a later early interview may fork (`can_fork`)."""
        reader = self._reader
        if reader is not None and reader is not threading.current_thread():
            reader.join(timeout=1.0)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            running = self._task
            if self.pid is not None and not self._reaped:
                try:  # under the lock: the child is not reaped yet, so this pid is still ours
                    os.kill(self.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
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
        self._join_reader()
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
        self._join_reader()
        if self._error is not None:
            raise self._error
        assert self._run is not None
        return self._run


def _import_shared() -> None:
    """Import, before the fork, what both processes import after it: the run record and the
    report's reading (the child builds a report, the parent shows it). Done once, shared by
    the child for nothing; the parent pays what it would have paid later anyway (about 15 ms
    of the child's path, bench/open_to_verdict.py)."""
    import explorer.core.report  # noqa: F401 - the view, the canonical form, the findings
    import explorer.core.run  # noqa: F401


def _send(pipe: IO[bytes], kind: str, value: Any) -> None:
    data = pickle.dumps((kind, value), protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(_FRAME.pack(len(data)))
    pipe.write(data)
    pipe.flush()  # each step as it happens, not when a buffer fills


def _received(pipe: IO[bytes]) -> Any:
    """The messages on the pipe, until it closes (a message cut short ends them too)."""
    while True:
        head = pipe.read(_FRAME.size)
        if len(head) < _FRAME.size:
            return
        (size,) = _FRAME.unpack(head)
        body = pipe.read(size)
        if len(body) < size:
            return
        yield pickle.loads(body)


def _portable(exc: BaseException) -> BaseException:
    """`exc` when it survives a pickle round trip (an ExplorerError does), else its words."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - any exception type may refuse to pickle in its own way
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _reap(pid: int) -> str:
    """Wait for the child; how it ended, in words."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return "already reaped"
    if os.WIFSIGNALED(status):
        return f"ended by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
