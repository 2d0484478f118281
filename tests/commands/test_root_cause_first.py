"""Root cause first, in the right words: `verify` and `card` against real servers on loopback.

- An agent that declares the interview but implements none of it (`unimplemented`: JSON-RPC -32601
  inside HTTP 400; `sdk-unimplemented`: the official a2a-sdk's own -32601 in HTTP 200) gets one
  leading `interview_not_implemented`, and the findings it explains stay, each marked with it.
- An HTTP 4xx whose body is a JSON-RPC error is read as that error, its raw answer kept.
- Every probe finding names its probe in its detail, not only in its `probe` member.
- `card_unsigned` speaks of projections only when some were compared; `card` on a card without the
  interview says "interview not declared" and names no place it is asked.

(One `http_status` finding per status, listing the calls, is tests/commands/test_down_agents.py.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from explorer.cli import main
from explorer.core.findings import PROBES, QUESTIONS
from tests.support.http_server import base_url, send_json, serving

METHOD_NOT_FOUND = {"code": -32601, "message": "Method not found"}


def _verify(capsys: pytest.CaptureFixture[str], agent: Any, *more: str) -> tuple[int, dict[str, Any]]:
    code = main(["verify", "--json", "--no-history", "--keys", agent.jwks_url, *more, agent.card_url])
    out, _err = capsys.readouterr()
    return code, json.loads(out)


@pytest.mark.parametrize(("name", "status"), [("unimplemented", 400), ("sdk-unimplemented", 200)])
def test_an_interview_declared_but_not_implemented_is_said_first(
    fleet: Any, capsys: pytest.CaptureFixture[str], name: str, status: int
) -> None:
    if name in fleet.skipped:
        pytest.skip(fleet.skipped[name])  # sdk-unimplemented needs a2a-sdk (the test extra)
    code, report = _verify(capsys, fleet.agents[name])
    assert (code, report["verdict"]) == (1, "nonconformant")
    lead, *rest = report["findings"]
    assert (lead["code"], lead["severity"]) == ("interview_not_implemented", "error")
    assert "question" not in lead and "probe" not in lead and "cause" not in lead
    assert f"-32601, method not found (in HTTP {status})" in lead["detail"]
    assert "does not implement the interview" in lead["detail"]
    # The findings it explains stay, each marked; nothing else is left unexplained.
    assert rest and all(f.get("cause") == "interview_not_implemented" for f in rest)
    marked = {(f["code"], f.get("question") or f.get("probe")) for f in rest}
    assert {("method_error", q) for q in QUESTIONS} <= marked
    assert {("closure_method_not_refused", "undefined_method"),
            ("closure_selector_not_refused", "unmatched_selector")} <= marked  # fmt: skip
    assert f"the {len(rest)} findings marked with this cause follow from it" in lead["detail"]
    # The human summary says the same, the root cause first.
    main(["verify", "--no-history", "--keys", fleet.agents[name].jwks_url, fleet.agents[name].card_url])
    out, _ = capsys.readouterr()
    findings = out.split("findings:\n", 1)[1].splitlines()
    assert findings[0].startswith("  error interview_not_implemented: the card declares the interview")
    assert "  error method_error [identity] (follows from interview_not_implemented): " in out


def test_a_jsonrpc_error_inside_a_4xx_is_read_as_that_error(
    fleet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _code, report = _verify(capsys, fleet.agents["unimplemented"])
    assert not [f for f in report["findings"] if f["code"] == "http_status"]
    for q in QUESTIONS:
        assert report["questions"][q]["status"] == "error"
        assert report["questions"][q]["answer"] == METHOD_NOT_FOUND  # the raw answer, kept
    errors = {f["question"]: f["detail"] for f in report["findings"]
              if f["code"] == "method_error" and "question" in f}  # fmt: skip
    said = "interview/usage answered a JSON-RPC error -32601: Method not found (in HTTP 400)"
    assert errors["usage"] == said
    [selector] = [f for f in report["findings"] if f.get("probe") == "valid_selector"]
    assert selector["code"] == "method_error" and selector["detail"].endswith("(in HTTP 400)")


@pytest.mark.parametrize("name", ["leaky", "eager", "paramless", "selector-refusing", "unimplemented"])
def test_every_probe_finding_names_its_probe(
    fleet: Any, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    _code, report = _verify(capsys, fleet.agents[name])
    probed = [f for f in report["findings"] if "probe" in f]
    assert probed, "the agent is in this list for its probe findings"
    for f in probed:
        assert f["probe"] in PROBES and f["probe"] in f["detail"], f
    main(["verify", "--no-history", "--keys", fleet.agents[name].jwks_url, fleet.agents[name].card_url])
    out, _ = capsys.readouterr()
    lines = [line for line in out.splitlines() if any(f"[{p}]" in line for p in PROBES)]
    assert lines and all(line.split("]", 1)[0].rsplit("[", 1)[1] in line.split("]", 1)[1] for line in lines)


# --- card_unsigned and `card`: the words fit what was compared ---------------------------------


UNSIGNED_SILENT_CARD = {
    "name": "Quiet Books", "description": "Declares no interview", "version": "1.0.0",
    "supportedInterfaces": [{"url": "http://127.0.0.1:9/a2a", "protocolBinding": "JSONRPC",
                             "protocolVersion": "1.0"}],
    "capabilities": {"extensions": []}, "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s1", "name": "S", "description": "d", "tags": []}],
}  # fmt: skip


class _UnsignedSilentAgent(BaseHTTPRequestHandler):
    """An unsigned card without the interview extension: nothing is asked, nothing compared."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self.path == "/.well-known/agent-card.json":
            send_json(self, UNSIGNED_SILENT_CARD)
        else:
            send_json(self, {"error": "not_found"}, 404)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def unsigned_silent() -> Iterator[str]:
    with serving(_UnsignedSilentAgent) as server:
        yield base_url(server) + "/.well-known/agent-card.json"


def test_card_unsigned_speaks_of_projections_only_when_some_were_compared(
    fleet: Any, capsys: pytest.CaptureFixture[str], unsigned_silent: str
) -> None:
    assert main(["verify", "--json", "--no-history", unsigned_silent]) == 4  # not_offered
    out, _ = capsys.readouterr()
    [unsigned] = [f for f in json.loads(out)["findings"] if f["code"] == "card_unsigned"]
    assert unsigned["detail"] == "the card carries no signatures"
    assert main(["verify", "--json", "--no-history", fleet.agents["unsigned"].card_url]) == 0
    out, _ = capsys.readouterr()
    report = json.loads(out)
    [unsigned] = [f for f in report["findings"] if f["code"] == "card_unsigned"]
    compared = sum(1 for entry in (*report["questions"].values(), *report["probes"])
                   for p in entry.get("projections") or []
                   if p["document"] == "card" and p["status"] in ("match", "mismatch"))  # fmt: skip
    assert compared > 1
    assert unsigned["detail"] == (
        f"the card carries no signatures; the {compared} card projections were compared with unsigned bytes"
    )


def test_card_on_a_card_without_the_interview_names_no_place_it_is_asked(
    fleet: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["card", fleet.agents["silent"].card_url]) == 0
    out, _ = capsys.readouterr()
    assert "  interview not declared: nothing is asked over this card" in out
    assert "asked here" not in out and "  * " not in out
    assert main(["card", fleet.agents["steady"].card_url]) == 0
    out, _ = capsys.readouterr()
    assert "  * the interview is asked here (JSON-RPC, A2A-Version 1.0)" in out
    assert "interview not declared" not in out
