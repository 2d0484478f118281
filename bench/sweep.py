"""Sweep benchmark: many agents in one `verify` process, against plain httpx, and its memory.

A seeded crowd (`demo --serve --crowd N --crowd-only`) runs in its own process; every figure
below talks to it over real loopback sockets. Two ratios, medians of runs taken alternately in
one go (so both sides see the same machine load):

1. throughput: `interview-explorer verify --from LIST --jobs 8` over the first `--agents` crowd
   members (default 200), recording to a fresh history, versus the same requests (card,
   committed proposals, the five questions twice, the three probes) sent by plain httpx with the
   same concurrency (8 agents at once), the same client settings (a client per agent, as the
   verifier has a pool per interview; a TLS context made once, as the verifier's is, since
   loading the CA bundle for each client would be the floor's cost alone) and no verification,
   in a process of its own (`python bench/sweep.py --baseline LIST`), so both sides pay for
   starting an interpreter. Target >= 0.5 (moonshot 0.8).
   Printed beside it, without a target: the same requests sent by the explorer's own plain-HTTP
   client (`explorer.net.plain`, h11 on asyncio streams) with nothing parsed, verified or
   recorded, the transport floor. A ratio above 1 against httpx is explained in the output:
   httpx's async client spends more CPU per request than the explorer's client does.
2. memory: peak RSS of the `verify --from` process over 1,000 agents / over 100 agents
   (`--big`/`--small`), both with NDJSON to a pipe that is drained and a history; reports are
   streamed, not held. Target <= 1.3.

    python bench/sweep.py [--runs 3] [--agents 200] [--big 1000] [--small 100] [--seed 7] [--json]

A script, not a test: it prints the medians and the ratios and exits 0 when both targets are
met, 1 otherwise.
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

TARGET_THROUGHPUT = 0.5
TARGET_RSS = 1.3
JOBS = 8


# --- the baseline: the same requests with plain httpx, no verification ---------------------------


async def _baseline_agent(client: Any, card_url: str) -> int:
    """Card, proposals, five questions twice and three probes for one agent; requests sent."""
    from explorer.core.card import INTERVIEW_URI

    sent = 1
    try:
        card = await client.get(card_url)
    except Exception:  # noqa: BLE001 - an unreachable agent costs one refused connect, as for verify
        return sent
    body = card.content
    try:
        doc = json.loads(body)
    except ValueError:
        return sent
    urls = [
        p.get("url")
        for ext in _extensions(doc)
        for e in [ext.get("params") or {}]
        for p in (e.get("proposals") or [])
        if isinstance(p, dict)
    ]
    proposals = [u for u in urls if isinstance(u, str)]
    await asyncio.gather(*(client.get(u) for u in proposals))
    sent += len(proposals)
    if INTERVIEW_URI.encode() not in body:
        return sent
    rpc = _jsonrpc_url(doc, card_url)
    headers = {"A2A-Extensions": INTERVIEW_URI, "X-A2A-Extensions": INTERVIEW_URI}
    questions = ("identity", "capabilities", "usage", "terms", "refusals")

    def call(i: int, method: str, params: dict[str, Any], activated: bool = True) -> Any:
        payload = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
        return client.post(rpc, json=payload, headers=headers if activated else {})

    await asyncio.gather(*(call(i, f"interview/{q}", {}) for i, q in enumerate(questions)))
    await asyncio.gather(
        *(call(10 + i, f"interview/{q}", {}) for i, q in enumerate(questions)),
        call(20, "interview/undefined", {}),
        call(21, "interview/usage", {"skill": "no-such-skill"}),
        call(22, "interview/identity", {}, activated=False),
    )
    return sent + 13


def _extensions(doc: Any) -> list[dict[str, Any]]:
    caps = doc.get("capabilities") if isinstance(doc, dict) else None
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    return [e for e in exts or [] if isinstance(e, dict)]


def _jsonrpc_url(doc: dict[str, Any], card_url: str) -> str:
    from urllib.parse import urljoin

    for iface in doc.get("supportedInterfaces") or []:
        if isinstance(iface, dict) and iface.get("protocolBinding") == "JSONRPC":
            return urljoin(card_url, str(iface.get("url")))
    return urljoin(card_url, str(doc.get("url") or "/a2a/jsonrpc"))


class _Reply:
    def __init__(self, content: bytes) -> None:
        self.content = content


class _PlainClient:
    """The explorer's plain-HTTP client with the calls `_baseline_agent` makes, nothing else:
    no recording, no redirects, no caps beyond the verifier's 8 MiB."""

    def __init__(self, timeout: float) -> None:
        from explorer.net.http import MAX_CONNECTIONS, MAX_IDLE
        from explorer.net.plain import PlainPool

        self.pool = PlainPool(max_connections=MAX_CONNECTIONS, max_idle=MAX_IDLE)
        self.timeout = timeout

    async def __aenter__(self) -> _PlainClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.pool.aclose()

    async def _send(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> _Reply:
        from explorer.net.plain import Answer, plain_target

        target = plain_target(url)
        if target is None:
            raise ValueError(f"not a plain URL: {url}")
        answer = Answer()
        async with asyncio.timeout(self.timeout):
            await self.pool.send(method, target, headers, body, answer, max_bytes=8 * 1024 * 1024)
        return _Reply(bytes(answer.body))

    async def get(self, url: str) -> _Reply:
        return await self._send("GET", url, None, {"Accept": "application/json"})

    async def post(self, url: str, *, json: Any, headers: dict[str, str]) -> _Reply:  # noqa: A002 - httpx's name
        body = _dumps(json).encode()
        return await self._send("POST", url, body, {"Content-Type": "application/json", **headers})


_dumps = json.dumps  # `post` takes httpx's keyword `json`, which hides the module there


async def _baseline(urls: list[str], client_kind: str = "httpx", timeout: float = 10.0) -> int:
    import ssl

    import httpx

    queue = iter(urls)
    total = 0
    no_ca = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # as the verifier's plain client: made once

    def client() -> Any:
        """A client per agent, as the verifier has a pool per interview."""
        if client_kind == "plain":
            return _PlainClient(timeout)
        from explorer.net.http import MAX_CONNECTIONS, MAX_IDLE

        limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_IDLE)
        return httpx.AsyncClient(
            timeout=httpx.Timeout(timeout), limits=limits, follow_redirects=False, verify=no_ca
        )

    async def worker() -> None:
        nonlocal total
        for url in queue:
            async with client() as each:
                total += await _baseline_agent(each, url)

    await asyncio.gather(*(worker() for _ in range(JOBS)))
    return total


# --- measuring -----------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one child process, stdout drained to nowhere."""
    began = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - began, int(usage.ru_maxrss)


def _verify(list_file: Path, home: Path) -> list[str]:
    exe = [sys.executable, "-m", "explorer"]
    return [*exe, "verify", "--from", str(list_file), "--jobs", str(JOBS), "--json", "--home", str(home)]


def _start_crowd(n: int, seed: int) -> tuple[subprocess.Popen[str], list[tuple[str, str, str]]]:
    argv = [
        sys.executable,
        "-m",
        "explorer",
        "demo",
        "--serve",
        "--crowd",
        str(n),
        "--seed",
        str(seed),
        "--crowd-only",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_env())
    assert proc.stdout is not None
    members = []
    for _ in range(n):
        name, url, verdict = proc.stdout.readline().rstrip("\n").split("\t")
        members.append((name, url, verdict))
    return proc, members


def measure(*, runs: int, agents: int, big: int, small: int, seed: int) -> dict[str, Any]:
    crowd, members = _start_crowd(max(agents, big, small), seed)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
            root = Path(tmp)
            lists = {}
            for label, size in (("throughput", agents), ("big", big), ("small", small)):
                lists[label] = root / f"{label}.txt"
                lists[label].write_text("\n".join(url for _, url, _ in members[:size]) + "\n")
            verify_s: list[float] = []
            plain_s: list[float] = []
            wire_s: list[float] = []
            baseline = [sys.executable, __file__, "--baseline", str(lists["throughput"])]
            for i in range(runs):
                plain_s.append(_timed(baseline)[0])
                wire_s.append(_timed([*baseline, "--client", "plain"])[0])
                verify_s.append(_timed(_verify(lists["throughput"], root / f"home-t{i}"))[0])
            rss_big: list[int] = []
            rss_small: list[int] = []
            for i in range(max(1, runs // 2)):
                rss_small.append(_timed(_verify(lists["small"], root / f"home-s{i}"))[1])
                rss_big.append(_timed(_verify(lists["big"], root / f"home-b{i}"))[1])
    finally:
        crowd.terminate()
        crowd.wait(timeout=30)
    verify_med, plain_med = statistics.median(verify_s), statistics.median(plain_s)
    wire_med = statistics.median(wire_s)
    throughput = (agents / verify_med) / (agents / plain_med)
    rss = statistics.median(rss_big) / statistics.median(rss_small)
    return {
        "runs": runs,
        "agents": agents,
        "jobs": JOBS,
        "verify_s": round(verify_med, 3),
        "plain_httpx_s": round(plain_med, 3),
        "verify_agents_per_s": round(agents / verify_med, 1),
        "plain_agents_per_s": round(agents / plain_med, 1),
        "throughput_ratio": round(throughput, 3),
        "transport_floor_s": round(wire_med, 3),
        "transport_agents_per_s": round(agents / wire_med, 1),
        "transport_ratio": round(wire_med / verify_med, 3),
        "throughput_target": TARGET_THROUGHPUT,
        "big": big,
        "small": small,
        "rss_big_mib": round(statistics.median(rss_big) / 1024, 1),
        "rss_small_mib": round(statistics.median(rss_small) / 1024, 1),
        "rss_ratio": round(rss, 3),
        "rss_target": TARGET_RSS,
        "ok": throughput >= TARGET_THROUGHPUT and rss <= TARGET_RSS,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--big", type=int, default=1000)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--baseline", metavar="LIST", help=argparse.SUPPRESS)
    parser.add_argument("--client", choices=("httpx", "plain"), default="httpx", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.baseline:
        urls = [line for line in Path(args.baseline).read_text().splitlines() if line]
        asyncio.run(_baseline(urls, args.client))
        return 0
    figures = measure(runs=args.runs, agents=args.agents, big=args.big, small=args.small, seed=args.seed)
    if args.json:
        print(json.dumps(figures))
    else:
        f = figures
        print(
            f"throughput over {args.agents} crowd agents, --jobs {JOBS} (median of {args.runs}):\n"
            f"  verify --from (recording)  {f['verify_s']:.2f} s  {f['verify_agents_per_s']}/s\n"
            f"  plain httpx, same requests {f['plain_httpx_s']:.2f} s  {f['plain_agents_per_s']}/s\n"
            f"  ratio {figures['throughput_ratio']:.2f} (target >= {TARGET_THROUGHPUT}, moonshot 0.8)\n"
            + (
                "  above 1: httpx's async client spends more CPU per request than the explorer's own\n"
                "  plain-HTTP client (h11 on asyncio streams); the transport floor below compares like\n"
                "  with like\n"
                if figures["throughput_ratio"] > 1
                else ""
            )
            + f"  transport floor: the explorer's client, same requests, nothing verified or recorded "
            f"{f['transport_floor_s']:.2f} s  {f['transport_agents_per_s']}/s; verify at "
            f"{f['transport_ratio']:.2f} of its speed (no target)\n"
            f"peak RSS: {args.big} agents {figures['rss_big_mib']} MiB / {args.small} agents "
            f"{figures['rss_small_mib']} MiB = {figures['rss_ratio']:.2f} (target <= {TARGET_RSS})"
        )
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
