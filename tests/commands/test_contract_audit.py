"""The headless CLI checked against docs/CONTRACT.md alone, from the outside, as a user runs it.

Every test here starts `interview-explorer` in a subprocess (`python -m explorer`) and reads
only what the contract promises: the options, the report members, the finding codes and the exit
statuses. The agents are the reference agents as a user gets them (`demo --serve`, its printed
name/URL/expected-verdict lines and its JWKS file), plus tiny loopback servers and card files
for the edge cases the reference agents do not cover. The report checker below is written from
the contract's text, not from the verifier's own validator, so the two can disagree.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.support.cards import agent_card
from tests.support.demo_serve import ServedAgent, demo_serve
from tests.support.http_server import base_url, serving
from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # subprocesses against agents on loopback

INTERVIEW = "https://agentsow.com/extensions/a2a-interview/v1"
VERDICTS = ("conformant", "nonconformant", "churn", "not_offered", "unreachable")
EXIT = {"conformant": 0, "nonconformant": 1, "unreachable": 3, "not_offered": 4, "churn": 5}
QUESTIONS = ("identity", "capabilities", "usage", "terms", "refusals")
PROBES = (
    "undefined_method",
    "unmatched_selector",
    "valid_selector",
    "unactivated_call",
    "unactivated_call_no_params",
)
SEVERITY = {
    "card_unreachable": "error", "card_malformed": "error", "card_unsigned": "warning",
    "card_signature_invalid": "error", "card_signature_unverifiable": "warning",
    "member_unsigned": "warning", "no_jsonrpc_interface": "error", "interview_not_declared": "info",
    "interview_required_true": "error", "terms_not_declared": "info", "terms_entry_invalid": "error",
    "activation_not_echoed": "info", "unactivated_call_answered": "error", "method_error": "error",
    "answer_shape_invalid": "error", "answer_extra_member": "error", "source_invalid": "error",
    "pointer_unresolved": "error", "projection_mismatch": "error", "lossy_number": "warning",
    "proposal_not_committed": "error", "proposal_unreachable": "error",
    "proposal_digest_mismatch": "error", "proposal_unsigned": "error",
    "proposal_signature_invalid": "error", "proposal_not_standing": "warning",
    "terms_fabricated": "error", "terms_declared_wrong": "error",
    "refusals_boundary_mismatch": "error", "nondeterministic_answer": "error",
    "closure_method_not_refused": "error", "closure_selector_not_refused": "error",
    "selector_refused": "error", "deadline": "error",
    "refusal_shape_invalid": "error", "refusal_skills_mismatch": "error", "refusal_as_error": "warning",
    "http_status": "error", "timeout": "error", "body_too_large": "error", "rate_limited": "warning",
    "card_changed": "info", "churn": "info", "auth_required": "error", "auth_failed": "error",
    "auth_scheme_unsupported": "warning", "evidence_unverified": "warning",
    "signature_equivalent": "info", "card_resigned": "info", "interview_not_implemented": "error",
}  # fmt: skip


# --- running the command as a user does -------------------------------------------------------


@dataclass(frozen=True)
class Result:
    status: int
    out: str
    err: str

    def report(self) -> dict[str, Any]:
        """The one JSON object `--json` prints: one line, nothing else on stdout."""
        assert self.out.endswith("\n") and self.out.count("\n") == 1, self.out[:500]
        value = json.loads(self.out)
        assert isinstance(value, dict)
        return value

    def lines(self) -> list[dict[str, Any]]:
        """NDJSON: one complete report per line."""
        return [json.loads(line) for line in self.out.splitlines()]


def cli(*args: str, home: Path, env: Mapping[str, str] | None = None, stdin: str | None = None,
        timeout: float = 120.0) -> Result:  # fmt: skip
    environment = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPO,
        timeout=timeout,
    )
    return Result(done.returncode, done.stdout, done.stderr)


@dataclass(frozen=True)
class Served:
    """The reference agents `demo --serve` printed, and the JWKS file it wrote."""

    agents: dict[str, ServedAgent]
    keys: Path

    def url(self, name: str) -> str:
        return self.agents[name].card_url


@contextmanager
def _serve(tmp: Path, *extra: str) -> Iterator[Served]:
    """`demo --serve` in a subprocess (tests/support/demo_serve.py), its JWKS file written in `tmp`."""
    keys = tmp / "demo-keys.jwks"
    env = {"INTERVIEW_EXPLORER_HOME": str(tmp / "demo-home"), "NO_COLOR": "1"}
    with demo_serve("--keys-out", str(keys), *extra, env=env) as running:
        yield Served(running.agents, keys)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with _serve(tmp_path_factory.mktemp("served")) as started:
        yield started


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- the report, read from the contract's text -------------------------------------------------


def _finding_group(item: Mapping[str, Any]) -> int:
    """0 the card, 1..5 the questions in order, then the probes (the contract's fixed order)."""
    if item.get("probe") in PROBES:
        return 6 + PROBES.index(item["probe"])
    if item.get("question") in QUESTIONS:
        return 1 + QUESTIONS.index(item["question"])
    return 0


def contract_problems(report: Mapping[str, Any]) -> list[str]:
    """What the report lacks or gets wrong against CONTRACT.md's required members."""
    p: list[str] = []
    for key in ("verdict", "ran_by", "standing", "card", "questions", "probes", "findings", "attempts",
                "run_attestation"):  # fmt: skip
        if key not in report:
            p.append(f"missing {key}")
    if p:
        return p
    if report["verdict"] not in VERDICTS:
        p.append(f"verdict {report['verdict']!r}")
    ran_by = report["ran_by"]
    if set(ran_by) < {"name", "role"} or ran_by["role"] not in ("self", "independent", "platform"):
        p.append(f"ran_by {ran_by!r}")
    elif report["standing"] != ("claim" if ran_by["role"] == "self" else "evidence"):
        p.append(f"standing {report['standing']!r} for role {ran_by['role']!r}")
    card = report["card"]
    for key in ("url", "layout", "sha256", "signature"):
        if key not in card:
            p.append(f"card.{key} missing")
    if report["verdict"] != "unreachable" and card.get("layout") not in ("v0.3", "v1.0", "mixed"):
        p.append(f"card.layout {card.get('layout')!r}")
    signature = card.get("signature") or {}
    if not {"status", "form", "alg", "kid"} <= set(signature):
        p.append(f"card.signature {signature!r}")
    elif signature["status"] not in ("verified", "invalid", "unverifiable", "unsigned"):
        p.append(f"card.signature.status {signature['status']!r}")
    elif signature["status"] == "verified" and signature["form"] not in (
        "served", "sdk-normalized", "sdk-legacy-sorted", "sdk-0.3", "a2a-js"
    ):  # fmt: skip
        p.append(f"card.signature.form {signature['form']!r}")
    questions = report["questions"]
    if sorted(questions) != sorted(QUESTIONS):
        p.append(f"question keys {sorted(questions)}")
    for name, entry in questions.items():
        if "answer" not in entry:
            p.append(f"questions.{name} holds no raw answer")
        for item in entry.get("projections", []):
            if not {"member", "document", "status"} <= set(item):
                p.append(f"questions.{name} projection {sorted(item)}")
            elif item["status"] not in ("match", "mismatch", "unresolved", "unverifiable"):
                p.append(f"questions.{name} projection status {item['status']!r}")
            elif item["status"] == "mismatch" and not (
                isinstance(item.get("value_canonical"), str) and isinstance(item.get("source_canonical"), str)
                and item["value_canonical"] != item["source_canonical"]
            ):  # fmt: skip
                p.append(f"questions.{name} mismatch {item['member']} without both canonical strings")
    if report["verdict"] in ("conformant", "nonconformant", "churn"):
        names = [probe.get("name") for probe in report["probes"]]
        # The valid-selector probe is sent only when the card declares a skill.
        if names not in (list(PROBES), [name for name in PROBES if name != "valid_selector"]):
            p.append(f"probes {names}")
        for probe in report["probes"]:
            if "request" not in probe or "response" not in probe:
                p.append(f"probe {probe.get('name')} without what was sent and received")
        no_params = next((x for x in report["probes"] if x.get("name") == "unactivated_call_no_params"), {})
        if "params" in no_params.get("request", {}):
            p.append("the unactivated call without params was sent with params")
    findings = report["findings"]
    for item in findings:
        if not {"code", "severity", "detail"} <= set(item):
            p.append(f"finding {item!r}")
        elif item["code"] in SEVERITY and item["severity"] != SEVERITY[item["code"]]:
            p.append(f"{item['code']} has severity {item['severity']}")
    keys = [(_finding_group(f), f.get("member") is not None, f.get("member") or "") for f in findings]
    if keys != sorted(keys):
        p.append("findings out of order: " + ", ".join(f"{f['code']}@{f.get('member')}" for f in findings))
    attempts = report["attempts"]
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        p.append(f"attempts {attempts!r}")
    attestation = report["run_attestation"]
    if not {"status", "keyid", "runner", "role"} <= set(attestation) or attestation["status"] not in (
        "verified", "invalid", "unknown_signer", "unsigned"
    ):  # fmt: skip
        p.append(f"run_attestation {attestation!r}")
    return p


def codes(report: Mapping[str, Any]) -> set[str]:
    return {f["code"] for f in report["findings"]}


# --- many agents: JUnit, one target in a list ---------------------------------------------------


def test_junit_has_a_testcase_for_every_probe_the_report_lists(
    served: Served, home: Path, tmp_path: Path
) -> None:
    """`paramless` answers the unactivated call only when it carries no params: its JUnit suite
    has a testcase for that probe with the failure, not a failure filed under the card."""
    junit = tmp_path / "out.xml"
    urls = [served.url("paramless"), served.url("steady"), served.url("silent")]
    result = cli("verify", *urls, "--json", "--no-history", "--junit", str(junit), home=home)
    assert result.status == 1
    suites = {suite.get("name"): suite for suite in ET.parse(junit).getroot().iter("testsuite")}
    assert sorted(suites) == sorted(urls)
    for suite in suites.values():
        names = [case.get("name") for case in suite.iter("testcase")]
        assert [n for n in names if n in QUESTIONS] == list(QUESTIONS)
        assert [n for n in names if n.startswith("probe:")] == [f"probe:{p}" for p in PROBES]
    cases = {case.get("name"): case for case in suites[served.url("paramless")].iter("testcase")}
    failures = {name: [f.get("type") for f in case.iter("failure")] for name, case in cases.items()}
    assert failures["probe:unactivated_call_no_params"] == ["unactivated_call_answered"]
    assert not failures.get("card")
    silent = suites[served.url("silent")]
    assert silent.get("skipped") == silent.get("tests")
    assert all(case.find("skipped") is not None for case in silent.iter("testcase"))


def test_a_list_of_one_target_keeps_the_single_target_exit_statuses(
    served: Served, home: Path, tmp_path: Path
) -> None:
    """`not_offered` is neutral (0) only with more than one target: `--from` a one-line file is
    a single target, exit 4, as `verify URL` is."""
    listed = tmp_path / "one.txt"
    listed.write_text(f"# the one agent\n\n{served.url('silent')}\n", encoding="utf-8")
    alone = cli("verify", served.url("silent"), "--json", "--no-history", home=home)
    from_file = cli("verify", "--from", str(listed), "--json", "--no-history", home=home)
    assert alone.status == from_file.status == 4
    assert from_file.report()["target"] == served.url("silent")
    both = cli("verify", served.url("silent"), served.url("steady"), "--no-history", home=home)
    assert both.status == 0


# --- one target: the report, the exit statuses ------------------------------------------------------


def _bind_credentials(served: Served, home: Path) -> dict[str, str]:
    """The guarded agents' demo credentials bound to each agent in the config file, as a sweep
    requires (a credential given on the command line for many agents is a usage error); their
    secrets in the returned environment."""
    from explorer.demo.guard import CLIENT_ID

    setting = {
        "INTERVIEW_EXPLORER_DEMO_BEARER": 'bearer = "env:INTERVIEW_EXPLORER_DEMO_BEARER"',
        "INTERVIEW_EXPLORER_DEMO_API_KEY": 'api_key = "env:INTERVIEW_EXPLORER_DEMO_API_KEY"',
        "INTERVIEW_EXPLORER_DEMO_OAUTH2_SECRET": f'oauth2_client_id = "{CLIENT_ID}"\n'
        'oauth2_client_secret = "env:INTERVIEW_EXPLORER_DEMO_OAUTH2_SECRET"',
    }
    env: dict[str, str] = {}
    entries: list[str] = []
    for agent in served.agents.values():
        env.update(agent.env)
        for var in agent.env:
            entries.append(f'[agents."{agent.name}"]\nurl = "{agent.card_url}"\n{setting[var]}\n')
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("\n".join(entries), encoding="utf-8")
    return env


def test_every_reference_agent_gets_its_printed_verdict_in_a_contract_shaped_report(
    served: Served, home: Path
) -> None:
    """One sweep over every agent `demo --serve` printed, with its key file and each guarded
    agent's credential bound to it in the config: NDJSON, one complete report per line, each with
    its target and the verdict the serve line promised; one summary line on stderr."""
    env = _bind_credentials(served, home)
    listed = "\n".join(agent.card_url for agent in served.agents.values())
    result = cli("verify", "--from", "-", "--json", "--no-history", "--keys", str(served.keys),
                 home=home, env=env, stdin=listed)  # fmt: skip
    reports = {line["target"]: line for line in result.lines()}
    assert sorted(reports) == sorted(agent.card_url for agent in served.agents.values())
    for agent in served.agents.values():
        report = reports[agent.card_url]
        assert contract_problems(report) == [], agent.name
        assert report["verdict"] == agent.verdict, (agent.name, sorted(codes(report)))
    # Other extensions' findings go in `extensions`, never in the verdict.
    forged_platform = reports[served.url("openclasp-forged")]
    assert "openclasp_attestation_invalid" in {f["code"] for f in forged_platform["extensions"]}
    assert forged_platform["verdict"] == "conformant"
    assert result.err.count("\n") == 1 and "swept" in result.err
    assert result.status == 1  # nonconformant agents among them
    for secret in env.values():
        assert secret not in result.out and secret not in result.err


def test_json_prints_one_object_and_the_exit_status_follows_the_verdict(served: Served, home: Path) -> None:
    steady = cli(
        "verify", served.url("steady"), "--json", "--no-history", "--keys", str(served.keys), home=home
    )
    report = steady.report()
    assert steady.status == 0 and report["verdict"] == "conformant" and contract_problems(report) == []
    assert (
        report["card"]["signature"]["status"] == "verified"
        and report["card"]["signature"]["form"] == "served"
    )
    assert report["attempts"] == 1 and report["findings"] == []
    import hashlib
    import urllib.request

    import jcs

    card = json.loads(urllib.request.urlopen(served.url("steady"), timeout=10).read())  # noqa: S310 - loopback
    assert report["card"]["sha256"] == hashlib.sha256(jcs.canonicalize(card)).hexdigest()
    assert "[1] card:" in steady.err  # progress goes to stderr
    for name, status in (("drifting", 1), ("silent", 4)):
        result = cli("verify", served.url(name), "--json", "--no-history", home=home)
        assert result.status == status and result.report()["verdict"] == served.agents[name].verdict
    dead = cli("verify", f"http://127.0.0.1:{_closed_port()}", "--json", "--no-history", home=home)
    assert dead.status == 3 and dead.report()["verdict"] == "unreachable"
    assert "card_unreachable" in codes(dead.report())
    usage = cli("verify", served.url("steady"), "--json", "--reruns", "-1", home=home)
    assert usage.status == 2 and usage.out == "" and "--reruns" in usage.err


def test_a_conflict_that_vanishes_on_the_re_run_is_churn_exit_5(tmp_path: Path, home: Path) -> None:
    with _serve(tmp_path, "--only", "churning") as served:
        result = cli("verify", served.url("churning"), "--json", "--no-history", home=home)
        report = result.report()
        assert result.status == 5 and report["verdict"] == "churn" and contract_problems(report) == []
        assert report["attempts"] == 2
        churn = next(f for f in report["findings"] if f["code"] == "churn")
        assert churn["severity"] == "info" and "projection_mismatch" in churn["detail"]


def test_reruns_bounds_the_attempts_after_a_conflict(served: Served, home: Path) -> None:
    once = cli(
        "verify", served.url("drifting"), "--json", "--no-history", "--reruns", "0", home=home
    ).report()
    default = cli("verify", served.url("drifting"), "--json", "--no-history", home=home).report()
    twice = cli(
        "verify", served.url("drifting"), "--json", "--no-history", "--reruns", "2", home=home
    ).report()
    assert (once["attempts"], default["attempts"], twice["attempts"]) == (1, 2, 3)
    assert once["verdict"] == default["verdict"] == twice["verdict"] == "nonconformant"


def test_the_unactivated_call_is_probed_with_and_without_params(served: Served, home: Path) -> None:
    """`paramless` refuses `params: {}` without the activation but answers a request with no
    `params`: that probe alone carries `unactivated_call_answered`, and its request has no params."""
    report = cli("verify", served.url("paramless"), "--json", "--no-history", home=home).report()
    assert report["verdict"] == "nonconformant" and contract_problems(report) == []
    probes = {probe["name"]: probe for probe in report["probes"]}
    assert probes["unactivated_call"]["request"].get("params") == {}
    assert "params" not in probes["unactivated_call_no_params"]["request"]
    answered = [f for f in report["findings"] if f["code"] == "unactivated_call_answered"]
    assert [f.get("probe") for f in answered] == ["unactivated_call_no_params"]


# --- keys, who ran it, the history -------------------------------------------------------------


class _FileHandler(BaseHTTPRequestHandler):
    """Serves one file's bytes at every path (a JWKS URL for `--keys`)."""

    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def test_keys_from_a_file_or_a_url_or_the_cards_own_jku(served: Served, home: Path) -> None:
    url = served.url("steady")
    alone = cli("verify", url, "--json", "--no-history", home=home).report()
    assert alone["card"]["signature"]["status"] == "unverifiable"
    assert "card_signature_unverifiable" in codes(alone) and alone["verdict"] == "conformant"
    from_file = cli("verify", url, "--json", "--no-history", "--keys", str(served.keys), home=home).report()
    handler = type("Keys", (_FileHandler,), {"body": served.keys.read_bytes()})
    with serving(handler) as server:
        keys_url = f"{base_url(server)}/keys.jwks"
        from_url = cli("verify", url, "--json", "--no-history", "--keys", keys_url, home=home).report()
    jku = cli("verify", url, "--json", "--no-history", "--allow-jku", home=home).report()
    for report in (from_file, from_url, jku):
        signature = report["card"]["signature"]
        assert (signature["status"], signature["form"]) == ("verified", "served")
        assert signature["kid"] and signature["alg"] and report["findings"] == []
    forged = cli("verify", served.url("forged"), "--json", "--no-history", "--allow-jku", home=home)
    assert forged.status == 1 and forged.report()["card"]["signature"]["status"] == "invalid"
    assert "card_signature_invalid" in codes(forged.report())
    missing = cli("verify", url, "--json", "--no-history", "--keys", str(home / "none.jwks"), home=home)
    assert missing.status == 2 and missing.out == ""


def test_as_and_runner_decide_ran_by_and_standing(served: Served, home: Path) -> None:
    url = served.url("steady")
    for extra, role, standing in (
        ((), "self", "claim"),
        (("--as", "self", "--runner", "me"), "self", "claim"),
        (("--as", "independent", "--runner", "acme-ci"), "independent", "evidence"),
        (("--as", "platform", "--runner", "market"), "platform", "evidence"),
    ):
        report = cli("verify", url, "--json", "--no-history", *extra, home=home).report()
        assert report["ran_by"]["role"] == role and report["standing"] == standing
        assert report["run_attestation"]["status"] == "unsigned"
        assert report["run_attestation"]["role"] == role
        if "--runner" in extra:
            assert report["ran_by"]["name"] == report["run_attestation"]["runner"] == extra[-1]


def _recorded(home: Path) -> int:
    return len(cli("history", "--home", str(home), home=home).out.splitlines()[1:])


def test_runs_are_recorded_in_the_home_unless_no_history(served: Served, tmp_path: Path) -> None:
    url = served.url("silent")
    flag_home, env_home = tmp_path / "flag", tmp_path / "env"
    assert cli("verify", url, "--home", str(flag_home), home=tmp_path / "elsewhere").status == 4
    assert cli("verify", url, home=env_home).status == 4  # INTERVIEW_EXPLORER_HOME
    assert cli("verify", url, "--no-history", home=env_home).status == 4
    assert _recorded(flag_home) == 1 and _recorded(env_home) == 1
    assert not (tmp_path / "elsewhere").exists()


class _Recorder(BaseHTTPRequestHandler):
    """A minimal agent that records the headers of every JSON-RPC call and refuses them all."""

    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._send(200, json.dumps(agent_card("Recorder", url=f"{base}/rpc")).encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append(dict(self.headers.items()))
        self._send(200, b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32601, "message": "no"}}')

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_header_values_reach_the_agent_and_are_stored_nowhere(home: Path) -> None:
    handler = type("Recorder", (_Recorder,), {"seen": []})
    with serving(handler) as server:
        headers = ("--header", "X-Audit-Literal: lit-3x7q", "--header", "X-Audit-Env: env:AUDIT_HEADER")
        result = cli(
            "verify", base_url(server), "--json", *headers, home=home, env={"AUDIT_HEADER": "env-9k2w"}
        )
    assert result.report()["verdict"] in VERDICTS
    assert handler.seen and all(h.get("X-Audit-Literal") == "lit-3x7q" for h in handler.seen)
    assert all(h.get("X-Audit-Env") == "env-9k2w" for h in handler.seen)
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert stored  # the run was recorded
    for secret in ("lit-3x7q", "env-9k2w"):
        assert secret not in result.out and secret not in result.err and secret.encode() not in stored


# --- time bounds ---------------------------------------------------------------------------------


class _Hang(BaseHTTPRequestHandler):
    """Accepts and reads the request, then never answers (`where`: the card or the JSON-RPC calls)."""

    where = "card"
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.where == "card":
            time.sleep(30)
            return
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        body = json.dumps(agent_card("Hang", url=f"{base}/rpc")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        time.sleep(30)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("where", ["card", "rpc"])
def test_an_agent_that_never_answers_is_unreachable_within_about_twice_the_timeout(
    where: str, home: Path
) -> None:
    timeout = 2.0
    handler = type("Hang", (_Hang,), {"where": where})
    with serving(handler) as server:
        began = time.monotonic()
        result = cli(
            "verify", base_url(server), "--json", "--no-history", "--timeout", str(timeout), home=home
        )
        took = time.monotonic() - began
        server.shutdown()
    report = result.report()
    assert result.status == 3 and report["verdict"] == "unreachable"
    assert "timeout" in codes(report)
    assert took < 2 * timeout + 3.0  # the process's own start-up included


# --- many agents -------------------------------------------------------------------------------------


def _card_files(tmp_path: Path, count: int) -> list[str]:
    """Cards that do not declare the interview (not_offered without a network)."""
    paths = []
    for i in range(count):
        path = tmp_path / f"card{i}.json"
        path.write_text(json.dumps(agent_card(f"c{i}", url=None, interview=False)), encoding="utf-8")
        paths.append(str(path))
    return paths


def test_targets_from_arguments_and_a_list_split_by_shard(tmp_path: Path, home: Path) -> None:
    """Positions count over the arguments then the list (comments and blank lines skipped);
    `--shard I/N` keeps p mod N == I-1, so the shards partition the list."""
    cards = _card_files(tmp_path, 7)
    listed = "# the rest\n\n" + "\n  # indented comment\n".join(cards[2:]) + "\n   \n"
    shards = []
    for index in (1, 2, 3):
        shard = ("--shard", f"{index}/3")
        result = cli(
            "verify",
            cards[0],
            cards[1],
            "--from",
            "-",
            "--allow-files",  # the list holds card files
            *shard,
            "--json",
            "--no-history",
            home=home,
            stdin=listed,
        )
        assert result.status == 0  # not_offered is neutral with many targets
        shards.append(sorted(line["target"] for line in result.lines()))
        assert all(line["verdict"] == "not_offered" for line in result.lines())
        assert result.err.count("\n") == 1
    assert shards == [sorted(cards[p] for p in range(7) if p % 3 == i) for i in range(3)]
    for bad in ("0/3", "4/3", "1/0", "x"):
        refused = cli("verify", *cards, "--shard", bad, "--json", home=home)
        assert refused.status == 2 and refused.out == ""


def test_the_exit_status_of_many_targets(served: Served, home: Path) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}"
    cases = (
        (("steady", "silent"), (), 0),
        (("steady",), (dead,), 3),
        (("steady", "drifting", "silent"), (dead,), 1),
    )
    for names, extra, status in cases:
        result = cli("verify", *(served.url(n) for n in names), *extra, "--json", "--no-history", home=home)
        assert result.status == status, (names, extra)
        assert len(result.lines()) == len(names) + len(extra)
    with _serve(home.parent / "churn", "--only", "churning") as served_churn:
        churned = cli(
            "verify", served_churn.url("churning"), dead, served.url("silent"), "--no-history", home=home
        )
        assert churned.status == 5


def test_history_import_records_a_transcript_once_and_refuses_one_that_lies(
    served: Served, tmp_path: Path, home: Path
) -> None:
    transcripts = tmp_path / "transcripts"
    swept = cli("verify", served.url("steady"), served.url("drifting"), "--no-history", "--transcripts",
                str(transcripts), home=home)  # fmt: skip
    assert swept.status == 1
    files = sorted(transcripts.glob("*.json"))
    assert len(files) == 2
    other = tmp_path / "other-home"
    first = cli("history", "import", *map(str, files), "--home", str(other), home=home)
    again = cli("history", "import", *map(str, files), "--home", str(other), home=home)
    assert first.status == 0 and again.status == 0
    assert _recorded(other) == 2
    lie = json.loads(files[0].read_text(encoding="utf-8"))
    stated = lie["report"]["verdict"]
    lie["report"]["verdict"] = "conformant" if stated != "conformant" else "nonconformant"
    liar = tmp_path / "liar.json"
    liar.write_text(json.dumps(lie), encoding="utf-8")
    refused = cli("history", "import", str(liar), "--home", str(tmp_path / "third"), home=home)
    assert refused.status != 0 and "liar.json" in refused.err
    assert _recorded(tmp_path / "third") == 0


# --- finding codes a small loopback agent can trigger ----------------------------------------------

SKILLS = ["s-one", "s-two"]


def _mini_card(base: str) -> dict[str, Any]:
    return agent_card(
        "Mini",
        url=f"{base}/rpc",
        skills=SKILLS,
        version="1.0.0",
        build=2**60,  # an integer past +-(2^53-1): lossy in many JSON parsers
        defaultInputModes=["text/plain"],
        defaultOutputModes=["text/plain"],
    )


def _card_projection(member: str, value: Any) -> dict[str, Any]:
    return {"source": {"document": "card", "member": member}, "value": value}


HONEST: dict[str, Any] = {
    "identity": {
        "question": "identity",
        "declared": True,
        "projections": [_card_projection("/name", "Mini")],
    },
    "capabilities": {
        "question": "capabilities",
        "declared": True,
        "projections": [_card_projection(f"/skills/{i}/id", s) for i, s in enumerate(SKILLS)],
    },
    "usage": {
        "question": "usage",
        "declared": True,
        "projections": [_card_projection("/defaultInputModes", ["text/plain"])],
    },
    "terms": {"question": "terms", "declared": False, "projections": []},
    "refusals": {
        "question": "refusals",
        "declared": True,
        "projections": [_card_projection(f"/skills/{i}/id", s) for i, s in enumerate(SKILLS)],
    },
    # The standard refusal (interview extension, section 6), `detail` included (the verifier
    # requires all four members).
    "refusal": {
        "refused": True,
        "reason": "out_of_scope",
        "detail": "no declared skill matches",
        "declared_skills": SKILLS,
    },
}


class _Mini(BaseHTTPRequestHandler):
    """A conformant agent with an unsigned card and no terms; `spoil` replaces one answer
    (a question's name, or `refusal` for the closure probes' refusal)."""

    spoil: dict[str, Any] = {}

    def do_GET(self) -> None:
        self._send(_mini_card(f"http://127.0.0.1:{self.server.server_address[1]}"), {})

    def do_POST(self) -> None:
        self._reply(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0))))

    def _reply(self, call: dict[str, Any]) -> None:
        answers = {**HONEST, **self.spoil}
        method, params = call.get("method", ""), call.get("params") or {}
        activated = INTERVIEW in (self.headers.get("A2A-Extensions") or "")
        question = method.removeprefix("interview/")
        if not activated or not method.startswith("interview/"):
            body: dict[str, Any] = {"error": {"code": -32601, "message": "Method not found"}}
        elif question not in QUESTIONS or params.get("skill") not in (None, *SKILLS):
            body = {"result": answers["refusal"]}
        else:
            body = {"result": answers[question]}
        self._send(
            {"jsonrpc": "2.0", "id": call.get("id"), **body},
            {"A2A-Extensions": INTERVIEW} if activated else {},
        )

    def _send(self, value: Any, headers: dict[str, str]) -> None:
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, text in headers.items():
            self.send_header(name, text)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _interview_mini(home: Path, **spoil: Any) -> Result:
    handler = type("Mini", (_Mini,), {"spoil": spoil})
    with serving(handler) as server:
        return cli("verify", base_url(server), "--json", "--no-history", home=home)


def _with(name: str, **members: Any) -> dict[str, Any]:
    return {**HONEST[name], **members}


SPOILS: dict[str, dict[str, Any]] = {
    "projection_mismatch": {"identity": _with("identity", projections=[_card_projection("/name", "Maxi")])},
    "pointer_unresolved": {
        "identity": _with("identity", projections=[_card_projection("/nickname", "Mini")])
    },
    "source_invalid": {
        "identity": _with(
            "identity", projections=[{"source": {"document": "web", "member": "/name"}, "value": "Mini"}]
        )
    },
    "answer_extra_member": {
        "identity": _with("identity", projections=[{**_card_projection("/name", "Mini"), "note": "extra"}])
    },
    "answer_shape_invalid": {"identity": _with("identity", question="usage")},
    "terms_fabricated": {
        "terms": _with("terms", declared=True, projections=[_card_projection("/name", "Mini")])
    },
    "refusals_boundary_mismatch": {
        "refusals": _with("refusals", projections=[_card_projection("/skills/0/id", "s-one")])
    },
    "refusal_shape_invalid": {"refusal": {**HONEST["refusal"], "reason": "because"}},
    "refusal_skills_mismatch": {"refusal": {**HONEST["refusal"], "declared_skills": ["s-one"]}},
    "lossy_number": {"identity": _with("identity", projections=[_card_projection("/build", 2**60)])},
}


def test_an_honest_small_agent_is_conformant(home: Path) -> None:
    result = _interview_mini(home)
    report = result.report()
    assert result.status == 0 and report["verdict"] == "conformant", report["findings"]
    assert contract_problems(report) == []
    assert codes(report) == {"card_unsigned", "terms_not_declared"}
    assert report["card"]["signature"]["status"] == "unsigned"
    for name in QUESTIONS:  # each question holds the raw answer as received
        assert report["questions"][name]["answer"] == HONEST[name]
    assert report["card"]["layout"] == "v1.0"


@pytest.mark.parametrize("code", sorted(SPOILS))
def test_each_kind_of_wrong_answer_gets_its_code(code: str, home: Path) -> None:
    result = _interview_mini(home, **SPOILS[code])
    report = result.report()
    assert code in codes(report), report["findings"]
    assert contract_problems(report) == []
    assert (result.status, report["verdict"]) == (
        (0, "conformant") if SEVERITY[code] == "warning" else (1, "nonconformant")
    )
    assert all(f["severity"] == SEVERITY[f["code"]] for f in report["findings"] if f["code"] in SEVERITY)


def test_findings_come_in_the_contracts_order(home: Path) -> None:
    """Several findings on several questions and probes at once: card first, then the questions in
    their order, then the probes, members lexicographic within each."""
    spoil = {**SPOILS["refusal_skills_mismatch"], **SPOILS["source_invalid"], **SPOILS["terms_fabricated"]}
    spoil["usage"] = _with(
        "usage",
        projections=[
            _card_projection("/defaultOutputModes", ["x"]),
            _card_projection("/defaultInputModes", ["y"]),
        ],
    )
    report = _interview_mini(home, **spoil).report()
    assert contract_problems(report) == []
    groups = [_finding_group(f) for f in report["findings"]]
    assert groups == sorted(groups) and len(set(groups)) >= 4
    usage = [f["member"] for f in report["findings"] if f.get("question") == "usage" and f.get("member")]
    assert usage == ["/defaultInputModes", "/defaultOutputModes"]


def test_a_refusal_without_detail_is_not_the_standard_refusal(home: Path) -> None:
    """The interview extension, section 6, gives the standard refusal as exactly four members; the
    verifier holds an agent to all four (docs/CONTRACT.md says so at `refusal_shape_invalid`)."""
    terse = {key: value for key, value in HONEST["refusal"].items() if key != "detail"}
    report = _interview_mini(home, refusal=terse).report()
    shapes = [f for f in report["findings"] if f["code"] == "refusal_shape_invalid"]
    assert shapes and all(f.get("member") == "/detail" for f in shapes)
    assert report["verdict"] == "nonconformant"


class _Maintenance(_Mini):
    """Answers `interview/identity` with a JSON-RPC error whose message holds U+FFFE and U+FFFF
    (sent as raw UTF-8), characters XML 1.0 forbids; every other call as `_Mini`."""

    def _reply(self, call: dict[str, Any]) -> None:
        if call.get("method") != "interview/identity":
            super()._reply(call)
            return
        error = {"code": -32000, "message": "down \ufffe for maintenance \uffff"}
        body = json.dumps({"jsonrpc": "2.0", "id": call.get("id"), "error": error}, ensure_ascii=False)
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("A2A-Extensions", INTERVIEW)
        self.end_headers()
        self.wfile.write(data)


def test_an_agent_sending_characters_xml_forbids_leaves_the_sweeps_junit_file_well_formed(
    home: Path, tmp_path: Path
) -> None:
    junit = tmp_path / "ci" / "junit.xml"
    with serving(_Maintenance) as broken, serving(_Mini) as honest:
        urls = [base_url(broken), base_url(honest)]
        result = cli("verify", *urls, "--json", "--no-history", "--junit", str(junit), home=home)
    assert result.status == 1
    assert {line["target"]: line["verdict"] for line in result.lines()} == {
        urls[0]: "nonconformant",
        urls[1]: "conformant",
    }
    suites = {suite.get("name"): suite for suite in ET.parse(junit).getroot().iter("testsuite")}
    assert sorted(suites) == sorted(urls)
    identity = next(case for case in suites[urls[0]].iter("testcase") if case.get("name") == "identity")
    failure = identity.find("failure")
    assert failure is not None and failure.get("type") == "method_error"
    assert "down <U+FFFE> for maintenance <U+FFFF>" in (failure.text or "")
    assert suites[urls[1]].get("failures") == "0"


# --- signed evidence -----------------------------------------------------------------------------------


def _pae(payload_type: str, body: bytes) -> bytes:
    """The DSSE pre-authentication encoding (DSSE v1 protocol)."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def _thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638 thumbprint of an OKP key: SHA-256 of its required members, sorted, no spaces."""
    import base64
    import hashlib

    required = json.dumps({k: jwk[k] for k in ("crv", "kty", "x")}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(required.encode()).digest()).rstrip(b"=").decode()


def test_a_signed_run_is_a_dsse_in_toto_attestation_that_reads_as_evidence_offline(
    served: Served, tmp_path: Path, home: Path
) -> None:
    import base64
    import hashlib
    import urllib.request

    import jcs
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key = tmp_path / "runner.pem"
    made = cli("keygen", "--out", str(key), home=home)
    assert made.status == 0 and key.stat().st_mode & 0o777 == 0o600
    assert "PRIVATE KEY" in key.read_text(encoding="ascii") and "PRIVATE" not in made.out
    jwks = json.loads(made.out)
    (jwk,) = jwks["keys"]
    public = tmp_path / "runner.jwks"
    public.write_text(made.out, encoding="utf-8")

    url = served.url("steady")
    signed = cli(
        "verify",
        url,
        "--json",
        "--sign-key",
        str(key),
        "--runner",
        "acme-ci",
        "--as",
        "independent",
        "--keys",
        str(served.keys),
        home=home,
    )
    report = signed.report()
    assert signed.status == 0 and report["standing"] == "evidence"
    attestation = report["run_attestation"]
    assert (attestation["status"], attestation["runner"], attestation["role"]) == (
        "verified",
        "acme-ci",
        "independent",
    )
    assert attestation["keyid"] == _thumbprint(jwk)

    transcript_file = tmp_path / "run.json"
    assert cli("export", "1", "--format", "json", "-o", str(transcript_file), home=home).status == 0
    envelope_file = tmp_path / "run.intoto.json"
    assert cli("export", "1", "--format", "intoto", "-o", str(envelope_file), home=home).status == 0
    transcript = json.loads(transcript_file.read_text(encoding="utf-8"))
    envelope = json.loads(envelope_file.read_text(encoding="utf-8"))
    assert transcript["run_attestation"] == envelope
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    body = base64.b64decode(envelope["payload"])
    (signature,) = envelope["signatures"]
    assert signature["keyid"] == _thumbprint(jwk)
    raw_key = base64.urlsafe_b64decode(jwk["x"] + "=" * (-len(jwk["x"]) % 4))
    Ed25519PublicKey.from_public_bytes(raw_key).verify(
        base64.b64decode(signature["sig"]), _pae(envelope["payloadType"], body)
    )  # raises when the signature is not over the PAE
    statement = json.loads(body)
    assert statement["predicateType"] == "https://slsa.dev/verification_summary/v1"
    subjects = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    served_card = urllib.request.urlopen(url, timeout=10).read()  # noqa: S310 - loopback
    assert subjects[url] == hashlib.sha256(served_card).hexdigest()
    unsigned_transcript = {k: v for k, v in transcript.items() if k != "run_attestation"}
    assert subjects["transcript"] == hashlib.sha256(jcs.canonicalize(unsigned_transcript)).hexdigest()
    assert len(subjects) >= 4  # the card, steady's two committed proposals, the transcript
    predicate = statement["predicate"]
    assert predicate["resourceUri"] == url and predicate["policy"]["uri"] == INTERVIEW
    assert predicate["verificationResult"] == "PASSED" and "acme-ci" in predicate["verifier"]["id"]
    assert predicate["timeVerified"]

    trusted = cli(
        "verify", "--offline", str(transcript_file), "--json", "--trust-runner", str(public), home=home
    )
    assert (
        trusted.report()["standing"] == "evidence"
        and trusted.report()["run_attestation"]["status"] == "verified"
    )
    assert "evidence_unverified" not in codes(trusted.report())
    untrusted = cli("verify", "--offline", str(transcript_file), "--json", home=home).report()
    assert untrusted["standing"] == "claim" and untrusted["run_attestation"]["status"] == "unknown_signer"
    assert "evidence_unverified" in codes(untrusted)
    transcript["report"]["verdict"] = "nonconformant"  # the verdict is recomputed from the bytes
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(transcript), encoding="utf-8")
    again = cli("verify", "--offline", str(altered), "--json", "--trust-runner", str(public), home=home)
    assert again.report()["verdict"] == "conformant" and again.status == 0
    assert again.report()["standing"] == "claim" and "evidence_unverified" in codes(again.report())
    self_signed = cli(
        "verify", url, "--json", "--sign-key", str(key), "--as", "self", "--no-history", home=home
    )
    assert self_signed.status == 2 and self_signed.out == ""


# --- agents that require authentication ----------------------------------------------------------------


def test_credentials_come_from_the_environment_or_a_file_never_a_literal(
    served: Served, tmp_path: Path, home: Path
) -> None:
    url = served.url("guarded-bearer")
    secret = served.agents["guarded-bearer"].env["INTERVIEW_EXPLORER_DEMO_BEARER"]
    literal = cli("verify", url, "--json", "--bearer", secret, home=home)
    assert literal.status == 2 and literal.out == "" and secret not in literal.err
    without = cli("verify", url, "--json", "--no-history", home=home)
    report = without.report()
    assert without.status == 3 and report["verdict"] == "unreachable"
    required = [f for f in report["findings"] if f["code"] == "auth_required"]
    assert required and "--bearer" in required[0]["detail"]
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n", encoding="utf-8")
    by_file = cli("verify", url, "--json", "--bearer", f"file:{token_file}", home=home)
    by_env = cli(
        "verify", url, "--json", "--bearer", "env:AUDIT_TOKEN", home=home, env={"AUDIT_TOKEN": secret}
    )
    for result in (by_file, by_env):
        assert result.status == 0 and result.report()["verdict"] == "conformant"
        assert secret not in result.out and secret not in result.err
    stored = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert stored and secret.encode() not in stored
    wrong = cli("verify", url, "--json", "--no-history", "--bearer", "env:AUDIT_TOKEN", home=home,
                env={"AUDIT_TOKEN": "not-the-token"})  # fmt: skip
    assert wrong.status == 3 and "auth_required" in codes(wrong.report())
    assert "not-the-token" not in wrong.out


def test_a_refused_client_secret_is_auth_failed_and_unreachable(served: Served, home: Path) -> None:
    from explorer.demo.guard import CLIENT_ID

    url = served.url("guarded-oauth2")
    result = cli(
        "verify",
        url,
        "--json",
        "--no-history",
        "--oauth2-client-id",
        CLIENT_ID,
        "--oauth2-client-secret",
        "env:AUDIT_SECRET",
        home=home,
        env={"AUDIT_SECRET": "wrong-secret-4k"},
    )
    report = result.report()
    assert result.status == 3 and report["verdict"] == "unreachable"
    failed = [f for f in report["findings"] if f["code"] == "auth_failed"]
    assert failed and failed[0]["severity"] == "error" and "invalid_client" in failed[0]["detail"]
    assert "wrong-secret-4k" not in result.out and "wrong-secret-4k" not in result.err


# --- card files -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b'{"name": "a", "name": "b"}',
        b'{"name": NaN}',
        b"[1, 2]",
        b"\xff\xfe{}",
        b"[" * 5000 + b"]" * 5000,
        b"nope",
    ],
    ids=["duplicate-keys", "nan", "array", "not-utf8", "too-deep", "not-json"],
)
def test_a_card_that_is_not_strict_json_is_card_malformed_and_unreachable(
    body: bytes, tmp_path: Path, home: Path
) -> None:
    card = tmp_path / "card.json"
    card.write_bytes(body)
    result = cli("verify", str(card), "--json", "--no-history", home=home)
    report = result.report()
    assert result.status == 3 and report["verdict"] == "unreachable"
    assert "card_malformed" in codes(report)


def test_a_card_that_declares_the_interview_without_a_json_rpc_interface_is_unreachable(
    tmp_path: Path, home: Path
) -> None:
    card = tmp_path / "card.json"
    grpc = {"url": "http://127.0.0.1:9/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    card.write_text(json.dumps(agent_card("G", supportedInterfaces=[grpc])), encoding="utf-8")
    result = cli("verify", str(card), "--json", "--no-history", home=home)
    assert result.status == 3 and "no_jsonrpc_interface" in codes(result.report())


class _Watched(_Mini):
    """The small agent with a bearer scheme (or, with `offer` false, without the interview),
    its JSON-RPC interface on this origin and its card recording what each request carried."""

    offer = True
    requests: list[tuple[str, str, dict[str, str]]] = []

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, dict(self.headers.items())))
        card = _mini_card(f"http://127.0.0.1:{self.server.server_address[1]}")
        card["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
        card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
        if not self.offer:
            card["capabilities"] = {}
        self._send(card, {})

    def do_POST(self) -> None:
        self.requests.append(("POST", self.path, dict(self.headers.items())))
        super().do_POST()


def test_the_card_is_fetched_without_credentials_and_the_calls_carry_them(home: Path) -> None:
    handler = type("Watched", (_Watched,), {"requests": []})
    with serving(handler) as server:
        result = cli("verify", base_url(server), "--json", "--no-history", "--bearer", "env:AUDIT_TOKEN",
                     home=home, env={"AUDIT_TOKEN": "tok-7y3"})  # fmt: skip
    assert result.report()["verdict"] == "conformant", result.report()["findings"]
    gets = [headers for method, _, headers in handler.requests if method == "GET"]
    posts = [headers for method, _, headers in handler.requests if method == "POST"]
    assert gets and not any("Authorization" in h for h in gets)
    assert posts and all(h.get("Authorization") == "Bearer tok-7y3" for h in posts)


def test_a_card_without_the_interview_is_not_offered_and_nothing_is_asked(home: Path) -> None:
    handler = type("Watched", (_Watched,), {"requests": [], "offer": False})
    with serving(handler) as server:
        result = cli("verify", base_url(server), "--json", "--no-history", home=home)
    report = result.report()
    assert result.status == 4 and report["verdict"] == "not_offered"
    assert "interview_not_declared" in codes(report)
    assert not [f for f in report["findings"] if f["severity"] == "error"]  # absence is neutral
    assert [method for method, _, _ in handler.requests] == ["GET"]  # the card, and nothing asked


class _Counting(BaseHTTPRequestHandler):
    """Card files that do not declare the interview, each served slowly; counts requests in flight."""

    lock = threading.Lock()
    now = 0
    peak = 0

    def do_GET(self) -> None:
        cls = type(self)
        with cls.lock:
            cls.now += 1
            cls.peak = max(cls.peak, cls.now)
        time.sleep(0.3)
        with cls.lock:
            cls.now -= 1
        body = json.dumps(agent_card(self.path, url=None, interview=False)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize(("jobs", "bound"), [(3, 3), (32, 8)])
def test_jobs_bounds_the_interviews_in_flight_and_one_host_is_never_flooded(
    jobs: int, bound: int, home: Path
) -> None:
    handler = type("Counting", (_Counting,), {"lock": threading.Lock(), "now": 0, "peak": 0})
    with serving(handler) as server:
        urls = [f"{base_url(server)}/agent{i}/.well-known/agent-card.json" for i in range(24)]
        result = cli("verify", "--from", "-", "--jobs", str(jobs), "--json", "--no-history", home=home,
                     stdin="\n".join(urls))  # fmt: skip
    assert result.status == 0 and len(result.lines()) == 24
    assert 1 < handler.peak <= bound


def test_ndjson_lines_come_in_completion_order(tmp_path: Path, home: Path) -> None:
    (fast,) = _card_files(tmp_path, 1)
    handler = type("Hang", (_Hang,), {"where": "card"})
    with serving(handler) as server:
        slow = base_url(server)
        result = cli("verify", slow, fast, "--json", "--no-history", "--timeout", "2", home=home)
        server.shutdown()
    assert [line["target"] for line in result.lines()] == [fast, slow]
    assert [line["verdict"] for line in result.lines()] == ["not_offered", "unreachable"]
    assert result.status == 3


# --- malformed URLs: the user's are usage errors, an agent's are findings ------------------------------


@pytest.mark.parametrize(
    "target", ["http://[::1", "http://127.0.0.1:99999/", "https://127.0.0.1:-1/card.json"]
)
def test_a_malformed_target_url_is_a_usage_error_not_a_traceback(
    target: str, tmp_path: Path, home: Path
) -> None:
    (card,) = _card_files(tmp_path, 1)
    for argv in ((target,), (card, target)):
        result = cli("verify", *argv, "--json", "--no-history", home=home)
        assert result.status == 2 and result.out == "", result.err
        assert "Traceback" not in result.err and "not a valid URL" in result.err


def test_a_target_with_a_password_is_refused_without_repeating_it(tmp_path: Path, home: Path) -> None:
    (card,) = _card_files(tmp_path, 1)
    target = "http://someone:pw-5r8t@127.0.0.1:9/"
    for argv in ((target,), (card, target)):
        result = cli("verify", *argv, "--json", home=home)
        assert result.status == 2 and result.out == "" and "password" in result.err
        assert "pw-5r8t" not in result.err
    assert not home.exists() or b"pw-5r8t" not in b"".join(p.read_bytes() for p in home.rglob("*.sqlite3"))


@pytest.mark.parametrize("url", ["http://127.0.0.1:99999/rpc", "http://[::1/rpc", "http://127.0.0.1:-1/rpc"])
def test_an_agents_malformed_interface_url_is_a_finding_not_a_traceback(
    url: str, tmp_path: Path, home: Path
) -> None:
    card = tmp_path / "card.json"
    card.write_text(json.dumps(agent_card("B", url=url)), encoding="utf-8")
    result = cli("verify", str(card), "--json", "--no-history", home=home)
    report = result.report()
    assert result.status == 3 and report["verdict"] == "unreachable" and "Traceback" not in result.err
    assert all(report["questions"][q]["status"] == "error" for q in QUESTIONS)


class _BadTokenUrl(_Mini):
    """Requires an OAuth 2.0 scheme whose token URL (or OpenID Connect discovery URL) is malformed."""

    kind = "oauth2"

    def do_GET(self) -> None:
        card = _mini_card(f"http://127.0.0.1:{self.server.server_address[1]}")
        if self.kind == "oauth2":
            flows = {"clientCredentials": {"tokenUrl": "http://[::1/token", "scopes": {}}}
            card["securitySchemes"] = {"o": {"oauth2SecurityScheme": {"flows": flows}}}
        else:
            card["securitySchemes"] = {
                "o": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "http://[::1/oidc"}}
            }
        card["securityRequirements"] = [{"schemes": {"o": {"list": []}}}]
        self._send(card, {})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.mark.parametrize("kind", ["oauth2", "openIdConnect"])
@pytest.mark.parametrize("pinned", [False, True], ids=["card's", "pinned"])
def test_a_malformed_token_url_is_refused_not_a_traceback(kind: str, pinned: bool, home: Path) -> None:
    """The card's malformed URL is on no origin of the agent's and nothing vouches for it:
    `auth_token_url_untrusted`; a malformed URL the user pinned is `auth_failed`."""
    handler = type("BadTokenUrl", (_BadTokenUrl,), {"kind": kind})
    pin = ["--oauth2-token-url", "http://[::1/token"] if pinned else []
    with serving(handler) as server:
        result = cli(
            "verify",
            base_url(server),
            "--json",
            "--no-history",
            "--oauth2-client-id",
            "me",
            "--oauth2-client-secret",
            "env:AUDIT_SECRET",
            *pin,
            home=home,
            env={"AUDIT_SECRET": "s-2n4"},
        )
    report = result.report()
    assert result.status == 3 and report["verdict"] == "unreachable" and "Traceback" not in result.err
    assert ("auth_failed" if pinned else "auth_token_url_untrusted") in codes(report)


def test_a_list_saved_with_a_byte_order_mark_and_crlf_reads_every_target(tmp_path: Path, home: Path) -> None:
    cards = _card_files(tmp_path, 2)
    listed = tmp_path / "list.txt"
    listed.write_bytes(("\ufeff" + "\r\n".join(cards) + "\r\n").encode("utf-8"))
    result = cli("verify", "--from", str(listed), "--allow-files", "--json", "--no-history", home=home)
    assert sorted(line["target"] for line in result.lines()) == sorted(cards)
    assert {line["verdict"] for line in result.lines()} == {"not_offered"} and result.status == 0


def test_an_interview_that_raises_still_gives_a_complete_report_line_and_a_junit_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bug of ours inside one interview of a sweep (simulated: no real agent can make the
    verifier raise once it is fixed) leaves every other target's report alone, and its own NDJSON
    line is still a complete unreachable report with its target; the JUnit file has its suite."""
    import explorer.interview.sweep
    from explorer.cli import main

    cards = _card_files(tmp_path, 2)
    real = explorer.interview.sweep._interview

    async def flaky(target: str, options: Any, *, gate: Any = None) -> Any:
        if target == cards[1]:
            raise RuntimeError("simulated bug")
        return await real(target, options, gate=gate)

    monkeypatch.setattr(explorer.interview.sweep, "_interview", flaky)
    junit = tmp_path / "out.xml"
    status = main(["verify", *cards, "--json", "--no-history", "--junit", str(junit)])
    out, err = capsys.readouterr()
    lines = {line["target"]: line for line in map(json.loads, out.splitlines())}
    assert status == 3 and sorted(lines) == sorted(cards)
    broken = lines[cards[1]]
    assert broken["verdict"] == "unreachable" and contract_problems(broken) == []
    assert "simulated bug" in broken["error"] and "simulated bug" in err
    assert lines[cards[0]]["verdict"] == "not_offered"
    suites = [suite.get("name") for suite in ET.parse(junit).getroot().iter("testsuite")]
    assert sorted(suites) == sorted(cards)


class _Guarded(_Mini):
    """The small agent behind one security scheme (`scheme`: api-key header, api-key query,
    oauth2 client credentials with its token endpoint on this origin); records every request."""

    scheme = "apikey-header"
    requests: list[tuple[str, str, dict[str, str], bytes]] = []

    def _card(self) -> dict[str, Any]:
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        card = _mini_card(base)
        if self.scheme == "oauth2":
            flows = {"clientCredentials": {"tokenUrl": f"{base}/token", "scopes": {"read:card": "", "x": ""}}}
            card["securitySchemes"] = {"o": {"oauth2SecurityScheme": {"flows": flows}}}
            card["securityRequirements"] = [{"schemes": {"o": {"list": ["read:card"]}}}]
        else:
            where = "header" if self.scheme == "apikey-header" else "query"
            card["securitySchemes"] = {
                "k": {"apiKeySecurityScheme": {"location": where, "name": "X-Audit-Key"}}
            }
            card["securityRequirements"] = [{"schemes": {"k": {"list": []}}}]
        return card

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, dict(self.headers.items()), b""))
        self._send(self._card(), {})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.requests.append(("POST", self.path, dict(self.headers.items()), body))
        if self.path == "/token":
            self._send({"access_token": "tok-issued-6q", "token_type": "Bearer", "expires_in": 600}, {})
            return
        wanted = (
            ("Authorization", "Bearer tok-issued-6q") if self.scheme == "oauth2" else ("X-Audit-Key", "k-8v1")
        )
        if self.headers.get(wanted[0]) != wanted[1]:
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._reply(json.loads(body))


def _guarded(
    scheme: str, home: Path, *options: str, env: Mapping[str, str], spoil: Mapping[str, Any] | None = None
) -> tuple[Result, list[Any]]:
    handler = type("Guarded", (_Guarded,), {"scheme": scheme, "requests": [], "spoil": dict(spoil or {})})
    with serving(handler) as server:
        result = cli("verify", base_url(server), "--json", "--no-history", *options, home=home, env=env)
    return result, handler.requests


def test_an_api_key_goes_in_the_header_the_card_names(home: Path) -> None:
    result, requests = _guarded(
        "apikey-header", home, "--api-key", "env:AUDIT_KEY", env={"AUDIT_KEY": "k-8v1"}
    )
    assert result.status == 0 and result.report()["verdict"] == "conformant"
    posts = [headers for method, _, headers, _ in requests if method == "POST"]
    assert posts and all(h.get("X-Audit-Key") == "k-8v1" for h in posts)
    assert not any("X-Audit-Key" in h for method, _, h, _ in requests if method == "GET")
    assert "k-8v1" not in result.out and "k-8v1" not in result.err


def test_an_api_key_in_the_query_is_a_scheme_the_explorer_cannot_satisfy(home: Path) -> None:
    result, _ = _guarded("apikey-query", home, "--api-key", "env:AUDIT_KEY", env={"AUDIT_KEY": "k-8v1"})
    report = result.report()
    assert "auth_scheme_unsupported" in codes(report)
    assert (
        next(f for f in report["findings"] if f["code"] == "auth_scheme_unsupported")["severity"] == "warning"
    )
    assert report["verdict"] == "unreachable" and "auth_required" in codes(report)


def test_client_credentials_fetch_one_token_for_the_cards_scopes_and_the_secret_goes_only_there(
    home: Path,
) -> None:
    options = ("--oauth2-client-id", "me", "--oauth2-client-secret", "env:AUDIT_SECRET")
    result, requests = _guarded("oauth2", home, *options, env={"AUDIT_SECRET": "cs-3j9"})
    assert result.status == 0 and result.report()["verdict"] == "conformant", result.report()["findings"]
    token_requests = [(headers, body) for method, path, headers, body in requests if path == "/token"]
    assert len(token_requests) == 1
    headers, body = token_requests[0]
    from urllib.parse import parse_qs

    form = parse_qs(body.decode())
    assert form["grant_type"] == ["client_credentials"] and form.get("scope") == ["read:card"]
    others = [(h, b) for method, path, h, b in requests if path != "/token"]
    assert others and not any("cs-3j9" in json.dumps(h) or b"cs-3j9" in b for h, b in others)
    assert "cs-3j9" not in result.out and "tok-issued-6q" not in result.out


def test_a_runner_key_that_also_signs_the_agents_card_makes_the_result_a_claim(
    tmp_path: Path, home: Path
) -> None:
    """Self-attested: the agent's own card is signed by the runner's key (kid its thumbprint), so
    an `--as independent` run signed with that key is a claim, saying why, live and offline."""
    import base64

    import jcs
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = tmp_path / "runner.pem"
    made = cli("keygen", "--out", str(key), home=home)
    public = tmp_path / "runner.jwks"
    public.write_text(made.out, encoding="utf-8")
    (jwk,) = json.loads(made.out)["keys"]
    private = load_pem_private_key(key.read_bytes(), password=None)

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    card = agent_card("Own", url=None, interview=False)
    protected = b64(json.dumps({"alg": "EdDSA", "kid": jwk["kid"]}).encode())
    signing_input = f"{protected}.{b64(jcs.canonicalize(card))}".encode()
    signature = b64(private.sign(signing_input))  # type: ignore[call-arg, union-attr]
    card["signatures"] = [{"protected": protected, "signature": signature}]
    card_file = tmp_path / "card.json"
    card_file.write_text(json.dumps(card), encoding="utf-8")

    live = cli(
        "verify",
        str(card_file),
        "--json",
        "--keys",
        str(public),
        "--sign-key",
        str(key),
        "--runner",
        "me",
        "--as",
        "independent",
        home=home,
    )
    report = live.report()
    assert report["card"]["signature"]["status"] == "verified"
    assert report["standing"] == "claim" and "evidence_unverified" in codes(report)
    assert report["verdict"] == "not_offered" and live.status == 4
    transcript = tmp_path / "run.json"
    assert cli("export", "1", "--format", "json", "-o", str(transcript), home=home).status == 0
    offline = cli("verify", "--offline", str(transcript), "--json", "--trust-runner", str(public), home=home)
    assert offline.report()["standing"] == "claim"
    unverified = [f for f in offline.report()["findings"] if f["code"] == "evidence_unverified"]
    assert unverified and "self" in unverified[0]["detail"].lower()


class _Documents(_Watched):
    """The watched bearer-guarded agent, with a committed proposal and a signature's `jku` on its
    own origin, and a wrong identity answer so the run has a re-run (a second attempt)."""

    spoil = SPOILS["pointer_unresolved"]

    def do_GET(self) -> None:
        import base64

        self.requests.append(("GET", self.path, dict(self.headers.items())))
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        if self.path == "/jwks.json":
            self._send({"keys": []}, {})
            return
        if self.path == "/proposal.json":
            self._send({"sow": "x"}, {})
            return
        card = _mini_card(base)
        card["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
        card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
        terms = {
            "sow_spec": "0.18.0-draft",
            "proposals": [{"url": f"{base}/proposal.json", "digest": "sha256:" + "0" * 64}],
        }
        card["capabilities"]["extensions"].append(
            {"uri": "https://agentsow.com/extensions/a2a-terms/v1", "params": terms}
        )
        header = json.dumps({"alg": "ES256", "kid": "k1", "jku": f"{base}/jwks.json"}).encode()
        protected = base64.urlsafe_b64encode(header).rstrip(b"=").decode()
        card["signatures"] = [{"protected": protected, "signature": "c2lnbmF0dXJl"}]
        self._send(card, {})


def test_credentials_never_go_to_the_card_key_set_or_proposals_also_on_a_re_run(home: Path) -> None:
    """Contract: credentials go only to the JSON-RPC interface, never to a jku or proposal, and
    the card is fetched without them. Here all of them share one origin, and the run re-runs."""
    handler = type("Documents", (_Documents,), {"requests": []})
    with serving(handler) as server:
        bearer = ("--bearer", "env:AUDIT_TOKEN")
        result = cli(
            "verify",
            base_url(server),
            "--json",
            "--no-history",
            "--allow-jku",
            *bearer,
            home=home,
            env={"AUDIT_TOKEN": "tok-5h2"},
        )
    report = result.report()
    assert report["attempts"] == 2, report["findings"]
    gets = {path: [] for method, path, _ in handler.requests if method == "GET"}
    for method, path, headers in handler.requests:
        if method == "GET":
            gets[path].append(headers.get("Authorization"))
    assert {"/jwks.json", "/proposal.json"} <= set(gets) and len(gets["/proposal.json"]) == 2
    assert all(value is None for values in gets.values() for value in values), gets
    posts = [headers.get("Authorization") for method, _, headers in handler.requests if method == "POST"]
    assert posts and set(posts) == {"Bearer tok-5h2"}


def test_one_token_serves_every_attempt_of_a_run(home: Path) -> None:
    options = ("--oauth2-client-id", "me", "--oauth2-client-secret", "env:AUDIT_SECRET")
    result, requests = _guarded(
        "oauth2", home, *options, env={"AUDIT_SECRET": "cs-3j9"}, spoil=SPOILS["pointer_unresolved"]
    )
    assert result.report()["attempts"] == 2 and result.report()["verdict"] == "nonconformant"
    assert [path for _, path, _, _ in requests].count("/token") == 1


@pytest.mark.parametrize("exchanges", ["x", [5], [None]])
def test_a_malformed_transcript_is_a_usage_error_offline_and_refused_by_import(
    exchanges: Any, tmp_path: Path, home: Path
) -> None:
    transcript = {"transcript_version": 1, "report": {}, "exchanges": exchanges, "keys": {}}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(transcript), encoding="utf-8")
    offline = cli("verify", "--offline", str(path), "--json", home=home)
    assert offline.status == 2 and offline.out == "" and "Traceback" not in offline.err
    imported = cli("history", "import", str(path), home=home)
    # Not a transcript at all: a usage error (2), as offline; a transcript whose bytes do not
    # give what it states is refused with 1.
    assert imported.status == 2 and "refused" in imported.err and "Traceback" not in imported.err


def test_a_reader_that_closes_stdout_early_is_not_read_as_nonconformant(served: Served, home: Path) -> None:
    """`verify --json | head -c 100` on a large report: exit 141 (a closed pipe), no traceback,
    never 1 (nonconformant) as an uncaught BrokenPipeError made it."""
    environment = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "verify", served.url("huge"), "--json", "--no-history"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment, cwd=REPO,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err


class _Elsewhere(BaseHTTPRequestHandler):
    """Another origin serving a key set and a proposal; records the headers it was sent."""

    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:
        self.seen.append(dict(self.headers.items()))
        body = json.dumps({"keys": []} if "jwks" in self.path else {"sow": "x"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_headers_and_credentials_never_go_to_another_origin(home: Path) -> None:
    """The card names a proposal and a jku on another host: `--header` values and `--bearer`
    stay with the agent's origin."""
    import base64

    other = type("Elsewhere", (_Elsewhere,), {"seen": []})
    with serving(other) as elsewhere:
        far = base_url(elsewhere)

        class Pointing(_Watched):
            def do_GET(self) -> None:
                self.requests.append(("GET", self.path, dict(self.headers.items())))
                card = _mini_card(f"http://127.0.0.1:{self.server.server_address[1]}")
                card["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}}
                card["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
                proposal = {"url": f"{far}/proposal.json", "digest": "sha256:" + "0" * 64}
                terms = {"sow_spec": "0.18.0-draft", "proposals": [proposal]}
                card["capabilities"]["extensions"].append(
                    {"uri": "https://agentsow.com/extensions/a2a-terms/v1", "params": terms}
                )
                header = json.dumps({"alg": "ES256", "kid": "k1", "jku": f"{far}/jwks.json"}).encode()
                protected = base64.urlsafe_b64encode(header).rstrip(b"=").decode()
                card["signatures"] = [{"protected": protected, "signature": "c2lnbmF0dXJl"}]
                self._send(card, {})

        handler = type("Pointing", (Pointing,), {"requests": []})
        with serving(handler) as server:
            options = ("--allow-jku", "--bearer", "env:AUDIT_TOKEN", "--header", "X-Audit: hv-4z")
            result = cli("verify", base_url(server), "--json", "--no-history", *options, home=home,
                         env={"AUDIT_TOKEN": "tok-9w"})  # fmt: skip
    assert result.report()["verdict"] in VERDICTS
    assert len(other.seen) >= 2  # the key set and the proposal were fetched
    assert not any("X-Audit" in h or "Authorization" in h for h in other.seen), other.seen
    posts = [h for method, _, h in handler.requests if method == "POST"]
    assert posts and all(
        h.get("X-Audit") == "hv-4z" and h.get("Authorization") == "Bearer tok-9w" for h in posts
    )
