"""`interview-explorer demo --serve` as a script uses it, and the fleet's start-up and shutdown.

The command runs in a subprocess: it prints one `name<TAB>card URL<TAB>verdict` line per agent,
serves until SIGTERM or SIGINT, exits 0 and leaves every port free, and never imports textual.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from explorer.demo.fleet import Fleet, FleetError
from explorer.demo.variants import VARIANTS
from tests.support.demo_serve import demo_serve
from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # demo --serve in a subprocess


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_one_line_per_agent_and_stops_cleanly(sig: int) -> None:
    names = ["steady", "legacy", "silent"] + (["sdk-built"] if sig == signal.SIGTERM else [])
    with demo_serve("--only", *names, python_flags=["-X", "importtime"]) as served:
        rows = list(served.agents.values())
        assert [r.name for r in rows] == names
        assert [r.verdict for r in rows] == [VARIANTS[n].expected_verdict for n in names]
        assert all(r.env == {} for r in rows)
        ports = []
        for row in rows:
            parts = urlsplit(row.card_url)
            assert parts.hostname == "127.0.0.1" and parts.path == "/.well-known/agent-card.json"
            assert httpx.get(row.card_url, timeout=10).status_code == 200
            ports.append(parts.port)
        code, err = served.stop(sig)
    assert code == 0, err[-2000:]
    assert "Traceback" not in err
    imported = [line.split("|")[-1].strip() for line in err.splitlines() if line.startswith("import time:")]
    assert not [m for m in imported if m.split(".")[0] in ("textual", "rich")]
    assert all(_port_is_free(port) for port in ports)


def test_serve_with_a_fixed_port_takes_consecutive_ports() -> None:
    base = _free_pair()
    with demo_serve("--only", "steady", "unsigned", "--port", str(base)) as served:
        assert [urlsplit(r.card_url).port for r in served.agents.values()] == [base, base + 1]
        code, err = served.stop()
    assert code == 0, err
    assert _port_is_free(base) and _port_is_free(base + 1)


def _free_pair() -> int:
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 65000 and _port_is_free(port) and _port_is_free(port + 1):
            return port
    pytest.skip("no two consecutive free ports found")


def test_unknown_agent_name_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "demo", "--serve", "--only", "no-such-agent"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "unknown demo agent(s): no-such-agent" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_busy_port_is_a_usage_error_not_a_traceback() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "explorer", "demo", "--serve", "--only", "steady", "--port", str(port)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "Traceback" not in result.stderr


def test_list_prints_the_table_without_starting_anything() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "explorer", "demo", "--list"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [r[0] for r in rows] == list(VARIANTS)
    assert all(r[1] == VARIANTS[r[0]].expected_verdict for r in rows)


def test_fleet_starts_fast_and_releases_its_ports() -> None:
    fleet = Fleet()
    began = time.perf_counter()
    fleet.start()
    try:
        print(
            f"\nfleet of {len(fleet.agents)} agents: start() returned after {fleet.startup_seconds:.3f} s "
            f"(measured outside: {time.perf_counter() - began:.3f} s)"
        )
        assert fleet.startup_seconds is not None and fleet.startup_seconds < 5.0
        assert fleet.wait_ready(timeout=60.0) and fleet.errors == {}
        ports = {urlsplit(a.base_url).port for a in fleet.agents.values()}
        assert len(ports) == len(fleet.agents)
        with httpx.Client(timeout=10) as client:
            for agent in fleet.agents.values():
                assert client.get(agent.card_url).status_code == 200, agent.name
    finally:
        stopping = time.perf_counter()
        fleet.stop()
        print(f"stop() took {time.perf_counter() - stopping:.3f} s")
    assert all(_port_is_free(port) for port in ports)
    fleet.stop()  # idempotent


def test_fleet_rejects_unknown_names_and_double_starts() -> None:
    with pytest.raises(FleetError, match="unknown demo agent"):
        Fleet(["steady", "nope"])
    with pytest.raises(FleetError, match="port must be"):
        Fleet(port=70000)
    with Fleet(["steady"]) as fleet, pytest.raises(FleetError, match="already started"):
        fleet.start()


def test_serve_writes_the_fleets_public_keys_and_verify_with_them_gives_each_its_expected_verdict(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with demo_serve("--only", "steady", "forged", "--home", str(home)) as served:
        rows = {name: agent.card_url for name, agent in served.agents.items()}
        told = served.wait_for_stderr("interview-explorer verify")  # up to the copy-paste verify line
        keys = home / "demo-keys.jwks"
        assert any(str(keys) in line for line in told), told
        line = told[-1].split("demo:", 1)[1].strip()
        assert line == f"interview-explorer verify {rows['forged']} --keys {keys}"
        jwks = json.loads(keys.read_text(encoding="utf-8"))
        assert {k["kid"] for k in jwks["keys"]} == {"steady-card-1", "forged-card-1"}
        assert all(set(k) <= {"kty", "crv", "x", "y", "kid", "alg", "use"} for k in jwks["keys"])  # public

        def verify(name: str, *extra: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "explorer",
                    "verify",
                    rows[name],
                    "--home",
                    str(home),
                    "--no-history",
                    *extra,
                ],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=120,
            )

        forged = verify("forged", "--keys", str(keys), "--json")
        assert forged.returncode == 1, forged.stderr  # the demo's promise: forged is nonconformant
        assert "card_signature_invalid" in {f["code"] for f in json.loads(forged.stdout)["findings"]}
        steady = verify("steady", "--keys", str(keys))
        assert steady.returncode == 0, steady.stderr
        assert "signature: verified" in steady.stdout and "card_signature_unverifiable" not in steady.stdout
        unkeyed = verify("steady")  # without the keys: says what would make it checkable
        assert "signature: unverifiable" in unkeyed.stdout
        assert (
            "to check it: --keys JWKS_FILE_OR_URL with the signer's public key (kid steady-card-1), "
            "or keys in the config, or --allow-jku" in unkeyed.stdout
        )
