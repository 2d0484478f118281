"""Benchmark: a large signed transcript is read and digested in time linear in its bytes.

    .venv/bin/python bench/transcript_digest.py [--elements 30000000] [--json]

Interviews the steady reference agent once (on 127.0.0.1), adds an array of ELEMENTS small
integers to its report (the default makes a transcript of about 60 MB), signs the run with a
fresh runner key and writes its JSON transcript. Then, in this process, it times:

- the floor: `json.loads` of the file's bytes plus their SHA-256 (Python's own C code, nothing
  checked);
- `read`: `explorer.core.transcript.read_transcript` (the strict parser: duplicate keys, depth
  and size caps, every member typed);
- `digest`: `explorer.core.intoto.transcript_sha256`, the RFC 8785 digest a signature covers;

and, in a child process, the whole `verify --offline FILE --trust-runner KEY --json` a user runs
(CPU time of the child). Each is printed in seconds and as a ratio to the floor. Before this
benchmark existed the digest alone took 229 s of CPU for 60 MB (one Python call per element).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from explorer.core.intoto import transcript_sha256  # noqa: E402
from explorer.core.transcript import read_transcript  # noqa: E402


def signed_transcript(elements: int, folder: Path) -> tuple[Path, Path]:
    """A real signed run of the steady agent, its report padded with `elements` integers: the
    transcript file and the runner's public key set."""
    from dataclasses import replace

    from explorer.demo.fleet import Fleet
    from explorer.evidence.runner_keys import generate
    from explorer.evidence.signing import sign_run
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync

    with Fleet(["steady"]) as fleet:
        fleet.wait_ready(timeout=60)
        agent = fleet.agents["steady"]
        options = Options(keys=(agent.jwks,), runner="bench", role="independent")
        run = run_interview_sync(agent.base_url, options)
    run = replace(run, report={**run.report, "padding": [7] * elements})
    key_path = folder / "runner.pem"
    key = generate(key_path)
    signed = sign_run(run, key)
    transcript = folder / "large.json"
    transcript.write_text(json.dumps(signed.to_transcript(), separators=(",", ":")), encoding="utf-8")
    trust = folder / "runner.jwks"
    trust.write_text(json.dumps(key.jwks()), encoding="utf-8")
    return transcript, trust


def _cpu(action: Any) -> tuple[float, Any]:
    start = time.process_time()
    result = action()
    return time.process_time() - start, result


def measure(elements: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="transcript-bench-") as tmp:
        path, trust = signed_transcript(elements, Path(tmp))
        raw = path.read_bytes()
        floor, _ = _cpu(lambda: (json.loads(raw), hashlib.sha256(raw).hexdigest()))
        read, transcript = _cpu(lambda: read_transcript(raw))
        digest, _ = _cpu(lambda: transcript_sha256(transcript.data))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "explorer",
                "verify",
                "--offline",
                str(path),
                "--trust-runner",
                str(trust),
                "--json",
                "--home",
                str(Path(tmp) / "home"),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1, 5):
            raise SystemExit(f"verify --offline failed ({done.returncode}): {done.stderr[-2000:]}")
        report = json.loads(done.stdout)
        whole = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return {
            "elements": elements,
            "megabytes": round(len(raw) / 1e6, 1),
            "floor_s": round(floor, 3),
            "read_s": round(read, 3),
            "digest_s": round(digest, 3),
            "verify_offline_cpu_s": round(whole, 3),
            "verify_offline_wall_s": round(wall, 3),
            "read_ratio": round(read / floor, 2),
            "digest_ratio": round(digest / floor, 2),
            "verify_offline_ratio": round(whole / floor, 2),
            "standing": report.get("standing"),
            "attestation": (report.get("run_attestation") or {}).get("status"),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=30_000_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.elements)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"a signed transcript of {figures['megabytes']} MB ({figures['elements']:,} array elements)")
    print(f"  floor (json.loads + sha256)  {figures['floor_s']:8.2f} s CPU")
    for label, key in (("read (strict, typed)", "read"), ("digest (RFC 8785)", "digest")):
        print(f"  {label:<28} {figures[key + '_s']:8.2f} s CPU  ({figures[key + '_ratio']}x the floor)")
    print(
        f"  verify --offline, whole      {figures['verify_offline_cpu_s']:8.2f} s CPU  "
        f"({figures['verify_offline_ratio']}x the floor; {figures['verify_offline_wall_s']:.2f} s wall)"
        f"  -> {figures['attestation']}, {figures['standing']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
