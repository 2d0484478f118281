"""The closure probes of one attempt, judged (a part of `explorer.core.evaluate`).

The probes ask what the interview must not answer: an undefined method and a selector matching
no declared skill must draw the standard refusal, a call without the activation header must get
JSON-RPC -32601, and a selector equal to a declared skill id must be answered, its answer diffed
like a question's (so this module reads calls and diffs through `explorer.core.questions`). Each
probe becomes one entry of the report's `probes`.

Reading of the texts where they are silent:

- A closure probe must draw the refusal with reason `out_of_scope` (the interview extension,
  section 4 rule 3 and section 6 rule 1); any other outcome, including a well-formed
  `not_declared` refusal, fails the probe.
- The unactivated call is judged by its JSON-RPC body whatever the 4xx status, since only
  -32601 is acceptable and some servers send it with a 4xx status. A probe answered with HTTP
  5xx or a final 429 got no answer at all: `http_status`, like a question. The valid-selector
  probe reads a JSON-RPC error inside a 4xx as that error, as the questions do.

Every finding of a probe names its probe in its detail (`probe undefined_method: ...`), not only
in its `probe` member: a line read alone still says which call it is about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from explorer.core.answers import RpcOutcome, check_answer, check_refusal, is_refusal
from explorer.core.attempt import Attempt, last_of, parse_body, report_transport, show
from explorer.core.auth_findings import refused_for_auth, required_finding
from explorer.core.findings import PROBES, UNACTIVATED_PROBES, Finding
from explorer.core.outage import down_answer
from explorer.core.questions import DiffContext, read_reply, reads_as_answer, sent_request
from explorer.core.run import Exchange

METHOD_NOT_FOUND = -32601

_CLOSURE_CODES = {
    "undefined_method": "closure_method_not_refused",
    "unmatched_selector": "closure_selector_not_refused",
}


def _probe_outcome(out: RpcOutcome) -> tuple[str, Any]:
    """(outcome, the refusal object if any)."""
    if out.kind == "result" and is_refusal(out.result):
        return "refused", out.result
    if out.kind == "error" and is_refusal(out.data):
        return "refused", out.data
    if out.kind == "error" and out.code == METHOD_NOT_FOUND:
        return "method_not_found", None
    if out.kind == "result":
        return "answered", None
    return "error", None


def judge_probes(a: Attempt, exs: Sequence[Exchange], doc: Mapping[str, Any], ctx: DiffContext) -> None:
    """Every closure probe sent: the report's `probes` and their findings, each naming its probe."""
    skill_ids = ctx.skill_ids
    start = len(a.findings)
    for name in PROBES:
        ex, _ = last_of(exs, f"probe:{name}")
        if ex is None:
            continue
        request = sent_request(ex)
        sent = parse_body(ex.request_body)
        keys = (
            ("method", "params", "activated")
            if isinstance(sent, dict) and "params" in sent
            else ("method", "activated")
        )  # a probe sent without params says so by leaving the member out
        entry: dict[str, Any] = {
            "name": name,
            "request": {k: request[k] for k in keys},
            "response": parse_body(ex.response_body),
            "status": ex.status,
            "outcome": "error",
        }
        a.probes.append(entry)
        if ex.error is not None or ex.truncated or down_answer(ex):
            report_transport(a, ex, probe=name)  # a server error or a 429 is no answer to judge
            continue
        if refused_for_auth(ex) and name != "unactivated_call":
            required = required_finding([(f"the {name} probe", ex)], doc, probe=name)
            if required is not None:  # always, for the one refused call
                a.findings.append(required)
            continue
        out = read_reply(ex)
        outcome, refusal = _probe_outcome(out)
        entry["outcome"] = outcome
        status = f" (HTTP {ex.status})" if not ex.usable else ""
        got = _describe(out, outcome) + status
        if name == "valid_selector":
            _valid_selector(a, ex, entry, out, got, ctx)
            continue
        if name in UNACTIVATED_PROBES:
            if outcome != "method_not_found":
                how = "with no params" if name == "unactivated_call_no_params" else "with params {}"
                a.add(
                    "unactivated_call_answered",
                    f"an interview call without the activation header ({how}) "
                    f"must get JSON-RPC error -32601 (method not found); it got {got}",
                    probe=name,
                )
            continue
        if outcome != "refused":
            a.add(
                _CLOSURE_CODES[name],
                f"expected the standard refusal (reason out_of_scope); got {got}",
                probe=name,
            )
            continue
        if out.kind == "error":
            a.add(
                "refusal_as_error",
                "the refusal arrived inside a JSON-RPC error (error.data); it is read as the refusal",
                probe=name,
            )
        a.findings.extend(check_refusal(refusal, skill_ids, probe=name))
        reason = refusal.get("reason") if isinstance(refusal, dict) else None
        if reason == "not_declared":
            a.add(
                _CLOSURE_CODES[name],
                "refused with reason not_declared; the closure's reason is "
                "out_of_scope (interview extension 4.3 and 6.1)",
                probe=name,
            )
    a.findings[start:] = [_naming_its_probe(f) for f in a.findings[start:]]


def _naming_its_probe(f: Finding) -> Finding:
    """The finding with its probe named at the head of its detail, unless the detail names it."""
    if f.probe is None or f.probe in f.detail:
        return f
    return replace(f, detail=f"probe {f.probe}: {f.detail}")


def _valid_selector(
    a: Attempt, ex: Exchange, entry: dict[str, Any], out: RpcOutcome, got: str, ctx: DiffContext
) -> None:
    """A selector equal to a declared skill id must be answered (only a selector matching no id
    is refused, section 4 rule 3), and the answer is diffed like any other (section 7)."""
    name = "valid_selector"
    selector = (
        (entry["request"].get("params") or {}).get("skill")
        if isinstance(entry["request"].get("params"), dict)
        else None
    )
    shown = show(repr(selector), 120)
    if entry["outcome"] == "refused":
        a.add(
            "selector_refused",
            f"interview/usage with the selector {shown}, a declared skill id, got "
            f"{got}; only a selector that matches no declared id is refused (interview extension 4.3)",
            probe=name,
        )
        return
    if not reads_as_answer(ex):
        report_transport(a, ex, probe=name)  # an HTTP error status: no answer to diff
        return
    if out.kind == "malformed":
        a.add("answer_malformed", f"the JSON-RPC response is malformed: {show(out.problem, 300)}", probe=name)
        return
    if out.kind == "error":
        within = "" if ex.usable else f" (in HTTP {ex.status})"
        a.add(
            "method_error",
            f"interview/usage with the selector {shown} answered a JSON-RPC error "
            f"{out.code}: {show(out.message, 200)}{within}",
            probe=name,
        )
        return
    found = check_answer("usage", out.result)
    projections, diffed = ctx.diff("usage", out.result)
    entry["projections"] = [p.to_json() for p in projections]
    a.findings.extend(replace(f, question=None, probe=name) for f in (*found, *diffed))


def _describe(out: RpcOutcome, outcome: str) -> str:
    if out.kind == "malformed":
        return f"a malformed response ({show(out.problem, 200)})"
    if out.kind == "error":
        return f"JSON-RPC error {out.code} ({show(out.message, 120)})"
    return "a refusal" if outcome == "refused" else "an answer"
