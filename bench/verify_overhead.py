"""Verification overhead benchmark: what the verifier costs on top of the HTTP it has to do.

Two ratios, each of medians over several runs taken alternately in one go (so both sides see
the same machine load), against the `steady` reference agent on loopback:

1. in-process: a full `run_interview` (discovery, key and proposal fetches, ten asks, three
   probes, evaluation) versus the very same HTTP requests (taken from that run's exchanges)
   issued one after another with a plain `httpx.Client` and no verification. Target <= 1.2.
2. whole process: `interview-explorer verify URL --json --no-history --allow-jku` versus
   `python -c "import httpx"`. Target <= 2.5.

    python bench/verify_overhead.py [--runs 9] [--json]

A script, not a test: it prints the medians and the ratios and exits 0 either way. Child
processes run with bytecode caching on (as after `pip install`), whatever the parent's setting.
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

from explorer.core.run import REDACTED, Exchange  # noqa: E402
from explorer.demo.fleet import Fleet  # noqa: E402
from explorer.procedure import Options, run_interview  # noqa: E402

TARGET_IN_PROCESS = 1.2
TARGET_PROCESS = 2.5


def _plain_requests(exchanges: tuple[Exchange, ...]) -> list[tuple[str, str, dict[str, str], bytes | None]]:
    out = []
    for ex in exchanges:
        if ex.method == "FILE":
            continue
        headers = {k: v for k, v in ex.request_headers if v != REDACTED}
        out.append((ex.method, ex.url, headers, ex.request_body))
    return out


def _plain(requests: list[tuple[str, str, dict[str, str], bytes | None]]) -> float:
    """The requests one after another; the client is made before the clock starts, so the
    baseline does not pay for loading a CA bundle (the strictest comparison for the verifier)."""
    import httpx

    with httpx.Client(timeout=10.0) as client:
        t0 = time.perf_counter()
        for method, url, headers, body in requests:
            client.request(method, url, headers=headers, content=body).read()
        return time.perf_counter() - t0


def _verified(url: str, options: Options) -> tuple[float, Any]:
    t0 = time.perf_counter()
    run = asyncio.run(run_interview(url, options))
    return time.perf_counter() - t0, run


def _process(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs per side (median taken)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    with Fleet(names=["steady"]) as fleet, tempfile.TemporaryDirectory() as home:
        url = fleet.agents["steady"].base_url
        options = Options(allow_jku=True, timeout=10.0, runner="bench")
        _, run = _verified(url, options)  # warm-up, and the requests to replay
        if run.report["verdict"] != "conformant":
            print(f"the steady agent was not verified conformant: {run.report['verdict']}", file=sys.stderr)
            return 1
        requests = _plain_requests(run.exchanges)
        _plain(requests)
        verified, plain = [], []
        for _ in range(args.runs):
            verified.append(_verified(url, options)[0])
            plain.append(_plain(requests))

        # Measured as installed: bytecode cached (pip leaves .pyc files), so the warm-up run below
        # may write them even where PYTHONDONTWRITEBYTECODE is set for development.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(INTERVIEW_EXPLORER_HOME=home, NO_COLOR="1")
        verify_argv = [
            sys.executable,
            "-m",
            "explorer",
            "verify",
            url,
            "--json",
            "--no-history",
            "--allow-jku",
        ]
        httpx_argv = [sys.executable, "-c", "import httpx"]
        _process(verify_argv, env)
        _process(httpx_argv, env)
        whole, baseline = [], []
        for _ in range(args.runs):
            whole.append(_process(verify_argv, env))
            baseline.append(_process(httpx_argv, env))

    figures = {
        "requests_per_interview": len(requests),
        "in_process": {
            "verify_median_s": statistics.median(verified),
            "plain_httpx_median_s": statistics.median(plain),
            "ratio": statistics.median(verified) / statistics.median(plain),
            "target": TARGET_IN_PROCESS,
        },
        "whole_process": {
            "verify_median_s": statistics.median(whole),
            "import_httpx_median_s": statistics.median(baseline),
            "ratio": statistics.median(whole) / statistics.median(baseline),
            "target": TARGET_PROCESS,
        },
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    ip, wp = figures["in_process"], figures["whole_process"]
    print(f"{len(requests)} HTTP requests per interview, {args.runs} runs per side")
    print(
        f"in-process: run_interview median {_ms(ip['verify_median_s'])} vs plain sequential httpx "
        f"{_ms(ip['plain_httpx_median_s'])}: ratio {ip['ratio']:.2f} (target <= {TARGET_IN_PROCESS}) "
        + ("ok" if ip["ratio"] <= TARGET_IN_PROCESS else "MISSED")
    )
    print(
        f"whole process: verify --json median {_ms(wp['verify_median_s'])} vs python -c 'import httpx' "
        f"{_ms(wp['import_httpx_median_s'])}: ratio {wp['ratio']:.2f} (target <= {TARGET_PROCESS}) "
        + ("ok" if wp["ratio"] <= TARGET_PROCESS else "MISSED")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
