"""Property tests of the whole report: one changed member is found exactly, layout changes nothing.

`tests/core/test_diff.py` already shows, for one capabilities answer and `diff_question` alone, that
mutating one projected value flags exactly that member. These properties go through the whole
pure pipeline instead (`explorer.core.evaluate` over recorded exchanges, with a really signed
card and a really signed proposal), and take their answers from the model of an honest agent,
`explorer.demo.projection`, so all five questions, proposal sources and closure probes are in
play:

- an agent answering honestly from any generated card is conformant, with no error at all;
- change one projected value in one answer and the errors name exactly that question and
  member (a skill id in the refusals boundary also, rightly, breaks the boundary);
- change one member of the card (and sign it again) while the agent still answers from the old
  card, and the errors name exactly that member, plus `/signatures` (which changed with it);
- serialise the same signed card, proposal and answers with any key order, any whitespace and
  any mix of escaped and literal characters, and the report is identical.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core import pointer
from explorer.core.canonical import canonical_text, digest
from explorer.core.card import INTERVIEW_URI, TERMS_URI
from explorer.core.evaluate import UNDEFINED_METHOD, UNMATCHED_SELECTOR, evaluate
from explorer.core.findings import QUESTIONS
from explorer.core.run import Exchange
from explorer.core.signatures import generate_key, public_jwks, sign_card, verify_card
from explorer.core.sow import public_nkey, sign_proposal
from explorer.core.strict_json import parse as strict_parse
from explorer.demo import content, projection
from explorer.demo.jsonrpc import METHOD_NOT_FOUND, error_body, result_body
from explorer.net.jsonrpc import call_headers, rpc_body
from tests.support.strategies import SAFE_INTEGERS, json_scalars, json_values

pytestmark = pytest.mark.slow  # property tests over whole signed cards and interviews

BASE = "http://127.0.0.1:9"  # never contacted: the exchanges are built here, evaluate is pure
CARD_URL = f"{BASE}/.well-known/agent-card.json"
RPC_URL = f"{BASE}/a2a/jsonrpc"
PROPOSAL_URL = f"{BASE}/terms/offer.sow.json"
CARD_KEY = generate_key("ES256", kid="property-card-1")
KEYS = public_jwks(CARD_KEY)
SOW_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(7, 39)))
RAN_BY = {"name": "property", "role": "independent"}


def _proposal() -> dict[str, Any]:
    doc = content.proposals()["reconcile-statement"]
    doc["parties"]["provider"]["agent"] = public_nkey(SOW_KEY)
    return sign_proposal(doc, SOW_KEY, signed_at=content.SIGNED_AT)


PROPOSAL = _proposal()
COMMITTED = (projection.Committed(PROPOSAL_URL, digest(PROPOSAL), "reconcile-statement", PROPOSAL),)

# --- the model: cards an honest agent could publish -------------------------------------------------

_TEXT = st.text(max_size=12)  # any Unicode but lone surrogates: markup, controls, bidi included
_JSON = json_values(
    json_scalars(integers=SAFE_INTEGERS, text=_TEXT), keys=st.text(max_size=6), list_size=3, max_leaves=10
)
_MODES = st.lists(
    st.sampled_from(["text/plain", "application/json", "text/csv", "image/png"]),
    min_size=1,
    max_size=3,
    unique=True,
)


@st.composite
def cards(draw: st.DrawFn) -> dict[str, Any]:
    """An unsigned v1.0 card declaring the interview and terms, with generated content."""
    ids = draw(st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=3, unique=True))
    skills = [
        {
            "id": skill_id,
            "name": draw(_TEXT),
            "description": draw(_TEXT),
            "tags": draw(st.lists(_TEXT, max_size=2)),
            "inputModes": draw(_MODES),
            "outputModes": draw(_MODES),
        }
        for skill_id in ids
    ]
    entry = {"url": PROPOSAL_URL, "digest": digest(PROPOSAL), "offering": "reconcile-statement"}
    terms = {"sow_spec": content.SOW_SPEC, "proposals": [entry]}
    return {
        "name": draw(_TEXT),
        "description": draw(_TEXT),
        "version": draw(_TEXT),
        "provider": {"organization": draw(_TEXT), "url": "https://provider.example", "extra": draw(_JSON)},
        "supportedInterfaces": [{"url": RPC_URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {
            "extensions": [
                {"uri": INTERVIEW_URI, "description": "the five questions", "required": False},
                {"uri": TERMS_URI, "required": False, "params": terms},
            ]
        },
        "defaultInputModes": draw(_MODES),
        "defaultOutputModes": draw(_MODES),
        "skills": skills,
    }


def sign(card: dict[str, Any]) -> dict[str, Any]:
    return sign_card(card, CARD_KEY, kid="property-card-1")


def honest_answers(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {q: projection.answer(q, card, COMMITTED) for q in QUESTIONS}


# --- exchanges, as the procedure would have recorded them --------------------------------------------

Dump = Any  # a function value -> bytes


def compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _call(
    purpose: str,
    attempt: int,
    request_id: int,
    method: str,
    params: dict[str, Any],
    activated: bool,
    response: bytes,
) -> Exchange:
    headers = tuple(call_headers("1.0", activated=activated).items())
    echo = (("A2A-Extensions", INTERVIEW_URI),) if activated else ()
    request = rpc_body(request_id, method, params)
    return Exchange(purpose, attempt, "POST", RPC_URL, headers, request, 200, echo, response)


def exchanges(
    card: dict[str, Any], answers: dict[str, dict[str, Any]], dump: Dump = compact, attempts: int = 2
) -> list[Exchange]:
    """Every exchange of `attempts` identical attempts against an agent serving these bytes."""
    refusal = projection.standard_refusal(card)
    out: list[Exchange] = []
    for attempt in range(1, attempts + 1):
        out.append(Exchange("card", attempt, "GET", CARD_URL, status=200, response_body=dump(card)))
        out.append(
            Exchange("proposal", attempt, "GET", PROPOSAL_URL, status=200, response_body=dump(PROPOSAL))
        )
        request_id = 1
        for round_number in (1, 2):
            for q in QUESTIONS:
                body = result_body(request_id, dump(answers[q]))
                purpose = f"ask:{q}#{round_number}"
                out.append(_call(purpose, attempt, request_id, f"interview/{q}", {}, True, body))
                request_id += 1
        probes = (
            ("undefined_method", UNDEFINED_METHOD, {}, True, result_body(request_id, dump(refusal))),
            (
                "unmatched_selector",
                "interview/usage",
                {"skill": UNMATCHED_SELECTOR},
                True,
                result_body(request_id + 1, dump(refusal)),
            ),
            (
                "unactivated_call",
                "interview/identity",
                {},
                False,
                error_body(request_id + 2, METHOD_NOT_FOUND, "Method not found"),
            ),
        )
        for offset, (name, method, params, activated, body) in enumerate(probes):
            out.append(_call(f"probe:{name}", attempt, request_id + offset, method, params, activated, body))
    return out


def report_of(exs: list[Exchange]) -> dict[str, Any]:
    return evaluate(
        exs,
        KEYS,
        target=BASE,
        ran_by=RAN_BY,
        started_at="2026-01-01T00:00:00.000Z",
        finished_at="2026-01-01T00:00:01.000Z",
    )


def errors(report: dict[str, Any]) -> set[tuple[str, str | None, str | None]]:
    found = report["findings"]
    return {(f["code"], f.get("question"), f.get("member")) for f in found if f["severity"] == "error"}


_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- properties ---------------------------------------------------------------------------------------


@_SETTINGS
@given(cards(), st.data())
def test_mutating_one_answered_member_is_found_exactly(card: dict[str, Any], data: st.DataObject) -> None:
    signed = sign(card)
    answers = honest_answers(signed)
    honest = report_of(exchanges(signed, answers))
    assert honest["verdict"] == "conformant" and errors(honest) == set(), honest["findings"]

    places = [(q, i) for q in QUESTIONS for i in range(len(answers[q]["projections"]))]
    question, index = data.draw(st.sampled_from(places), label="projection")
    projected = answers[question]["projections"][index]
    member = projected["source"]["member"]
    before = canonical_text(projected["value"])
    changed = copy.deepcopy(answers)
    changed[question]["projections"][index]["value"] = data.draw(
        _JSON.filter(lambda v: canonical_text(v) != before), label="new value"
    )

    report = report_of(exchanges(signed, changed))
    expected = {("projection_mismatch", question, member)}
    if question == "refusals":
        expected.add(("refusals_boundary_mismatch", "refusals", None))
    assert errors(report) == expected, report["findings"]
    assert report["verdict"] == "nonconformant"
    statuses = [p["status"] for p in report["questions"][question]["projections"]]
    assert statuses == ["mismatch" if i == index else "match" for i in range(len(statuses))]


def _card_members(card: dict[str, Any]) -> list[str]:
    """Card members an honest agent projects, other than skill ids, interfaces and signatures."""
    members: list[str] = []
    for q in ("identity", "capabilities", "usage"):
        for proj in projection.answer(q, card, COMMITTED)["projections"]:
            member = proj["source"]["member"]
            if (
                member not in members
                and member not in ("/signatures", "/supportedInterfaces")
                and not member.endswith("/id")
            ):
                members.append(member)
    return members


@_SETTINGS
@given(cards(), st.data())
def test_mutating_one_card_member_is_found_exactly(card: dict[str, Any], data: st.DataObject) -> None:
    old = sign(card)
    answers = honest_answers(old)  # the agent keeps answering from the card it signed before
    member = data.draw(st.sampled_from(_card_members(card)), label="member")
    before = canonical_text(pointer.resolve(card, member).value)
    edited = copy.deepcopy(card)
    tokens = pointer.parse(member)
    parent = pointer.resolve(edited, pointer.join(*tokens[:-1])).value
    key: Any = int(tokens[-1]) if isinstance(parent, list) else tokens[-1]
    parent[key] = data.draw(_JSON.filter(lambda v: canonical_text(v) != before), label="new value")

    report = report_of(exchanges(sign(edited), answers))
    assert report["card"]["signature"]["status"] == "verified"  # the new card is genuinely signed
    found = errors(report)
    assert {code for code, _, _ in found} == {"projection_mismatch"}, report["findings"]
    assert {m for _, _, m in found} == {member, "/signatures"}


# --- layout: key order, whitespace, escapes --------------------------------------------------------

_SPACE = " \t\n\r"


def _string(text: str, rnd: random.Random) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\' or code < 0x20 or rnd.random() < 0.3:
            if code > 0xFFFF:  # astral: a surrogate pair of escapes
                code -= 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04X}")
            else:
                out.append(f"\\u{code:04x}" if rnd.random() < 0.5 else f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def scramble(value: Any, rnd: random.Random) -> str:
    """The same JSON value, with keys shuffled, random whitespace and random escapes."""

    def ws() -> str:
        return "".join(rnd.choice(_SPACE) for _ in range(rnd.randint(0, 2)))

    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        inner = ",".join(f"{ws()}{_string(k, rnd)}{ws()}:{ws()}{scramble(v, rnd)}{ws()}" for k, v in items)
        return "{" + (inner or ws()) + "}"
    if isinstance(value, list):
        inner = ",".join(f"{ws()}{scramble(v, rnd)}{ws()}" for v in value)
        return "[" + (inner or ws()) + "]"
    if isinstance(value, str):
        return _string(value, rnd)
    return json.dumps(value)


def test_scramble_keeps_the_value() -> None:
    rnd = random.Random(7)
    value = {"b": [1, 2.5, None, True, 'é\U0001f600"\\\n'], "a": {"": {}}, "c": []}
    for _ in range(50):
        assert strict_parse(scramble(value, rnd).encode("utf-8")) == value


@_SETTINGS
@given(cards(), st.integers(min_value=0, max_value=2**32))
def test_a_signed_card_verifies_identically_under_any_layout(card: dict[str, Any], seed: int) -> None:
    rnd = random.Random(seed)
    signed = sign(card)
    relaid = strict_parse((_SPACE[0] + scramble(signed, rnd) + _SPACE[2]).encode("utf-8"))
    assert relaid == signed
    assert verify_card(relaid, KEYS).to_json() == verify_card(signed, KEYS).to_json()
    assert verify_card(relaid, KEYS).status == "verified"

    answers = honest_answers(signed)
    plain = report_of(exchanges(signed, answers))
    shuffled = report_of(exchanges(signed, answers, dump=lambda v: scramble(v, rnd).encode("utf-8")))
    assert plain["verdict"] == shuffled["verdict"] == "conformant"
    for member in ("findings", "questions", "probes", "answers_sha256"):
        assert shuffled[member] == plain[member], member
    assert shuffled["card"]["sha256"] == plain["card"]["sha256"]
    assert shuffled["card"]["signature"] == plain["card"]["signature"]
