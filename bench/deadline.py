"""Deadline benchmark: how long a whole run against an agent that answers just under the timeout
takes, in units of one of that agent's answers.

The agent (`explorer.demo.slow`) runs in ANOTHER process and answers every request after
`--delay` seconds. The floor is measured in this same command: the median time of one request
to it (the card, through the verifier's own `Fetcher` with the same limits). Each shape is then
run with `run_interview` (in-process, `--reruns 5` so an agent that keeps failing would be asked
six times over) and its wall time printed with the ratio to the floor, "answers' worth", beside
the deadline in the same unit (six times `--timeout` by default). Without the deadline these
shapes took dozens of answers' worth (forty discovery documents one after another, a
`Retry-After` per proposal, six attempts of a slow agent); with it none may exceed the deadline's
ratio by more than the time to judge what was received.

Shapes: `answers` (nothing else to fetch, every call an error, so it re-runs), `schemes` (forty
OpenID Connect schemes, with client credentials given), `proposals` (sixteen proposals, each
answered 429 with `Retry-After: 5`), `jku` (four key sets, `--allow-jku`).

    python bench/deadline.py [--timeout 1.0] [--delay 0.85] [--runs 1] [--json]

A script, not a test: it prints medians and ratios and exits 0 either way (1 only when the agent
cannot be started).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from explorer.interview.options import Options  # noqa: E402
from explorer.interview.procedure import run_deadline, run_interview  # noqa: E402
from explorer.net.http import Fetcher, Limits  # noqa: E402

SHAPES: dict[str, dict[str, Any]] = {
    "answers": {},
    "schemes": {"oauth2_client_id": "slow-client", "oauth2_client_secret": "slow-secret-value-42"},
    "proposals": {},
    "jku": {"allow_jku": True},
}


def _start_agent(delay: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer.demo.slow", "--delay", str(delay)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "0"},
    )
    assert proc.stdout is not None
    root = proc.stdout.readline().strip()
    if not root.startswith("http://127.0.0.1:"):
        proc.kill()
        raise SystemExit("bench/deadline: the slow agent did not start")
    return proc, root


async def _floor(root: str, timeout: float, runs: int) -> float:
    """The median seconds of one request to the slow agent, with the verifier's client."""
    times = []
    async with Fetcher(Limits(timeout=timeout * 2)) as fetcher:
        for _ in range(max(3, runs)):
            started = time.perf_counter()
            await fetcher.get(f"{root}/answers/.well-known/agent-card.json", purpose="card")
            times.append(time.perf_counter() - started)
    return statistics.median(times)


async def _shape(root: str, shape: str, timeout: float) -> dict[str, Any]:
    options = Options(timeout=timeout, reruns=5, runner="bench", **SHAPES[shape])
    started = time.perf_counter()
    run = await run_interview(f"{root}/{shape}/.well-known/agent-card.json", options)
    seconds = time.perf_counter() - started
    cut = sum(1 for e in run.exchanges if (e.error or "").startswith("deadline"))
    return {
        "seconds": seconds,
        "verdict": run.report["verdict"],
        "attempts": run.report["attempts"],
        "requests": len(run.exchanges),
        "cut": cut,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--delay", type=float, default=0.85)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    deadline = run_deadline(Options(timeout=args.timeout))
    agent, root = _start_agent(args.delay)
    try:
        floor = asyncio.run(_floor(root, args.timeout, args.runs))
        results = []
        for shape in SHAPES:
            runs = [asyncio.run(_shape(root, shape, args.timeout)) for _ in range(args.runs)]
            median = statistics.median(r["seconds"] for r in runs)
            last = {k: v for k, v in runs[-1].items() if k != "seconds"}
            results.append(
                {
                    "shape": shape,
                    "median_s": median,
                    "floor_median_s": floor,
                    "ratio": median / floor,
                    "deadline_ratio": deadline / floor,
                    **last,
                }
            )
    finally:
        agent.terminate()
        agent.wait(10)
    if args.json:
        print(json.dumps({"deadline_s": deadline, "floor_median_s": floor, "shapes": results}))
        return 0
    print(
        f"one answer of the slow agent (floor): {floor:.3f} s; deadline {deadline:g} s = "
        f"{deadline / floor:.1f} answers' worth (--timeout {args.timeout:g}, --delay {args.delay:g})"
    )
    for r in results:
        print(
            f"  {r['shape']:<10} {r['median_s']:6.2f} s = {r['ratio']:5.1f} answers' worth  "
            f"({r['verdict']}, {r['attempts']} attempt(s), {r['requests']} requests, "
            f"{r['cut']} cut by the deadline)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
