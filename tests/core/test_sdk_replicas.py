"""An a2a-sdk agent deployed as replicas behind one address: honest, conformant; lying, not.

Every replica (tests/support/replicas.py) is the `sdk-built` reference agent on its own uvicorn
server: at its own start it signs the same card with the official a2a-sdk signer under the one
key they share, and answers the interview by projecting the card it serves, `/signatures`
included. A round-robin front on 127.0.0.1 sends each request to the next replica. `verify
--keys` runs in-process against the front, as a user runs it.

Which replica answers what: the card is the front's first request (replica 0); the first round's
requests (five asks and the two proposals, sent together) go to the next replicas in some order.
There are more replicas than requests in that round, so the card and the first `identity` answer
always come from two different signings, and the tests need not know the order. A re-run
starts wherever the rotation is, so the tests that judge a departing replica ask with
`--reruns 0`: their verdict is that of the attempt whose card replica 0 served.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from tests.support.replicas import Deployment, Forgery, replicated

pytestmark = pytest.mark.slow  # imports a2a-sdk; a dozen uvicorn servers and the verify command

pytest.importorskip("a2a")
REPLICAS = 10
CARD_PATH = "/.well-known/agent-card.json"


@pytest.fixture(autouse=True)
def _quiet_sdk() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.getLogger("a2a").setLevel(logging.ERROR)
        yield


def verify(
    deployment: Deployment, tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str
) -> tuple[int, dict[str, Any]]:
    keys = tmp_path / "replicas.jwks"
    keys.write_text(json.dumps(deployment.keys), encoding="utf-8")
    code = main(
        ["verify", deployment.url + CARD_PATH, "--keys", str(keys), "--json", "--no-history", *options]
    )
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def codes(report: dict[str, Any]) -> set[str]:
    return {f["code"] for f in report["findings"]}


def where(report: dict[str, Any], code: str) -> list[tuple[str | None, str | None]]:
    """(question, member) of each finding with `code`."""
    return [(f.get("question"), f.get("member")) for f in report["findings"] if f["code"] == code]


def the_signer(report: dict[str, Any], deployment: Deployment) -> None:
    """The card verified under the replicas' key, and the report says so in its own members."""
    card = report["card"]
    assert card["signature"]["status"] == "verified" and card["signature"]["form"] == "sdk-normalized"
    signer = next(k for k in deployment.keys["keys"] if k["kid"] == "replicas-card-1")
    from joserfc.jwk import ECKey

    assert card["signers"] == [ECKey.import_key(signer).thumbprint()]
    assert isinstance(card["declarations_sha256"], str) and len(card["declarations_sha256"]) == 64


def test_replicas_that_each_signed_at_their_start_are_conformant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with replicated(REPLICAS) as deployment:
        code, report = verify(deployment, tmp_path, capsys)
    assert (code, report["verdict"], report["attempts"]) == (0, "conformant", 1), report["findings"]
    assert not codes(report) & {"nondeterministic_answer", "projection_mismatch", "card_changed"}
    equivalent = [f for f in report["findings"] if f["code"] == "signature_equivalent"]
    assert [(f["severity"], f["question"], f["member"]) for f in equivalent] == [
        ("info", "identity", "/signatures")
    ]
    assert "signatures[0] signature" in equivalent[0]["detail"]
    assert "over the sdk-normalized payload" in equivalent[0]["detail"]
    identity = report["questions"]["identity"]["projections"]
    assert [p["status"] for p in identity if p["member"] == "/signatures"] == ["match"]
    the_signer(report, deployment)


def test_a_replica_serving_another_payload_is_nonconformant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with replicated(REPLICAS, described={0: "the same agent, described otherwise"}) as deployment:
        code, report = verify(deployment, tmp_path, capsys, "--reruns", "0")
    assert (code, report["verdict"]) == (1, "nonconformant")
    # Signed by the same key, over another payload.
    assert where(report, "projection_mismatch") == [("identity", "/signatures")]
    assert "signature_equivalent" not in codes(report)
    the_signer(report, deployment)


@pytest.mark.parametrize("how", ["another key", "altered"])
def test_replicas_answering_forged_signatures_are_nonconformant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: Forgery
) -> None:
    # Every replica forges its answers (each still serves its honest card), so the answer the card
    # is compared with is forged whichever replica gives it.
    with replicated(REPLICAS, forged=dict.fromkeys(range(REPLICAS), how)) as deployment:
        code, report = verify(deployment, tmp_path, capsys)
    assert (code, report["verdict"]) == (1, "nonconformant")
    assert where(report, "projection_mismatch") == [("identity", "/signatures")]
    assert "signature_equivalent" not in codes(report)
    the_signer(report, deployment)
