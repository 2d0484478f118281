"""Card signatures: what verifies, what is invalid, what is unverifiable, and attacks that must fail.

Signatures here are real (joserfc, cryptography), both made by `sign_card` and made directly with
joserfc from the spec's text, so the verifier is not only checked against its own signer.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joserfc import jws
from joserfc.jws import JWSRegistry

from explorer.core.canonical import canonicalize
from explorer.core.signatures import (
    ALLOWED_ALGS,
    FORMS,
    FormError,
    generate_key,
    jku_urls,
    member_is_signed,
    payload_bytes,
    public_jwks,
    sign_card,
    unsigned_members,
    verify_card,
)
from tests.support.strategies import json_scalars, json_values


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def header_b64(header: Any) -> str:
    return b64(json.dumps(header).encode())


def card(**extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": "Steady Agent",
        "description": "Matches statements. Ünïcode ☃ too.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "https://a.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"extensions": [{"uri": "urn:x", "required": False, "params": {"n": 1, "e": ""}}]},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
    }
    doc.update(extra)
    return doc


@pytest.fixture(scope="module")
def es_key() -> Any:
    return generate_key("ES256", kid="card-key")


def with_signature(doc: dict[str, Any], protected: str, signature: str) -> dict[str, Any]:
    entry = {"protected": protected, "signature": signature}
    return {**doc, "signatures": [*doc.get("signatures", []), entry]}


def test_a_spec_literal_signature_made_with_joserfc_verifies_as_served(es_key: Any) -> None:
    doc = card()
    payload = canonicalize({k: v for k, v in doc.items() if k != "signatures"})
    token = jws.serialize_compact(
        {"alg": "ES256", "kid": "card-key", "typ": "JOSE"},
        payload,
        es_key,
        registry=JWSRegistry(algorithms=["ES256"]),
    )
    protected, _, signature = token.split(".")
    report = verify_card(with_signature(doc, protected, signature), public_jwks(es_key))
    assert (report.status, report.form, report.alg, report.kid, report.key_source) == (
        "verified",
        "served",
        "ES256",
        "card-key",
        "user",
    )
    assert report.unsigned_members == ()
    assert report.checks[0].status == "verified"


@pytest.mark.parametrize("alg", ALLOWED_ALGS)
def test_every_allowed_algorithm_round_trips(alg: str) -> None:
    key = generate_key(alg, kid=f"k-{alg}")
    report = verify_card(sign_card(card(), key, kid=key.kid, alg=alg), public_jwks(key))
    assert (report.status, report.form, report.alg) == ("verified", "served", alg)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("name",), "Steady Agent!"),
        (("skills", 0, "id"), "t"),
        (("capabilities", "extensions", 0, "uri"), "urn:y"),
    ],
)
def test_a_tampered_card_is_invalid(es_key: Any, path: tuple[Any, ...], value: Any) -> None:
    signed = sign_card(card(), es_key, kid="card-key")
    node: Any = signed
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    report = verify_card(signed, public_jwks(es_key))
    assert report.status == "invalid"
    assert report.form is None
    assert "does not verify" in report.checks[0].detail
    assert report.checks[0].key_source == "user"


def test_a_signature_by_another_key_with_the_same_kid_is_invalid(es_key: Any) -> None:
    other = generate_key("ES256", kid="card-key")
    report = verify_card(sign_card(card(), other, kid="card-key"), public_jwks(es_key))
    assert report.status == "invalid"


def test_unknown_kid_and_no_keys_are_unverifiable(es_key: Any) -> None:
    signed = sign_card(card(), es_key, kid="card-key", jku="https://a.example/keys.jwks")
    other = generate_key("ES256", kid="someone-else")
    for keys in (public_jwks(other), None, {"keys": []}):
        report = verify_card(signed, keys)
        assert report.status == "unverifiable"
        assert "no trusted key has kid 'card-key'" in report.detail
        assert "https://a.example/keys.jwks" in report.detail


def test_jku_keys_verify_and_are_labelled_as_the_cards_own(es_key: Any) -> None:
    url = "https://a.example/keys.jwks"
    signed = sign_card(card(), es_key, kid="card-key", jku=url)
    assert jku_urls(signed) == [url]
    report = verify_card(signed, None, jku_keys={url: public_jwks(es_key)})
    assert (report.status, report.key_source) == ("verified", "jku")
    assert "card's own jku" in report.checks[0].detail
    # A key set fetched from some other URL is not the one this signature names.
    elsewhere = verify_card(signed, None, jku_keys={"https://evil.example/k": public_jwks(es_key)})
    assert elsewhere.status == "unverifiable"


def test_one_good_signature_among_bad_ones_verifies(es_key: Any) -> None:
    signed = sign_card(card(), es_key, kid="card-key")
    doc = {**signed, "signatures": ["junk", {"protected": "x"}, *signed["signatures"]]}
    report = verify_card(doc, public_jwks(es_key))
    assert report.status == "verified"
    assert [c.status for c in report.checks] == ["invalid", "invalid", "verified"]
    assert report.detail.startswith("signature 2:")


def test_invalid_beats_unverifiable_when_nothing_verifies(es_key: Any) -> None:
    good = sign_card(card(), es_key, kid="card-key")["signatures"][0]
    unknown = sign_card(card(), generate_key("ES256", kid="x"), kid="x")["signatures"][0]
    doc = card(name="changed", signatures=[unknown, good])
    report = verify_card(doc, public_jwks(es_key))
    assert report.status == "invalid"
    assert report.kid == "card-key"


@pytest.mark.parametrize(
    ("signatures", "status"),
    [(None, "unsigned"), ([], "unsigned"), ("abc", "invalid"), ({"protected": "a"}, "invalid")],
)
def test_missing_or_malformed_signatures_member(signatures: Any, status: str) -> None:
    doc = card() if signatures is None else card(signatures=signatures)
    report = verify_card(doc, None)
    assert report.status == status
    assert report.checks == ()


def test_alg_none_is_never_verified(es_key: Any) -> None:
    for signature in ("", b64(b"anything")):
        protected = header_b64({"alg": "none", "kid": "card-key"})
        report = verify_card(with_signature(card(), protected, signature), public_jwks(es_key))
        assert report.status != "verified"
    assert "'none' is never accepted" in report.detail


def test_hmac_with_the_public_key_as_secret_is_never_verified() -> None:
    """The classic confusion attack: sign with HS256 using the verifier's public key as the secret."""
    rsa = generate_key("RS256", kid="rsa")
    doc = card()
    protected = header_b64({"alg": "HS256", "kid": "rsa"})
    secrets = [rsa.as_pem(private=False), json.dumps(rsa.as_dict(private=False)).encode()]
    payload = b64(canonicalize(doc))
    for secret in secrets:
        mac = hmac.new(secret, f"{protected}.{payload}".encode(), hashlib.sha256).digest()
        report = verify_card(with_signature(doc, protected, b64(mac)), public_jwks(rsa))
        assert report.status == "unverifiable"
        assert "HMAC" in report.detail


def test_a_symmetric_key_in_the_users_set_is_never_used() -> None:
    secret = b"a shared secret of thirty-two bytes!"
    protected = header_b64({"alg": "HS256", "kid": "oct"})
    payload = b64(canonicalize(card()))
    mac = hmac.new(secret, f"{protected}.{payload}".encode(), hashlib.sha256).digest()
    keys = {"keys": [{"kty": "oct", "kid": "oct", "k": b64(secret)}]}
    assert verify_card(with_signature(card(), protected, b64(mac)), keys).status == "unverifiable"


def test_a_kid_that_is_not_a_string_is_unverifiable(es_key: Any) -> None:
    for kid in (7, None, ["card-key"], {"k": 1}):
        protected = header_b64({"alg": "ES256", "kid": kid})
        report = verify_card(with_signature(card(), protected, b64(b"sig")), public_jwks(es_key))
        assert report.status == "unverifiable"
        assert report.kid is None
    no_kid = with_signature(card(), header_b64({"alg": "ES256"}), b64(b"s"))
    missing = verify_card(no_kid, public_jwks(es_key))
    assert "no kid" in missing.detail


def test_a_huge_protected_header_is_refused_before_decoding_and_is_not_called_tampered(es_key: Any) -> None:
    protected = header_b64({"alg": "ES256", "kid": "card-key", "pad": "x" * 100_000})
    report = verify_card(with_signature(card(), protected, b64(b"sig")), public_jwks(es_key))
    assert report.status == "unverifiable"  # no key was tried: a limit of ours, not proof of tampering
    assert "over the 8192 accepted" in report.detail


@pytest.mark.parametrize(
    ("protected", "signature", "expected"),
    [
        ("!!not base64!!", "c2ln", "not base64url"),
        (b64(b"\xff\xfe"), "c2ln", "not valid JSON"),
        (b64(b"[1, 2]"), "c2ln", "not an object"),
        (b64(b'{"alg": "ES256", "alg": "none", "kid": "card-key"}'), "c2ln", "duplicate key"),
        (header_b64({"alg": "ES256", "kid": "card-key"}), "not*base64", "not base64url"),
        (header_b64({"alg": "ES256", "kid": "card-key"}), "abcde", "not base64url"),  # impossible length
        (header_b64({"alg": "ES256", "kid": "card-key"}), "A" * 5000, "plausible length"),
        (header_b64({"alg": "ES256", "kid": "card-key"}), 12, "not a base64url string"),
        (header_b64({"alg": 256, "kid": "card-key"}), "c2ln", "no alg"),
        (7, "c2ln", "not a base64url string"),
    ],
)
def test_malformed_entries_are_invalid_with_a_reason(
    es_key: Any, protected: Any, signature: Any, expected: str
) -> None:
    doc = card(signatures=[{"protected": protected, "signature": signature}])
    report = verify_card(doc, public_jwks(es_key))
    assert report.status == "invalid"
    assert expected in report.detail, report.detail


def test_crit_and_unknown_algorithms_are_unverifiable(es_key: Any) -> None:
    for header, expected in (
        ({"alg": "ES256", "kid": "card-key", "crit": ["exp"], "exp": 1}, "crit"),
        ({"alg": "ES256K", "kid": "card-key"}, "allow-list"),
    ):
        report = verify_card(with_signature(card(), header_b64(header), b64(b"s")), public_jwks(es_key))
        assert report.status == "unverifiable"
        assert expected in report.detail


def test_a_key_for_another_algorithm_is_not_used() -> None:
    rsa = generate_key("RS256", kid="k")
    signed = sign_card(card(), rsa, kid="k", alg="RS256")
    as_ps256 = {"keys": [{**public_jwks(rsa)["keys"][0], "alg": "PS256"}]}
    report = verify_card(signed, as_ps256)
    assert report.status == "invalid"
    assert "is for PS256" in report.detail


def test_bad_key_sets_are_ignored_not_fatal(es_key: Any) -> None:
    signed = sign_card(card(), es_key, kid="card-key")
    keys = {
        "keys": [
            "x",
            {"kty": "EC"},
            {"kty": "RSA", "n": "!!", "e": "AQAB", "kid": "card-key"},
            {"kty": "EC", "use": "enc", **public_jwks(es_key)["keys"][0], "kid": "card-key"},
            *public_jwks(es_key)["keys"],
        ]
    }
    assert verify_card(signed, keys).status == "verified"
    for junk in ({"keys": "none"}, {"nokeys": []}, [], "x"):
        assert verify_card(signed, junk).status == "unverifiable"  # type: ignore[arg-type]


def test_sdk_forms_are_tried_and_report_what_they_leave_unsigned(es_key: Any) -> None:
    doc = card(url="https://a.example/v03", preferredTransport="JSONRPC", protocolVersion="0.3")
    signed = sign_card(doc, es_key, kid="card-key", form="sdk-normalized")
    report = verify_card(signed, public_jwks(es_key))
    assert (report.status, report.form) == ("verified", "sdk-normalized")
    assert report.unsigned_members == (
        "/capabilities/extensions/0/params/e",
        "/capabilities/extensions/0/required",
        "/preferredTransport",
        "/protocolVersion",
        "/url",
    )
    assert report.to_json()["unsigned_members"] == list(report.unsigned_members)
    legacy_signed = sign_card(doc, es_key, kid="card-key", form="sdk-legacy-sorted")
    legacy = verify_card(legacy_signed, public_jwks(es_key))
    assert legacy.form == "sdk-legacy-sorted"  # non-ASCII text and a double make its bytes unique
    v03 = verify_card(sign_card(doc, es_key, kid="card-key", form="sdk-0.3"), public_jwks(es_key))
    assert v03.form == "sdk-0.3"
    assert "/supportedInterfaces" in v03.unsigned_members  # not a v0.3 member: dropped by that SDK


def test_the_payload_forms_differ_where_the_signers_differ() -> None:
    doc = card(protocolVersion="0.3.0", preferredTransport="JSONRPC", url="https://a.example/v03")
    served = payload_bytes(doc, "served")
    assert b'"protocolVersion":"0.3.0"' in served and "☃".encode() in served
    normalized = payload_bytes(doc, "sdk-normalized")
    assert b'"params":{"n":1}' in normalized and b'"required"' not in normalized
    legacy = payload_bytes(doc, "sdk-legacy-sorted")
    assert b'"n": 1.0' not in legacy and b'"n":1.0' in legacy and b"\\u2603" in legacy
    v03 = payload_bytes(doc, "sdk-0.3")
    assert b"protocolVersion" not in v03 and b"preferredTransport" not in v03
    assert b'"required":false' in v03 and b'"n":1' in v03
    assert json.loads(normalized)["supportedInterfaces"] == doc["supportedInterfaces"]


def test_a_form_that_cannot_apply_says_why_and_served_still_works(es_key: Any) -> None:
    doc = card(skills="everything")
    with pytest.raises(FormError, match="skills"):
        payload_bytes(doc, "sdk-normalized")
    with pytest.raises(ValueError, match="unknown payload form"):
        payload_bytes(doc, "sdk-9")
    assert verify_card(sign_card(doc, es_key, kid="card-key"), public_jwks(es_key)).status == "verified"


def test_unsigned_members_and_member_is_signed() -> None:
    doc = card(url="u", signatures=[])
    assert unsigned_members(doc, "served") == ()
    unsigned = unsigned_members(doc, "sdk-normalized")
    assert "/url" in unsigned and "/signatures" not in unsigned
    assert not member_is_signed("/url", unsigned)
    assert not member_is_signed("/capabilities/extensions/0/params/e", unsigned)
    assert not member_is_signed("/capabilities/extensions/0", unsigned)  # contains an unsigned member
    assert not member_is_signed("", unsigned)
    assert member_is_signed("/capabilities/extensions/0/params/n", unsigned)
    assert member_is_signed("/name", unsigned)
    assert member_is_signed("/urls", ["/url"])  # a prefix of the text is not a prefix of the path
    assert member_is_signed("", [])


def test_the_report_json_shape(es_key: Any) -> None:
    out = verify_card(sign_card(card(), es_key, kid="card-key"), public_jwks(es_key)).to_json()
    assert set(out) >= {"status", "form", "alg", "kid", "key_source", "signatures", "unsigned_members"}
    assert set(out["signatures"][0]) >= {"index", "alg", "kid", "status", "form", "detail"}
    assert json.loads(json.dumps(out)) == out


def test_sign_card_appends_and_does_not_mutate(es_key: Any) -> None:
    doc = card()
    once = sign_card(doc, es_key, kid="card-key")
    twice = sign_card(once, generate_key("EdDSA", kid="ed"), kid="ed", alg="EdDSA")
    assert "signatures" not in doc
    assert len(twice["signatures"]) == 2 and twice["signatures"][0] == once["signatures"][0]
    assert set(FORMS) == {"served", "sdk-normalized", "sdk-legacy-sorted", "sdk-0.3", "a2a-js"}


header_values = st.one_of(st.text(max_size=10), st.integers(), st.none(), st.lists(st.text(max_size=5)))
headers = st.dictionaries(st.sampled_from(["alg", "kid", "jku", "crit", "b64"]), header_values)
entries = st.one_of(
    st.none(),
    st.text(max_size=20),
    st.integers(),
    st.fixed_dictionaries(
        {},
        optional={
            "protected": st.one_of(
                st.text(max_size=40),
                st.integers(),
                st.just(header_b64({"alg": "ES256", "kid": "k"})),
                headers.map(header_b64),
            ),
            "signature": st.one_of(st.text(max_size=40), st.integers(), st.none()),
            "header": st.dictionaries(st.text(max_size=5), st.integers()),
        },
    ),
)


HOSTILE_KEY = generate_key("EdDSA", kid="k")
HOSTILE_KEYS = public_jwks(HOSTILE_KEY)


@settings(max_examples=150, deadline=None)
@given(st.lists(entries, max_size=4))
def test_hostile_signature_entries_never_raise(sigs: list[Any]) -> None:
    report = verify_card(card(signatures=sigs), HOSTILE_KEYS)
    assert report.status in ("invalid", "unverifiable", "unsigned")
    json.dumps(report.to_json())
    jku_urls(card(signatures=sigs))


member_values = json_values(
    json_scalars(integers=st.integers(-(2**70), 2**70), text=st.text(max_size=5)),
    keys=st.text(max_size=5),
    list_size=3,
    max_leaves=12,
)
card_members = st.sampled_from(
    [
        "name",
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "supportedInterfaces",
        "capabilities",
        "skills",
        "security",
        "securityRequirements",
        "securitySchemes",
        "supportsAuthenticatedExtendedCard",
        "defaultInputModes",
    ]
)


@pytest.mark.slow  # hundreds of generated examples
@settings(max_examples=150, deadline=None)
@given(st.dictionaries(card_members, member_values, max_size=6))
def test_hostile_card_contents_never_raise(doc: dict[str, Any]) -> None:
    for form in FORMS:
        try:
            payload_bytes(doc, form)
            unsigned_members(doc, form)
        except FormError:
            pass
    signed = sign_card(doc, HOSTILE_KEY, kid="k", alg="EdDSA")
    report = verify_card(signed, HOSTILE_KEYS)
    assert report.status == "verified" and report.form == "served"
