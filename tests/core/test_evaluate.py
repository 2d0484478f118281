"""The whole report from recorded exchanges: every attempt judged again, offline and deterministic.

Each test builds the exchanges a verifier would have recorded (a really signed card, a really
signed proposal, JSON-RPC bodies as bytes) and checks the report a user or a CI job reads.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.canonical import canonicalize
from explorer.core.card import INTERVIEW_URI, OPENCLASP_URI, REPUTATION_URI, TERMS_URI
from explorer.core.evaluate import UNDEFINED_METHOD, UNMATCHED_SELECTOR, evaluate
from explorer.core.findings import QUESTIONS
from explorer.core.openclasp import public_key_document, sign_attestation
from explorer.core.report import STANDING_WORDS, summary_lines, validate_report
from explorer.core.run import Exchange, Run
from explorer.core.signatures import generate_key, public_jwks, sign_card
from explorer.core.sow import proposal_digest, public_nkey, sign_proposal
from tests.support.strategies import json_scalars, json_values

BASE = "http://127.0.0.1:8765"
CARD_URL = f"{BASE}/.well-known/agent-card.json"
RPC_URL = f"{BASE}/a2a"
PROPOSAL_URL = f"{BASE}/terms/reconcile-statement.sow.json"
SKILLS = ["reconcile-statement", "flag-exceptions"]
CARD_KEY = generate_key("ES256", kid="card-key-1")
KEYS = public_jwks(CARD_KEY)
SOW_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
PLATFORM_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(2, 34)))
RAN_BY = {"name": "ci@example.org", "role": "independent"}

PROPOSAL = sign_proposal(
    {
        "sow": "v1",
        "id": "sow_test",
        "version": 1,
        "starts_at": None,
        "parties": {"provider": {"agent": public_nkey(SOW_KEY), "owner": "Stonework"}, "client": None},
        "price": {
            "arrangement": "fixed_fee",
            "currency": "XCR",
            "rates": [{"offering": "reconcile-statement", "per_task": 2500000}],
            "grade": "enforced",
        },
        "volume": {"per_day": 8, "grade": "enforced"},
    },
    SOW_KEY,
    signed_at="2026-08-11T09:00:00Z",
)
DIGEST = proposal_digest(PROPOSAL)


def make_card(*, terms: bool = True, interview: bool = True, sign: bool = True, **changes: Any) -> dict:
    extensions: list[dict] = []
    if interview:
        extensions.append({"uri": INTERVIEW_URI, "description": "The five questions", "required": False})
    if terms:
        extensions.append(
            {
                "uri": TERMS_URI,
                "required": False,
                "params": {
                    "sow_spec": "0.18.0-draft",
                    "proposals": [
                        {
                            "url": PROPOSAL_URL,
                            "digest": DIGEST,
                            "sow": "sow_test",
                            "offering": "reconcile-statement",
                        }
                    ],
                },
            }
        )
    card = {
        "name": "Stonework Books",
        "description": "Reconciles statements",
        "version": "1.4.0",
        "provider": {"organization": "Stonework Analytics", "url": "https://stonework.example"},
        "supportedInterfaces": [{"url": RPC_URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"extensions": extensions},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {"id": SKILLS[0], "name": "Reconcile", "description": "Reconcile a statement", "tags": ["books"]},
            {"id": SKILLS[1], "name": "Flag", "description": "Flag exceptions", "tags": ["books"]},
        ],
    }
    card.update(changes)
    return sign_card(card, CARD_KEY, kid="card-key-1") if sign else card


CARD = make_card()  # ES256 signatures are randomised: one signed card keeps attempts identical


def cp(member: str, value: Any) -> dict:
    return {"source": {"document": "card", "member": member}, "value": value}


def pp(member: str, value: Any, digest: str = DIGEST) -> dict:
    return {
        "source": {"document": "proposal", "member": member, "url": PROPOSAL_URL, "digest": digest},
        "value": value,
    }


def honest_answers(card: dict, proposal: dict | None = PROPOSAL) -> dict[str, Any]:
    """What a conformant agent answers: exact projections of its card and proposal."""
    skills = card["skills"]
    has_terms = any(e["uri"] == TERMS_URI for e in card["capabilities"]["extensions"])
    return {
        "identity": {
            "question": "identity",
            "declared": True,
            "projections": [
                cp("/name", card["name"]),
                cp("/provider", card["provider"]),
                cp("/version", card["version"]),
                cp("/supportedInterfaces", card["supportedInterfaces"]),
            ],
        },
        "capabilities": {
            "question": "capabilities",
            "declared": True,
            "projections": [
                p
                for i, s in enumerate(skills)
                for p in (cp(f"/skills/{i}/id", s["id"]), cp(f"/skills/{i}/description", s["description"]))
            ],
        },
        "usage": {
            "question": "usage",
            "declared": True,
            "projections": [
                cp("/supportedInterfaces", card["supportedInterfaces"]),
                cp("/defaultInputModes", card["defaultInputModes"]),
            ],
        },
        "terms": (
            {
                "question": "terms",
                "declared": True,
                "projections": [pp("/price", proposal["price"]), pp("/volume", proposal["volume"])],
            }
            if has_terms and proposal is not None
            else {"question": "terms", "declared": False, "projections": []}
        ),
        "refusals": {
            "question": "refusals",
            "declared": True,
            "projections": [cp(f"/skills/{i}/id", s["id"]) for i, s in enumerate(skills)],
        },
    }


def refusal(skills: list[str] | None = None, reason: str = "out_of_scope") -> dict:
    return {
        "refused": True,
        "reason": reason,
        "detail": "no declared skill matches",
        "declared_skills": SKILLS if skills is None else skills,
    }


def rpc_result(result: Any, rid: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def rpc_error(code: int, message: str, rid: int, data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}).encode()


ECHO = (("A2A-Extensions", INTERVIEW_URI), ("Content-Type", "application/json"))


def call(
    purpose: str,
    attempt: int,
    rid: int,
    method: str,
    body: bytes | None,
    *,
    params: dict | None = None,
    activated: bool = True,
    status: int | None = 200,
    error: str | None = None,
    headers: tuple = ECHO,
    omit_params: bool = False,
) -> Exchange:
    request_headers = (("A2A-Version", "1.0"),) + ((("A2A-Extensions", INTERVIEW_URI),) if activated else ())
    sent: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if not omit_params:
        sent["params"] = params or {}
    request = json.dumps(sent).encode()
    return Exchange(
        purpose=purpose,
        attempt=attempt,
        method="POST",
        url=RPC_URL,
        request_headers=request_headers,
        request_body=request,
        status=None if error else status,
        response_headers=() if error else headers,
        response_body=body or b"",
        error=error,
    )


def attempt(
    card: dict | bytes | None = None,
    *,
    n: int = 1,
    answers: dict[str, Any] | None = None,
    answers2: dict[str, Any] | None = None,
    proposal: bytes | None = None,
    probes: dict[str, bytes] | None = None,
    override: Callable[[list[Exchange]], list[Exchange]] | None = None,
    headers: tuple = ECHO,
    leave_out: tuple[str, ...] = (),
) -> list[Exchange]:
    """Every exchange of one attempt against an agent; the defaults are a conformant agent.
    `leave_out` names probes that were not sent."""
    doc = CARD if card is None else card
    body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    out = [Exchange(purpose="card", attempt=n, method="GET", url=CARD_URL, status=200, response_body=body)]
    out.append(
        Exchange(
            purpose="proposal",
            attempt=n,
            method="GET",
            url=PROPOSAL_URL,
            status=200,
            response_body=json.dumps(PROPOSAL).encode() if proposal is None else proposal,
        )
    )
    ans = honest_answers(doc) if answers is None else answers
    ans2 = ans if answers2 is None else answers2
    rid = 0
    for q in QUESTIONS:
        for k, source in ((1, ans), (2, ans2)):
            rid += 1
            value = source[q]
            payload = (
                value(rid)
                if callable(value)
                else value
                if isinstance(value, bytes)
                else rpc_result(value, rid)
            )
            out.append(call(f"ask:{q}#{k}", n, rid, f"interview/{q}", payload, headers=headers))
    probe_bodies = {
        "undefined_method": rpc_result(refusal(), 11),
        "unmatched_selector": rpc_result(refusal(), 12),
        "valid_selector": rpc_result(honest_answers(doc)["usage"] if isinstance(doc, dict) else {}, 15),
        "unactivated_call": rpc_error(-32601, "Method not found", 13),
        "unactivated_call_no_params": rpc_error(-32601, "Method not found", 14),
    }
    probe_bodies.update(probes or {})
    out.append(call("probe:undefined_method", n, 11, UNDEFINED_METHOD, probe_bodies["undefined_method"]))
    out.append(
        call(
            "probe:unmatched_selector",
            n,
            12,
            "interview/usage",
            probe_bodies["unmatched_selector"],
            params={"skill": UNMATCHED_SELECTOR},
        )
    )
    if "valid_selector" not in (leave_out or ()):
        out.append(
            call(
                "probe:valid_selector",
                n,
                15,
                "interview/usage",
                probe_bodies["valid_selector"],
                params={"skill": SKILLS[0]},
            )
        )
    out.append(
        call(
            "probe:unactivated_call",
            n,
            13,
            "interview/identity",
            probe_bodies["unactivated_call"],
            activated=False,
            headers=(),
        )
    )
    out.append(
        call(
            "probe:unactivated_call_no_params",
            n,
            14,
            "interview/identity",
            probe_bodies["unactivated_call_no_params"],
            activated=False,
            headers=(),
            omit_params=True,
        )
    )
    return override(out) if override else out


def report_of(*attempts: list[Exchange], keys: dict | None = KEYS, ran_by: dict = RAN_BY) -> dict:
    exchanges = [e for group in attempts for e in group]
    report = evaluate(
        exchanges,
        keys,
        target=BASE,
        ran_by=ran_by,
        started_at="2026-11-30T10:00:00Z",
        finished_at="2026-11-30T10:00:02Z",
        explorer_version="0.1.0",
    )
    assert validate_report(report) == []
    json.dumps(report)  # JSON-safe throughout
    return report


def codes(report: dict, key: str = "findings") -> list[str]:
    return [f["code"] for f in report[key]]


def errors(report: dict) -> list[str]:
    return [f["code"] for f in report["findings"] if f["severity"] == "error"]


def replace_ex(purpose: str, **changes: Any) -> Callable[[list[Exchange]], list[Exchange]]:
    def apply(exs: list[Exchange]) -> list[Exchange]:
        return [replace(e, **changes) if e.purpose == purpose else e for e in exs]

    return apply


# --- a conformant agent --------------------------------------------------------------------------


def test_conformant_agent_gives_the_full_report() -> None:
    report = report_of(attempt())
    assert report["verdict"] == "conformant"
    assert report["findings"] == []
    assert (report["standing"], report["ran_by"], report["attempts"]) == ("evidence", RAN_BY, 1)
    card = report["card"]
    assert (card["url"], card["layout"], card["discovered_via"], card["jsonrpc_url"]) == (
        CARD_URL,
        "v1.0",
        "/.well-known/agent-card.json",
        RPC_URL,
    )
    sig = card["signature"]
    assert (sig["status"], sig["form"], sig["alg"], sig["kid"], sig["key_source"]) == (
        "verified",
        "served",
        "ES256",
        "card-key-1",
        "user",
    )
    assert card["terms"]["proposals"][0]["status"] == "verified"
    for q in QUESTIONS:
        entry = report["questions"][q]
        assert entry["status"] == "answered" and entry["answer"]["declared"] is True
        declared = {d["member"]: d["value"] for d in entry["declared"]}  # the card's, beside the answer's
        assert declared
        assert all(declared.get(p["member"], p["value"]) == p["value"] for p in entry["projections"])
        assert entry["projections"] and all(p["status"] == "match" for p in entry["projections"])
    terms = report["questions"]["terms"]["projections"]
    assert {p["document"] for p in terms} == {"proposal"} and all(p["signed"] for p in terms)
    assert [(p["name"], p["outcome"]) for p in report["probes"]] == [
        ("undefined_method", "refused"),
        ("unmatched_selector", "refused"),
        ("valid_selector", "answered"),
        ("unactivated_call", "method_not_found"),
        ("unactivated_call_no_params", "method_not_found"),
    ]
    assert report["probes"][1]["request"] == {
        "method": "interview/usage",
        "params": {"skill": UNMATCHED_SELECTOR},
        "activated": True,
    }
    assert report["probes"][2]["request"] == {
        "method": "interview/usage",
        "params": {"skill": SKILLS[0]},
        "activated": True,
    }
    assert {p["status"] for p in report["probes"][2]["projections"]} == {"match"}
    assert report["probes"][3]["request"] == {
        "method": "interview/identity",
        "params": {},
        "activated": False,
    }
    assert report["probes"][4]["request"] == {"method": "interview/identity", "activated": False}
    expected = hashlib.sha256(canonicalize(honest_answers(CARD))).hexdigest()
    assert report["answers_sha256"] == expected
    assert report["card"]["sha256"] == hashlib.sha256(canonicalize(CARD)).hexdigest()


def test_the_report_is_deterministic_and_survives_a_transcript_round_trip() -> None:
    exchanges = attempt()
    first = report_of(exchanges)
    run = Run.from_transcript(json.loads(json.dumps(Run(first, tuple(exchanges), KEYS).to_transcript())))
    again = evaluate(
        run.exchanges,
        run.keys,
        target=BASE,
        ran_by=RAN_BY,
        started_at=first["started_at"],
        finished_at=first["finished_at"],
        explorer_version="0.1.0",
    )
    assert again == first


def test_standing_follows_who_ran_it() -> None:
    assert report_of(attempt(), ran_by={"name": "me"})["standing"] == "claim"
    assert report_of(attempt(), ran_by={"name": "me", "role": "self"})["ran_by"]["role"] == "self"
    assert report_of(attempt(), ran_by={"name": "p", "role": "platform"})["standing"] == "evidence"
    assert report_of(attempt(), ran_by={"name": "x", "role": "boss"})["ran_by"]["role"] == "self"


# --- conflicts, churn and re-runs ----------------------------------------------------------------


def lying(card: dict) -> dict[str, Any]:
    answers = honest_answers(card)
    answers["capabilities"]["projections"][1] = cp("/skills/0/description", "Reconcile anything at all")
    return answers


def test_persistent_conflict_is_nonconformant() -> None:
    report = report_of(attempt(answers=lying(CARD)), attempt(n=2, answers=lying(CARD)))
    assert report["verdict"] == "nonconformant" and report["attempts"] == 2
    (mismatch,) = [f for f in report["findings"] if f["code"] == "projection_mismatch"]
    assert (mismatch["question"], mismatch["member"]) == ("capabilities", "/skills/0/description")
    proj = report["questions"]["capabilities"]["projections"][1]
    assert proj["status"] == "mismatch"
    assert proj["value_canonical"] == '"Reconcile anything at all"'
    assert proj["source_canonical"] == '"Reconcile a statement"'
    assert proj["diff"] == [12, 26] and proj["source_diff"] == [12, 22]  # after '"Reconcile a'


def test_conflict_that_vanishes_on_the_rerun_is_churn() -> None:
    report = report_of(attempt(answers=lying(CARD)), attempt(n=2))
    assert report["verdict"] == "churn"
    assert codes(report) == ["churn"]
    assert (
        "did not survive the re-run: projection_mismatch (capabilities /skills/0/description)"
        in (report["findings"][0]["detail"])
    )
    assert report["first_attempt"]["conflicts"][0]["member"] == "/skills/0/description"
    assert report["questions"]["capabilities"]["projections"][1]["status"] == "match"  # the last attempt


def test_card_changed_between_attempts() -> None:
    old = make_card(version="1.3.0")
    report = report_of(attempt(old), attempt(n=2))
    assert report["verdict"] == "conformant"
    assert codes(report) == ["card_changed"]


def test_nondeterministic_answers() -> None:
    card = make_card()
    second = honest_answers(card)
    second["usage"]["projections"].reverse()
    report = report_of(attempt(answers2=second))
    assert report["verdict"] == "nonconformant"
    got = [(f["code"], f.get("question")) for f in report["findings"]]
    assert got == [("nondeterministic_answer", "usage")]


# --- the card ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("timeout", "timeout"),
        ("transport: ConnectError: Connection refused", None),
        ("redirect_refused: http://a redirects to http://b, another origin", "redirect_refused"),
        ("blocked: 10.0.0.1 is not a public address", "address_blocked"),
    ],
)
def test_card_transport_failures_are_unreachable(error: str, code: str | None) -> None:
    """One cause, one message: a refused connection is card_unreachable alone; a specific cause
    keeps its code and card_unreachable names it instead of repeating it."""
    exs = [Exchange(purpose="card", attempt=1, method="GET", url=CARD_URL, error=error)]
    report = report_of(exs)
    assert report["verdict"] == "unreachable"
    assert sorted(codes(report)) == sorted([c for c in (code, "card_unreachable") if c])
    unreachable = next(f for f in report["findings"] if f["code"] == "card_unreachable")
    assert unreachable["detail"].endswith(f"({code})" if code else error)
    assert all(q["status"] == "not_asked" for q in report["questions"].values())
    assert report["answers_sha256"] is None and report["card"]["sha256"] is None


def test_card_http_404_after_both_well_known_paths() -> None:
    exs = [
        Exchange(purpose="card-discovery", attempt=1, method="GET", url=CARD_URL, status=404),
        Exchange(purpose="card", attempt=1, method="GET", url=f"{BASE}/.well-known/agent.json", status=404),
    ]
    report = report_of(exs)
    assert report["verdict"] == "unreachable"
    assert codes(report) == ["card_unreachable"]  # the HTTP status is in its detail, said once
    f = report["findings"][0]
    assert "HTTP 404" in f["detail"] and "agent-card.json" in f["detail"]


@pytest.mark.parametrize(
    "body", [b'{"name": "a", "name": "b"}', b"[1, 2]", b'{"n": NaN}', b"\xff", b"", b"null"]
)
def test_malformed_card(body: bytes) -> None:
    report = report_of(
        [Exchange(purpose="card", attempt=1, method="GET", url=CARD_URL, status=200, response_body=body)]
    )
    assert report["verdict"] == "unreachable" and codes(report) == ["card_malformed"]


def test_oversized_card() -> None:
    exs = [
        Exchange(
            purpose="card",
            attempt=1,
            method="GET",
            url=CARD_URL,
            status=200,
            response_body=b"{",
            truncated=True,
            error="body_too_large",
        )
    ]
    assert sorted(codes(report_of(exs))) == ["body_too_large", "card_malformed"]


def test_no_exchanges_at_all_is_unreachable() -> None:
    report = report_of([])
    assert report["verdict"] == "unreachable" and report["attempts"] == 1
    assert codes(report) == ["card_unreachable"]


def test_card_from_a_file() -> None:
    exs = attempt()
    exs[0] = Exchange(
        purpose="card", attempt=1, method="FILE", url="/tmp/card.json", response_body=exs[0].response_body
    )
    report = report_of(exs)
    assert report["card"]["discovered_via"] == "file" and report["verdict"] == "conformant"


def test_unsigned_card_is_a_warning_and_members_are_marked_unsigned() -> None:
    card = make_card(sign=False)
    report = report_of(attempt(card))
    assert report["verdict"] == "conformant"
    assert codes(report) == ["card_unsigned"]
    assert all(p["signed"] is False for p in report["questions"]["identity"]["projections"])


def test_card_signed_with_an_unknown_key_is_unverifiable() -> None:
    report = report_of(attempt(), keys=None)
    assert report["verdict"] == "conformant"
    assert codes(report) == ["card_signature_unverifiable"]
    assert report["card"]["signature"]["status"] == "unverifiable"


def test_tampered_card_signature_is_invalid() -> None:
    card = make_card()
    card["description"] = "Changed after signing"
    report = report_of(attempt(card))
    assert report["verdict"] == "nonconformant"
    assert codes(report) == ["card_signature_invalid"]


def test_jku_keys_come_from_jwks_exchanges() -> None:
    jku = f"{BASE}/jwks.json"
    card = sign_card(make_card(sign=False), CARD_KEY, kid="card-key-1", jku=jku)
    exs = attempt(card)
    exs.insert(
        1,
        Exchange(
            purpose="jwks",
            attempt=1,
            method="GET",
            url=jku,
            status=200,
            response_body=json.dumps(KEYS).encode(),
        ),
    )
    sig = report_of(exs, keys=None)["card"]["signature"]
    assert (sig["status"], sig["key_source"]) == ("verified", "jku")


# --- the card the agent speaks to ------------------------------------------------------------------

V03_IFACE = [{"url": RPC_URL, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}]
V03_SIGNED = make_card(supportedInterfaces=V03_IFACE)


def _translated(card: dict) -> dict:
    """What an SDK's compatibility layer serves a v0.3 client: the v1.0 card in the v0.3 layout,
    carrying the v1.0 card's signatures, one member dropped and one value rewritten."""
    out = {k: v for k, v in card.items() if k not in ("supportedInterfaces", "defaultOutputModes")}
    out.update(
        url=RPC_URL,
        preferredTransport="JSONRPC",
        protocolVersion="0.3",
        defaultInputModes=["text/plain", "text/markdown"],
    )
    return out


V03_SERVED = _translated(V03_SIGNED)


def _family_card(body: dict | bytes | None = None, **changes: Any) -> Exchange:
    raw = body if isinstance(body, bytes) else json.dumps(V03_SERVED if body is None else body).encode()
    fields: dict[str, Any] = {"status": 200, "response_body": raw, **changes}
    return Exchange(
        purpose="card:family",
        attempt=1,
        method="GET",
        url=CARD_URL,
        request_headers=(("A2A-Version", "0.3"),),
        **fields,
    )


def _v03_answers(identity_from: dict, **extra: list[dict]) -> dict[str, Any]:
    answers = honest_answers(V03_SIGNED)
    answers["identity"] = {
        "question": "identity",
        "declared": True,
        "projections": [
            cp("/name", identity_from["name"]),
            *[
                cp(f"/{m}", identity_from[m])
                for m in (
                    ("url", "preferredTransport", "protocolVersion")
                    if "url" in identity_from
                    else ("supportedInterfaces",)
                )
            ],
            *extra.get("identity", []),
        ],
    }
    answers["usage"] = {"question": "usage", "declared": True, "projections": extra.get("usage", [])}
    return answers


def _v03_report(answers: dict[str, Any], family: Exchange | None = None) -> dict:
    exs = attempt(V03_SIGNED, answers=answers)
    return report_of([exs[0], family or _family_card(), *exs[1:]])


def test_answers_about_the_card_served_to_the_calls_version_are_conformant() -> None:
    modes = cp("/defaultInputModes", ["text/plain", "text/markdown"])
    report = _v03_report(_v03_answers(V03_SERVED, usage=[modes]))
    assert report["verdict"] == "conformant"
    card = report["card"]
    assert (card["layout"], card["compared_layout"], card["compared_served_to"]) == ("v1.0", "v0.3", "0.3")
    assert card["compared_sha256"] == hashlib.sha256(canonicalize(V03_SERVED)).hexdigest() != card["sha256"]
    assert card["signature"]["status"] == "verified"  # on the bytes the signature covers
    identity = report["questions"]["identity"]["projections"]
    assert [(p["member"], p["status"], p["served_to"], p["signed"]) for p in identity] == [
        ("/name", "match", "0.3", True),
        ("/url", "match", "0.3", False),
        ("/preferredTransport", "match", "0.3", False),
        ("/protocolVersion", "match", "0.3", False),
    ]
    unsigned = {(f["member"], f["question"]) for f in report["findings"] if f["code"] == "member_unsigned"}
    assert unsigned == {
        ("/url", "identity"),
        ("/preferredTransport", "identity"),
        ("/protocolVersion", "identity"),
        ("/defaultInputModes", "usage"),
    }
    detail = next(f["detail"] for f in report["findings"] if f["member"] == "/url")
    assert "holds nothing there" in detail
    detail = next(f["detail"] for f in report["findings"] if f["member"] == "/defaultInputModes")
    assert "holds another value there" in detail


def test_answers_about_the_signed_card_are_conformant_too() -> None:
    """A member only the signed card has, or a value only it holds, is compared with it."""
    answers = _v03_answers(
        V03_SIGNED,
        usage=[cp("/defaultInputModes", ["text/plain"]), cp("/defaultOutputModes", ["application/json"])],
    )
    report = _v03_report(answers)
    assert report["verdict"] == "conformant", report["findings"]
    assert not [f for f in report["findings"] if f["code"] == "member_unsigned"]
    served_to = {
        p["member"]: (p["served_to"], p["signed"])
        for q in ("identity", "usage")
        for p in report["questions"][q]["projections"]
    }
    assert served_to == {
        "/name": ("0.3", True),
        "/supportedInterfaces": ("1.0", True),
        "/defaultInputModes": ("1.0", True),
        "/defaultOutputModes": ("1.0", True),
    }


def test_a_pointer_in_neither_card_or_a_value_in_neither_is_still_a_conflict() -> None:
    answers = _v03_answers(
        V03_SERVED, identity=[cp("/interfaceUrl", RPC_URL)], usage=[cp("/defaultInputModes", ["text/html"])]
    )
    report = _v03_report(answers)
    assert report["verdict"] == "nonconformant"
    found = {(f["code"], f.get("member")) for f in report["findings"] if f["severity"] == "error"}
    assert found == {("pointer_unresolved", "/interfaceUrl"), ("projection_mismatch", "/defaultInputModes")}
    detail = next(f["detail"] for f in report["findings"] if f["code"] == "pointer_unresolved")
    assert "served to A2A-Version 0.3 nor in the card fetched for its signatures (A2A-Version 1.0)" in detail
    (mismatch,) = [p for p in report["questions"]["usage"]["projections"] if p["status"] == "mismatch"]
    assert mismatch["served_to"] == "0.3" and mismatch["source_value"] == ["text/plain", "text/markdown"]


def test_one_card_for_every_version_or_a_family_card_that_fails_changes_nothing() -> None:
    answers = _v03_answers(V03_SIGNED)
    same = _v03_report(answers, _family_card(V03_SIGNED))
    assert same["verdict"] == "conformant"
    assert (same["card"]["compared_layout"], same["card"]["compared_served_to"]) == ("v1.0", "0.3")
    assert same["card"]["compared_sha256"] == same["card"]["sha256"]
    assert "served_to" not in same["questions"]["identity"]["projections"][0]
    for broken in (_family_card(status=503), _family_card(b"{not json"), _family_card([1])):
        report = _v03_report(answers, broken)
        assert report["verdict"] == "conformant"
        assert report["card"]["compared_sha256"] == report["card"]["sha256"]
        assert any(
            "served to A2A-Version 0.3 could not be read" in p["detail"] for p in report["card"]["problems"]
        )
    # Asked about the v0.3 card but the family card was never fetched: compared with the signed card.
    exs = attempt(V03_SIGNED, answers=_v03_answers(V03_SERVED))
    report = report_of(exs)
    assert report["verdict"] == "nonconformant"
    assert report["card"]["compared_served_to"] is None  # a card exchange recorded without the header


def test_member_unsigned_for_a_merged_card_signed_by_the_sdk_form() -> None:
    card = make_card(sign=False, url=RPC_URL, preferredTransport="JSONRPC")
    signed = sign_card(card, CARD_KEY, kid="card-key-1", form="sdk-normalized")
    answers = honest_answers(signed)
    answers["identity"]["projections"].append(cp("/url", RPC_URL))
    report = report_of(attempt(signed, answers=answers))
    assert report["card"]["layout"] == "mixed"
    assert report["card"]["signature"]["form"] == "sdk-normalized"
    assert [(f["code"], f["member"]) for f in report["findings"]] == [("member_unsigned", "/url")]
    assert report["verdict"] == "conformant"


def test_an_interface_with_an_empty_tenant_signed_by_the_sdk_form_is_covered_except_that_empty() -> None:
    interface = {"url": RPC_URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": ""}
    card = make_card(sign=False, supportedInterfaces=[interface])
    signed = sign_card(card, CARD_KEY, kid="card-key-1", form="sdk-normalized")
    answers = honest_answers(signed)
    answers["identity"]["projections"].append(cp("/supportedInterfaces/0", interface))
    report = report_of(attempt(signed, answers=answers))
    assert report["card"]["signature"]["form"] == "sdk-normalized"
    found = {(f["code"], f["severity"], f["member"]) for f in report["findings"]}
    assert ("member_unsigned_empty", "info", "/supportedInterfaces/0") in found  # and the whole array:
    assert {code for code, _, _ in found} == {"member_unsigned_empty"}  # no member_unsigned warning
    projection = report["questions"]["identity"]["projections"][-1]
    assert projection["unsigned_empty"] == ["/supportedInterfaces/0/tenant"]
    assert report["verdict"] == "conformant"


# --- declarations --------------------------------------------------------------------------------


def test_card_without_the_interview_is_not_offered_and_nothing_is_asked() -> None:
    card = make_card(interview=False)
    report = report_of(
        [
            Exchange(
                purpose="card",
                attempt=1,
                method="GET",
                url=CARD_URL,
                status=200,
                response_body=json.dumps(card).encode(),
            )
        ]
    )
    assert report["verdict"] == "not_offered"
    assert codes(report) == ["interview_not_declared"]
    assert "absence says nothing" in report["findings"][0]["detail"]
    assert all(q["status"] == "not_asked" for q in report["questions"].values())
    assert report["probes"] == [] and report["card"]["interview"] == {"declared": False, "required": None}


def test_interview_required_true() -> None:
    card = make_card(sign=False)
    card["capabilities"]["extensions"][0]["required"] = True
    report = report_of(attempt(card))
    assert "interview_required_true" in errors(report) and report["verdict"] == "nonconformant"


def test_no_jsonrpc_interface_is_unreachable() -> None:
    grpc = [{"url": RPC_URL, "protocolBinding": "GRPC", "protocolVersion": "1.0"}]
    card = make_card(supportedInterfaces=grpc)
    report = report_of(attempt(card))
    assert report["verdict"] == "unreachable"
    assert "no_jsonrpc_interface" in codes(report)


def test_no_terms_extension_and_an_honest_declared_false() -> None:
    card = make_card(terms=False)
    report = report_of(attempt(card))
    assert report["verdict"] == "conformant"
    assert codes(report) == ["terms_not_declared"]
    terms = report["questions"]["terms"]
    assert terms["answer"]["declared"] is False and terms["declared"] == []
    assert report["card"]["terms"]["declared"] is False


def test_fabricated_terms() -> None:
    card = make_card(terms=False)
    answers = honest_answers(card)
    answers["terms"] = {
        "question": "terms",
        "declared": True,
        "projections": [pp("/price", PROPOSAL["price"])],
    }
    report = report_of(attempt(card, answers=answers))
    assert {"terms_fabricated", "proposal_not_committed"} <= set(errors(report))
    assert report["questions"]["terms"]["projections"][0]["status"] == "unverifiable"


def test_terms_declared_wrong() -> None:
    card = CARD
    answers = honest_answers(card)
    answers["terms"] = {"question": "terms", "declared": False, "projections": []}
    assert errors(report_of(attempt(card, answers=answers))) == ["terms_declared_wrong"]


def test_invalid_terms_entry() -> None:
    card = make_card(sign=False)
    card["capabilities"]["extensions"][1]["params"]["proposals"][0]["digest"] = "sha256:XYZ"
    report = report_of(attempt(card))
    assert "terms_entry_invalid" in errors(report)
    assert report["card"]["terms"]["proposals"] == []


def test_proposal_digest_mismatch_makes_terms_unverifiable() -> None:
    changed = copy.deepcopy(PROPOSAL)
    changed["volume"]["per_day"] = 80
    report = report_of(attempt(proposal=json.dumps(changed).encode()))
    assert {"proposal_digest_mismatch", "proposal_signature_invalid"} <= set(errors(report))
    assert {p["status"] for p in report["questions"]["terms"]["projections"]} == {"unverifiable"}
    assert report["card"]["terms"]["proposals"][0]["status"] == "digest_mismatch"


def test_unreachable_proposal() -> None:
    report = report_of(attempt(override=replace_ex("proposal", status=404, response_body=b"")))
    assert "proposal_unreachable" in errors(report)


def test_answers_from_an_uncommitted_proposal() -> None:
    card = CARD
    answers = honest_answers(card)
    answers["terms"]["projections"][0] = pp("/price", PROPOSAL["price"], digest="sha256:" + "1" * 64)
    report = report_of(attempt(card, answers=answers))
    assert errors(report) == ["proposal_not_committed"]


def test_refusals_boundary_mismatch() -> None:
    card = CARD
    answers = honest_answers(card)
    answers["refusals"]["projections"].pop()
    report = report_of(attempt(card, answers=answers))
    assert errors(report) == ["refusals_boundary_mismatch"]


def test_lossy_number_in_a_compared_value() -> None:
    card = make_card(sign=False, limits={"max": 2**53 + 1})
    answers = honest_answers(card)
    answers["usage"]["projections"].append(cp("/limits/max", 2**53))
    report = report_of(attempt(card, answers=answers))
    assert [(f["code"], f["member"]) for f in report["findings"] if f.get("question") == "usage"] == [
        ("lossy_number", "/limits/max"),
        ("projection_mismatch", "/limits/max"),
    ]


# --- the calls -----------------------------------------------------------------------------------


def test_answer_shapes_are_checked() -> None:
    card = CARD
    answers = honest_answers(card)
    answers["identity"]["comment"] = "We are the best"
    answers["usage"] = ["not", "an", "object"]
    answers["capabilities"]["projections"][0]["source"]["member"] = "~2"
    report = report_of(attempt(card, answers=answers))
    assert [(f["code"], f.get("question"), f.get("member")) for f in report["findings"]] == [
        ("answer_extra_member", "identity", "/comment"),
        ("source_invalid", "capabilities", "/projections/0/source/member"),
        ("answer_shape_invalid", "usage", None),
    ]


def test_method_error_refusal_as_error_and_refused_questions() -> None:
    answers: dict[str, Any] = honest_answers(CARD)
    answers["identity"] = lambda rid: rpc_error(-32603, "Internal error", rid)
    answers["usage"] = lambda rid: rpc_error(-32000, "Refused", rid, data=refusal())
    answers["refusals"] = refusal()
    report = report_of(attempt(answers=answers))
    assert [(f["code"], f.get("question")) for f in report["findings"]] == [
        ("method_error", "identity"),
        ("answer_shape_invalid", "usage"),
        ("refusal_as_error", "usage"),
        ("answer_shape_invalid", "refusals"),
    ]
    assert report["questions"]["identity"]["status"] == "error"
    assert report["questions"]["identity"]["answer"] == {"code": -32603, "message": "Internal error"}
    assert report["questions"]["usage"]["status"] == "refused"
    assert report["questions"]["refusals"]["status"] == "refused"
    assert report["questions"]["refusals"]["answer"] == refusal()


def test_malformed_jsonrpc_response() -> None:
    card = CARD
    answers: dict[str, Any] = honest_answers(card)
    answers["identity"] = b'{"jsonrpc": "2.0", "id": 999, "result": {}}'
    report = report_of(attempt(card, answers=answers))
    (f,) = [f for f in report["findings"] if f["code"] == "answer_malformed"]
    assert f["question"] == "identity" and "does not match" in f["detail"]


def test_http_status_on_an_ask() -> None:
    report = report_of(attempt(override=replace_ex("ask:usage#1", status=500, response_body=b"oops")))
    assert [(f["code"], f.get("question")) for f in report["findings"]] == [("http_status", "usage")]
    assert report["questions"]["usage"]["status"] == "answered"  # the second ask was usable


def test_every_ask_timing_out_is_unreachable() -> None:
    def timeouts(exs: list[Exchange]) -> list[Exchange]:
        calls = ("ask:", "probe:")
        return [
            replace(e, status=None, error="timeout", response_body=b"") if e.purpose.startswith(calls) else e
            for e in exs
        ]

    report = report_of(attempt(override=timeouts))
    assert report["verdict"] == "unreachable"
    assert {f["code"] for f in report["findings"]} == {"timeout"}
    assert all(q["status"] == "error" for q in report["questions"].values())


def test_rounds_cut_short_after_timeouts_are_unreachable() -> None:
    exs = [e for e in attempt() if not e.purpose.startswith(("ask:", "probe:"))]
    exs.append(call("ask:identity#1", 1, 1, "interview/identity", None, error="timeout"))
    report = report_of(exs)
    assert report["verdict"] == "unreachable"
    assert report["questions"]["identity"]["status"] == "error"
    assert report["questions"]["usage"]["status"] == "not_asked"


def _calls_answered(status: Callable[[Exchange], int], *, retried_429: bool = False):
    def apply(exs: list[Exchange]) -> list[Exchange]:
        out: list[Exchange] = []
        for e in exs:
            if not e.purpose.startswith(("ask:", "probe:")):
                out.append(e)
                continue
            code = status(e)
            answered = replace(e, status=code, response_body=b'{"error": "down"}')
            if retried_429 and code == 429:
                out.append(answered)  # the 429 waited out, then the retry got 429 again
            out.append(answered)
        return out

    return apply


def test_every_call_answered_5xx_is_unreachable_not_nonconformant() -> None:
    """An agent that is down lied about nothing: unreachable, each status still named."""
    report = report_of(
        attempt(override=_calls_answered(lambda e: 500 if e.purpose.startswith("ask:usage") else 503))
    )
    assert report["verdict"] == "unreachable"
    # One finding per status, naming every call that got it; `question` only where one is concerned.
    down, failed = report["findings"]
    assert (down["code"], failed["code"]) == ("http_status", "http_status")
    assert failed["question"] == "usage"
    assert failed["detail"] == f"{RPC_URL} answered HTTP 500 to interview/usage"
    assert "question" not in down and "probe" not in down
    assert down["detail"] == f"{RPC_URL} answered HTTP 503 to " + ", ".join(
        [f"interview/{q}" for q in QUESTIONS if q != "usage"]
        + [
            "probe undefined_method",
            "probe unmatched_selector",
            "probe valid_selector",
            "probe unactivated_call",
            "probe unactivated_call_no_params",
        ]
    )


def test_every_call_rate_limited_for_good_is_unreachable() -> None:
    report = report_of(attempt(override=_calls_answered(lambda e: 429, retried_429=True)))
    assert report["verdict"] == "unreachable"
    assert {f["code"] for f in report["findings"]} == {"http_status", "rate_limited"}
    assert all("HTTP 429" in f["detail"] for f in report["findings"] if f["code"] == "http_status")


def test_a_first_round_down_and_nothing_more_asked_is_unreachable() -> None:
    exs = [e for e in attempt() if not e.purpose.startswith(("ask:", "probe:"))]
    exs += [
        call(f"ask:{q}#1", 1, i, f"interview/{q}", b"busy", status=503) for i, q in enumerate(QUESTIONS, 1)
    ]
    report = report_of(exs)
    assert report["verdict"] == "unreachable"
    assert report["questions"]["usage"]["status"] == "error"


def test_a_mix_of_answers_and_5xx_is_judged_as_before() -> None:
    """One call answered is enough for the questions to have been put: the 5xx are errors."""
    report = report_of(
        attempt(override=_calls_answered(lambda e: 200 if e.purpose == "probe:unactivated_call" else 503))
    )
    assert report["verdict"] == "nonconformant"
    assert "http_status" in errors(report)


CUT = "deadline: cut at the run's deadline (6 s)"
UNSENT = "deadline: not sent, the run's deadline (6 s) had passed"


def test_a_run_the_deadline_cut_is_unreachable_whatever_it_saw() -> None:
    """An answer that conflicts, then the deadline: the procedure was not finished, so no verdict
    about conformance, but what was seen is shown and diffed."""
    drifted = honest_answers(CARD)
    drifted["identity"]["projections"][0]["value"] = "Someone Else"
    cut = replace_ex("ask:usage#2", status=None, error=CUT, response_body=b"")
    exs = attempt(answers=drifted, override=cut)
    report = report_of(exs)
    assert report["verdict"] == "unreachable"
    summary = [f for f in report["findings"] if f["code"] == "deadline" and "question" not in f]
    assert [f["severity"] for f in summary] == ["error"]
    assert "(6 s)" in summary[0]["detail"]
    assert "1 request(s) cut, 0 not sent (ask:usage#2)" in summary[0]["detail"]
    assert ("deadline", "usage") in [(f["code"], f.get("question")) for f in report["findings"]]
    assert "projection_mismatch" in errors(report)  # still shown


def test_a_re_run_the_deadline_kept_from_starting_shows_the_attempt_before() -> None:
    first = attempt(answers={**honest_answers(CARD), "usage": {"question": "usage", "projections": []}})
    first = [e for e in first if e.purpose != "probe:valid_selector"]
    rerun = [Exchange(purpose="card", attempt=2, method="GET", url=CARD_URL, error=UNSENT)]
    report = report_of(first, rerun)
    assert (report["verdict"], report["attempts"]) == ("unreachable", 2)
    assert report["card"]["name"] == "Stonework Books"  # attempt 1's card, not the unsent one
    assert "churn" not in codes(report)
    (summary,) = [f for f in report["findings"] if f["code"] == "deadline"]
    assert "0 request(s) cut, 1 not sent (card (attempt 2))" in summary["detail"]
    assert "card_unreachable" not in codes(report)


def test_a_cut_among_other_documents_of_a_card_without_the_interview_is_still_not_offered() -> None:
    exs = attempt(make_card(interview=False))
    exs = [e for e in exs if not e.purpose.startswith(("ask:", "probe:"))]
    exs = [
        replace(e, status=None, error=CUT, response_body=b"") if e.purpose == "proposal" else e for e in exs
    ]
    assert report_of(exs)["verdict"] == "not_offered"


def test_rate_limited_then_answered() -> None:
    def with_429(exs: list[Exchange]) -> list[Exchange]:
        i = next(i for i, e in enumerate(exs) if e.purpose == "ask:terms#1")
        return exs[:i] + [replace(exs[i], status=429, response_body=b"slow down")] + exs[i:]

    report = report_of(attempt(override=with_429))
    assert report["verdict"] == "conformant"
    assert [(f["code"], f["severity"], f.get("question")) for f in report["findings"]] == [
        ("rate_limited", "warning", "terms")
    ]


def test_activation_not_echoed_is_info_only() -> None:
    report = report_of(attempt(headers=(("Content-Type", "application/json"),)))
    assert report["verdict"] == "conformant"
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("activation_not_echoed", "info")]


def test_echo_in_the_legacy_header_counts() -> None:
    report = report_of(attempt(headers=(("X-A2A-Extensions", f"urn:other, {INTERVIEW_URI}"),)))
    assert report["findings"] == []


# --- probes --------------------------------------------------------------------------------------


def test_probes_that_are_not_refused() -> None:
    report = report_of(
        attempt(
            probes={
                "undefined_method": rpc_error(-32601, "Method not found", 11),
                "unmatched_selector": rpc_result(honest_answers(make_card())["usage"], 12),
                "unactivated_call": rpc_result(honest_answers(make_card())["identity"], 13),
            }
        )
    )
    assert report["verdict"] == "nonconformant"
    assert [(f["code"], f.get("probe")) for f in report["findings"]] == [
        ("closure_method_not_refused", "undefined_method"),
        ("closure_selector_not_refused", "unmatched_selector"),
        ("unactivated_call_answered", "unactivated_call"),
    ]
    assert [p["outcome"] for p in report["probes"]] == [
        "method_not_found",
        "answered",
        "answered",
        "answered",
        "method_not_found",
    ]
    assert "-32601" in report["findings"][0]["detail"]


def test_an_unactivated_call_without_params_must_be_refused_too() -> None:
    """JSON-RPC 2.0 lets a request omit params; the interview extension, section 3 rule 2, covers it."""
    report = report_of(
        attempt(
            probes={
                "unactivated_call_no_params": rpc_result(honest_answers(make_card())["identity"], 14),
            }
        )
    )
    assert report["verdict"] == "nonconformant"
    assert [(f["code"], f.get("probe")) for f in report["findings"]] == [
        ("unactivated_call_answered", "unactivated_call_no_params")
    ]
    assert "with no params" in report["findings"][0]["detail"]
    assert [p["outcome"] for p in report["probes"]][3:] == ["method_not_found", "answered"]


def test_a_valid_selector_must_be_answered_not_refused() -> None:
    """Only a selector that matches no declared id is refused (the interview extension, section 4
    rule 3); a refusal of a declared id, in a result or inside an error, is selector_refused."""
    for body in (rpc_result(refusal(), 15), rpc_error(-32000, "out_of_scope", 15, data=refusal())):
        report = report_of(attempt(probes={"valid_selector": body}))
        assert report["verdict"] == "nonconformant"
        found = [(f["code"], f.get("probe")) for f in report["findings"]]
        assert found == [("selector_refused", "valid_selector")]
        assert repr(SKILLS[0]) in report["findings"][0]["detail"]
        assert report["probes"][2]["outcome"] == "refused"


def test_a_valid_selector_answer_is_diffed_like_any_other() -> None:
    usage = honest_answers(CARD)["usage"]
    drifted = {**usage, "projections": [*usage["projections"][:-1], cp("/defaultInputModes", ["text/html"])]}
    report = report_of(attempt(probes={"valid_selector": rpc_result({**drifted, "note": "hi"}, 15)}))
    assert report["verdict"] == "nonconformant"
    assert [(f["code"], f.get("probe"), f.get("member")) for f in report["findings"]] == [
        ("projection_mismatch", "valid_selector", "/defaultInputModes"),
        ("answer_extra_member", "valid_selector", "/note"),
    ]
    assert all("question" not in f for f in report["findings"])
    assert [p["status"] for p in report["probes"][2]["projections"]] == ["match", "mismatch"]


def test_a_valid_selector_probe_needs_a_skill_and_a_real_answer() -> None:
    # Not sent (a card without skills): nothing is judged and the probe is not listed.
    report = report_of(attempt(leave_out=("valid_selector",)))
    assert report["verdict"] == "conformant"
    assert "valid_selector" not in [p["name"] for p in report["probes"]]
    # An error instead of an answer, or an HTTP error status, is not an answer either.
    report = report_of(attempt(probes={"valid_selector": rpc_error(-32602, "Invalid params", 15)}))
    assert [(f["code"], f.get("probe")) for f in report["findings"]] == [("method_error", "valid_selector")]
    report = report_of(attempt(override=replace_ex("probe:valid_selector", status=404)))
    assert [(f["code"], f.get("probe")) for f in report["findings"]] == [("http_status", "valid_selector")]


def test_probe_refusals_are_checked() -> None:
    report = report_of(
        attempt(
            probes={
                "undefined_method": rpc_result(refusal(skills=list(reversed(SKILLS))), 11),
                "unmatched_selector": rpc_result({**refusal(), "hint": "try again"}, 12),
            }
        )
    )
    assert [(f["code"], f.get("probe")) for f in report["findings"]] == [
        ("refusal_skills_mismatch", "undefined_method"),
        ("refusal_shape_invalid", "unmatched_selector"),
    ]


def test_probe_refusal_with_the_wrong_reason_or_inside_an_error() -> None:
    report = report_of(
        attempt(
            probes={
                "undefined_method": rpc_result(refusal(reason="not_declared"), 11),
                "unmatched_selector": rpc_error(-32602, "Invalid params", 12, data=refusal()),
            }
        )
    )
    assert [(f["code"], f.get("probe")) for f in report["findings"]] == [
        ("closure_method_not_refused", "undefined_method"),
        ("refusal_as_error", "unmatched_selector"),
    ]
    assert report["verdict"] == "nonconformant"


def test_unactivated_call_with_an_http_error_status_but_the_right_code() -> None:
    def status_404(exs: list[Exchange]) -> list[Exchange]:
        return [replace(e, status=404) if e.purpose == "probe:unactivated_call" else e for e in exs]

    assert report_of(attempt(override=status_404))["findings"] == []


def test_probe_timeout() -> None:
    report = report_of(
        attempt(
            override=replace_ex("probe:unmatched_selector", status=None, error="timeout", response_body=b"")
        )
    )
    assert [(f["code"], f.get("probe")) for f in report["findings"]] == [("timeout", "unmatched_selector")]
    assert report["probes"][1]["outcome"] == "error"


# --- ordering ------------------------------------------------------------------------------------


def test_findings_are_in_contract_order() -> None:
    card = make_card(sign=False)
    answers = honest_answers(card)
    answers["refusals"]["projections"].pop()
    answers["identity"]["projections"][0] = cp("/name", "Other")
    answers["identity"]["projections"][1] = cp("/nope", 1)
    answers["usage"]["note"] = "x"
    report = report_of(attempt(card, answers=answers, probes={"unactivated_call": rpc_result({}, 13)}))
    got = [(f["code"], f.get("question") or f.get("probe"), f.get("member")) for f in report["findings"]]
    assert got == [
        ("card_unsigned", None, None),
        ("projection_mismatch", "identity", "/name"),
        ("pointer_unresolved", "identity", "/nope"),
        ("answer_extra_member", "usage", "/note"),
        ("refusals_boundary_mismatch", "refusals", None),
        ("unactivated_call_answered", "unactivated_call", None),
    ]


# --- other extensions ----------------------------------------------------------------------------

AGENT_ID = "agent_stonework"
PLATFORM = "http://127.0.0.1:8766"
PUBLIC_CARD_URL = f"{PLATFORM}/agents/{AGENT_ID}/card.json"
KEY_URL = f"{PLATFORM}/.well-known/openclasp-session-key"


def openclasp_card() -> dict:
    card = make_card(sign=False)
    card["signatures"] = []
    params = {"agentId": AGENT_ID, "openClaspCardUrl": PUBLIC_CARD_URL}
    card["capabilities"]["extensions"].append({"uri": OPENCLASP_URI, "required": False, "params": params})
    return card


def public_card(**changes: Any) -> dict:
    doc = {
        "protocolVersion": "0.1",
        "agentId": AGENT_ID,
        "name": "Stonework Books",
        "cardUrl": PUBLIC_CARD_URL,
        "extensionUri": OPENCLASP_URI,
        "transports": [{"protocol": "A2A/1.0", "protocolBinding": "JSONRPC", "endpoint": RPC_URL}],
    }
    doc.update(changes)
    return sign_attestation(doc, PLATFORM_KEY, "platform-key-1")


def with_openclasp(card: dict, public: dict | bytes | None, key: dict | None) -> list[Exchange]:
    exs = attempt(card)
    if public is not None:
        body = public if isinstance(public, bytes) else json.dumps(public).encode()
        exs.append(
            Exchange(
                purpose="openclasp:public_card",
                attempt=1,
                method="GET",
                url=PUBLIC_CARD_URL,
                status=200,
                response_body=body,
            )
        )
    if key is not None:
        exs.append(
            Exchange(
                purpose="openclasp:key",
                attempt=1,
                method="GET",
                url=KEY_URL,
                status=200,
                response_body=json.dumps(key).encode(),
            )
        )
    return exs


def test_openclasp_attested_card() -> None:
    report = report_of(
        with_openclasp(openclasp_card(), public_card(), public_key_document(PLATFORM_KEY, "platform-key-1"))
    )
    assert report["verdict"] == "conformant"
    assert codes(report, "extensions") == ["openclasp_unsigned_card", "openclasp_verified"]
    unsigned = report["extensions"][0]
    assert unsigned["detail"] == (
        "the A2A card carries no signatures; its trust comes from the platform attestation"
    )
    result = report["extension_results"]["openclasp"]
    assert result["verified"] is True and result["consistent"] is True and result["agent_id"] == AGENT_ID
    assert codes(report) == ["card_unsigned"]


def test_openclasp_failures_never_change_the_verdict() -> None:
    tampered = public_card()
    tampered["name"] = "Someone else"
    unattested = {k: v for k, v in public_card().items() if k != "platformAttestation"}
    other_key = public_key_document(Ed25519PrivateKey.from_private_bytes(bytes(32)), "platform-key-1")
    cases = [
        (
            with_openclasp(openclasp_card(), tampered, public_key_document(PLATFORM_KEY, "platform-key-1")),
            "openclasp_attestation_invalid",
        ),
        (with_openclasp(openclasp_card(), public_card(), other_key), "openclasp_attestation_invalid"),
        (with_openclasp(openclasp_card(), public_card(), None), "openclasp_key_unreachable"),
        (with_openclasp(openclasp_card(), None, None), "openclasp_card_unreachable"),
        (with_openclasp(openclasp_card(), b"<html>", None), "openclasp_card_unreachable"),
        (with_openclasp(openclasp_card(), unattested, None), "openclasp_attestation_missing"),
        (
            with_openclasp(
                openclasp_card(),
                public_card(agentId="someone-else"),
                public_key_document(PLATFORM_KEY, "platform-key-1"),
            ),
            "openclasp_inconsistent",
        ),
    ]
    for exs, code in cases:
        report = report_of(exs)
        assert code in codes(report, "extensions"), code
        assert report["verdict"] == "conformant"


def test_reputation_pointer_is_shown_verbatim_with_the_honesty_wording() -> None:
    entry = {"uri": REPUTATION_URI, "required": False, "params": {"record": "https://rep.example/a/1"}}
    card = make_card(sign=False)
    card["capabilities"]["extensions"].append(entry)
    report = report_of(attempt(card))
    assert report["verdict"] == "conformant"
    (f,) = report["extensions"]
    assert f["code"] == "reputation_declared" and f["severity"] == "info"
    assert "consistency with declarations, not conduct" in f["detail"]
    assert report["extension_results"]["reputation"] == entry == report["card"]["reputation"]


# --- the human summary and the contract check ----------------------------------------------------


def test_summary_lines() -> None:
    card = make_card(name="Evil\x1b]52;c;aGk=\x07 Agent\u202e", sign=False)
    answers = lying(card)
    report = report_of(attempt(card, answers=answers), ran_by={"name": "alice", "role": "self"})
    lines = summary_lines(report)
    text = "\n".join(lines)
    assert lines[0] == "verdict: nonconformant"
    assert (
        "standing: claim: run by alice, no independent role declared (--as independent declares one)" in lines
    )
    assert "signature: unsigned" in lines
    assert "  capabilities: 3 match, 1 mismatch, 0 unresolved, 0 unverifiable" in lines
    assert "  terms: 2 match, 0 mismatch, 0 unresolved, 0 unverifiable" in lines
    assert any(
        line.startswith("  error projection_mismatch [capabilities /skills/0/description]: ")
        for line in lines
    )
    assert "\x1b" not in text and "\u202e" not in text and "\\x1b" in text and "<U+202E>" in text


@pytest.mark.parametrize("role", ["self", "independent", "platform"])
def test_summary_says_who_ran_it(role: str) -> None:
    lines = summary_lines(report_of(attempt(), ran_by={"name": None, "role": role}))
    assert any(line.startswith(f"standing: {STANDING_WORDS[role]}") for line in lines), lines


def test_summary_of_not_offered_is_neutral() -> None:
    card = make_card(interview=False)
    report = report_of(
        [
            Exchange(
                purpose="card",
                attempt=1,
                method="GET",
                url=CARD_URL,
                status=200,
                response_body=json.dumps(card).encode(),
            )
        ]
    )
    lines = summary_lines(report)
    assert lines[0] == "verdict: not_offered"
    assert "absence says nothing about the agent" in lines[1]
    assert not any(line.startswith("questions:") for line in lines)


def test_validate_report_names_what_is_missing() -> None:
    report = report_of(attempt())
    assert validate_report({}) and validate_report([]) == ["the report is not a JSON object"]
    broken = copy.deepcopy(report)
    del broken["card"]["signature"]["kid"]
    broken["verdict"] = "fine"
    broken["standing"] = "claim"
    broken["questions"].pop("terms")
    broken["findings"].append({"code": "made_up", "severity": "error", "detail": ""})
    problems = validate_report(broken)
    assert "card.signature.kid is missing" in problems
    assert any("verdict" in p for p in problems)
    assert any("standing" in p for p in problems)
    assert any("exactly the keys" in p for p in problems)
    assert any("made_up" in p for p in problems)


# --- hostile bodies ------------------------------------------------------------------------------

_ANY_JSON = json_values(
    json_scalars(
        text=st.text(max_size=8), also=st.sampled_from(["refused", "card", "/name", "~2", INTERVIEW_URI])
    ),
    keys=st.sampled_from(
        [
            "question",
            "declared",
            "projections",
            "source",
            "value",
            "document",
            "member",
            "refused",
            "reason",
            "declared_skills",
            "code",
            "message",
            "data",
            "x",
        ]
    ),
    list_size=3,
    object_size=4,
    max_leaves=15,
)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(QUESTIONS),
    _ANY_JSON,
    st.binary(max_size=40),
    st.sampled_from(
        ["undefined_method", "unmatched_selector", "unactivated_call", "unactivated_call_no_params"]
    ),
)
def test_any_answer_or_probe_body_gives_a_valid_report(
    question: str, result: Any, raw: bytes, probe: str
) -> None:
    answers: dict[str, Any] = {**honest_answers(CARD), question: result}
    report = report_of(attempt(answers=answers, probes={probe: raw}))  # validated against the contract
    assert report["verdict"] == "nonconformant"  # random bytes are never the expected probe response
    assert any(f.get("probe") == probe for f in report["findings"])
