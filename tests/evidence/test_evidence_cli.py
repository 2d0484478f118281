"""Signed evidence end to end: keygen, verify --sign-key against a reference agent, export, and
the offline re-check on "another machine" (another --home) that trusts the key, or does not.

Real keys, real signatures, a real agent on 127.0.0.1 and real SQLite histories. The envelope is
also checked here without this package's code: the DSSE pre-authentication encoding built by
hand from the specification, the Ed25519 signature checked with `cryptography`, and the
transcript digest recomputed with the `jcs` package, as an outside verifier would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import jcs
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from explorer.cli import main
from explorer.core.report import validate_report

pytestmark = pytest.mark.slow  # the CLI against the reference agents, signing and re-verifying


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def machines(tmp_path: Path) -> dict[str, Path]:
    """Two explorer homes: the runner's machine and a reader's."""
    return {"runner": tmp_path / "runner-home", "reader": tmp_path / "reader-home"}


def _keygen(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    code, out, err = _run(capsys, "keygen", "--out", str(path))
    assert code == 0, err
    return json.loads(out)


def test_keygen_writes_a_private_key_only_its_owner_reads_and_prints_the_public_jwks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "keys" / "runner.pem"
    jwks = _keygen(capsys, path)
    [jwk] = jwks["keys"]
    assert jwk["kty"] == "OKP" and jwk["crv"] == "Ed25519" and "d" not in jwk
    assert jwk["kid"] == _thumbprint(jwk)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    pem = path.read_bytes()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8
    code, out, err = _run(capsys, "keygen", "--out", str(path))
    assert code == 1 and "already exists" in err and "--force" in err and out == ""
    assert path.read_bytes() == pem  # never overwritten without --force
    code, out, _ = _run(capsys, "keygen", "--out", str(path), "--force")
    assert code == 0 and path.read_bytes() != pem
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_keygen_defaults_to_the_config_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = _run(capsys, "keygen", "--home", str(tmp_path / "h"))
    assert code == 0 and (tmp_path / "h" / "runner-key.pem").is_file()


def _thumbprint(jwk: dict[str, Any]) -> str:
    members = json.dumps({"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"]}, separators=(",", ":"))
    return base64.urlsafe_b64encode(hashlib.sha256(members.encode()).digest()).rstrip(b"=").decode()


def test_a_self_run_cannot_be_signed_and_a_signer_needs_a_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    key = tmp_path / "k.pem"
    _keygen(capsys, key)
    code, out, err = _run(capsys, "verify", "http://127.0.0.1:9", "--sign-key", str(key), "--runner", "me")
    assert code == 2 and "self-run result is a claim whatever the signature" in err and out == ""
    code, _, err = _run(capsys, "verify", "http://127.0.0.1:9", "--sign-key", str(key), "--as", "independent")
    assert code == 2 and "--runner" in err
    code, _, err = _run(
        capsys, "verify", "http://127.0.0.1:9", "--sign-key", str(tmp_path / "nope.pem"),
        "--as", "independent", "--runner", "me",
    )  # fmt: skip
    assert code == 2 and "no key file" in err


def _outside_check(transcript: dict[str, Any], jwks: dict[str, Any]) -> dict[str, Any]:
    """Verify the run attestation the way a verifier outside this repository would."""
    envelope = transcript["run_attestation"]
    payload = base64.b64decode(envelope["payload"])
    ptype = envelope["payloadType"].encode()
    pae = b"DSSEv1 %d %s %d %s" % (len(ptype), ptype, len(payload), payload)
    [jwk] = jwks["keys"]
    public = Ed25519PublicKey.from_public_bytes(base64.urlsafe_b64decode(jwk["x"] + "=="))
    [sig] = envelope["signatures"]
    assert sig["keyid"] == jwk["kid"]
    public.verify(base64.b64decode(sig["sig"]), pae)  # raises InvalidSignature if wrong
    statement = json.loads(payload)
    body = {k: v for k, v in transcript.items() if k != "run_attestation"}
    [subject] = [s for s in statement["subject"] if s["name"] == "transcript"]
    assert subject["digest"]["sha256"] == hashlib.sha256(jcs.canonicalize(body)).hexdigest()
    return statement


def test_signed_evidence_is_evidence_where_the_key_is_trusted_and_a_claim_everywhere_else(
    capsys: pytest.CaptureFixture[str], fleet: Any, machines: dict[str, Path], tmp_path: Path
) -> None:
    agent = fleet.agents["steady"]
    keys = tmp_path / "agent.jwks"
    keys.write_text(json.dumps(agent.jwks))
    key = tmp_path / "runner.pem"
    jwks = _keygen(capsys, key)
    trust = tmp_path / "runner.jwks"
    trust.write_text(json.dumps(jwks))
    runner_home = str(machines["runner"])

    code, out, err = _run(
        capsys, "verify", agent.card_url, "--keys", str(keys), "--json", "--home", runner_home,
        "--sign-key", str(key), "--runner", "ci@example.org", "--as", "independent",
    )  # fmt: skip
    assert code == 0, err
    live = json.loads(out)
    assert validate_report(live) == []
    assert live["standing"] == "evidence"
    kid = jwks["keys"][0]["kid"]
    assert live["run_attestation"] == {
        "status": "verified", "keyid": kid, "runner": "ci@example.org", "role": "independent",
    }  # fmt: skip
    assert "signed with runner key" in err

    exported = tmp_path / "run.json"
    assert _run(capsys, "export", "1", "-o", str(exported), "--home", runner_home)[0] == 0
    transcript = json.loads(exported.read_text())
    statement = _outside_check(transcript, jwks)
    assert statement["predicate"]["verificationResult"] == "PASSED"
    assert statement["predicate"]["resourceUri"] == agent.card_url
    assert key.read_text().split("-----")[2].strip() not in exported.read_text()

    code, out, _ = _run(capsys, "export", "1", "--format", "intoto", "--home", runner_home)
    assert code == 0 and json.loads(out) == transcript["run_attestation"]

    reader = ["--home", str(machines["reader"])]
    offline = ["verify", "--offline", str(exported)]
    code, out, _ = _run(capsys, *offline, "--trust-runner", str(trust), "--json", *reader)
    trusted = json.loads(out)
    assert code == 0 and trusted["standing"] == "evidence" and trusted["verdict"] == "conformant"
    assert trusted["run_attestation"]["status"] == "verified"
    assert not [f for f in trusted["findings"] if f["code"] == "evidence_unverified"]
    code, out, _ = _run(capsys, "verify", "--offline", str(exported), "--trust-runner", str(trust), *reader)
    assert f"standing: evidence: signed by ci@example.org (key {jwks['keys'][0]['kid'][:6]}…, trusted)" in out

    code, out, _ = _run(capsys, "verify", "--offline", str(exported), "--json", *reader)
    untrusted = json.loads(out)
    assert untrusted["standing"] == "claim" and untrusted["run_attestation"]["status"] == "unknown_signer"
    [finding] = [f for f in untrusted["findings"] if f["code"] == "evidence_unverified"]
    assert finding["severity"] == "warning" and finding["detail"].startswith("unknown signer")
    code, out, _ = _run(capsys, "verify", "--offline", str(exported), *reader)
    assert "standing: claim, unknown signer: signed by ci@example.org" in out

    # The runner's own machine trusts the key it signs with once the config says so.
    (machines["runner"] / "config.toml").write_text(f'sign_key = "{key}"\n')
    code, out, _ = _run(capsys, "show", "1", "--home", runner_home)
    assert code == 0 and "standing: evidence: signed by ci@example.org" in out
    code, out, _ = _run(capsys, "show", "1", "--json", "--home", str(machines["runner"]))
    assert json.loads(out)["run_attestation"]["status"] == "verified"
    for fmt in ("md", "html"):
        code, out, _ = _run(capsys, "export", "1", "--format", fmt, "--home", runner_home)
        assert code == 0 and "evidence: signed by ci@example.org" in out

    # Another machine that was not told to trust the key: every surface says claim, and why.
    (machines["reader"] / "config.toml").parent.mkdir(parents=True, exist_ok=True)
    code, out, _ = _run(capsys, "verify", str(agent.card_url), "--keys", str(keys), *reader)
    code, out, _ = _run(capsys, "verify", "--offline", str(exported), *reader, "--trust-runner", str(keys))
    assert "claim, unknown signer" in out


def test_an_altered_or_resigned_transcript_is_a_claim_and_its_verdict_comes_from_its_bytes(
    capsys: pytest.CaptureFixture[str], fleet: Any, machines: dict[str, Path], tmp_path: Path
) -> None:
    agent = fleet.agents["steady"]
    keys = tmp_path / "agent.jwks"
    keys.write_text(json.dumps(agent.jwks))
    key = tmp_path / "runner.pem"
    trust = tmp_path / "runner.jwks"
    trust.write_text(json.dumps(_keygen(capsys, key)))
    home = ["--home", str(machines["runner"])]
    code, _, err = _run(
        capsys, "verify", agent.card_url, "--keys", str(keys), *home,
        "--sign-key", str(key), "--runner", "ci", "--as", "platform",
    )  # fmt: skip
    assert code == 0, err
    exported = tmp_path / "run.json"
    _run(capsys, "export", "1", "-o", str(exported), *home)
    original = json.loads(exported.read_text())

    altered = json.loads(json.dumps(original))
    answer = next(e for e in altered["exchanges"] if e["purpose"] == "ask:identity#2")
    body = bytearray(base64.b64decode(answer["response_body_b64"]))
    body[body.index(b"Stonework Books") + 1] ^= 0x01  # one byte of one answer
    answer["response_body_b64"] = base64.b64encode(bytes(body)).decode()
    path = tmp_path / "altered.json"
    path.write_text(json.dumps(altered))
    code, out, _ = _run(capsys, "verify", "--offline", str(path), "--trust-runner", str(trust), "--json")
    report = json.loads(out)
    assert report["standing"] == "claim" and report["run_attestation"]["status"] == "invalid"
    assert [f["detail"] for f in report["findings"] if f["code"] == "evidence_unverified"][0].startswith(
        "altered transcript"
    )
    assert report["verdict"] == "nonconformant" and code == 1  # recomputed from the changed bytes

    forged = json.loads(json.dumps(original))
    sig = bytearray(base64.b64decode(forged["run_attestation"]["signatures"][0]["sig"]))
    sig[10] ^= 0x80
    forged["run_attestation"]["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    path.write_text(json.dumps(forged))
    code, out, _ = _run(capsys, "verify", "--offline", str(path), "--trust-runner", str(trust))
    assert code == 0 and "standing: claim, bad signature: the signature does not verify" in out

    code, out, _ = _run(capsys, "export", "1", "--format", "intoto", *home)
    assert code == 0
    envelope = str(tmp_path / "run.intoto.json")
    code, _, err = _run(capsys, "export", "1", "--format", "intoto", "-o", envelope, *home)
    assert code == 0 and "wrote the signed attestation (a DSSE envelope) of run 1" in err
    assert "transcript" not in err  # it is the runner's envelope, not a transcript
    unsigned_home = ["--home", str(machines["reader"])]
    _run(capsys, "verify", agent.card_url, "--keys", str(keys), *unsigned_home, "--as", "independent")
    code, _, err = _run(capsys, "export", "1", "--format", "intoto", *unsigned_home)
    assert code == 2 and "not signed" in err


def test_a_sweep_signs_every_run_and_history_import_keeps_the_attestation(
    capsys: pytest.CaptureFixture[str], fleet: Any, machines: dict[str, Path], tmp_path: Path
) -> None:
    key = tmp_path / "runner.pem"
    trust = tmp_path / "runner.jwks"
    trust.write_text(json.dumps(_keygen(capsys, key)))
    targets = [fleet.agents[name].card_url for name in ("steady", "unsigned")]
    folder = tmp_path / "transcripts"
    code, out, err = _run(
        capsys, "verify", *targets, "--json", "--transcripts", str(folder), "--no-history",
        "--sign-key", str(key), "--runner", "ci", "--as", "independent",
    )  # fmt: skip
    reports = [json.loads(line) for line in out.splitlines()]
    assert len(reports) == 2 and all(r["run_attestation"]["status"] == "verified" for r in reports), err
    files = sorted(folder.glob("*.json"))
    assert len(files) == 2
    reader = ["--home", str(machines["reader"])]
    code, out, err = _run(capsys, "history", "import", str(folder), *reader)
    assert code == 0, err
    for run_id, path in ((1, files[0]), (2, files[1])):
        original = json.loads(path.read_text())
        code, out, _ = _run(capsys, "export", str(run_id), "--format", "intoto", *reader)
        assert code == 0
        envelope = json.loads(out)
        assert envelope in [json.loads(f.read_text())["run_attestation"] for f in files]
        code, out, _ = _run(capsys, "show", str(run_id), "--json", "--trust-runner", str(trust), *reader)
        assert json.loads(out)["standing"] == "evidence"
        code, out, _ = _run(capsys, "show", str(run_id), "--json", *reader)
        assert json.loads(out)["standing"] == "claim"
        assert original["run_attestation"]["payloadType"] == "application/vnd.in-toto+json"
    exported = tmp_path / "again.json"
    _run(capsys, "export", "1", "-o", str(exported), *reader)
    code, out, _ = _run(capsys, "verify", "--offline", str(exported), "--trust-runner", str(trust), "--json")
    assert json.loads(out)["standing"] == "evidence"  # the imported run re-exports byte for byte as signed


def test_replay_watch_and_a_watched_list_sign_with_the_configs_key(
    capsys: pytest.CaptureFixture[str], fleet: Any, machines: dict[str, Path], tmp_path: Path
) -> None:
    agent = fleet.agents["steady"]
    keys = tmp_path / "agent.jwks"
    keys.write_text(json.dumps(agent.jwks))
    key = tmp_path / "runner.pem"
    _keygen(capsys, key)
    machines["runner"].mkdir(parents=True)
    (machines["runner"] / "config.toml").write_text(f'sign_key = "{key}"\n')
    home = ["--home", str(machines["runner"])]
    assert (
        _run(
            capsys, "verify", agent.card_url, "--keys", str(keys), "--runner", "ci", "--as", "platform", *home
        )[0]
        == 0
    )
    yours = ("--keys", str(keys), "--runner", "ci", "--as", "platform")  # a replay asks as you
    assert _run(capsys, "replay", "1", *yours, *home)[0] == 0
    assert _run(capsys, "watch", agent.card_url, "--keys", str(keys), "--runner", "ci", "--as", "platform",
                "--every", "0.1", "--count", "1", *home)[0] == 0  # fmt: skip
    listed = tmp_path / "agents.txt"
    listed.write_text(agent.card_url + "\n")
    code, _, err = _run(capsys, "watch", "--from", str(listed), "--keys", str(keys), "--runner", "ci", "--as",
                        "platform", "--every", "0.1", "--count", "1", *home)  # fmt: skip
    assert code == 0, err
    assert "verify" not in err  # what is said is said by the command the user typed
    from explorer.store.sqlite import History

    with History.open(machines["runner"]) as history:
        assert history.signed([1, 2, 3, 4]) == {1, 2, 3, 4}
    code, out, _ = _run(capsys, "show", "2", *home)
    assert "standing: evidence: signed by ci" in out  # your own sign_key is trusted on your machine
    code, out, _ = _run(capsys, "show", "4", *home)
    assert "standing: evidence: signed by ci" in out  # a watched list is signed as one target is
