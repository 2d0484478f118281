"""Every hostile case, verified end to end over real loopback HTTP: outcome, time, no traceback.

`explorer.demo.hostile_cases.HOSTILE_CASES` is the single source of truth: each test here is
parametrized over it, and each case states the verdict a correct verifier reaches, the finding
codes that must appear and the codes that must not. Every case must also finish within twice
the timeout plus a second (CONTRACT.md: a hang ends within about twice the timeout), give a
report that satisfies the contract, survive a transcript round trip and re-verify offline to the
same verdict, and never raise.

The verifications are run once per session, concurrently (most hostile cases wait on a timeout),
in threads with their own event loops; the parametrized tests then judge one case each. A handful
of cases also go through the real `interview-explorer verify` command in a subprocess, where
stderr must hold no traceback and the exit status must be the verdict's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from explorer.core.findings import CODES
from explorer.core.report import validate_report
from explorer.core.run import Run
from explorer.demo.hostile import HostileServer
from explorer.demo.hostile_cases import HOSTILE_CASES, TRAP, HostileCase
from explorer.interview.options import Options
from explorer.interview.procedure import reverify_offline, run_interview_sync
from explorer.net.http import MIB
from tests.support.paths import REPO

TIMEOUT = 2.0
BOUND = TIMEOUT * 2 + 1.0  # CONTRACT.md: a run ends within about twice the timeout
EXIT = {"conformant": 0, "nonconformant": 1, "unreachable": 3, "not_offered": 4, "churn": 5}

# Bugs in other modules that this suite found are fixed; a new one goes here, each test then
# flips to XPASS (a failure) once it is fixed.
VERDICT_BUGS: dict[str, str] = {}
FORBIDDEN_BUGS: dict[str, str] = {}

NAMES = list(HOSTILE_CASES)
pytestmark = [
    pytest.mark.slow,  # verifies every hostile case over the network, some waiting out timeouts
    pytest.mark.timeout(600),  # the module fixture verifies every case once
]


def _marked(names: list[str], bugs: dict[str, str]) -> list[Any]:
    return [
        pytest.param(n, marks=pytest.mark.xfail(reason=bugs[n], strict=True)) if n in bugs else n
        for n in names
    ]


@dataclass(frozen=True)
class Outcome:
    run: Run | None
    error: str | None  # a traceback: the verifier raised
    seconds: float

    @property
    def report(self) -> dict[str, Any]:
        assert self.run is not None, self.error
        return dict(self.run.report)

    @property
    def codes(self) -> set[str]:
        return {f["code"] for f in self.report["findings"]}


def options_for(case: HostileCase, server: HostileServer, timeout: float = TIMEOUT) -> Options:
    return Options(
        keys=(server.jwks,) if case.trust_keys else (),
        allow_jku=case.allow_jku,
        public_only=case.public_only,
        timeout=timeout,
        runner="hostile-suite",
    )


def _verify(server: HostileServer, name: str) -> Outcome:
    started = time.perf_counter()
    try:
        run = run_interview_sync(server.case_url(name), options_for(HOSTILE_CASES[name], server))
    except BaseException:  # noqa: BLE001 - the point is to record that it raised
        return Outcome(None, traceback.format_exc(), time.perf_counter() - started)
    return Outcome(run, None, time.perf_counter() - started)


def verify_all(server: HostileServer, names: list[str]) -> dict[str, Outcome]:
    """Verify every named case; a hang is recorded, not waited for.

    Cases that wait on a timeout run at once, each in its own thread (they are idle while they
    wait), beside one thread that verifies the quick cases one after another, so that CPU
    contention between runs does not eat into the time bound being tested.
    """
    results: dict[str, Outcome] = {}

    def work(batch: list[str]) -> None:
        for name in batch:
            results[name] = _verify(server, name)

    slow = [n for n in names if HOSTILE_CASES[n].slow]
    quick = [n for n in names if not HOSTILE_CASES[n].slow]
    threads = [threading.Thread(target=work, args=([n],), daemon=True) for n in slow]
    threads.append(threading.Thread(target=work, args=(quick,), daemon=True))
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60 + BOUND * len(quick)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    for name in names:
        results.setdefault(name, Outcome(None, "the verification did not finish at all (hang)", float("inf")))
    return results


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with HostileServer() as started:
        yield started


@pytest.fixture(scope="module")
def outcomes(server: HostileServer, request: pytest.FixtureRequest) -> dict[str, Outcome]:
    """The outcome of every case some selected test of this module asks about."""
    wanted: list[str] = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if getattr(item, "module", None) is request.module and callspec is not None:
            name = callspec.params.get("name")
            if isinstance(name, str) and name in HOSTILE_CASES and name not in wanted:
                wanted.append(name)
    return verify_all(server, wanted)


# --- the table itself -----------------------------------------------------------------------------


def test_the_table_covers_the_issue() -> None:
    assert len(HOSTILE_CASES) >= 40
    must = {
        "card-not-json",
        "card-truncated",
        "card-duplicate-keys",
        "card-nan",
        "card-infinity",
        "card-1e400",
        "big-int-differs",
        "card-lone-surrogate",
        "card-invalid-utf8",
        "card-deep-nesting",
        "card-50mb",
        "card-endless-chunked",
        "card-trickle",
        "card-silent",
        "rpc-silent",
        "card-reset-mid-body",
        "rpc-http-500",
        "card-http-503-retry-after-9999",
        "rpc-http-429-absurd-retry-after",
        "card-redirect-other-host",
        "card-redirect-private-public-only",
        "card-redirect-loop",
        "answer-array",
        "answer-string",
        "answer-null",
        "pointer-slash",
        "pointer-tilde-2",
        "pointer-leading-zero",
        "pointer-dash",
        "equal-key-order",
        "equal-number-forms",
        "equal-escaped-unicode",
        "differs-unicode-normalization",
        "sig-jku-other-host",
        "sig-alg-none",
        "sig-hs256-public-key",
        "sig-kid-not-string",
        "sig-100kb-protected-header",
        "terms-digest-uppercase",
        "terms-digest-sha512",
        "nkey-bad-crc",
        "nkey-wrong-prefix",
        "markup-everywhere",
    }
    assert must <= set(HOSTILE_CASES), sorted(must - set(HOSTILE_CASES))
    layers = {case.layer for case in HOSTILE_CASES.values()}
    assert layers == {"card", "jwks", "proposal", "answer", "probe", "transport"}


@pytest.mark.parametrize("name", NAMES)
def test_each_case_differs_from_the_honest_agent_in_one_way(name: str) -> None:
    case = HOSTILE_CASES[name]
    faults = [
        case.resign,
        case.serve_card,
        case.serve_jwks,
        case.edit_proposal,
        case.edit_digest,
        case.answer,
        case.probe,
        case.wire,
    ]
    allowed = 0 if name == "honest" else 1 + (case.serve_jwks is not None)  # a jku attack: key + set
    assert sum(f is not None for f in faults) <= allowed
    assert set(case.expected_codes) | set(case.forbidden_codes) <= set(CODES)
    assert not case.expected_codes & case.forbidden_codes


# --- outcomes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_case_finishes_cleanly_and_in_time(outcomes: dict[str, Outcome], name: str) -> None:
    outcome = outcomes[name]
    assert outcome.error is None, outcome.error
    assert outcome.seconds <= BOUND, f"{name} took {outcome.seconds:.2f} s (bound {BOUND} s)"
    report = outcome.report
    assert validate_report(report) == []
    transcript = json.loads(json.dumps(outcome.run.to_transcript(), ensure_ascii=False))
    again = reverify_offline(Run.from_transcript(transcript))
    assert again.report["verdict"] == report["verdict"]
    assert again.report["findings"] == report["findings"]


@pytest.mark.parametrize("name", _marked(NAMES, VERDICT_BUGS))
def test_case_outcome(outcomes: dict[str, Outcome], name: str) -> None:
    case = HOSTILE_CASES[name]
    outcome = outcomes[name]
    assert outcome.report["verdict"] == case.expected_verdict, outcome.report["findings"]
    assert case.expected_codes <= outcome.codes, sorted(outcome.codes)


@pytest.mark.parametrize(
    "name", _marked([n for n in NAMES if HOSTILE_CASES[n].forbidden_codes], FORBIDDEN_BUGS)
)
def test_case_forbidden_codes(outcomes: dict[str, Outcome], name: str) -> None:
    found = HOSTILE_CASES[name].forbidden_codes & outcomes[name].codes
    assert not found, [f for f in outcomes[name].report["findings"] if f["code"] in found]


def test_the_server_built_and_served_every_case(outcomes: dict[str, Outcome], server: HostileServer) -> None:
    assert server.errors == {}


# --- what specific cases must show beyond their codes ---------------------------------------------


def _projections(report: dict[str, Any], question: str) -> list[dict[str, Any]]:
    return list(report["questions"][question]["projections"])


@pytest.mark.parametrize("name", ["honest"])
def test_the_honest_base_is_spotless(outcomes: dict[str, Outcome], name: str) -> None:
    report = outcomes[name].report
    assert report["card"]["signature"]["status"] == "verified"
    assert report["findings"] == []
    assert all(p["status"] == "match" for q in report["questions"] for p in _projections(report, q))


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith(("sig-", "jwks-"))])
def test_no_forged_or_foreign_signature_is_ever_verified(outcomes: dict[str, Outcome], name: str) -> None:
    signature = outcomes[name].report["card"]["signature"]
    assert signature["status"] != "verified", signature


@pytest.mark.parametrize("name", ["sig-jku-other-host"])
def test_a_foreign_jku_is_never_fetched(outcomes: dict[str, Outcome], name: str) -> None:
    run = outcomes[name].run
    assert run is not None
    assert not [e for e in run.exchanges if e.purpose == "jwks"]
    assert "198.51.100.7" in json.dumps(run.report["card"]["signature"])


@pytest.mark.parametrize("name", ["jwks-oct-key"])
def test_an_oct_key_from_the_cards_own_jku_is_fetched_but_never_used(
    outcomes: dict[str, Outcome], server: HostileServer, name: str
) -> None:
    run = outcomes[name].run
    assert run is not None
    assert [e.status for e in run.exchanges if e.purpose == "jwks"] == [200]
    assert run.report["card"]["signature"]["key_source"] is None


@pytest.mark.parametrize("name", ["card-redirect-private-public-only"])
def test_public_only_contacts_nothing_on_loopback(
    outcomes: dict[str, Outcome], server: HostileServer, name: str
) -> None:
    assert outcomes[name].report["verdict"] == "unreachable"
    assert not [key for key in server.hits if key[0] == name]


@pytest.mark.parametrize("name", ["card-50mb", "card-endless-chunked"])
def test_huge_and_endless_bodies_are_cut_at_the_cap(outcomes: dict[str, Outcome], name: str) -> None:
    run = outcomes[name].run
    assert run is not None
    card = [e for e in run.exchanges if e.purpose == "card"][-1]
    assert card.truncated and card.error == "body_too_large"
    assert len(card.response_body) <= 8 * MIB


@pytest.mark.parametrize(
    "name",
    [
        "card-http-503-retry-after-9999",
        "rpc-http-429-absurd-retry-after",
        "rpc-http-429-negative-retry-after",
    ],
)
def test_absurd_retry_after_is_not_waited_for(outcomes: dict[str, Outcome], name: str) -> None:
    assert outcomes[name].seconds < TIMEOUT


@pytest.mark.parametrize("name", ["rpc-http-429-briefly"])
def test_a_short_retry_after_is_honoured_once(outcomes: dict[str, Outcome], name: str) -> None:
    run = outcomes[name].run
    assert run is not None
    asks = [e for e in run.exchanges if e.purpose == "ask:identity#1"]
    assert [e.status for e in asks] == [429, 200]


@pytest.mark.parametrize("name", ["equal-key-order", "equal-number-forms", "equal-escaped-unicode"])
def test_values_equal_under_jcs_match(outcomes: dict[str, Outcome], name: str) -> None:
    report = outcomes[name].report
    statuses = [p["status"] for q in report["questions"] for p in _projections(report, q)]
    assert statuses and set(statuses) == {"match"}


@pytest.mark.parametrize("name", ["differs-unicode-normalization"])
def test_nfc_and_nfd_are_different_bytes(outcomes: dict[str, Outcome], name: str) -> None:
    identity = _projections(outcomes[name].report, "identity")
    (name_projection,) = [p for p in identity if p["member"] == "/name"]
    assert name_projection["status"] == "mismatch"
    assert name_projection["value_canonical"] != name_projection["source_canonical"]
    assert name_projection["diff"] is not None


@pytest.mark.parametrize("name", ["big-int-differs"])
def test_big_integers_equal_only_as_doubles_are_not_called_equal(
    outcomes: dict[str, Outcome], name: str
) -> None:
    (provider,) = [p for p in _projections(outcomes[name].report, "identity") if p["member"] == "/provider"]
    assert provider["lossy"] is True
    assert provider["value_canonical"] == provider["source_canonical"]  # JCS alone would say "equal"
    assert provider["status"] == "mismatch"


# --- the real command, in a subprocess --------------------------------------------------------------

CLI_CASES = [
    "honest",
    "card-nan",
    "rpc-silent",
    "answer-markup-error",
    "card-redirect-loop",
    "big-int-differs",
]
SUMMARY_CASES = ["markup-everywhere", "answer-markup-error"]
CLI_AT_ONCE = 2  # interpreter start-up is the cost here; more at once only contends for the CPU


@dataclass(frozen=True)
class CliRun:
    status: int
    stdout: bytes
    stderr: bytes


def _cli(server: HostileServer, keys: Path, name: str, as_json: bool) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "explorer",
        "verify",
        server.case_url(name),
        "--timeout",
        str(TIMEOUT),
        "--keys",
        str(keys),
        "--no-history",
        "--runner",
        "hostile-suite",
    ]
    return argv + ["--json"] if as_json else argv


@pytest.fixture(scope="module")
def cli_runs(
    server: HostileServer, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[str, bool], CliRun]:
    """The CLI cases with `--json`, and the summary cases as people read them (no colour, no TTY)."""
    keys = tmp_path_factory.mktemp("keys") / "jwks.json"
    keys.write_text(json.dumps(server.jwks), encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    jobs = [(n, True) for n in CLI_CASES] + [(n, False) for n in SUMMARY_CASES]
    out: dict[tuple[str, bool], CliRun] = {}
    for index in range(0, len(jobs), CLI_AT_ONCE):
        batch = jobs[index : index + CLI_AT_ONCE]
        procs = [
            subprocess.Popen(
                _cli(server, keys, n, j), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO
            )
            for n, j in batch
        ]
        for job, proc in zip(batch, procs, strict=True):
            stdout, stderr = proc.communicate(timeout=120)
            out[job] = CliRun(proc.returncode, stdout, stderr)
    return out


def _seconds(report: dict[str, Any]) -> float:
    start, end = (
        datetime.fromisoformat(report[k].replace("Z", "+00:00")) for k in ("started_at", "finished_at")
    )
    return (end - start).total_seconds()


@pytest.mark.parametrize("name", CLI_CASES)
def test_the_verify_command_under_each_case(cli_runs: dict[tuple[str, bool], CliRun], name: str) -> None:
    case = HOSTILE_CASES[name]
    run = cli_runs[(name, True)]
    assert b"Traceback" not in run.stderr, run.stderr.decode("utf-8", "replace")
    report = json.loads(run.stdout)  # exactly one JSON object on stdout
    assert report["verdict"] == case.expected_verdict, report["findings"]
    assert run.status == EXIT[case.expected_verdict]
    assert case.expected_codes <= {f["code"] for f in report["findings"]}
    assert _seconds(report) <= BOUND


@pytest.mark.parametrize("name", SUMMARY_CASES)
def test_the_human_summary_shows_agent_markup_as_text(
    cli_runs: dict[tuple[str, bool], CliRun], name: str
) -> None:
    run = cli_runs[(name, False)]
    assert b"Traceback" not in run.stderr, run.stderr.decode("utf-8", "replace")
    assert run.status == EXIT[HOSTILE_CASES[name].expected_verdict]
    assert b"\x1b" not in run.stdout + run.stderr  # no raw ESC from the agent reaches the terminal
    assert b"\\x1b" in run.stdout  # it is shown as a visible escape instead
    assert TRAP.encode() in run.stdout  # and markup is plain text
