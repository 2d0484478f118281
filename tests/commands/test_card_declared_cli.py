"""`card` and `verify` say what the declared documents give for each question, from the outside.

`demo --serve` runs the reference agents in one process; `interview-explorer card` and `verify`
run in others, as a user runs them, against silent (no interview), down (every call 503) and
steady (answers). `card` fetches the proposals the terms entries commit to, so the terms question
is read from them too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.demo_serve import DemoServe, demo_serve
from tests.support.paths import REPO

pytestmark = pytest.mark.slow  # subprocesses against `demo --serve`

QUESTIONS = ("identity", "capabilities", "usage", "terms", "refusals")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DemoServe, Path]]:
    home = tmp_path_factory.mktemp("home")
    keys = home / "keys.jwks"
    with demo_serve(
        "--only", "silent", "down", "steady", "--home", str(home), "--keys-out", str(keys)
    ) as running:
        running.wait_for_stderr("public keys")
        yield running, keys


def explorer(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args, "--home", str(home)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_card_prints_each_question_as_the_declared_documents_answer_it(
    served: tuple[DemoServe, Path], tmp_path: Path
) -> None:
    running, keys = served
    done = explorer("card", running.url("silent"), "--keys", str(keys), home=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    head = "Declared answers (what the declared documents say for each question; the card does not offer"
    assert head in out
    section = out.split("Declared answers", 1)[1]
    for question, count in (
        ("identity", 5),
        ("capabilities", 4),
        ("usage", 9),
        ("terms", 16),
        ("refusals", 2),
    ):
        assert f"\n  {question} ({count} members)\n" in section, question
    assert '    /name (signed) = "Stonework Books (Silent)"' in section
    assert '    /skills/1/id (signed) = "flag-exceptions"' in section
    assert (
        "/terms/reconcile-statement.sow.json (sha256:" in section and "      /price (signed) = {" in section
    )


def test_card_json_carries_declared_and_the_checked_proposals(
    served: tuple[DemoServe, Path], tmp_path: Path
) -> None:
    running, keys = served
    done = explorer("card", running.url("down"), "--keys", str(keys), "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [p["status"] for p in out["proposals"]] == ["verified", "verified"]
    declared = out["declared"]
    assert list(declared) == list(QUESTIONS)
    assert [e["member"] for e in declared["refusals"]] == ["/skills/0/id", "/skills/1/id"]
    terms = declared["terms"]
    assert {e["url"] for e in terms} == {p["url"] for p in out["proposals"]}
    assert all(e["document"] == "proposal" and e["digest"].startswith("sha256:") for e in terms)
    unchecked = explorer("card", running.url("down"), "--json", home=tmp_path)  # no keys: not checked
    assert {e["signed"] for e in json.loads(unchecked.stdout)["declared"]["identity"]} == {None}


def test_a_card_file_is_read_offline_unless_its_proposals_are_asked_for(
    served: tuple[DemoServe, Path], tmp_path: Path
) -> None:
    running, keys = served
    fetched = explorer("card", running.url("steady"), "--keys", str(keys), "--json", home=tmp_path)
    card_file = tmp_path / "steady-card.json"
    card_file.write_bytes(urllib.request.urlopen(running.url("steady"), timeout=30).read())
    offline = json.loads(explorer("card", str(card_file), "--json", home=tmp_path).stdout)
    urls = [p["url"] for p in json.loads(fetched.stdout)["proposals"]]
    assert offline["proposals"] == [] and offline["proposals_not_fetched"] == urls
    text = explorer("card", str(card_file), home=tmp_path).stdout
    assert f"proposal {urls[0]}: not fetched (--proposals fetch fetches it)" in text
    asked = explorer("card", str(card_file), "--proposals", "fetch", "--json", home=tmp_path)
    assert [p["status"] for p in json.loads(asked.stdout)["proposals"]] == ["verified"] * len(urls)
    assert json.loads(asked.stdout)["declared"]["terms"]
    skipped = explorer("card", running.url("steady"), "--proposals", "skip", "--json", home=tmp_path)
    assert json.loads(skipped.stdout)["proposals_not_fetched"] == urls


def test_verify_carries_declared_for_every_verdict_and_says_so_for_not_offered(
    served: tuple[DemoServe, Path], tmp_path: Path
) -> None:
    running, keys = served
    for name, verdict in (("silent", "not_offered"), ("down", "unreachable"), ("steady", "conformant")):
        done = explorer(
            "verify", running.url(name), "--keys", str(keys), "--json", "--no-history", home=tmp_path
        )
        report = json.loads(done.stdout)
        assert report["verdict"] == verdict
        card = explorer("card", running.url(name), "--keys", str(keys), "--json", home=tmp_path)
        assert {q: report["questions"][q]["declared"] for q in QUESTIONS} == json.loads(card.stdout)[
            "declared"
        ]
    human = explorer("verify", running.url("silent"), "--keys", str(keys), "--no-history", home=tmp_path)
    said = [line for line in human.stdout.splitlines() if line.startswith("declared, not asked")]
    assert said == [
        "declared, not asked (members per question): identity 5, capabilities 4, usage 9, terms 16, "
        "refusals 2; `card TARGET` prints them"
    ]
