"""The demo's parts without HTTP: the variants table, the projection, the rate limiter, and the
interview endpoint fed arbitrary bytes (it must answer every one with a JSON-RPC response)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.core.canonical import canonicalize
from explorer.core.findings import CODES
from explorer.demo import content, documents, projection
from explorer.demo.agent import Agent
from explorer.demo.ratelimit import RateLimit, RateLimiter
from explorer.demo.variants import FAULTS, VARIANTS, Variant
from tests.support.strategies import json_scalars, json_values

URLS = documents.Urls("http://127.0.0.1:9")
VERDICTS = {"conformant", "nonconformant", "churn", "not_offered", "unreachable"}


@pytest.fixture(scope="module")
def provider() -> documents.Provider:
    return documents.Provider()


def make_agent(name: str, provider: documents.Provider, limit: RateLimit | None = None) -> Agent:
    variant = VARIANTS[name]
    key = documents.CardKey.generate(name)
    states = [documents.build(variant, URLS, key, provider, g) for g in range(2 if variant.churn else 1)]
    return Agent(variant, states, RateLimiter(limit or RateLimit(calls=1_000_000)))


def rpc(agent: Agent, method: str, params: Any = None, *, activated: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        body["params"] = params
    reply = agent.handle_rpc(json.dumps(body).encode(), client="c", activated=activated)
    assert reply.status == 200
    return json.loads(reply.body)


# --- the table ---------------------------------------------------------------------------------


def test_the_table_is_consistent() -> None:
    assert list(VARIANTS)[:3] == ["steady", "legacy", "sdk-built"]  # display order is table order
    for name, variant in VARIANTS.items():
        assert variant.name == name and name == name.lower() and " " not in name
        assert variant.description and "\n" not in variant.description
        assert variant.expected_verdict in VERDICTS, name
        assert variant.expected_codes | variant.expected_extension_codes <= set(CODES), name
        errors = {c for c in variant.expected_codes if CODES[c] == "error"}
        # Errors make an agent nonconformant, unless the questions could not be put at all (an
        # agent that is down keeps its http_status errors and is unreachable).
        if variant.expected_verdict != "unreachable":
            assert bool(errors) == (variant.expected_verdict == "nonconformant"), name
        signs = variant.signed and not variant.forge_signature and not variant.openclasp
        assert (variant.signature_form is not None) == signs, name


def test_the_issue_table_rows_are_all_there() -> None:
    required = {
        "steady": ("conformant", set()),
        "legacy": ("conformant", set()),
        "sdk-built": ("conformant", set()),
        "unsigned": ("conformant", {"card_unsigned"}),
        "no-terms": ("conformant", {"terms_not_declared"}),
        "drifting": ("nonconformant", {"projection_mismatch"}),
        "misquoting": ("nonconformant", {"pointer_unresolved"}),
        "fabricating": ("nonconformant", {"proposal_not_committed"}),
        "chatty": ("nonconformant", {"answer_extra_member"}),
        "leaky": ("nonconformant", {"closure_method_not_refused", "closure_selector_not_refused"}),
        "forged": ("nonconformant", {"card_signature_invalid"}),
        "tampered-terms": ("nonconformant", {"proposal_digest_mismatch"}),
        "imposing": ("nonconformant", {"interview_required_true"}),
        "churning": ("churn", {"churn"}),
        "flaky": ("nonconformant", {"nondeterministic_answer"}),
        "silent": ("not_offered", {"interview_not_declared"}),
        "hostile": ("conformant", set()),
        "openclasp": ("conformant", {"card_unsigned"}),
        "openclasp-forged": ("conformant", {"card_unsigned"}),
        "reputation": ("conformant", set()),
    }
    for name, (verdict, codes) in required.items():
        assert VARIANTS[name].expected_verdict == verdict, name
        assert codes <= VARIANTS[name].expected_codes, name
    assert VARIANTS["sdk-built"].signature_form == "sdk-normalized"
    assert VARIANTS["openclasp"].expected_extension_codes == {"openclasp_verified"}
    assert VARIANTS["openclasp-forged"].expected_extension_codes == {"openclasp_attestation_invalid"}


def test_unknown_faults_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown faults"):
        Variant("x", "x", "conformant", faults=frozenset({"drift", "typo"}))
    assert "drift" in FAULTS


# --- projection --------------------------------------------------------------------------------


def test_projection_copies_the_member_and_refuses_a_missing_one() -> None:
    card = {"name": "n", "skills": [{"id": "a/b", "description": "d"}]}
    assert projection.project("card", card, "/skills/0/id") == {
        "source": {"document": "card", "member": "/skills/0/id"},
        "value": "a/b",
    }
    with pytest.raises(KeyError):
        projection.project("card", card, "/skills/1/id")
    assert projection.skill_index(card, "a/b") == 0
    assert projection.skill_index(card, "a~1b") is None  # selectors are not pointers: exact bytes only
    assert projection.standard_refusal(card)["declared_skills"] == ["a/b"]


def test_honest_answers_resolve_through_their_own_pointers(provider: documents.Provider) -> None:
    from explorer.core import pointer

    for name in ("steady", "legacy", "hostile"):
        docs = documents.build(VARIANTS[name], URLS, documents.CardKey.generate(name), provider)
        by_url = {c.url: c.document for c in docs.committed or ()}
        for question in projection.QUESTIONS:
            answer = projection.answer(question, docs.card, docs.committed)
            for proj in answer["projections"]:
                source = proj["source"]
                doc = docs.card if source["document"] == "card" else by_url[source["url"]]
                value = pointer.resolve(doc, source["member"]).value
                assert canonicalize(value) == canonicalize(proj["value"]), (name, question)


@pytest.mark.slow  # builds the 5,000-skill agent
def test_the_huge_agent_is_a_signed_catalogue_of_distinct_skills(provider: documents.Provider) -> None:
    docs = documents.build(VARIANTS["huge"], URLS, documents.CardKey.generate("huge"), provider)
    skills = docs.card["skills"]
    assert len(skills) == content.HUGE_SKILLS == 5000
    assert len({s["id"] for s in skills}) == len(skills)
    assert len(docs.card_bytes) > 2 * 1024 * 1024 and docs.card["signatures"]
    assert all(len(s["description"]) > 80 and s["inputModes"] and s["outputModes"] for s in skills)
    assert len(docs.committed or ()) == 2  # the two standing proposals, offered for its first skills
    assert {c.offering for c in docs.committed or ()} <= {s["id"] for s in skills[:2]}
    capabilities = projection.answer("capabilities", docs.card, docs.committed)
    assert len(capabilities["projections"]) == 2 * len(skills)


# --- rate limit ---------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_limiter_is_per_client_and_refills() -> None:
    clock = Clock()
    limiter = RateLimiter(RateLimit(calls=2, per_seconds=10.0), clock=clock)
    assert [limiter.check("a"), limiter.check("a")] == [None, None]
    assert limiter.check("a") == 5  # one token refills every 5 s
    assert limiter.check("b") is None  # another client has its own bucket
    clock.now += 5.0
    assert limiter.check("a") is None
    assert limiter.check("a") is not None


def test_rate_limiter_table_stays_bounded() -> None:
    clock = Clock()
    limiter = RateLimiter(RateLimit(calls=5, per_seconds=1.0, max_clients=10), clock=clock)
    for index in range(1000):
        limiter.check(f"client-{index}")
        clock.now += 0.01
    assert len(limiter._buckets) <= 10
    with pytest.raises(ValueError):
        RateLimit(calls=0)


def test_rate_limited_reply_carries_retry_after(provider: documents.Provider) -> None:
    agent = make_agent("steady", provider, RateLimit(calls=1, per_seconds=30.0))
    body = b'{"jsonrpc":"2.0","id":1,"method":"interview/identity"}'
    assert agent.handle_rpc(body, client="x", activated=True).status == 200
    limited = agent.handle_rpc(body, client="x", activated=True)
    assert limited.status == 429 and limited.headers["Retry-After"] == "30"
    assert agent.handle_rpc(body, client="y", activated=True).status == 200


# --- the endpoint, directly ---------------------------------------------------------------------


def test_churn_flips_once_per_round_of_fetch_then_calls(provider: documents.Provider) -> None:
    agent = make_agent("churning", provider)
    versions = []
    for _ in range(3):  # three verifier runs: fetch, ask, fetch again (the re-run), ask
        fetched = json.loads(agent.card_fetched())["version"]
        answered = rpc(agent, "interview/identity")["result"]["projections"][2]["value"]
        refetched = json.loads(agent.card_fetched())["version"]
        again = rpc(agent, "interview/identity")["result"]["projections"][2]["value"]
        assert fetched != answered == refetched == again
        versions.append(fetched)
    assert versions == ["1.4.0", "1.5.0", "1.4.0"]


def test_answers_are_cached_as_bytes(provider: documents.Provider) -> None:
    agent = make_agent("steady", provider)
    body = b'{"jsonrpc":"2.0","id":1,"method":"interview/usage"}'
    first = agent.handle_rpc(body, client="c", activated=True)
    again = agent.handle_rpc(body, client="c", activated=True)
    assert first.body == again.body
    assert len(agent._cache) == 1
    for junk in ("nope", "x" * 1000, "reconcile-statement "):  # misses are refusals, never cache keys
        assert rpc(agent, "interview/usage", {"skill": junk})["result"]["refused"] is True
    assert len(agent._cache) == 1


param_values = json_values(
    json_scalars(floats=None, text=st.text(max_size=20)), keys=st.text(max_size=8), list_size=4, max_leaves=12
)
methods = st.sampled_from([*sorted(f"interview/{q}" for q in projection.QUESTIONS), "interview/x", "x"])
params = st.one_of(param_values, st.dictionaries(st.sampled_from(["skill", "x"]), param_values))
requests = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"]), "method": methods},
    optional={
        "id": st.one_of(st.integers(), st.text(max_size=5), st.none(), st.booleans()),
        "params": params,
    },
).map(lambda d: json.dumps(d).encode())


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(requests, st.binary(max_size=200)), activated=st.booleans())
def test_any_body_gets_a_json_rpc_answer(provider: documents.Provider, body: bytes, activated: bool) -> None:
    agent = _fuzz_agent(provider)
    reply = agent.handle_rpc(body, client="fuzz", activated=activated)
    assert reply.status in (200, 204)
    if reply.status == 204:
        assert reply.body == b""
        return
    doc = json.loads(reply.body)
    assert doc["jsonrpc"] == "2.0" and ("result" in doc) != ("error" in doc)
    if "error" in doc:
        assert doc["error"]["code"] in (-32700, -32600, -32601, -32602)
    else:
        result = doc["result"]
        assert result.get("refused") is True or result.get("question") in projection.QUESTIONS


_AGENTS: dict[str, Agent] = {}


def _fuzz_agent(provider: documents.Provider) -> Agent:
    if "steady" not in _AGENTS:
        _AGENTS["steady"] = make_agent("steady", provider)
    return _AGENTS["steady"]


def test_the_sdk_hint_matches_how_the_explorer_was_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import explorer
    from explorer.demo.fleet import _sdk_install_hint

    monkeypatch.setattr(explorer, "__file__", "/usr/lib/python3/site-packages/explorer/__init__.py")
    assert _sdk_install_hint() == "pip install 'interview-explorer[test]'"
    monkeypatch.setattr(explorer, "__file__", "/home/me/interview-explorer/explorer/__init__.py")
    assert _sdk_install_hint() == "pip install -e '.[test]'"


def test_card_names_spell_each_reference_agent_as_written() -> None:
    """`guarded-oauth2` is "Guarded OAuth2" on its card, not "Guarded Oauth2" (nor "Sdk Built",
    "Openclasp", "Guarded Apikey")."""
    from explorer.demo.variants import VARIANTS

    titles = {name: documents.display_title(name) for name in VARIANTS}
    assert titles["guarded-oauth2"] == "Guarded OAuth2"
    assert titles["sdk-built"] == "SDK Built"
    assert titles["openclasp"] == "OpenClasp" and titles["openclasp-forged"] == "OpenClasp Forged"
    assert titles["guarded-apikey"] == "Guarded API Key"
    assert titles["refusing-by-error"] == "Refusing by Error" and titles["no-terms"] == "No Terms"
    for title in titles.values():
        assert not any(word in title for word in ("Oauth", "Sdk", "Openclasp", "Apikey")), title
