"""Startup benchmark: launch to the first painted interview screen, versus a bare Textual app.

Whole-process wall time, measured from spawning `python` to its exit, for two children run
alternately in one go (so both see the same machine load):

- explorer: `explorer.tui.launch.build_app(early=True)` + `run_app` on a history run id,
  headless, quitting once the interview screen and the pane it opens on are drawn (the path
  `interview-explorer 1` takes, `run_tui`: the run is read by a forked child meanwhile);
- baseline: a minimal Textual app with five tabs and a footer, quitting after its first refresh.

The ratio of the medians is printed; the target is at most 1.3. The run opened by the explorer
is recorded first by interviewing the `steady` reference agent on loopback, in a temporary
home, so the benchmark touches neither the network nor the user's history.

It also measures the headless start-up (issue 31): `interview-explorer verify URL --json
--no-history --allow-jku` as a whole process against `python -c "import httpx"`, alternately, the
`steady` reference agent served by ANOTHER process (bench/verify_overhead.py's fleet child, the
same pair as that benchmark's pair 2). Target at most 1.25; `--verify-target` sets it.

Exit status 0 only when both ratios are within their targets, 1 otherwise; `--json` prints the
same verdict as `ok`, beside each ratio and its target.

Both children may write bytecode caches even when PYTHONDONTWRITEBYTECODE is set in the
calling environment (some CI images set it): with it, every launch of the explorer would compile
its own modules from source while textual's were compiled by pip at install time, which measures
the environment, not the program. A user's first launch writes the caches; the warm-up launches
here do the same.

    python bench/startup.py [--runs 7] [--target 1.3] [--verify-target 1.25] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIZE = (120, 40)

EXPLORER_CHILD = f"""
import argparse, sys
from explorer.tui.launch import build_app, run_app
args = argparse.Namespace(target=sys.argv[1], home=None, keys=[], allow_jku=False, header=[],
                          role=None, runner=None, openclasp=None)
run_app(build_app(args, early=True, exit_when_ready=True), headless=True, size={SIZE!r})
"""

BASELINE_CHILD = f"""
from textual.app import App
from textual.widgets import Footer, Static, TabbedContent, TabPane

class FiveTabs(App):
    def compose(self):
        with TabbedContent():
            for name in ("identity", "capabilities", "usage", "terms", "refusals"):
                with TabPane(name):
                    yield Static(name)
        yield Footer()

    def on_mount(self):
        self.call_after_refresh(self.exit)

FiveTabs().run(headless=True, size={SIZE!r})
"""


def record_steady_run(home: Path) -> int:
    """Interview the steady reference agent once and record it; returns the run id."""
    from explorer.demo.fleet import Fleet
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync
    from explorer.store.sqlite import History

    with Fleet(names=["steady"]) as fleet:
        run = run_interview_sync(fleet.agents["steady"].base_url, Options(allow_jku=True, runner="bench"))
    with History.open(home) as history:
        return history.record(run)


def timed(code: str, *argv: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, cwd=REPO, capture_output=True, timeout=120
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"child failed ({done.returncode}):\n{done.stderr.decode(errors='replace')}")
    return elapsed


def verify_against_httpx(runs: int, env: dict[str, str]) -> tuple[float, float]:
    """Medians of `verify URL --json --no-history --allow-jku` and of `python -c "import httpx"`,
    run alternately, the agent in another process."""
    sys.path.insert(0, str(REPO))
    from bench.verify_overhead import Agents

    verify_code = "import sys; from explorer.cli import entry; sys.argv[0] = 'interview-explorer'; entry()"
    agents = Agents(["steady"], env)
    try:
        url = agents.base["steady"]
        argv = ("verify", url, "--json", "--no-history", "--allow-jku")
        timed(verify_code, *argv, env=env)  # warm the caches
        timed("import httpx", env=env)
        verify, httpx = [], []
        for _ in range(runs):
            verify.append(timed(verify_code, *argv, env=env))
            httpx.append(timed("import httpx", env=env))
    finally:
        agents.stop()
    return statistics.median(verify), statistics.median(httpx)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed launches of each app (default 7)")
    parser.add_argument("--target", type=float, default=1.3, help="the ratio to stay under (default 1.3)")
    parser.add_argument(
        "--verify-target", type=float, default=1.25, help="verify / import httpx to stay under (default 1.25)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="ie-bench-") as tmp:
        home = Path(tmp)
        env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home), "PYTHONPATH": str(REPO)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        run_id = str(record_steady_run(home))
        timed(BASELINE_CHILD, env=env)  # warm the bytecode caches of both before timing
        timed(EXPLORER_CHILD, run_id, env=env)
        baseline, explorer = [], []
        for _ in range(args.runs):
            baseline.append(timed(BASELINE_CHILD, env=env))
            explorer.append(timed(EXPLORER_CHILD, run_id, env=env))
        verify, httpx = verify_against_httpx(args.runs, env)

    b, e = statistics.median(baseline), statistics.median(explorer)
    ratio, verify_ratio = e / b, verify / httpx
    ok = ratio <= args.target and verify_ratio <= args.verify_target
    if args.json:
        print(
            json.dumps(
                {
                    "baseline_s": b,
                    "explorer_s": e,
                    "ratio": ratio,
                    "target": args.target,
                    "runs": args.runs,
                    "verify_s": verify,
                    "import_httpx_s": httpx,
                    "verify_ratio": verify_ratio,
                    "verify_target": args.verify_target,
                    "ok": ok,
                }
            )
        )
    else:
        print(f"baseline: five-tab Textual app     median {b:.3f} s  ({args.runs} runs)")
        print(f"explorer: first interview screen   median {e:.3f} s")
        print(f"ratio {ratio:.2f} (target <= {args.target}): {'OK' if ratio <= args.target else 'OVER'}")
        print(f"verify --json --no-history, whole process  median {verify:.3f} s")
        print(f"python -c 'import httpx'                   median {httpx:.3f} s")
        within = "OK" if verify_ratio <= args.verify_target else "OVER"
        print(f"ratio {verify_ratio:.2f} (target <= {args.verify_target}): {within}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
