"""The run attestation: DSSE against its published vectors, the statement against the in-toto
Statement v1 and SLSA VSA v1 field rules, and the standing rule with real Ed25519 keys.

The runs here are built from recorded exchanges (no network): what is checked is the signature,
the statement and the rule. tests/evidence/test_evidence_cli.py runs the same rule end to end against
the reference agents.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from explorer.core import attestation as att
from explorer.core import intoto
from explorer.core.card import INTERVIEW_URI
from explorer.core.run import Exchange, Run
from explorer.evidence import runner_keys, signing, standing
from tests.support import paths

VECTORS = json.loads((paths.VECTORS / "dsse" / "vectors.json").read_text("utf-8"))
KEY_A = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(VECTORS["keys"]["A"]["seed"]))
RAW_A = bytes.fromhex(VECTORS["keys"]["A"]["public"])
CARD_URL = "http://127.0.0.1:9/.well-known/agent-card.json"
PROPOSAL_URL = "http://127.0.0.1:9/terms/one.sow.json"


def _vector(name: str) -> dict[str, Any]:
    return next(v for v in VECTORS["vectors"] if v["id"] == name)


# --- DSSE -----------------------------------------------------------------------------------------


def test_pae_is_the_dsse_specifications_published_example() -> None:
    example = VECTORS["protocol_example"]
    encoded = att.pae(example["payloadType"], example["payload"].encode())
    assert encoded == example["pae"].encode() == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"


def test_pae_of_each_vector_matches_the_published_bytes() -> None:
    for vector in VECTORS["vectors"][:2]:
        env = vector["envelope"]
        payload = att._b64any(env["payload"])
        assert att.pae(env["payloadType"], payload).hex() == vector["pae"]


def test_signing_the_vectors_payload_with_key_a_gives_its_published_signature() -> None:
    assert KEY_A.public_key().public_bytes_raw() == RAW_A
    envelope = att.sign_statement({"_type": intoto.STATEMENT_TYPE}, KEY_A)
    published = _vector("single-signature")["envelope"]
    assert envelope["payload"] == published["payload"]
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    [sig] = envelope["signatures"]
    assert sig["sig"] == published["signatures"][0]["sig"]
    assert sig["keyid"] == att.thumbprint(att.public_jwk(KEY_A))


def test_the_published_envelopes_verify_or_are_refused_as_the_vectors_say() -> None:
    trusted = {att.thumbprint(att.public_jwk(KEY_A)): RAW_A}
    single = att.open_envelope(_vector("single-signature")["envelope"], trusted)
    # The signature verifies; the payload is a bare `_type`, so as a run statement it is malformed.
    assert single.keyid in trusted and "statement is malformed" in single.detail
    url_safe = att.open_envelope(_vector("url-safe-base64")["envelope"], trusted)
    assert url_safe.keyid in trusted and "not a JSON statement" in url_safe.detail
    swapped = att.open_envelope(_vector("payload-type-swapped")["envelope"], trusted)
    assert swapped.status == "invalid" and "payloadType" in swapped.detail
    assert att.open_envelope(_vector("single-signature")["envelope"], {}).status == "unknown_signer"


def test_the_thumbprint_is_rfc_7638() -> None:
    # RFC 8037 appendix A.3: the thumbprint of the RFC 8032 test key's public half.
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    assert att.thumbprint(jwk) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    assert att.public_jwk(KEY_A)["kid"] == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"


# --- the statement --------------------------------------------------------------------------------


def _exchange(purpose: str, url: str, body: bytes, attempt: int = 1) -> Exchange:
    return Exchange(purpose=purpose, attempt=attempt, method="GET", url=url, status=200, response_body=body)


def _run(role: str = "independent", verdict: str = "conformant", card: bytes = b'{"name":"A"}') -> Run:
    report = {
        "verdict": verdict,
        "ran_by": {"name": "ci@example.org", "role": role},
        "standing": "evidence" if role != "self" else "claim",
        "card": {"url": CARD_URL, "sha256": None},
        "findings": [{"code": "projection_mismatch", "severity": "error", "detail": "x"}]
        if verdict == "nonconformant"
        else [],
        "finished_at": "2026-12-01T12:00:00.000Z",
    }
    exchanges = (
        _exchange("card", CARD_URL, card),
        _exchange("proposal", PROPOSAL_URL, b'{"sow": 1}'),
        _exchange("ask:identity#1", "http://127.0.0.1:9/rpc", b'{"jsonrpc":"2.0","id":1,"result":{}}'),
    )
    return Run(report=report, exchanges=exchanges, keys={"keys": []})


def _statement(run: Run) -> dict[str, Any]:
    return json.loads(att._b64any(run.attestation["payload"]))


@pytest.fixture
def key(tmp_path: Path) -> runner_keys.RunnerKey:
    return runner_keys.generate(tmp_path / "runner.pem")


def test_the_statement_meets_the_in_toto_v1_and_slsa_vsa_v1_field_rules(key: runner_keys.RunnerKey) -> None:
    signed = signing.sign_run(_run(), key)
    statement = _statement(signed)
    assert intoto.statement_problems(statement) == []
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://slsa.dev/verification_summary/v1"
    by_name = {s["name"]: s["digest"]["sha256"] for s in statement["subject"]}
    assert by_name[CARD_URL] == _sha(b'{"name":"A"}')  # the bytes served, not their JCS form
    assert by_name[PROPOSAL_URL] == _sha(b'{"sow": 1}')
    assert by_name["transcript"] == intoto.transcript_sha256(signed.to_transcript())
    predicate = statement["predicate"]
    assert predicate["verifier"]["id"] == "urn:interview-explorer:runner:ci@example.org"
    assert predicate["timeVerified"] == "2026-12-01T12:00:00.000Z"
    assert predicate["resourceUri"] == CARD_URL
    assert predicate["policy"] == {"uri": INTERVIEW_URI}
    assert predicate["verificationResult"] == "PASSED"
    assert predicate[f"{INTERVIEW_URI}#verdict"] == "conformant"
    assert predicate[f"{INTERVIEW_URI}#role"] == "independent"
    assert predicate[f"{INTERVIEW_URI}#runner"] == "ci@example.org"
    assert predicate[f"{INTERVIEW_URI}#errorCodes"] == []


def test_only_conformant_passes_and_error_codes_are_listed(key: runner_keys.RunnerKey) -> None:
    predicate = _statement(signing.sign_run(_run(verdict="nonconformant"), key))["predicate"]
    assert predicate["verificationResult"] == "FAILED" and predicate["verifiedLevels"] == ["FAILED"]
    assert predicate[f"{INTERVIEW_URI}#errorCodes"] == ["projection_mismatch"]


def test_the_field_rules_catch_what_the_specifications_forbid() -> None:
    good = signing.sign_run(_run(), runner_keys.RunnerKey(KEY_A, att.public_jwk(KEY_A), Path("k")))
    statement = _statement(good)
    breakages = {
        "_type": lambda s: s.update(_type="https://in-toto.io/Statement/v0.1"),
        "digest": lambda s: s["subject"][0].pop("digest"),
        "unique": lambda s: s["subject"][1].update(name=s["subject"][0]["name"]),
        "verifier.id": lambda s: s["predicate"]["verifier"].update(id="ci@example.org"),
        "timeVerified": lambda s: s["predicate"].update(timeVerified="2026-12-01 12:00"),
        "policy": lambda s: s["predicate"].update(policy={}),
        "verificationResult": lambda s: s["predicate"].update(verificationResult="OK"),
        "SLSA_": lambda s: s["predicate"].update(verifiedLevels=["SLSA_INTERVIEW"]),
        "URI": lambda s: s["predicate"].update(verdict="conformant"),
    }
    for words, breaks in breakages.items():
        broken = copy.deepcopy(statement)
        breaks(broken)
        problems = intoto.statement_problems(broken)
        assert any(words in p for p in problems), (words, problems)


def test_runner_names_become_uris() -> None:
    assert intoto.runner_uri("https://ci.example.org/runner") == "https://ci.example.org/runner"
    assert intoto.runner_uri("Jo Smith") == "urn:interview-explorer:runner:Jo%20Smith"
    assert intoto.is_uri(intoto.runner_uri("ci@example.org"))
    assert intoto.resource_uri("/tmp/card.json") == "file:///tmp/card.json"


# --- the standing rule ----------------------------------------------------------------------------


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _offline(transcript: dict[str, Any], trusted: dict[str, bytes]) -> dict[str, Any]:
    data = json.loads(json.dumps(transcript))  # as a file would give it
    return standing.assess_transcript(data, data["report"], trusted)


def _unverified(report: dict[str, Any]) -> list[str]:
    return [f["detail"] for f in report["findings"] if f["code"] == "evidence_unverified"]


def test_a_signed_run_is_evidence_where_its_key_is_trusted_and_a_claim_elsewhere(
    key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    signed = signing.sign_run(_run(), key)
    assert signed.report["run_attestation"] == {
        "status": "verified",
        "keyid": key.keyid,
        "runner": "ci@example.org",
        "role": "independent",
    }
    trusted = runner_keys.trusted_set(key.jwks())
    report = _offline(signed.to_transcript(), trusted)
    assert report["standing"] == "evidence" and _unverified(report) == []
    other = runner_keys.generate(tmp_path / "other.pem")
    report = _offline(signed.to_transcript(), runner_keys.trusted_set(other.jwks()))
    assert report["standing"] == "claim"
    assert report["run_attestation"]["status"] == "unknown_signer"
    assert _unverified(report)[0].startswith("unknown signer")


def test_one_changed_byte_of_an_answer_is_an_altered_transcript(key: runner_keys.RunnerKey) -> None:
    transcript = signing.sign_run(_run(), key).to_transcript()
    answer = next(e for e in transcript["exchanges"] if e["purpose"] == "ask:identity#1")
    body = bytearray(base64.b64decode(answer["response_body_b64"]))
    body[-3] ^= 1
    answer["response_body_b64"] = base64.b64encode(bytes(body)).decode()
    report = _offline(transcript, runner_keys.trusted_set(key.jwks()))
    assert report["standing"] == "claim" and report["run_attestation"]["status"] == "invalid"
    assert _unverified(report)[0].startswith("altered transcript")


def test_a_changed_signature_is_a_bad_signature(key: runner_keys.RunnerKey) -> None:
    transcript = signing.sign_run(_run(), key).to_transcript()
    sig = bytearray(base64.b64decode(transcript["run_attestation"]["signatures"][0]["sig"]))
    sig[0] ^= 1
    transcript["run_attestation"]["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    report = _offline(transcript, runner_keys.trusted_set(key.jwks()))
    assert report["standing"] == "claim" and report["run_attestation"]["status"] == "invalid"
    assert _unverified(report)[0].startswith("bad signature")


def test_a_self_run_is_a_claim_whatever_the_signature(key: runner_keys.RunnerKey) -> None:
    signed = signing.sign_run(_run(role="self"), key)
    assert signed.report["standing"] == "claim"
    report = _offline(signed.to_transcript(), runner_keys.trusted_set(key.jwks()))
    assert report["standing"] == "claim" and report["run_attestation"]["status"] == "verified"
    assert _unverified(report) == []  # a self-run result never presented itself as evidence


def test_an_unsigned_independent_transcript_is_a_claim() -> None:
    report = _offline(_run().to_transcript(), {})
    assert report["standing"] == "claim" and report["run_attestation"]["status"] == "unsigned"
    assert _unverified(report)[0].startswith("unsigned")


def test_a_run_signed_with_the_agents_own_card_key_is_self_attested(key: runner_keys.RunnerKey) -> None:
    from joserfc.jwk import OKPKey

    from explorer.core.signatures import sign_card

    jose_key = OKPKey.import_key(key.path.read_bytes())
    card = sign_card({"name": "A", "skills": []}, jose_key, kid="agent-key", alg="EdDSA")
    run = _run(card=json.dumps(card).encode())
    signed = signing.sign_run(run, key)
    assert signed.report["standing"] == "claim"
    assert _unverified(dict(signed.report))[0].startswith("self-attested")
    report = _offline(signed.to_transcript(), runner_keys.trusted_set(key.jwks()))
    assert report["standing"] == "claim" and report["run_attestation"]["status"] == "verified"
    assert _unverified(report)[0].startswith("self-attested")


def test_the_verdict_is_never_taken_from_the_attestation(key: runner_keys.RunnerKey) -> None:
    transcript = signing.sign_run(_run(), key).to_transcript()
    recomputed = {**transcript["report"], "verdict": "nonconformant"}
    report = standing.assess_transcript(transcript, recomputed, runner_keys.trusted_set(key.jwks()))
    assert report["verdict"] == "nonconformant"


def test_a_garbage_attestation_is_a_bad_signature_not_a_crash() -> None:
    for garbage in (
        "x",
        [],
        {"payload": 1},
        {"payload": "!!", "payloadType": "a", "signatures": [{}]},
        {"payload": "", "payloadType": att.PAYLOAD_TYPE, "signatures": [{"sig": "AAAA"}]},
    ):
        transcript = {**_run().to_transcript(), "run_attestation": garbage}
        report = _offline(transcript, {})
        assert report["standing"] == "claim"
        assert report["run_attestation"]["status"] in ("invalid", "unknown_signer")


def test_the_private_key_appears_nowhere_in_a_signed_transcript(key: runner_keys.RunnerKey) -> None:
    pem = key.path.read_text()
    secret = pem.split("-----")[2].strip()
    text = json.dumps(signing.sign_run(_run(), key).to_transcript())
    assert secret not in text and "PRIVATE" not in text
    assert secret not in repr(key)


def test_history_keeps_the_envelope_and_gives_back_the_transcript_that_was_signed(
    key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    from explorer.store.sqlite import History

    signed = signing.sign_run(_run(), key)
    with History.open(tmp_path / "home") as history:
        loaded = history.load(history.record(signed))
        unsigned_id = history.record(_run())
        assert history.load(unsigned_id).attestation is None
    assert loaded.attestation == signed.attestation
    assert loaded.to_transcript() == signed.to_transcript()
    report = standing.assess_run(loaded, runner_keys.trusted_set(key.jwks())).report
    assert report["standing"] == "evidence" and report["run_attestation"]["status"] == "verified"


def test_a_re_derived_run_still_writes_and_records_the_report_that_was_signed(
    key: runner_keys.RunnerKey, tmp_path: Path
) -> None:
    from explorer.store.export import export
    from explorer.store.sqlite import History

    signed = signing.sign_run(_run(), key)
    shown = standing.assess_run(signed, {})  # a reader who does not trust the key
    assert shown.report["standing"] == "claim" and shown.report != signed.report
    assert shown.to_transcript() == signed.to_transcript()
    assert json.loads(export(shown, "json")) == json.loads(export(signed, "json"))
    with History.open(tmp_path / "home") as history:
        again = history.load(history.record(shown))
    assert again.to_transcript() == signed.to_transcript()


def test_an_envelope_cannot_make_the_check_long(key: runner_keys.RunnerKey) -> None:
    import time

    transcript = signing.sign_run(_run(), key).to_transcript()
    envelope = transcript["run_attestation"]
    envelope["signatures"] = envelope["signatures"] * 10_000
    began = time.perf_counter()
    report = _offline(transcript, runner_keys.trusted_set(key.jwks()))
    assert time.perf_counter() - began < 5.0
    assert report["standing"] == "claim" and report["run_attestation"]["status"] == "invalid"


def test_the_in_toto_reference_bindings_accept_the_statement_and_its_vsa_predicate(
    key: runner_keys.RunnerKey,
) -> None:
    """The in-toto project's own Python bindings (protobuf) as an outside check of the shape."""
    pytest.importorskip("in_toto_attestation")
    from google.protobuf import json_format
    from in_toto_attestation.predicates.vsa.v1 import vsa_pb2
    from in_toto_attestation.v1 import statement_pb2
    from in_toto_attestation.v1.statement import Statement

    statement = _statement(signing.sign_run(_run(), key))
    parsed = json_format.ParseDict(statement, statement_pb2.Statement())
    Statement.copy_from_pb(parsed).validate()  # raises ValueError on a broken statement
    # Their VSA v1 proto declares verifiedLevels a single string where the SLSA specification
    # says an array of SlsaResult; the statement follows the specification, so that one field
    # is checked by the field rules above and the rest by the bindings.
    predicate = {k: v for k, v in statement["predicate"].items() if k != "verifiedLevels"}
    summary = json_format.ParseDict(predicate, vsa_pb2.VerificationSummary(), ignore_unknown_fields=True)
    assert summary.verifier.id == statement["predicate"]["verifier"]["id"]
    assert summary.verification_result == "PASSED" and summary.policy.uri == INTERVIEW_URI
    assert summary.resource_uri == CARD_URL and summary.slsa_version == "1.0"
    assert summary.time_verified.ToJsonString() == "2026-12-01T12:00:00Z"


def test_the_transcript_digest_is_the_digest_of_the_whole_rfc_8785_form() -> None:
    """Canonicalized a few levels at a time, the bytes are still those of the whole (RFC 8785
    orders keys by UTF-16 code units: an astral character sorts before U+E000..U+FFFF)."""
    import hashlib

    import jcs

    tricky = {
        "\U0001f600": 1, "\ufb01": 2, "é": [1.5, {"b": 1e21, "a": -0.0}], "a": {"z": None, "y": [True, "x"]},
        "report": {"questions": {"k": [{"v": 2**53 - 1, "w": 0.1}]}, "elapsed_ms": 12.5},
        "exchanges": [{"elapsed_ms": 3.25, "status": 200}, {"purpose": "ask:identity#1"}],
        "run_attestation": {"ignored": True},
    }  # fmt: skip
    body = {k: v for k, v in tricky.items() if k != "run_attestation"}
    assert intoto.transcript_sha256(tricky) == hashlib.sha256(jcs.canonicalize(body)).hexdigest()
    # Long lists of scalars near the top are taken in one go (a 30-million-element array is a few
    # C calls, not one Python call per element): the same bytes.
    listed = {**body, "keys": [0, 2**53 + 1, -0.0, 1.0, 1e-7, 1e16, True, None, "é"], "report": [1.5, 10**15]}
    assert intoto.transcript_sha256(listed) == hashlib.sha256(jcs.canonicalize(listed)).hexdigest()
    transcript = _run().to_transcript()
    assert intoto.transcript_sha256(transcript) == hashlib.sha256(jcs.canonicalize(transcript)).hexdigest()
