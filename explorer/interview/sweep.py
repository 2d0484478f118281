"""The sweep engine: many interviews in one process and one event loop (`verify` with many targets).

Each interview is exactly `procedure.run_interview(target, options)`, with the options planned
for that target as for a single `verify`, so a sweep's verdict for an agent is the verdict the
agent gets alone. What the engine adds is scheduling, and it is kept to three rules:

- at most `concurrency` interviews in flight (`--jobs`), by that many workers pulling from one
  iterator of jobs, so a list of a million lines is never turned into a million tasks;
- at most `per_host` requests in flight to any one host, an address and port however a URL
  spells it (`explorer.net.gate.HostGate`), shared by every interview, so a list with many
  agents of one host never floods it;
- each finished run is handed to `on_done` at once, in completion order, and then dropped: the
  caller prints, records and writes it, and the engine holds no report (memory stays flat).

An interview that raises (a bug, never the agent's fault: network trouble is in the report)
is handed over as a `Finished` with `run=None` and the error's text, so one broken run cannot
end a sweep of thousands.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from explorer.core.run import Run
from explorer.interview.options import Options
from explorer.interview.procedure import run_interview
from explorer.net.gate import DEFAULT_PER_HOST, HostGate

DEFAULT_JOBS = 8


@dataclass(frozen=True)
class Job:
    """One interview of a sweep: where it stands in the list, what to ask, and how."""

    position: int
    target: str
    options: Options = field(repr=False)


@dataclass(frozen=True)
class Finished:
    """A job that is done: its run (None when the interview itself failed) and how long it took."""

    job: Job
    run: Run | None
    seconds: float
    error: str | None = None


class RunFn(Protocol):
    def __call__(self, target: str, options: Options, *, gate: HostGate | None = None) -> Awaitable[Run]: ...


async def _interview(target: str, options: Options, *, gate: HostGate | None = None) -> Run:
    return await run_interview(target, options, None, gate=gate)


async def sweep(
    jobs: Iterable[Job],
    on_done: Callable[[Finished], Any],
    *,
    concurrency: int = DEFAULT_JOBS,
    per_host: int = DEFAULT_PER_HOST,
    run_fn: RunFn | None = None,
) -> None:
    """Run every job, at most `concurrency` at once; `on_done` is called as each one finishes.

    `on_done` runs in the event loop; what it raises ends the sweep (the caller decides which of
    its own troubles are fatal).
    """
    gate = HostGate(per_host)
    interview = run_fn or _interview
    queue = iter(jobs)

    async def worker() -> None:
        for job in queue:
            began = time.perf_counter()
            try:
                run: Run | None = await interview(job.target, job.options, gate=gate)
                problem = None
            except Exception as exc:  # noqa: BLE001 - one broken interview must not end the sweep
                run, problem = None, f"{type(exc).__name__}: {exc}"
            on_done(Finished(job, run, time.perf_counter() - began, problem))

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
