"""The rules of a sweep that scripts rely on, without a network: target lists, shards, the exit
status of many targets, the JUnit shape, per-host bounds and the crowd's seeded mix."""

from __future__ import annotations

import asyncio
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core import junit
from explorer.core.sweep import ShardError, Tally, parse_shard, shard, sweep_exit, target_lines
from explorer.demo.crowd import MIX, UNREACHABLE, draw
from explorer.demo.fleet import FleetError
from explorer.net.gate import Host, HostGate, Resolver
from explorer.store.sweep_files import JUnitWriter


def test_a_list_skips_blank_lines_comments_and_spaces() -> None:
    text = "# fleet\n\n  http://a.example/  \n#http://skipped\nhttp://b.example/\r\n\t\n"
    assert target_lines(text) == ["http://a.example/", "http://b.example/"]
    assert target_lines("\ufeff" + text) == target_lines(text)  # a byte order mark (Notepad)


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "x/2", "2", "-1/3", "1/3/4", ""])
def test_a_bad_shard_is_refused_with_the_form_it_wants(text: str) -> None:
    with pytest.raises(ShardError, match="I/N"):
        parse_shard(text)


def test_shards_split_a_list_by_position_with_no_overlap() -> None:
    items = [f"t{p}" for p in range(11)]
    parts = [shard(items, *parse_shard(f"{i}/3")) for i in (1, 2, 3)]
    assert parts[0] == ["t0", "t3", "t6", "t9"]
    assert parts[1] == ["t1", "t4", "t7", "t10"]
    assert sorted(sum(parts, []), key=lambda t: int(t[1:])) == items
    assert shard(items, 1, 1) == items
    assert shard(["only"], 2, 5) == []


@pytest.mark.parametrize(
    ("verdicts", "status"),
    [
        ([], 0),
        (["conformant", "not_offered"], 0),
        (["conformant", "unreachable", "not_offered"], 3),
        (["unreachable", "churn"], 5),
        (["churn", "nonconformant", "unreachable"], 1),
        (["something new"], 3),
    ],
)
def test_the_many_targets_exit_rule(verdicts: list[str], status: int) -> None:
    assert sweep_exit(verdicts) == status
    tally = Tally(len(verdicts))
    for verdict in verdicts:
        tally.add(verdict)
    assert tally.exit_status() == status


def test_the_summary_counts_in_contract_order() -> None:
    tally = Tally(4)
    for verdict in ("nonconformant", "conformant", "conformant", "not_offered"):
        tally.add(verdict)
    line = tally.summary(2.0)
    assert line == "swept 4/4 agents in 2.0 s (2.0/s): 2 conformant, 1 nonconformant, 1 not_offered"
    assert "\n" not in line


def _report(verdict: str, findings: list[dict[str, Any]]) -> dict[str, Any]:
    return {"verdict": verdict, "target": "http://a.example/", "standing": "claim", "findings": findings}


def _suite(report: dict[str, Any]) -> ET.Element:
    return ET.fromstring(junit.suite(report).xml)


def test_junit_one_testcase_per_question_and_probe_and_failures_by_code_and_member() -> None:
    report = _report(
        "nonconformant",
        [
            {
                "code": "projection_mismatch",
                "severity": "error",
                "question": "usage",
                "member": "/skills/0",
                "detail": "d",
            },
            {
                "code": "closure_method_not_refused",
                "severity": "error",
                "probe": "undefined_method",
                "detail": "x",
            },
            {"code": "card_signature_invalid", "severity": "error", "detail": "bad"},
            {"code": "card_unsigned", "severity": "warning", "detail": "warnings are not failures"},
        ],
    )
    suite = _suite(report)
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names == [
        "card",
        "identity",
        "capabilities",
        "usage",
        "terms",
        "refusals",
        "probe:undefined_method",
        "probe:unmatched_selector",
        "probe:valid_selector",
        "probe:unactivated_call",
        "probe:unactivated_call_no_params",
    ]
    failures = {case.get("name"): [f.attrib for f in case.iter("failure")] for case in suite.iter("testcase")}
    assert failures["usage"] == [
        {"type": "projection_mismatch", "message": "projection_mismatch at /skills/0"}
    ]
    assert failures["probe:undefined_method"][0]["type"] == "closure_method_not_refused"
    assert failures["card"][0]["type"] == "card_signature_invalid"
    assert suite.get("failures") == "3" and suite.get("skipped") == "0"


def test_junit_not_offered_is_a_skipped_suite_and_unreachable_skips_what_was_not_asked() -> None:
    silent = _suite(
        _report("not_offered", [{"code": "interview_not_declared", "severity": "info", "detail": ""}])
    )
    assert silent.get("skipped") == "11" and silent.get("failures") == "0"
    assert all(case.find("skipped") is not None for case in silent.iter("testcase"))
    gone = _suite(
        _report("unreachable", [{"code": "card_unreachable", "severity": "error", "detail": "refused"}])
    )
    cases = {case.get("name"): case for case in gone.iter("testcase")}
    assert cases["card"].find("failure").get("type") == "card_unreachable"  # type: ignore[union-attr]
    assert gone.get("skipped") == "10"


def test_junit_escapes_what_an_agent_sends() -> None:
    hostile = "\x1b[31m<b>&\u202e\x00\"'"
    report = _report(
        "nonconformant",
        [
            {
                "code": "projection_mismatch",
                "severity": "error",
                "question": "identity",
                "member": hostile,
                "detail": hostile,
            }
        ],
    )
    report["target"] = hostile
    text = junit.suite(report).xml
    suite = ET.fromstring(text)  # well-formed XML 1.0
    assert "\x1b" not in text and "\x00" not in text and "\u202e" not in text
    assert suite.find("testcase") is not None


# Characters XML 1.0 forbids or discourages, and the ones its escaping is about, drawn often:
# arbitrary text alone almost never holds a lone surrogate or a noncharacter. (A list joined,
# not st.text: st.text drops surrogates even from an alphabet that offers them.)
_XML_EDGES = "\x00\x08\x0b\x0c\x1b\x7f\x85\x9f\ud800\udbff\udc00\udfff\ufdd0\ufdef\ufffe\uffff" + (
    "\U0001fffe\U0010ffff\u202e<>&\"']\t\r\n"
)
_ANY_CHARACTER = st.one_of(st.characters(exclude_categories=()), st.sampled_from(list(_XML_EDGES)))
_AGENT_TEXT = st.lists(_ANY_CHARACTER, max_size=80).map("".join)


@pytest.mark.slow  # a heavy property test: 300 files written and parsed
@settings(max_examples=300, deadline=None)
@given(st.lists(_AGENT_TEXT, min_size=9, max_size=9))
def test_the_junit_file_is_well_formed_xml_whatever_an_agent_sends(texts: list[str]) -> None:
    target, name, code, member, detail, standing, url, digest, question = texts
    report = {
        "verdict": "nonconformant",
        "target": target,
        "standing": standing,
        "card": {"url": url, "sha256": digest},
        "answers_sha256": detail,
        "findings": [
            {"code": code, "severity": "error", "member": member, "detail": detail},
            {"code": code, "severity": "error", "question": question, "probe": member, "detail": name},
        ],
    }
    with tempfile.TemporaryDirectory() as directory:
        writer = JUnitWriter(Path(directory) / "junit.xml")
        writer.add_report(report, name=name or None)
        writer.add_report(report)
        root = ET.parse(writer.close()).getroot()  # expat: a real XML 1.0 parser
    suites = root.findall("testsuite")
    assert len(suites) == 2
    assert root.get("failures") == str(sum(int(suite.get("failures") or 0) for suite in suites))
    assert all(len(suite.findall("testcase")) == len(junit.CASES) for suite in suites)


def test_a_character_xml_forbids_is_shown_where_it_was() -> None:
    detail = "down\ufffe for \uffff maintenance \ud800 \ufdd0 \U0010fffe"
    report = _report("nonconformant", [{"code": "method_error", "severity": "error", "detail": detail}])
    failure = _suite(report).find("testcase/failure")
    assert failure is not None
    assert failure.text == "down<U+FFFE> for <U+FFFF> maintenance <U+D800> <U+FDD0> <U+10FFFE>"


def test_the_gate_bounds_requests_per_host_whatever_the_spelling_and_forgets_idle_hosts() -> None:
    gate = HostGate(2)
    peak: dict[int, int] = {}
    now: dict[int, int] = {}
    spellings = ["127.0.0.1", "127.1", "0x7f000001", "[::ffff:127.0.0.1]"]

    async def one(url: str) -> None:
        async with gate.hold(url):
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            now[port] = now.get(port, 0) + 1
            peak[port] = max(peak.get(port, 0), now[port])
            await asyncio.sleep(0.01)
            now[port] -= 1

    async def main() -> None:
        urls = [f"http://{spellings[i % 4]}:{8000 + i % 3}/p{i}" for i in range(36)]
        await asyncio.gather(*(one(u) for u in urls))

    asyncio.run(main())
    assert peak == {8000: 2, 8001: 2, 8002: 2}
    assert gate._slots == {} and gate._users == {}


def test_every_spelling_of_a_loopback_address_is_one_host() -> None:
    """The system resolver reads these as the connection will (no network: numbers and the hosts
    file); `localhost` may also be ::1, and then holds both."""
    spellings = [
        "http://127.0.0.1:8080/", "http://127.1:8080/a", "http://2130706433:8080/", "http://0x7f000001:8080/",
        "http://0177.0.0.1:8080/", "http://127.0.1:8080/", "http://017700000001:8080/",
        "http://[::ffff:127.0.0.1]:8080/", "http://[::FFFF:7f00:1]:8080/", "https://127.0.0.1:8080/x",
    ]  # fmt: skip

    async def main() -> tuple[list[tuple[Host, ...]], tuple[Host, ...], tuple[Host, ...]]:
        gate = HostGate()
        spelled = [await gate.hosts_of(url) for url in spellings]
        return (
            spelled,
            await gate.hosts_of("http://LocalHost:8080/"),
            await gate.hosts_of("https://127.0.0.1/"),
        )

    spelled, localhost, default_port = asyncio.run(main())
    assert spelled == [(("127.0.0.1", 8080),)] * len(spellings)
    assert ("127.0.0.1", 8080) in localhost and set(localhost) <= {("127.0.0.1", 8080), ("::1", 8080)}
    assert default_port == (("127.0.0.1", 443),)


def _names(table: dict[str, list[str]], calls: list[str], delay: float = 0.0) -> Resolver:
    """A resolver for names the test makes up (several addresses for one name need DNS here)."""

    async def resolve(name: str, port: int) -> list[str]:
        calls.append(name)
        await asyncio.sleep(delay)
        if name not in table:
            raise OSError(-2, "Name or service not known")
        return table[name]

    return resolve


def test_a_name_with_several_addresses_holds_a_slot_on_each_and_never_deadlocks() -> None:
    calls: list[str] = []
    table = {"both.test": ["::1", "127.0.0.1", "::ffff:127.0.0.1"], "six.test": ["::1"]}
    gate = HostGate(3, resolver=_names(table, calls))
    now: dict[str, int] = {"127.0.0.1": 0, "::1": 0}
    peak = dict(now)

    async def one(url: str) -> None:
        hosts = await gate.hosts_of(url)
        async with gate.hold(url):
            for address, _ in hosts:
                now[address] += 1
                peak[address] = max(peak[address], now[address])
            await asyncio.sleep(0.005)
            for address, _ in hosts:
                now[address] -= 1

    async def main() -> tuple[Host, ...]:
        hosts = ["both.test", "six.test", "127.0.0.1", "[::1]"]
        urls = [f"http://{hosts[i % 4]}:9000/{i}" for i in range(60)]
        async with asyncio.timeout(10):  # a deadlock fails here instead of hanging
            await asyncio.gather(*(one(u) for u in urls))
        return await gate.hosts_of("http://both.test:9000/")

    assert asyncio.run(main()) == (("127.0.0.1", 9000), ("::1", 9000))
    assert peak == {"127.0.0.1": 3, "::1": 3}
    assert sorted(calls) == ["both.test", "six.test"]  # once per name, however many requests
    assert gate._slots == {}


def test_a_name_that_does_not_resolve_in_time_is_bounded_by_its_text() -> None:
    calls: list[str] = []
    slow = HostGate(resolver=_names({"late.test": ["127.0.0.1"]}, calls, delay=30.0))
    missing = HostGate(resolver=_names({}, calls))

    async def main() -> tuple[tuple[Host, ...], tuple[Host, ...], float]:
        began = asyncio.get_running_loop().time()
        late = await slow.hosts_of("http://late.test:81/", timeout=0.05)
        took = asyncio.get_running_loop().time() - began
        async with missing.hold("http://gone.test/"):
            gone = await missing.hosts_of("http://gone.test/")
        return late, gone, took

    late, gone, took = asyncio.run(main())
    assert late == (("late.test", 81),) and took < 5
    assert gone == (("gone.test", 80),)


def test_the_crowd_is_a_seeded_mix_with_unique_names() -> None:
    first, again, other = draw(300, seed=4), draw(300, seed=4), draw(300, seed=5)
    assert [v.name for v in first] == [v.name for v in again]
    assert [v.name for v in first] != [v.name for v in other]
    assert len({v.name for v in first}) == 300
    assert first[0].name.startswith("crowd-0001-")
    kinds = {v.name.split("-", 2)[2] for v in first}
    assert kinds == {name for name, _ in MIX}
    honest = sum(v.expected_verdict == "conformant" for v in first)
    assert honest > 150  # mostly honest
    assert sum(v.name.endswith(UNREACHABLE) for v in first) > 5
    assert sum(weight for _, weight in MIX) == 100
    with pytest.raises(FleetError):
        draw(0)


async def test_every_fetcher_shares_one_certificate_checking_tls_context() -> None:
    """Loading the CA bundle costs about 30 ms: a sweep of https agents pays it once, not per
    run. A context the caller passes is used as given; public-only mode keeps its own (no
    SSL_CERT_FILE from the environment)."""
    import ssl

    from explorer.net.http import Fetcher, Limits, shared_tls

    def context_of(fetcher: Fetcher) -> ssl.SSLContext:
        return fetcher._client_for("https")._transport._pool._ssl_context  # type: ignore[attr-defined]

    given = ssl.create_default_context()
    async with (
        Fetcher() as a,
        Fetcher() as b,
        Fetcher(Limits(public_only=True)) as c,
        Fetcher(verify=given) as d,
    ):
        assert context_of(a) is context_of(b) is shared_tls(trust_env=True)
        assert context_of(a).verify_mode == ssl.CERT_REQUIRED and context_of(a).check_hostname
        assert context_of(c) is shared_tls(trust_env=False)
        assert context_of(d) is given


def test_the_engine_bounds_interviews_in_flight_streams_results_and_survives_a_broken_one() -> None:
    """The scheduling alone, with a stand-in interview (the real ones are in test_sweep_cli):
    never more than `concurrency` at once, each result handed over as it finishes (fast ones
    first), and an interview that raises is reported, not the end of the sweep."""
    from explorer.core.run import Run
    from explorer.interview.options import Options
    from explorer.interview.sweep import Finished, Job, sweep

    in_flight = peak = 0
    seen: list[Finished] = []

    async def interview(target: str, options: Options, *, gate: HostGate | None = None) -> Run:
        nonlocal in_flight, peak
        assert gate is not None
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.05 if target.startswith("slow") else 0.001)
        in_flight -= 1
        if target == "broken":
            raise RuntimeError("a bug, not the agent's fault")
        return Run(report={"target": target, "verdict": "conformant"})

    targets = ["slow-1", "broken", *(f"fast-{i}" for i in range(10))]
    jobs = (Job(p, t, Options()) for p, t in enumerate(targets))
    asyncio.run(sweep(jobs, seen.append, concurrency=3, run_fn=interview))
    assert peak == 3 and len(seen) == len(targets)
    assert seen[-1].job.target == "slow-1"  # completion order, not list order
    broken = next(f for f in seen if f.job.target == "broken")
    assert broken.run is None and broken.error == "RuntimeError: a bug, not the agent's fault"
    assert all(f.run is not None for f in seen if f.job.target != "broken")
