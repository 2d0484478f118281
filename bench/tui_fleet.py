"""TUI fleet benchmark: does the fleet view stay responsive with 10,000 agents?

Two real SQLite histories are seeded from one real interview of the steady reference agent
(`bench.history_scale`: each copy is another agent at its own card URL): one with `--agents`
agents (10,000), one with `--baseline` agents (100), the in-process floor. The explorer runs
headless (Textual's `run_test`, after the launcher's `collector.settle()`) on each, with a 20 ms
timer on the app's event loop recording when it fires, and for each history:

- F3 to the first frame of the fleet view, and to its rows on screen (the history is read in a
  worker thread), with the longest gap between two ticks meanwhile (20 ms: a loop that never
  waits);
- keystroke latency, key press to the key handled and the screen repainted (median and worst):
  scrolling (down, page down, end, home), sorting and filtering (s, v), and finding (/ then
  typing a part of a card URL, one keystroke at a time);
- another process records a run of a new agent: the time until the fleet shows it without a
  key (the view polls the store's change mark every two seconds, so up to about 2 s is the poll,
  not the work), and the longest tick gap meanwhile;
- the floor: the longest gap over one second of the same app idle.

Each figure is printed for both histories with the ratio of the large one to the baseline.

    python bench/tui_fleet.py [--agents 10000] [--baseline 100] [--json]

A script, not a test: it prints the figures and exits 0 either way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.history_scale import as_agent, steady_run  # noqa: E402
from bench.tui_responsiveness import Ticks, _until  # noqa: E402
from explorer.core.run import Run  # noqa: E402
from explorer.store.sqlite import History  # noqa: E402
from explorer.tui import collector  # noqa: E402
from explorer.tui.app import ExplorerApp  # noqa: E402
from explorer.tui.context import AppContext  # noqa: E402
from explorer.tui.fleet_model import FILTERS, SORTS  # noqa: E402
from explorer.tui.screens.fleet import FleetScreen, FleetTable  # noqa: E402

TICK = 0.02
SIZE = (160, 45)
VERDICTS = ("conformant", "nonconformant", "churn", "unreachable", "not_offered")
RECORD_ELSEWHERE = """
import json, sys
from explorer.core.run import Run
from explorer.store.sqlite import History
run = Run.from_transcript(json.loads(open(sys.argv[1]).read()))
with History.open(sys.argv[2]) as history:
    history.record(run)
"""


def seeded(run: Run, agents: int, home: Path) -> float:
    """`agents` agents, each with one run, verdicts in turn; the seconds the seeding took."""
    began = time.perf_counter()
    with History.open(home) as history:
        for i in range(agents):
            copy = as_agent(run, i, i)
            history.record(
                Run(
                    report={**copy.report, "verdict": VERDICTS[i % len(VERDICTS)]},
                    exchanges=copy.exchanges,
                    keys=copy.keys,
                )
            )
    return time.perf_counter() - began


async def _key(pilot: Any, key: str) -> float:
    began = time.perf_counter()
    await pilot.press(key)
    await pilot.pause()
    return time.perf_counter() - began


async def _measure(home: Path, agents: int, newcomer: Path) -> dict[str, float]:
    app = ExplorerApp(AppContext(home=home, cursor_blink=False, use_history=True))
    collector.settle()
    ticks = Ticks()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.set_interval(TICK, ticks)
        await asyncio.sleep(0.3)
        idle_from = time.perf_counter()
        await asyncio.sleep(1.0)
        idle_gap = ticks.longest_gap(idle_from, time.perf_counter())

        start = time.perf_counter()
        await pilot.press("f3")
        await _until(lambda: isinstance(app.screen, FleetScreen) and app.screen.is_mounted, pilot)
        framed = time.perf_counter()
        screen = app.screen
        table = screen.query_one(FleetTable)
        await _until(lambda: screen.loaded and table.row_count == agents, pilot)
        shown = time.perf_counter()
        await asyncio.sleep(0.3)
        open_gap = ticks.longest_gap(start, time.perf_counter())

        scroll = [await _key(pilot, k) for k in ["down"] * 20 + ["pagedown"] * 10 + ["end", "home"]]
        # every sort and every filter in turn, ending where it began (all agents shown)
        sort_filter = [await _key(pilot, k) for k in ["s"] * len(SORTS) + ["v"] * len(FILTERS)]
        find = [await _key(pilot, "slash")]
        find += [await _key(pilot, ch) for ch in f"agent-{agents // 2 + 1}"]
        found = table.row_count
        find.append(await _key(pilot, "escape"))

        reads = screen.reads
        elsewhere_from = time.perf_counter()
        await asyncio.to_thread(
            subprocess.run, [sys.executable, "-c", RECORD_ELSEWHERE, str(newcomer), str(home)], check=True
        )
        recorded = time.perf_counter()
        await _until(lambda: screen.reads > reads and table.row_count == agents + 1, pilot, timeout=60)
        picked = time.perf_counter()
        await asyncio.sleep(0.3)
        pickup_gap = ticks.longest_gap(elsewhere_from, time.perf_counter())
    return {
        "idle_longest_gap_ms": idle_gap * 1000,
        "first_frame_ms": (framed - start) * 1000,
        "rows_shown_ms": (shown - start) * 1000,
        "open_longest_gap_ms": open_gap * 1000,
        "scroll_key_median_ms": statistics.median(scroll) * 1000,
        "scroll_key_worst_ms": max(scroll) * 1000,
        "sort_filter_key_median_ms": statistics.median(sort_filter) * 1000,
        "sort_filter_key_worst_ms": max(sort_filter) * 1000,
        "find_key_median_ms": statistics.median(find) * 1000,
        "find_key_worst_ms": max(find) * 1000,
        "found": found,
        "pickup_after_record_ms": (picked - recorded) * 1000,
        "pickup_longest_gap_ms": pickup_gap * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10_000, help="agents in the large history")
    parser.add_argument("--baseline", type=int, default=100, help="agents in the baseline history")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        os.environ.update(INTERVIEW_EXPLORER_HOME=scratch, NO_COLOR="1")
        run = steady_run()
        newcomer = Path(scratch) / "newcomer.json"
        newcomer.write_text(json.dumps(as_agent(run, 10 * args.agents + 7).to_transcript()))
        figures: dict[str, Any] = {}
        for label, agents in (("baseline", args.baseline), ("large", args.agents)):
            home = Path(scratch) / label
            home.mkdir()
            seconds = seeded(run, agents, home)
            measured = asyncio.run(_measure(home, agents, newcomer))
            figures[label] = {"agents": agents, "seed_s": seconds, **measured}
    large, base = figures["large"], figures["baseline"]
    figures["ratios"] = {
        key: large[key] / base[key] for key in large if key.endswith("_ms") and base[key] > 0
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(
        f"fleet view on {large['agents']} agents against {base['agents']} (seeded in "
        f"{large['seed_s']:.1f} s and {base['seed_s']:.1f} s, one real run of steady per agent)"
    )
    rows = [
        ("F3 to the first frame", "first_frame_ms"),
        ("F3 to every row on screen", "rows_shown_ms"),
        ("longest loop gap while opening", "open_longest_gap_ms"),
        ("key while scrolling, median", "scroll_key_median_ms"),
        ("key while scrolling, worst", "scroll_key_worst_ms"),
        ("sort/filter key, median", "sort_filter_key_median_ms"),
        ("sort/filter key, worst", "sort_filter_key_worst_ms"),
        ("find keystroke, median", "find_key_median_ms"),
        ("find keystroke, worst", "find_key_worst_ms"),
        ("another process's run shown after", "pickup_after_record_ms"),
        ("longest loop gap meanwhile", "pickup_longest_gap_ms"),
        ("floor: longest gap of the idle app", "idle_longest_gap_ms"),
    ]
    for label, key in rows:
        print(
            f"  {label:<36} {large[key]:8.0f} ms   baseline {base[key]:8.0f} ms   "
            f"ratio {large[key] / base[key] if base[key] else float('nan'):5.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
