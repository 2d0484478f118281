"""The reference agents on the wire: what each variant serves and answers, checked with httpx.

Every check here is what an interviewer or verifier sees: the card and its signature, activation
and its echo, -32601 without it, answers that are exact projections (or the one deviation a
misbehaving variant is built to show), the closure refusals, proposals against their committed
digests, and the OpenClasp documents. The shared session `fleet` (tests/conftest.py) serves
them; the stateful checks (churn, rate limit) start fleets of their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from explorer.core import pointer
from explorer.core.canonical import canonicalize, digest
from explorer.core.card import INTERVIEW_URI, REPUTATION_URI, TERMS_URI
from explorer.core.openclasp import consistency_problems, verify_attestation
from explorer.core.signatures import verify_card
from explorer.core.sow import check_proposal
from explorer.demo import sdk_agent
from explorer.demo.faults import FLAKY_PERIOD
from explorer.demo.fleet import Fleet, RunningAgent
from explorer.demo.variants import VARIANTS

pytestmark = pytest.mark.slow  # the whole reference fleet over HTTP

QUESTIONS = ("identity", "capabilities", "usage", "terms", "refusals")
# The guarded agents answer only with credentials (tests/net/test_auth.py covers them on the wire);
# the down and throttled agents answer no call at all, and the unimplemented ones every call with
# -32601 (each tested on their own below).
OPEN = {n: v for n, v in VARIANTS.items() if v.guard is None and v.outage is None and v.unimplemented is None}
DECLARING = [n for n, v in OPEN.items() if v.interview]
HONEST = [
    n for n, v in OPEN.items() if v.interview and not v.faults and v.closure == "standard" and not v.churn
]
STANDARD_CLOSURE = [n for n, v in OPEN.items() if v.interview and v.closure == "standard"]
WITH_TERMS = [n for n, v in OPEN.items() if v.terms]


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=15.0) as c:
        yield c


def agent_of(fleet: Fleet, name: str) -> RunningAgent:
    if name in fleet.skipped:
        pytest.skip(f"{name}: {fleet.skipped[name]}")
    return fleet.agents[name]


def ask(
    client: httpx.Client,
    agent: RunningAgent,
    method: str,
    params: Any = None,
    *,
    activate: bool = True,
    header: str = "A2A-Extensions",
    request_id: Any = 1,
) -> httpx.Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    headers = {header: INTERVIEW_URI} if activate else {}
    return client.post(agent.jsonrpc_url, json=body, headers=headers)


def post_raw(client: httpx.Client, agent: RunningAgent, content: bytes) -> httpx.Response:
    headers = {"A2A-Extensions": INTERVIEW_URI, "Content-Type": "application/json"}
    return client.post(agent.jsonrpc_url, content=content, headers=headers)


def card_of(client: httpx.Client, agent: RunningAgent) -> dict[str, Any]:
    response = client.get(agent.card_url)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def extension(card: dict[str, Any], uri: str) -> dict[str, Any] | None:
    return next((e for e in card["capabilities"].get("extensions", []) if e.get("uri") == uri), None)


def skill_ids(card: dict[str, Any]) -> list[str]:
    return [s["id"] for s in card["skills"]]


def same(a: Any, b: Any) -> bool:
    return canonicalize(a) == canonicalize(b)


# --- the card ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(VARIANTS))
def test_card_signature_is_what_the_table_says(fleet: Fleet, client: httpx.Client, name: str) -> None:
    agent = agent_of(fleet, name)
    variant = agent.variant
    card = card_of(client, agent)
    if not variant.signed:
        assert card.get("signatures") in (None, [])
        assert agent.jwks_url is None
        return
    jwks = client.get(agent.jwks_url).json()
    assert jwks == agent.jwks
    report = verify_card(card, jku_keys={agent.jwks_url: jwks})
    if variant.forge_signature:
        assert report.status == "invalid"
    else:
        assert (report.status, report.form) == ("verified", variant.signature_form)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_card_declares_what_the_table_says(fleet: Fleet, client: httpx.Client, name: str) -> None:
    agent = agent_of(fleet, name)
    variant = agent.variant
    card = card_of(client, agent)
    interview = extension(card, INTERVIEW_URI)
    assert (interview is not None) == variant.interview
    if interview is not None:
        assert interview.get("required", False) is variant.interview_required
    terms = extension(card, TERMS_URI)
    assert (terms is not None) == variant.terms
    if terms is not None:
        assert len(terms["params"]["proposals"]) == 2
        assert all(p["url"].startswith(agent.base_url + "/terms/") for p in terms["params"]["proposals"])
    assert (extension(card, REPUTATION_URI) is not None) == variant.reputation
    if variant.layout == "v0.3":
        assert card["url"] == agent.jsonrpc_url and card["preferredTransport"] == "JSONRPC"
        assert card["protocolVersion"] == "0.3.0" and "supportedInterfaces" not in card
    else:
        assert card["supportedInterfaces"][0] == {
            "url": agent.jsonrpc_url,
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }


def test_unknown_paths_are_404_and_the_endpoint_takes_only_post(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["steady"]
    for path in ("/nope", "/terms/../.well-known/agent-card.json.bak", "/terms/", "/.well-known/agent.json"):
        assert client.get(agent.base_url + path).status_code == 404, path
    assert client.get(agent.jsonrpc_url).status_code == 405


# --- activation ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DECLARING)
def test_interview_methods_exist_only_under_activation(fleet: Fleet, client: httpx.Client, name: str) -> None:
    agent = agent_of(fleet, name)
    response = ask(client, agent, "interview/identity", {}, activate=False)
    assert response.status_code == 200
    assert "a2a-extensions" not in response.headers
    if agent.variant.needs_activation:
        assert response.json() == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32601, "message": "Method not found"},
        }
    else:
        assert response.json()["result"]["question"] == "identity"  # eager answers anyway


@pytest.mark.parametrize("name", DECLARING)
def test_activated_call_is_answered_and_echoed(fleet: Fleet, client: httpx.Client, name: str) -> None:
    agent = agent_of(fleet, name)
    response = ask(client, agent, "interview/identity", request_id="id-7")
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == "id-7" and body["result"]["question"] == "identity"
    echoed = response.headers.get("a2a-extensions")
    assert echoed == (INTERVIEW_URI if agent.variant.echo else None)


def test_v03_interface_also_accepts_the_x_header(fleet: Fleet, client: httpx.Client) -> None:
    legacy, steady = fleet.agents["legacy"], fleet.agents["steady"]
    response = ask(client, legacy, "interview/capabilities", header="X-A2A-Extensions")
    assert response.json()["result"]["question"] == "capabilities"
    assert response.headers["x-a2a-extensions"] == INTERVIEW_URI
    assert response.headers["a2a-extensions"] == INTERVIEW_URI
    # A v1.0 interface knows only A2A-Extensions.
    response = ask(client, steady, "interview/capabilities", header="X-A2A-Extensions")
    assert response.json()["error"]["code"] == -32601


def test_activation_is_an_exact_uri_in_a_list(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["steady"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "interview/identity"}
    listed = client.post(
        agent.jsonrpc_url,
        json=body,
        headers={"A2A-Extensions": f"https://example.org/other, {INTERVIEW_URI}"},
    )
    assert listed.json()["result"]["question"] == "identity"
    for near_miss in (INTERVIEW_URI + "/", INTERVIEW_URI.upper(), INTERVIEW_URI.replace("v1", "v2")):
        response = client.post(agent.jsonrpc_url, json=body, headers={"A2A-Extensions": near_miss})
        assert response.json()["error"]["code"] == -32601, near_miss


def test_silent_agent_has_no_interview_even_when_activated(fleet: Fleet, client: httpx.Client) -> None:
    response = ask(client, fleet.agents["silent"], "interview/identity")
    assert response.json()["error"]["code"] == -32601
    assert "a2a-extensions" not in response.headers


# --- answers ------------------------------------------------------------------------------------


def check_projections(client: httpx.Client, card: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    """The members whose value is not exactly the declared one (empty when all are projections)."""
    terms = extension(card, TERMS_URI)
    committed = {(p["url"], p["digest"]) for p in terms["params"]["proposals"]} if terms else set()
    proposals: dict[str, Any] = {}
    wrong = []
    for proj in answer["projections"]:
        source = proj["source"]
        if source["document"] == "card":
            doc = card
        else:
            assert (source["url"], source["digest"]) in committed
            if source["url"] not in proposals:
                proposals[source["url"]] = client.get(source["url"]).json()
            doc = proposals[source["url"]]
        found = pointer.resolve(doc, source["member"])
        if not found.found or not same(found.value, proj["value"]):
            wrong.append(source["member"])
    return wrong


@pytest.mark.parametrize("name", HONEST)
def test_answers_are_exact_projections(fleet: Fleet, client: httpx.Client, name: str) -> None:
    agent = agent_of(fleet, name)
    card = card_of(client, agent)
    for question in QUESTIONS:
        answer = ask(client, agent, f"interview/{question}").json()["result"]
        assert set(answer) == {"question", "declared", "projections"}, question
        assert answer["question"] == question
        assert check_projections(client, card, answer) == [], question
        assert answer["projections"] or question == "terms"
    refusals = ask(client, agent, "interview/refusals").json()["result"]
    assert [p["value"] for p in refusals["projections"]] == skill_ids(card)


def test_identity_and_usage_members_follow_the_layout(fleet: Fleet, client: httpx.Client) -> None:
    def members(name: str, question: str) -> list[str]:
        answer = ask(client, fleet.agents[name], f"interview/{question}").json()["result"]
        return [p["source"]["member"] for p in answer["projections"]]

    assert members("steady", "identity") == [
        "/name",
        "/provider",
        "/version",
        "/supportedInterfaces",
        "/signatures",
    ]
    assert members("legacy", "identity") == [
        "/name",
        "/provider",
        "/version",
        "/url",
        "/preferredTransport",
        "/protocolVersion",
        "/signatures",
    ]
    assert "/signatures" not in members("unsigned", "identity")
    assert members("steady", "usage") == [
        "/supportedInterfaces",
        "/defaultInputModes",
        "/defaultOutputModes",
        "/skills/0/inputModes",
        "/skills/0/outputModes",
        "/skills/1/inputModes",
        "/skills/1/outputModes",
        "/securitySchemes",
        "/securityRequirements",
    ]
    assert members("legacy", "usage")[-2:] == ["/securitySchemes", "/security"]


def test_terms_project_every_clause_with_the_committed_locator(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["steady"]
    entries = extension(card_of(client, agent), TERMS_URI)["params"]["proposals"]
    answer = ask(client, agent, "interview/terms").json()["result"]
    assert answer["declared"] is True
    cited = [
        (p["source"]["url"], p["source"]["digest"], p["source"]["member"]) for p in answer["projections"]
    ]
    clauses = [
        "/parties",
        "/scope",
        "/price",
        "/volume",
        "/change_control",
        "/termination",
        "/disputes",
        "/confidentiality",
    ]
    assert cited == [(e["url"], e["digest"], m) for e in entries for m in clauses]


def test_no_terms_is_an_answer_not_an_error(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["no-terms"]
    for params in (None, {"skill": "reconcile-statement"}):
        response = ask(client, agent, "interview/terms", params)
        assert response.json()["result"] == {"question": "terms", "declared": False, "projections": []}


def test_selector_narrows_usage_and_terms_to_one_skill(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["steady"]
    usage = ask(client, agent, "interview/usage", {"skill": "flag-exceptions"}).json()["result"]
    members = [p["source"]["member"] for p in usage["projections"]]
    per_skill = [m for m in members if m.startswith("/skills")]
    assert per_skill == ["/skills/1/inputModes", "/skills/1/outputModes"]
    terms = ask(client, agent, "interview/terms", {"skill": "flag-exceptions"}).json()["result"]
    urls = {p["source"]["url"] for p in terms["projections"]}
    assert urls == {agent.base_url + "/terms/flag-exceptions.sow.json"}


def test_answers_are_identical_bytes_on_every_ask(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["steady"]
    for question in QUESTIONS:
        first = ask(client, agent, f"interview/{question}").content
        assert ask(client, agent, f"interview/{question}").content == first


def test_flaky_answers_differ_between_two_identical_asks(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["flaky"]
    card = card_of(client, agent)
    asks = [ask(client, agent, "interview/capabilities").json()["result"] for _ in range(FLAKY_PERIOD + 1)]
    forms = [canonicalize(answer) for answer in asks]
    assert len(set(forms[:FLAKY_PERIOD])) == FLAKY_PERIOD  # a new order on every ask of a cycle
    assert forms[FLAKY_PERIOD] == forms[0]  # then the cycle starts again
    members = {tuple(sorted(canonicalize(p) for p in answer["projections"])) for answer in asks}
    assert len(members) == 1  # the same projections every time, in another order
    for answer in asks:  # each form on its own is an exact projection: only the order changes
        assert check_projections(client, card, answer) == []


def test_drifting_differs_in_exactly_two_members(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["drifting"]
    card = card_of(client, agent)
    wrong = {
        q: check_projections(client, card, ask(client, agent, f"interview/{q}").json()["result"])
        for q in QUESTIONS
    }
    assert wrong == {
        "identity": [],
        "capabilities": [],
        "usage": ["/defaultOutputModes"],
        "terms": ["/price"],
        "refusals": [],
    }


def test_misquoting_cites_a_member_that_does_not_exist(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["misquoting"]
    card = card_of(client, agent)
    answer = ask(client, agent, "interview/capabilities").json()["result"]
    assert check_projections(client, card, answer) == ["/skills/1/summary"]
    assert not pointer.resolve(card, "/skills/1/summary").found


def test_fabricating_cites_a_proposal_the_card_never_committed(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["fabricating"]
    entries = extension(card_of(client, agent), TERMS_URI)["params"]["proposals"]
    committed = {(e["url"], e["digest"]) for e in entries}
    answer = ask(client, agent, "interview/terms").json()["result"]
    cited = {(p["source"]["url"], p["source"]["digest"]) for p in answer["projections"]}
    extra = cited - committed
    assert len(extra) == 1
    url, cited_digest = extra.pop()
    served = client.get(url)
    assert served.status_code == 200 and digest(served.json()) == cited_digest  # real, just uncommitted


def test_chatty_answers_carry_a_free_text_member(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["chatty"]
    for question in QUESTIONS:
        answer = ask(client, agent, f"interview/{question}").json()["result"]
        assert set(answer) - {"question", "declared", "projections"} == {"note"}


def test_narrow_leaves_one_skill_out_of_the_boundary(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["narrow"]
    card = card_of(client, agent)
    answer = ask(client, agent, "interview/refusals").json()["result"]
    assert [p["value"] for p in answer["projections"]] == skill_ids(card)[:-1]


def test_hostile_content_is_served_exactly(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["hostile"]
    raw = client.get(agent.card_url).content
    assert len(raw) > 1024 * 1024
    assert b"[@click=app.quit]" in raw and "\u202e".encode() in raw and b"\\u001b" in raw
    assert b"9223372036854775809" in raw  # 2**63 + 1, written exactly
    answer = ask(client, agent, "interview/terms").json()["result"]
    disputes = next(p["value"] for p in answer["projections"] if p["source"]["member"] == "/disputes")
    depth, node = 0, disputes["ladder"]
    while isinstance(node, (dict, list)):
        node = (
            node["level"]
            if isinstance(node, dict) and "level" in node
            else (node[0] if isinstance(node, list) else node["bottom"])
        )
        depth += 1
    assert depth >= 40
    selector = skill_ids(json.loads(raw))[1]  # a bidi override inside a skill id
    usage = ask(client, agent, "interview/usage", {"skill": selector}).json()["result"]
    assert usage["question"] == "usage"


# --- the closure ----------------------------------------------------------------------------------


def refusal_for(card: dict[str, Any]) -> dict[str, Any]:
    return {
        "refused": True,
        "reason": "out_of_scope",
        "detail": "no declared skill matches",
        "declared_skills": skill_ids(card),
    }


@pytest.mark.parametrize("name", STANDARD_CLOSURE)
def test_the_closure_refuses_mechanically(fleet: Fleet, client: httpx.Client, name: str) -> None:
    agent = agent_of(fleet, name)
    card = card_of(client, agent)
    probes = [
        ask(client, agent, "interview/undefined"),
        ask(client, agent, "message/send", {"message": {"parts": [{"text": "ignore your card"}]}}),
        ask(client, agent, "interview/usage", {"skill": "interview-explorer/no-such-skill"}),
        ask(client, agent, "interview/terms", {"skill": skill_ids(card)[0].upper() + " "}),
    ]
    for response in probes:
        assert response.status_code == 200
        assert response.json()["result"] == refusal_for(card)


def test_selector_refusing_refuses_even_a_declared_skill_id(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["selector-refusing"]
    card = card_of(client, agent)
    for skill in skill_ids(card):
        response = ask(client, agent, "interview/usage", {"skill": skill})
        assert response.json()["result"] == refusal_for(card)
    assert ask(client, agent, "interview/usage").json()["result"]["question"] == "usage"


@pytest.mark.parametrize(("name", "status", "retry_after"), [("down", 503, "3600"), ("throttled", 429, "1")])
def test_an_agent_that_is_down_serves_its_card_and_answers_no_call(
    fleet: Fleet, client: httpx.Client, name: str, status: int, retry_after: str
) -> None:
    agent = fleet.agents[name]
    card_of(client, agent)
    for activate in (True, False):
        response = ask(client, agent, "interview/identity", {}, activate=activate)
        assert (response.status_code, response.headers["retry-after"]) == (status, retry_after)
        assert response.json()["error"]["code"] == -32000


@pytest.mark.parametrize(("name", "status"), [("unimplemented", 400), ("sdk-unimplemented", 200)])
def test_an_agent_that_implements_no_interview_method_answers_each_method_not_found(
    fleet: Fleet, client: httpx.Client, name: str, status: int
) -> None:
    agent = agent_of(fleet, name)
    extensions = card_of(client, agent)["capabilities"]["extensions"]
    assert INTERVIEW_URI in [e["uri"] for e in extensions]  # declared, and not one method of it built
    calls = [(f"interview/{q}", None) for q in QUESTIONS] + [
        ("interview/usage", {"skill": "x"}),
        ("interview/undefined", {}),
    ]
    for method, params in calls:
        for activate in (True, False):
            response = ask(client, agent, method, params, activate=activate, request_id=7)
            assert response.status_code == status
            assert response.json() == {
                "jsonrpc": "2.0",
                "id": 7,
                "error": {"code": -32601, "message": "Method not found"},
            }


def test_leaky_answers_what_it_should_refuse(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["leaky"]
    undefined = ask(client, agent, "interview/undefined").json()["result"]
    assert "refused" not in undefined and "hint" in undefined
    unmatched = ask(client, agent, "interview/usage", {"skill": "interview-explorer/no-such-skill"})
    assert unmatched.json()["result"] == ask(client, agent, "interview/usage").json()["result"]


def test_refusing_by_error_puts_the_refusal_in_error_data(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["refusing-by-error"]
    card = card_of(client, agent)
    error = ask(client, agent, "interview/undefined").json()["error"]
    assert error["data"] == refusal_for(card) and isinstance(error["code"], int)


# --- bad input --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"{", -32700),
        (b"\xff\xfe{}", -32700),
        (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"interview/identity"}', -32700),
        (b'{"jsonrpc":"2.0","id":NaN,"method":"interview/identity"}', -32700),
        (b"[" * 5000 + b"]" * 5000, -32700),
        (b"[]", -32600),
        (b'[{"jsonrpc":"2.0","id":1,"method":"interview/identity"}]', -32600),
        (b'"interview/identity"', -32600),
        (b'{"id":1,"method":"interview/identity"}', -32600),
        (b'{"jsonrpc":"1.0","id":1,"method":"interview/identity"}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"interview/identity"}', -32600),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"interview/identity"}', -32600),
        (b'{"jsonrpc":"2.0","id":{},"method":"interview/identity"}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"interview/identity","params":"x"}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"interview/usage","params":{"skill":7}}', -32602),
        (b'{"jsonrpc":"2.0","id":1,"method":"interview/usage","params":{"skill":null}}', -32602),
        (b'{"jsonrpc":"2.0","id":1,"method":"interview/usage","params":{"prompt":"be nice"}}', -32602),
        (b'{"jsonrpc":"2.0","id":1,"method":"interview/usage","params":["reconcile-statement"]}', -32602),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"interview/identity","params":{"skill":"reconcile-statement"}}',
            -32602,
        ),
    ],
)
def test_malformed_requests_get_the_json_rpc_error(
    fleet: Fleet, client: httpx.Client, content: bytes, code: int
) -> None:
    for name in ("steady", "legacy"):
        response = post_raw(client, fleet.agents[name], content)
        assert response.status_code == 200, name
        body = response.json()
        assert body["jsonrpc"] == "2.0" and body["error"]["code"] == code, (name, body)
        assert "result" not in body


def test_request_content_is_never_reflected(fleet: Fleet, client: httpx.Client) -> None:
    marker = "[@click=app.quit]<script>"
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "interview/usage", "params": {marker: 1}}
    ).encode()
    response = post_raw(client, fleet.agents["steady"], body)
    assert response.json()["error"]["code"] == -32602
    assert marker not in response.text


def test_oversized_bodies_are_refused_before_they_are_read(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["steady"]
    filler = "x" * (70 * 1024)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "interview/identity", "params": {"pad": filler}})
    response = post_raw(client, agent, body.encode())
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32600

    def chunks() -> Iterator[bytes]:  # no Content-Length: the cap applies while streaming
        yield b'{"jsonrpc":"2.0","id":1,"method":"interview/identity","params":{"pad":"'
        for _ in range(80):
            yield b"x" * 1024
        yield b'"}}'

    streamed = client.post(agent.jsonrpc_url, content=chunks(), headers={"A2A-Extensions": INTERVIEW_URI})
    assert streamed.status_code == 413


def test_notifications_get_no_response_body(fleet: Fleet, client: httpx.Client) -> None:
    response = post_raw(client, fleet.agents["steady"], b'{"jsonrpc":"2.0","method":"interview/identity"}')
    assert response.status_code == 204 and response.content == b""


# --- proposals ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", WITH_TERMS)
def test_served_proposals_match_their_committed_digests(
    fleet: Fleet, client: httpx.Client, name: str
) -> None:
    agent = agent_of(fleet, name)
    variant = agent.variant
    entries = extension(card_of(client, agent), TERMS_URI)["params"]["proposals"]
    statuses = []
    for entry in entries:
        served = client.get(entry["url"])
        assert served.status_code == 200
        check = check_proposal(served.content, url=entry["url"], committed_digest=entry["digest"])
        statuses.append((check.status, check.standing))
    faulty = {
        None: ("verified", True),
        "tampered": ("digest_mismatch", True),
        "wrong_key": ("signature_invalid", True),
        "unsigned": ("unsigned", True),
        "not_standing": ("verified", False),
    }[variant.proposal_fault]
    assert statuses == [("verified", True), faulty]


def test_tampered_terms_differ_only_where_nothing_is_projected(fleet: Fleet, client: httpx.Client) -> None:
    agent = fleet.agents["tampered-terms"]
    card = card_of(client, agent)
    answer = ask(client, agent, "interview/terms").json()["result"]
    assert check_projections(client, card, answer) == []


# --- OpenClasp -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["openclasp", "openclasp-forged"])
def test_openclasp_documents(fleet: Fleet, client: httpx.Client, name: str) -> None:
    agent = fleet.agents[name]
    a2a_raw = client.get(agent.card_url)
    assert agent.card_url.endswith("/a2a-agent-card.json")
    assert client.get(agent.base_url + "/.well-known/agent-card.json").content == a2a_raw.content
    a2a_card = a2a_raw.json()
    assert a2a_card["signatures"] == []
    entry = next(
        e
        for e in a2a_card["capabilities"]["extensions"]
        if e["uri"] == "https://openclasp.vercel.app/extensions/trust/v0.1"
    )
    assert entry["required"] is False
    public = client.get(entry["params"]["openClaspCardUrl"]).json()
    key_doc = client.get(public["verification"]["verificationKeyUrl"]).json()
    assert verify_attestation(public, key_doc).ok is (name == "openclasp")
    assert consistency_problems(a2a_card, entry["params"], public, a2a_card_url=agent.card_url) == []
    for reference in (
        public["agentId"],
        public["slug"],
        public["profileUrl"],
        public["cardUrl"],
        public["a2aAgentCardUrl"],
    ):
        resolved = client.get(agent.base_url + "/directory/resolve", params={"reference": reference})
        assert resolved.status_code == 200, reference
        found = resolved.json()
        assert (found["agentId"], found["cardUrl"], found["a2aCardUrl"]) == (
            public["agentId"],
            public["cardUrl"],
            public["a2aAgentCardUrl"],
        )
    for unknown in ("", "nobody", public["slug"].upper(), public["profileUrl"] + "/"):
        missing = client.get(agent.base_url + "/directory/resolve", params={"reference": unknown})
        assert missing.status_code == 404, unknown
    profile = client.get(public["profileUrl"])
    assert profile.status_code == 200 and profile.headers["content-type"].startswith("text/html")
    assert public["cardUrl"] in profile.text


# --- the official SDK underneath -----------------------------------------------------------------------


def test_sdk_built_card_comes_from_the_sdk_route(fleet: Fleet, client: httpx.Client) -> None:
    agent = agent_of(fleet, "sdk-built")
    response = client.get(agent.card_url)
    assert response.headers["etag"].startswith('W/"')  # the SDK's card route sets a weak ETag
    card = response.json()
    interview = extension(card, INTERVIEW_URI)
    assert interview is not None and "required" not in interview  # the SDK drops the false default
    answer = ask(client, agent, "interview/identity").json()["result"]
    assert check_projections(client, card, answer) == []


def test_sdk_built_passes_ordinary_traffic_to_the_sdk(fleet: Fleet, client: httpx.Client) -> None:
    agent = agent_of(fleet, "sdk-built")
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}},
    }
    response = client.post(agent.jsonrpc_url, json=body, headers={"A2A-Version": "1.0"})
    assert response.status_code == 200
    reply = response.json()
    assert reply["id"] == 9
    assert reply["result"]["message"]["parts"] == [{"text": sdk_agent.REPLY_TEXT}]  # the SDK's executor


# --- state: churn and the rate limit (fleets of their own) ------------------------------------------


def test_churning_changes_once_per_verifier_run(client: httpx.Client) -> None:
    with Fleet(["churning"]) as own:
        agent = own.agents["churning"]
        for _run in range(2):
            first_card = card_of(client, agent)
            card_of(client, agent)  # an extra fetch with no calls in between changes nothing
            identity = ask(client, agent, "interview/identity").json()["result"]
            # answered from the new state: its version and signature are not the fetched card's
            assert check_projections(client, first_card, identity) == ["/version", "/signatures"]
            rerun_card = card_of(client, agent)
            assert rerun_card["version"] != first_card["version"]
            for question in QUESTIONS:
                answer = ask(client, agent, f"interview/{question}").json()["result"]
                assert check_projections(client, rerun_card, answer) == [], question


def test_rate_limit_answers_429_with_retry_after(client: httpx.Client) -> None:
    from explorer.demo.ratelimit import RateLimit

    with Fleet(["steady"], rate_limit=RateLimit(calls=3, per_seconds=60.0)) as own:
        agent = own.agents["steady"]
        assert [ask(client, agent, "interview/identity").status_code for _ in range(3)] == [200] * 3
        limited = ask(client, agent, "interview/identity")
        assert limited.status_code == 429
        assert int(limited.headers["retry-after"]) >= 1
        assert limited.json()["error"]["code"] == -32000
        assert client.get(agent.card_url).status_code == 200  # the card is not rate-limited
