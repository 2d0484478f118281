"""Verification overhead benchmark: what the verifier costs on top of the work it cannot avoid.

Every floor here is honest: the agents run in ANOTHER process (the reference fleet, started
once, with its per-client rate limit raised so hundreds of runs a minute are never throttled),
so neither side shares a GIL or an event loop with the server; both sides talk to them over the
same loopback, and the plain-HTTP floor uses an httpx client with the verifier's own settings
(timeouts, no redirects, connection limits). Each pair is measured alternately in one go, so
both sides see the same machine load, and medians are compared.

1. in-process, `steady` and `sdk-built`: a full `run_interview` (discovery, key and proposal
   fetches, ten asks, the probes, evaluation) versus the very same HTTP requests (taken from
   that run's exchanges) sent one after another with plain httpx and nothing verified.
   Target <= 1.5. A ratio below 1 is possible and is explained, not claimed: the verifier sends
   each round of calls concurrently, the floor one after another, and the verifier's plain-HTTP
   client (explorer.net.plain) costs less CPU per request than httpx's.
2. whole process: `interview-explorer verify URL --json --no-history --allow-jku` of `steady`
   versus `python -c "import httpx"`. Target <= 1.5. Printed too, without a target: the same
   against importing httpx without its command-line client (rich, click), since `import httpx`
   alone pays for them wherever they are installed. (A plain-HTTP run of the explorer imports
   no httpx at all: explorer.net.plain speaks h11 directly.)
3. `huge` (5,000 skills, 2.9 MB signed card), against the floor of strictly parsing every body
   received and JCS-canonicalizing the card and each answer once (the CPU work no verifier can
   skip), in the same process:
   - evaluation: `evaluate` over the recorded exchanges / the CPU floor. Target <= 2.0.
     `evaluate` pauses Python's cyclic garbage collector (explorer.core.nogc); the floor is
     printed both as a plain script runs it and with the collector paused the same way, and
     the ratio against each is printed.
   - whole run: `run_interview` / (the same requests sent with plain httpx one after another
     + the CPU floor).
4. peak RSS of `verify --json --no-history` on `huge` / on `steady` (each child's own VmHWM).
   Target <= 2.5.
5. report size: bytes of `verify --json` output / bytes of the response bodies received, for
   `huge`. Target <= 1.5.

    python bench/verify_overhead.py [--runs 7] [--json] [--quick]

A script, not a test: it prints medians and ratios and exits 0 either way (1 only when the
agents cannot be started or verified). Child processes run with bytecode caching on (as after
`pip install`), whatever the parent's setting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from explorer.core import nogc  # noqa: E402
from explorer.core.canonical import canonicalize  # noqa: E402
from explorer.core.evaluate import evaluate  # noqa: E402
from explorer.core.run import REDACTED, Exchange, Run  # noqa: E402
from explorer.core.strict_json import StrictJsonError  # noqa: E402
from explorer.core.strict_json import parse as strict_parse  # noqa: E402
from explorer.interview.options import Options  # noqa: E402
from explorer.interview.procedure import run_interview  # noqa: E402
from explorer.net.http import MAX_CONNECTIONS, MAX_IDLE  # noqa: E402

TARGET_IN_PROCESS = 1.5
TARGET_PROCESS = 1.5
TARGET_HUGE = 2.0
TARGET_RSS = 2.5
TARGET_REPORT = 1.5
AGENTS = ("steady", "sdk-built", "huge")
TIMEOUT = 10.0

Request = tuple[str, str, dict[str, str], bytes | None]


# --- the agents, in their own process ---------------------------------------------------------------


AGENTS_CHILD = """
import sys
from explorer.demo.fleet import Fleet
from explorer.demo.ratelimit import RateLimit
# The agents' per-client rate limit is raised: the benchmark asks hundreds of times a minute.
fleet = Fleet(sys.argv[1:], rate_limit=RateLimit(calls=1_000_000, per_seconds=60.0)).start()
if not fleet.wait_ready(180):
    sys.exit("the agents did not become ready")
for agent in fleet.agents.values():
    print(agent.name + "\\t" + agent.base_url, flush=True)
sys.stdin.read()  # serve until the benchmark closes our stdin
fleet.stop()
"""

# Runs `interview-explorer` and reports its peak resident set (VmHWM, the high-water mark of the
# process's own address space: unlike ru_maxrss it does not count the parent's pages that a
# freshly forked child shares before it execs).
RSS_CHILD = """
import atexit, runpy, sys
def _peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                sys.stderr.write("VmHWM " + line.split()[1] + "\\n")
atexit.register(_peak)
sys.argv = ["interview-explorer", *sys.argv[1:]]
runpy.run_module("explorer", run_name="__main__", alter_sys=True)
"""


class Agents:
    """The reference agents served by a fleet in a child process; base URLs by name."""

    def __init__(self, names: Sequence[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", AGENTS_CHILD, *names],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.base: dict[str, str] = {}
        assert self.proc.stdout is not None
        for _ in names:
            line = self.proc.stdout.readline()
            if not line:
                break
            name, base = line.rstrip("\n").split("\t")
            self.base[name] = base

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --- the sides being compared ---------------------------------------------------------------------


def _plain_requests(exchanges: Sequence[Exchange]) -> list[Request]:
    out = []
    for ex in exchanges:
        if ex.method == "FILE":
            continue
        headers = {k: v for k, v in ex.request_headers if v != REDACTED}
        out.append((ex.method, ex.url, headers, ex.request_body))
    return out


def _plain_client() -> Any:
    """A client with the verifier's own settings (explorer.net.http.Fetcher), synchronous."""
    import httpx

    return httpx.Client(
        timeout=httpx.Timeout(TIMEOUT, connect=TIMEOUT, read=TIMEOUT, write=TIMEOUT, pool=TIMEOUT),
        follow_redirects=False,
        limits=httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_IDLE),
        verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT),
    )


def _plain(requests: list[Request]) -> tuple[float, list[bytes]]:
    """The requests one after another; the client is made before the clock starts."""
    with _plain_client() as client:
        t0 = time.perf_counter()
        bodies = [client.request(m, u, headers=h, content=b).read() for m, u, h, b in requests]
        return time.perf_counter() - t0, bodies


def _wire(requests: list[Request]) -> float:
    """The same requests in rounds like the verifier's (the card; then eight at once; then the
    rest at once) through the explorer's plain-HTTP client, with nothing parsed, checked or
    recorded: the transport floor, what the verifier's own client cannot go below."""
    from explorer.net.plain import Answer, PlainPool, plain_target

    async def send(
        pool: PlainPool, method: str, url: str, headers: dict[str, str], body: bytes | None
    ) -> None:
        target = plain_target(url)
        assert target is not None, url
        async with asyncio.timeout(TIMEOUT):
            await pool.send(method, target, headers, body, Answer(), max_bytes=8 * 1024 * 1024)

    async def rounds() -> None:
        pool = PlainPool()
        try:
            await send(pool, *requests[0])  # the card, then two rounds as recorded (first asks, key
            await asyncio.gather(*(send(pool, *r) for r in requests[1:9]))  # set, proposals) ...
            await asyncio.gather(*(send(pool, *r) for r in requests[9:]))  # ... second asks, probes
        finally:
            await pool.aclose()

    t0 = time.perf_counter()
    asyncio.run(rounds())
    return time.perf_counter() - t0


def _verified(url: str, options: Options) -> tuple[float, Run]:
    t0 = time.perf_counter()
    run = asyncio.run(run_interview(url, options))
    return time.perf_counter() - t0, run


def _cpu_floor(exchanges: Sequence[Exchange]) -> float:
    """Strictly parse every body received; JCS the card and each answer (result) once."""
    t0 = time.perf_counter()
    for ex in exchanges:
        if not ex.response_body:
            continue
        try:
            doc = strict_parse(ex.response_body)
        except StrictJsonError:
            continue
        if ex.purpose == "card":
            canonicalize(doc)
        elif ex.purpose.startswith(("ask:", "probe:")) and isinstance(doc, dict):
            canonicalize(doc.get("result", doc.get("error")))
    return time.perf_counter() - t0


def _evaluation(run: Run) -> float:
    t0 = time.perf_counter()
    evaluate(
        list(run.exchanges),
        run.keys,
        target="bench",
        ran_by={"name": "bench", "role": "self"},
        started_at="",
        finished_at="",
    )
    return time.perf_counter() - t0


def _process(argv: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one child run."""
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def _peak_and_size(args: list[str], env: dict[str, str]) -> tuple[int, int]:
    """Peak RSS (KiB) and stdout bytes of `interview-explorer ARGS`."""
    proc = subprocess.run(
        [sys.executable, "-c", RSS_CHILD, *args], cwd=REPO, env=env, capture_output=True, check=False
    )
    peaks = [
        int(line.split()[1])
        for line in proc.stderr.decode(errors="replace").splitlines()
        if line.startswith("VmHWM ")
    ]
    return (peaks[-1] if peaks else 0), len(proc.stdout)


def _alternate(runs: int, *sides: Callable[[], float]) -> list[list[float]]:
    timings: list[list[float]] = [[] for _ in sides]
    for _ in range(runs):
        for index, side in enumerate(sides):
            timings[index].append(side())
    return timings


def _pair(label: str, mine: list[float], floor: list[float], target: float | None) -> dict[str, Any]:
    a, b = statistics.median(mine), statistics.median(floor)
    return {"label": label, "median_s": a, "floor_median_s": b, "ratio": a / b, "target": target}


# --- the benchmark --------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per side (median taken)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--quick", action="store_true", help="one run per side (to keep the script working)")
    args = parser.parse_args()
    runs = 1 if args.quick else max(1, args.runs)

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as home:
        env.update(INTERVIEW_EXPLORER_HOME=home, NO_COLOR="1")
        agents = Agents(AGENTS, env)
        try:
            figures = _measure(agents, env, runs)
        finally:
            agents.stop()
    if figures is None:
        return 1
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print(figures, runs)
    return 0


def _measure(agents: Agents, env: dict[str, str], runs: int) -> dict[str, Any] | None:
    options = Options(allow_jku=True, timeout=TIMEOUT, runner="bench")
    figures: dict[str, Any] = {"runs": runs, "pairs": []}
    recorded: dict[str, Run] = {}
    for name in AGENTS:
        if name not in agents.base:
            print(f"the {name} agent did not start", file=sys.stderr)
            return None
        _, run = _verified(agents.base[name], options)  # warm-up, and the requests to replay
        if run.report["verdict"] != "conformant":
            print(f"the {name} agent was not verified conformant: {run.report['verdict']}", file=sys.stderr)
            return None
        recorded[name] = run
    pairs = figures["pairs"]

    for name in ("steady", "sdk-built"):
        url, requests = agents.base[name], _plain_requests(recorded[name].exchanges)
        _plain(requests)
        mine, floor, wire = _alternate(
            runs,
            lambda u=url: _verified(u, options)[0],
            lambda r=requests: _plain(r)[0],
            lambda r=requests: _wire(r),
        )
        pairs.append(
            _pair(
                f"{name}: run_interview / {len(requests)} sequential plain httpx requests",
                mine,
                floor,
                TARGET_IN_PROCESS,
            )
        )
        pairs.append(
            _pair(
                f"{name}: run_interview / the same requests in the same rounds through the "
                "explorer's own client, nothing verified (the transport floor)",
                mine,
                wire,
                None,
            )
        )

    verify = [sys.executable, "-m", "explorer", "verify", "--json", "--no-history", "--allow-jku"]
    steady_argv, huge_argv = verify + [agents.base["steady"]], verify + [agents.base["huge"]]
    httpx_argv = [sys.executable, "-c", "import httpx"]
    # httpx's __init__ also imports its own command-line client (rich, click, pygments) when they
    # are installed, as in this environment. The stricter floor imports httpx as a library only.
    lean_argv = [sys.executable, "-c", "import sys; sys.modules['httpx._main'] = None; import httpx"]
    for argv in (steady_argv, httpx_argv, lean_argv, huge_argv):
        _process(argv, env)  # warm-up (bytecode caches)
    whole, bare, lean = _alternate(
        runs,
        lambda: _process(steady_argv, env),
        lambda: _process(httpx_argv, env),
        lambda: _process(lean_argv, env),
    )
    pairs.append(
        _pair("steady: verify --json --no-history / python -c 'import httpx'", whole, bare, TARGET_PROCESS)
    )
    pairs.append(
        _pair(
            "steady: verify --json --no-history / import httpx without its CLI (httpx as a library)",
            whole,
            lean,
            None,
        )
    )

    huge = recorded["huge"]
    received = sum(len(ex.response_body or b"") for ex in huge.exchanges)
    evaluation, floor_cpu = _alternate(runs, lambda: _evaluation(huge), lambda: _cpu_floor(huge.exchanges))
    with nogc.paused():
        floor_paused = [_cpu_floor(huge.exchanges) for _ in range(runs)]
    pairs.append(
        _pair(
            "huge: evaluate / CPU floor (strict parse of every body + JCS of card and answers)",
            evaluation,
            floor_cpu,
            TARGET_HUGE,
        )
    )
    pairs.append(
        _pair(
            "huge: evaluate / the same CPU floor with the cyclic GC paused as evaluate pauses it",
            evaluation,
            floor_paused,
            TARGET_HUGE,
        )
    )
    requests = _plain_requests(huge.exchanges)
    url = agents.base["huge"]
    run_huge, floor_huge = _alternate(
        runs, lambda: _verified(url, options)[0], lambda: _plain(requests)[0] + _cpu_floor(huge.exchanges)
    )
    pairs.append(
        _pair("huge: run_interview / (sequential plain httpx + CPU floor)", run_huge, floor_huge, None)
    )
    pairs.append(_pair("huge: run_interview / CPU floor alone", run_huge, floor_cpu, None))

    rss_steady, rss_huge, report_bytes = [], [], []
    for _ in range(max(3, runs // 2)):
        rss_steady.append(_peak_and_size(steady_argv[3:], env)[0])
        rss, size = _peak_and_size(huge_argv[3:], env)
        rss_huge.append(rss)
        report_bytes.append(size)
    figures["rss"] = {
        "huge_kib": statistics.median(rss_huge),
        "steady_kib": statistics.median(rss_steady),
        "ratio": statistics.median(rss_huge) / statistics.median(rss_steady),
        "target": TARGET_RSS,
    }
    figures["report"] = {
        "report_bytes": statistics.median(report_bytes),
        "received_bytes": received,
        "ratio": statistics.median(report_bytes) / received,
        "target": TARGET_REPORT,
    }
    return figures


def _verdict(ratio: float, target: float | None) -> str:
    if target is None:
        return "(no target)"
    return f"(target <= {target}) " + ("ok" if ratio <= target else "MISSED")


def _print(figures: dict[str, Any], runs: int) -> None:
    print(f"{runs} run(s) per side; agents served by a reference fleet in another process")
    for pair in figures["pairs"]:
        print(
            f"{pair['label']}: {pair['median_s'] * 1000:.1f} ms vs {pair['floor_median_s'] * 1000:.1f} ms, "
            f"ratio {pair['ratio']:.2f} {_verdict(pair['ratio'], pair['target'])}"
        )
        if pair["ratio"] < 1 and "run_interview" in pair["label"]:
            print(
                "  below 1: the verifier sends each round of calls (and the key, proposal and card "
                "fetches) concurrently, the floor sends the same requests one after another; and its "
                "plain-HTTP client (h11 on asyncio streams) spends less CPU per request than httpx's, "
                "which the floor uses. The verification itself is not free: it overlaps with waiting "
                "for the agent"
            )
    rss, report = figures["rss"], figures["report"]
    print(
        f"peak RSS, verify --json --no-history: huge {rss['huge_kib'] / 1024:.1f} MiB vs steady "
        f"{rss['steady_kib'] / 1024:.1f} MiB, ratio {rss['ratio']:.2f} "
        f"{_verdict(rss['ratio'], rss['target'])}"
    )
    print(
        f"report size, huge: {report['report_bytes'] / 1e6:.2f} MB printed for "
        f"{report['received_bytes'] / 1e6:.2f} MB of response bodies received, ratio {report['ratio']:.2f} "
        f"{_verdict(report['ratio'], report['target'])}"
    )


if __name__ == "__main__":
    sys.exit(main())
