"""Open-to-verdict benchmark: how long the explorer takes to SHOW a verdict that `verify` finds.

Measured from outside, as a user meets it, in a pseudo-terminal (the standard library's `pty`,
120x40, TERM=xterm-256color) against a reference agent served by ANOTHER process (the fleet
child of bench/verify_overhead.py, its rate limit raised). Each round runs, one after another
so all see the same machine load:

- explorer: `python -m explorer URL --allow-jku`, from spawning the process until the interview
  screen's header has drawn `verdict <the verdict>` on the terminal (the output stream is read
  as it comes and its escape sequences stripped); then ctrl+q, not timed;
- verify: `python -m explorer verify URL --allow-jku --json -q` as a whole process, recording
  the run in the history as the explorer does (a fresh home each round for both, so neither
  finds the other's runs);
- minimal: a Textual app of the same version that draws one line, in the same kind of terminal,
  from spawning until that line is drawn (its first paint);
- interview: `run_interview_sync` of the same agent inside this process (the interview's own
  time, without any start-up).

Printed: the median of each over the rounds and two ratios, with their targets (issue 31):
open-to-verdict / (minimal first paint + interview) <= 1.5, and open-to-verdict / verify <= 1.5.

    python bench/open_to_verdict.py [--agent steady|huge] [--rounds 5] [--json]

A script, not a test: it exits 0 either way (1 only when something cannot be started or a
verdict is never drawn). Child processes run with bytecode caching on (as after `pip install`),
whatever the parent's setting; one unmeasured round warms the caches first.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.verify_overhead import Agents  # noqa: E402

ROWS, COLUMNS = 40, 120
TARGET_FLOOR = 1.5
TARGET_VERIFY = 1.5
WAIT = 60.0  # seconds for anything to be drawn before the round is given up
ESCAPES = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[@-Z\\-_])")
VERDICT = re.compile(r"verdict\W{0,4}(conformant|nonconformant|churn|not.offered|unreachable)", re.IGNORECASE)
PAINTED = "minimal app painted"

MINIMAL_APP = f"""
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static({PAINTED!r})

Minimal().run()
"""


def _environment(home: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "INTERVIEW_EXPLORER_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "COLUMNS": str(COLUMNS),
        "LINES": str(ROWS),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("NO_COLOR", None)
    return env


def _until_drawn(argv: list[str], env: dict[str, str], seen: re.Pattern[str] | str) -> float:
    """Seconds from spawning `argv` in a new pseudo-terminal until `seen` is on its screen; then
    ctrl+q, and the process is waited for (untimed)."""
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    began = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=terminal, stdout=terminal, stderr=terminal, env=env, cwd=REPO, start_new_session=True
    )
    os.close(terminal)
    raw = b""
    try:
        while True:
            ready, _, _ = select.select([controller], [], [], max(0.0, began + WAIT - time.perf_counter()))
            if not ready:
                raise SystemExit(f"nothing matching {seen!r} drawn by {argv[2:]} in {WAIT:.0f} s")
            try:
                chunk = os.read(controller, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                shown = ESCAPES.sub(b"", raw).decode("utf-8", "replace")[-2000:]
                raise SystemExit(f"{argv[2:]} ended before drawing {seen!r}:\n{shown}")
            raw += chunk
            text = ESCAPES.sub(b"", raw[-200_000:]).decode("utf-8", "replace")
            if (seen in text) if isinstance(seen, str) else seen.search(text):
                elapsed = time.perf_counter() - began
                break
        os.write(controller, b"\x11")  # ctrl+q
        _drain_until_exit(controller, process)
        return elapsed
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)


def _drain_until_exit(controller: int, process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Read what the quitting app writes (so it never blocks on a full terminal) until it exits."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.05)
        if ready:
            try:
                os.read(controller, 1 << 16)
            except OSError:
                break
    if process.poll() is None:
        process.kill()
    process.wait()


def _verify(url: str, env: dict[str, str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "verify", url, "--allow-jku", "--json", "-q"],
        env=env, cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT,
    )  # fmt: skip
    elapsed = time.perf_counter() - began
    if done.returncode not in (0, 1, 5):  # a verdict was found (conformant, nonconformant, churn)
        raise SystemExit(f"verify failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return elapsed


def _interview(url: str) -> float:
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync

    began = time.perf_counter()
    run_interview_sync(url, Options(allow_jku=True))
    return time.perf_counter() - began


def _round(url: str, scratch: Path, number: int) -> dict[str, float]:
    homes = {side: scratch / f"{side}-{number}" for side in ("explorer", "verify", "minimal")}
    for home in homes.values():
        home.mkdir()
    explorer = [sys.executable, "-m", "explorer", url, "--allow-jku"]
    return {
        "explorer": _until_drawn(explorer, _environment(homes["explorer"]), VERDICT),
        "verify": _verify(url, _environment(homes["verify"])),
        "minimal": _until_drawn([sys.executable, "-c", MINIMAL_APP], _environment(homes["minimal"]), PAINTED),
        "interview": _interview(url),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="steady", help="the reference agent to open (default steady)")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (default 5)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="ie-open-") as tmp:
        scratch = Path(tmp)
        agents = Agents([args.agent], _environment(scratch))
        try:
            if args.agent not in agents.base:
                raise SystemExit(f"the agent {args.agent!r} did not start")
            url = agents.base[args.agent]
            _round(url, scratch, 0)  # warm-up: bytecode caches, the agent's first answers
            rounds = [_round(url, scratch, n) for n in range(1, args.rounds + 1)]
        finally:
            agents.stop()

    median = {side: statistics.median(r[side] for r in rounds) for side in rounds[0]}
    floor = median["minimal"] + median["interview"]
    over_floor, over_verify = median["explorer"] / floor, median["explorer"] / median["verify"]
    ok = over_floor <= TARGET_FLOOR and over_verify <= TARGET_VERIFY
    if args.json:
        print(json.dumps({"agent": args.agent, "rounds": args.rounds, "median_s": median,
                          "ratio_floor": over_floor, "ratio_verify": over_verify, "ok": ok}))  # fmt: skip
        return 0
    print(f"agent {args.agent}, {args.rounds} rounds, medians (pseudo-terminal {COLUMNS}x{ROWS})")
    print(f"  explorer URL, spawn to verdict drawn   {median['explorer'] * 1000:7.0f} ms")
    print(f"  verify URL, whole process              {median['verify'] * 1000:7.0f} ms")
    print(f"  minimal Textual app, first paint       {median['minimal'] * 1000:7.0f} ms")
    print(f"  the interview, in-process              {median['interview'] * 1000:7.0f} ms")
    print(f"open-to-verdict / (first paint + interview) = {over_floor:.2f} (target <= {TARGET_FLOOR})")
    print(f"open-to-verdict / verify                    = {over_verify:.2f} (target <= {TARGET_VERIFY})")
    print("OK" if ok else "OVER")
    return 0


if __name__ == "__main__":
    sys.exit(main())
