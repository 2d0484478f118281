"""A transcript is bytes, not claims: crafted transcript files through the commands a user types.

Every file here is written byte for byte by the test: a conformant run built from the exchanges
a verifier records (a really signed card, a really signed proposal, JSON-RPC bodies as bytes; the
helpers of test_evaluate.py), its report made by the same pure `evaluate`, then broken or lied
about the way an attacker would. `verify --offline` and `history import` run for real from their
argument parsers against real SQLite histories; nothing is fetched.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.core import attestation as att
from explorer.core.rederive import derived_target, rederive, stated_report_difference
from explorer.core.run import Exchange, Run, TranscriptError
from explorer.core.signatures import generate_key, public_jwks, sign_card
from explorer.core.transcript import read_transcript
from explorer.evidence.runner_keys import generate
from explorer.evidence.signing import sign_run
from explorer.evidence.standing import assess_transcript
from explorer.interview.planning import recorded_target
from explorer.store.sqlite import History
from tests.core.test_evaluate import (
    BASE,
    CARD,
    CARD_KEY,
    CARD_URL,
    KEYS,
    attempt,
    cp,
    honest_answers,
    make_card,
    report_of,
)

BIG = 2**53 + 1  # RFC 8785 writes it as 9007199254740992, the same bytes as 2**53


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def conformant_run(keys: dict[str, Any] | None = KEYS, card: dict[str, Any] = CARD) -> Run:
    """A complete conformant run, as `verify` records it (a report `evaluate` made of its bytes)."""
    exchanges = attempt(card)
    report = report_of(exchanges, keys=keys, ran_by={"name": "ci@example.org", "role": "self"})
    return Run(report=report, exchanges=tuple(exchanges), keys=keys or {})


def transcript(run: Run | None = None) -> dict[str, Any]:
    return json.loads(json.dumps((run or conformant_run()).to_transcript()))


def write(folder: Path, name: str, data: Any) -> Path:
    path = folder / name
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return path


# --- malformed files --------------------------------------------------------------------------------


def _exchange(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    data["exchanges"][3].update(changes)
    return data


def malformed() -> dict[str, tuple[bytes, str]]:
    """name -> (file bytes, what the one sentence must name)."""
    good = transcript()
    deep = b'{"transcript_version": 1, "report": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    real = json.dumps(good["report"])
    decoy = json.dumps({**good["report"], "verdict": "conformant", "card": {"name": "Decoy"}})
    others = json.dumps({k: v for k, v in good.items() if k != "report"})[1:]
    return {
        "200000 levels deep": (deep, "nesting is 200001 levels deep, over the limit of 160"),
        "status as a string": (json.dumps(_exchange(good, status="200")).encode(), "/exchanges/3/status"),
        "error as a number": (json.dumps(_exchange(good, error=5)).encode(), "/exchanges/3/error"),
        "attempt as a boolean": (json.dumps(_exchange(good, attempt=True)).encode(), "/exchanges/3/attempt"),
        "a header that is not a pair": (
            json.dumps(_exchange(good, response_headers=[["A2A-Extensions"]])).encode(),
            "/exchanges/3/response_headers/0",
        ),
        "a body that is not base64": (
            json.dumps(_exchange(good, response_body_b64="not base64!")).encode(),
            "/exchanges/3/response_body_b64 is not base64",
        ),
        "truncated as a string": (
            json.dumps(_exchange(good, truncated="no")).encode(),
            "/exchanges/3/truncated",
        ),
        "an exchange that is a list": (
            json.dumps({**good, "exchanges": [*good["exchanges"][:2], []]}).encode(),
            "/exchanges/2 must be",
        ),
        "a report that is a list": (json.dumps({**good, "report": []}).encode(), "/report must be an object"),
        "keys that are not a JWKS": (json.dumps({**good, "keys": {"keys": 5}}).encode(), "/keys/keys"),
        "a role no one has": (
            json.dumps({**good, "report": {**good["report"], "ran_by": {"role": "god"}}}).encode(),
            "/report/ran_by/role",
        ),
        "an envelope that is a string": (
            json.dumps({**good, "run_attestation": "trust me"}).encode(),
            "/run_attestation",
        ),
        "a decoy report before the real one": (
            f'{{"report": {decoy}, "report": {real}, {others}'.encode(),
            "duplicate key 'report'",
        ),
        "not a transcript": (b'{"transcript_version": 99}', "transcript_version 1 expected"),
        "not JSON": (b"\xff\xfe{", "not valid UTF-8"),
    }


@pytest.mark.parametrize("case", list(malformed()))
def test_every_malformed_transcript_is_refused_in_one_sentence(case: str) -> None:
    data, named = malformed()[case]
    with pytest.raises(TranscriptError) as refused:
        read_transcript(data)
    assert named in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("case", list(malformed()))
def test_verify_offline_of_a_malformed_transcript_is_exit_2_with_one_sentence(
    case: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data, named = malformed()[case]
    path = write(tmp_path, "bad.json", data)
    code, out, err = _cli(capsys, "verify", "--offline", str(path), "--json")
    assert code == 2 and out == ""
    assert named in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_history_import_refuses_each_bad_file_and_goes_on_with_the_next(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "shard"
    folder.mkdir()
    first = write(folder, "a-good.json", transcript())
    for index, (data, _) in enumerate(malformed().values()):
        write(folder, f"b-bad-{index:02}.json", data)
    other = conformant_run(card=make_card(name="Stonework Books (Two)"))
    last = write(folder, "c-good.json", transcript(other))
    code, out, err = _cli(capsys, "history", "import", str(folder))
    lines = out.splitlines()
    assert code == 2  # a file that is not a transcript at all
    assert lines[0].startswith("imported as run 1") and lines[0].endswith(f"({first})")
    assert lines[-1].startswith("imported as run 2") and lines[-1].endswith(f"({last})")
    assert [line.split()[0] for line in lines[1:-1]] == ["refused"] * len(malformed())
    assert err.count("refused:") == len(malformed()) and "Traceback" not in err
    for _, named in malformed().values():
        assert named in err


# --- what a transcript states against what its bytes give ---------------------------------------


def _lie(data: dict[str, Any], *path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    where = data["report"]
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        (
            ("card", "name"),
            "ACME Payments",
            '/report/card/name: its bytes give "Stonework Books" but it states "ACME Payments"',
        ),
        (("card", "url"), "https://acme.example/card.json", "/report/card/url: its bytes give"),
        (
            ("card", "signature", "status"),
            "verified",
            '/report/card/signature/status: its bytes give "unverifiable"',
        ),
        (("findings",), [], '/report/findings/0: its bytes give {"code":"card_signature_unverifiable"'),
        (("verdict",), "conformant", "/report/verdict"),
        (
            ("target",),
            "http://10.0.0.1/internal",
            "it states the target 'http://10.0.0.1/internal', but its first card request went to",
        ),
    ],
)
def test_a_stated_report_its_bytes_do_not_give_is_refused_naming_the_first_difference(
    path: tuple[str, ...], value: Any, named: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Recorded without keys: its card signature is unverifiable, so `verified` is a lie too.
    data = transcript(conformant_run(keys={}))
    if path == ("verdict",):  # its bytes give nonconformant: the agent answers another name
        answers = honest_answers(CARD)
        answers["identity"]["projections"][0] = cp("/name", "Someone Else")
        exchanges = attempt(CARD, answers=answers)
        report = report_of(exchanges, ran_by={"name": "ci", "role": "self"})
        assert report["verdict"] == "nonconformant"
        data = transcript(Run(report=report, exchanges=tuple(exchanges), keys=KEYS))
    lied = write(tmp_path, "lie.json", _lie(data, *path, value=value))
    code, out, err = _cli(capsys, "history", "import", str(lied))
    assert code == 1 and out.startswith("refused"), err
    assert named in err, err
    code, out, err = _cli(capsys, "history", "--json")
    assert out.strip() == ""  # nothing was recorded
    # Offline, the lie is said and what is shown is what the bytes give.
    code, out, err = _cli(capsys, "verify", "--offline", str(lied), "--json")
    shown = json.loads(out)
    assert "states a report its bytes do not give" in err
    assert shown["card"]["name"] == "Stonework Books" and shown["card"]["url"] == CARD_URL
    assert shown["target"] == (CARD_URL if path == ("target",) else BASE)  # the request it made


def test_a_replay_asks_the_target_the_bytes_asked_not_the_one_a_file_states() -> None:
    run = conformant_run()
    lied = Run.from_transcript(_lie(transcript(run), "target", value="http://10.0.0.1/internal"))
    assert recorded_target(lied) == CARD_URL  # the first card request it recorded
    assert recorded_target(run) == BASE  # the stated target leads to it: kept as typed
    assert derived_target("127.0.0.1:8765", run.exchanges) == CARD_URL  # not https://: not this run's


# --- whose keys decide ------------------------------------------------------------------------------


def test_verify_offline_checks_the_card_under_your_keys_never_the_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "run.json", transcript())  # recorded with the agent's key: verified
    code, out, _ = _cli(capsys, "verify", "--offline", str(path), "--json")
    alone = json.loads(out)["card"]["signature"]
    assert alone["status"] == "unverifiable" and alone["with_recorded_keys"]["status"] == "verified"
    code, out, _ = _cli(capsys, "verify", "--offline", str(path))
    assert "verified by the keys it carries when recorded, but keys a recorded run carries are not" in out
    mine = write(tmp_path, "mine.jwks", KEYS)
    code, out, _ = _cli(capsys, "verify", "--offline", str(path), "--keys", str(mine), "--json")
    assert code == 0 and json.loads(out)["card"]["signature"]["status"] == "verified"
    assert json.loads(out)["card"]["signature"]["key_source"] == "user"  # yours, in this check
    # An attacker's transcript carries its own key under the agent's kid, with a card it signed.
    attacker = generate_key("ES256", kid="card-key-1")
    forged = conformant_run(
        keys=public_jwks(attacker), card=sign_card(make_card(sign=False), attacker, kid="card-key-1")
    )
    path = write(tmp_path, "forged.json", transcript(forged))
    code, out, _ = _cli(capsys, "verify", "--offline", str(path), "--keys", str(mine), "--json")
    signature = json.loads(out)["card"]["signature"]
    assert code == 1 and signature["status"] == "invalid"  # your key for that kid does not verify it
    code, out, _ = _cli(capsys, "verify", "--offline", str(path), "--keys", str(mine))
    assert "the card was signed by another key under the same kid" in out


def test_a_key_set_the_run_fetched_from_the_cards_jku_counts_only_with_allow_jku(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    jku = "http://127.0.0.1:8765/.well-known/jwks.json"
    card = sign_card(make_card(sign=False), CARD_KEY, kid="card-key-1", jku=jku)
    fetched = Exchange(
        purpose="jwks", attempt=1, method="GET", url=jku, status=200, response_body=json.dumps(KEYS).encode()
    )
    exchanges = [attempt(card)[0], fetched, *attempt(card)[1:]]
    report = report_of(exchanges, keys={}, ran_by={"name": "ci", "role": "self"})
    assert report["card"]["signature"]["key_source"] == "jku"
    path = write(tmp_path, "jku.json", transcript(Run(report=report, exchanges=tuple(exchanges), keys={})))
    code, out, _ = _cli(capsys, "verify", "--offline", str(path), "--json")
    assert json.loads(out)["card"]["signature"]["status"] == "unverifiable"
    code, out, _ = _cli(capsys, "verify", "--offline", str(path))
    assert "verified by a key set from its card's own jku when recorded" in out
    code, out, _ = _cli(capsys, "verify", "--offline", str(path), "--allow-jku", "--json")
    assert json.loads(out)["card"]["signature"]["status"] == "verified"
    assert json.loads(out)["card"]["signature"]["key_source"] == "jku"


# --- integers RFC 8785 cannot keep apart ----------------------------------------------------------


def _lossy_signed(tmp_path: Path, keys: dict[str, Any] = KEYS) -> tuple[dict[str, Any], dict[str, bytes]]:
    """A signed run whose identity answer projects an integer beyond 2^53, and the trusted key."""
    card = make_card(**{"x-serial": BIG})
    answers = honest_answers(card)
    answers["identity"]["projections"].append(cp("/x-serial", BIG))
    exchanges = attempt(card, answers=answers)
    report = report_of(exchanges, ran_by={"name": "ci@example.org", "role": "independent"})
    assert "lossy_number" in [f["code"] for f in report["findings"]]
    key = generate(tmp_path / "runner.pem")
    signed = sign_run(Run(report=report, exchanges=tuple(exchanges), keys=keys), key)
    return transcript(signed), att.runner_keys(key.jwks())


def test_a_big_integer_swapped_in_a_signed_transcript_is_not_evidence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data, trusted = _lossy_signed(tmp_path)
    honest = assess_transcript(data, data["report"], trusted)
    assert honest["standing"] == "evidence"
    swapped = copy.deepcopy(data)
    projection = swapped["report"]["questions"]["identity"]["projections"][-1]
    assert projection["value"] == BIG
    projection["value"] = 2**53  # the same RFC 8785 bytes, so the same digest: the signature holds
    report = assess_transcript(swapped, swapped["report"], trusted)
    assert report["standing"] == "claim" and report["run_attestation"]["reason"] == att.ALTERED
    assert "integers beyond +-(2^53-1)" in report["run_attestation"]["detail"]
    assert "/report/questions/identity/projections/4/value" in report["run_attestation"]["detail"]
    # Everywhere a user meets it.
    (tmp_path / "runner.jwks").write_text(
        json.dumps(
            {
                "keys": [
                    {"kty": "OKP", "crv": "Ed25519", "x": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}
                    for raw in trusted.values()
                ]
            }
        )
    )
    path = write(tmp_path, "swapped.json", swapped)
    trust = ("--trust-runner", str(tmp_path / "runner.jwks"))
    code, out, err = _cli(capsys, "verify", "--offline", str(path), *trust, "--json")
    shown = json.loads(out)
    assert shown["standing"] == "claim" and shown["run_attestation"]["reason"] == "altered transcript"
    assert shown["questions"]["identity"]["projections"][-1]["value"] == BIG  # what the bytes give
    code, out, err = _cli(capsys, "history", "import", str(path))
    assert code == 1 and "/report/questions/identity/projections/4/value" in err
    # The sentence shows both integers exactly: RFC 8785 text would print 9007199254740992 twice.
    assert f"its bytes give {BIG} but it states {2**53}" in err
    with History.open() as history:
        run_id = history.record(Run.from_transcript(swapped))  # as if a history held it
    code, out, _ = _cli(capsys, "show", str(run_id), *trust, "--json")
    assert json.loads(out)["standing"] == "claim"
    code, out, _ = _cli(capsys, "show", str(run_id), *trust)
    assert "claim, altered transcript" in out
    # The untouched file is evidence, and imports.
    path = write(tmp_path, "honest.json", data)
    code, out, _ = _cli(capsys, "verify", "--offline", str(path), *trust, "--json")
    assert json.loads(out)["standing"] == "evidence"


def test_an_integer_beyond_2_53_outside_the_report_cannot_be_bound_by_a_signature(tmp_path: Path) -> None:
    data, trusted = _lossy_signed(tmp_path, keys={**KEYS, "x-note": BIG})  # signed with it
    report = assess_transcript(data, data["report"], trusted)
    assert report["standing"] == "claim" and "at /keys/x-note" in report["run_attestation"]["detail"]


# --- the pure parts ---------------------------------------------------------------------------------


def test_a_runs_own_report_is_what_its_bytes_give_and_a_changed_one_is_named() -> None:
    run = conformant_run()
    assert stated_report_difference(run.report, rederive(run, run.keys, allow_jku=True)) is None
    changed = copy.deepcopy(dict(run.report))
    changed["questions"]["usage"]["projections"][0]["value"] = "<script>\x1b[2J"
    difference = stated_report_difference(changed, rederive(run, run.keys, allow_jku=True))
    assert difference is not None and difference.pointer == "/questions/usage/projections/0/value"
    assert "\x1b" not in difference.sentence()  # printed safely
    unsigned = att.apply(run.report, att.unsigned(run.report, live=False))
    assert stated_report_difference(unsigned, run.report) is None  # a reader's standing is not compared
