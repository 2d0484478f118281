"""Nothing secret is ever written (issue 21 item 4), proven against an agent that echoes everything.

`tests/support/secret_echo.py` is a malicious agent that repeats every secret it is sent (the `--header`
values, the bearer token, the API key, the OAuth client secret and the tokens its own token
endpoint issues) in every answer, re-encoded every way JSON and URLs allow, in bodies, headers,
the card's name, JSON-RPC error messages and the Location of a refused redirect. The explorer is
run as a user runs it (subprocesses with real stdout and stderr), and then every byte it wrote is
searched for every one of those forms, independently of its own scrubber: both output streams of
`verify` (with and without `--json`), `verify --offline`, `show`, `show --json`, `history --json`;
the transcripts, the JUnit file and the exports in all four formats (the base64 bodies inside
JSON decoded); and the history's SQLite file, every cell of every table, decompressed.
"""

from __future__ import annotations

import base64
import html
import json
import os
import sqlite3
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import REPO
from tests.support.secret_echo import EchoAgent, Style, echo_agent, encodings

pytestmark = pytest.mark.slow  # a malicious agent, subprocesses, every output

SECRETS = {
    "IE_ECHO_BEARER": 'b3arer/"q\\uote+plus%20~=',
    "IE_ECHO_KEY": 'k3y/"&x=y\\z+%2F',
    "IE_ECHO_HEADER": 'h3ad/er"\\val+%41ue',
    "IE_ECHO_TRACE": 'trace"/\\ctx+99',
    "IE_ECHO_CLIENT": 'cl1ent/"s\\ecret+%7E=',
}


def _cli(home: Path, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, **SECRETS, "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1"}
    command = [sys.executable, "-m", "explorer", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    return done.returncode, done.stdout, done.stderr


def _json_blobs(data: bytes) -> Iterator[bytes]:
    """A JSON file's bytes, and every base64 body inside it decoded (transcripts, exports)."""
    yield data
    try:
        doc = json.loads(data)
    except ValueError:
        return
    stack: list[Any] = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key.endswith("_b64") and isinstance(value, str):
                    yield base64.b64decode(value)
                elif key == "payload" and isinstance(value, str):  # a DSSE envelope's statement
                    yield from _json_blobs(base64.b64decode(value))
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)


def _sqlite_blobs(path: Path) -> Iterator[bytes]:
    """Every cell of every table, and each one's zlib inflation when it is compressed."""
    with sqlite3.connect(path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    data = cell if isinstance(cell, bytes) else str(cell).encode("utf-8")
                    yield data
                    try:
                        yield from _json_blobs(zlib.decompress(data))
                    except zlib.error:
                        yield from _json_blobs(data)


def _written(*roots: Path) -> Iterator[tuple[str, bytes]]:
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            data = path.read_bytes()
            if data.startswith(b"SQLite format 3\x00"):
                for blob in _sqlite_blobs(path):
                    yield str(path), blob
            else:
                for blob in _json_blobs(data):
                    yield str(path), blob
                if path.suffix in (".xml", ".html"):  # JUnit and the HTML export escape their text
                    yield str(path), html.unescape(data.decode("utf-8", "replace")).encode("utf-8")


def _leaks(where: str, data: bytes, secrets: list[str]) -> list[str]:
    found = []
    for secret in secrets:
        for name, form in encodings(secret).items():
            if form.encode("utf-8") in data:
                found.append(f"{where}: {secret!r} as {name}")
    return found


def _check(streams: dict[str, str], roots: list[Path], secrets: list[str]) -> None:
    leaks = [leak for where, text in streams.items() for leak in _leaks(where, text.encode(), secrets)]
    leaks += [leak for where, blob in _written(*roots) for leak in _leaks(where, blob, secrets)]
    assert not leaks, "\n".join(sorted(set(leaks))[:40])


def _heard_everything(agent: EchoAgent, secrets: list[str]) -> None:
    """The agent did hear each secret (so each really was there to leak)."""
    heard = agent.heard.snapshot()
    missing = [s for s in secrets if not any(s in h or h in (s,) for h in heard)]
    assert not missing, missing


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_an_echoing_agent_gets_no_secret_into_any_output(home: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    key = tmp_path / "runner.pem"
    assert _cli(home, "keygen", "--out", str(key))[0] == 0
    secrets = [SECRETS[k] for k in ("IE_ECHO_BEARER", "IE_ECHO_KEY", "IE_ECHO_HEADER", "IE_ECHO_TRACE")]
    streams: dict[str, str] = {}
    with echo_agent("bearer+key") as agent:
        common = [
            "--allow-jku", "--timeout", "5", "--bearer", "env:IE_ECHO_BEARER", "--api-key", "env:IE_ECHO_KEY",
            "--header", "X-Secret-Header: env:IE_ECHO_HEADER",
            "--header", "X-Trace-Context: env:IE_ECHO_TRACE", "--header", "X-Debug: 1",
            "--sign-key", str(key), "--as", "independent", "--runner", "tester",
        ]  # fmt: skip
        files = ["--transcripts", str(out_dir / "transcripts"), "--junit", str(out_dir / "junit.xml")]
        code, out, err = _cli(home, "verify", agent.base, "--json", *common, *files)
        streams.update({"verify --json stdout": out, "verify --json stderr": err})
        report = json.loads(out)
        assert report["attempts"] == 2, report["findings"]  # asked twice: the second heard everything
        # The jku's Location, carrying secrets, was refused, and the signature finding says so
        # (request outcomes are a status line on a terminal only; the report is what stays).
        unverifiable = [f["detail"] for f in report["findings"] if f["code"] == "card_signature_unverifiable"]
        assert len(unverifiable) == 1 and "gave no keys (redirect_refused" in unverifiable[0], unverifiable
        code, out, err = _cli(home, "verify", agent.base, *common)
        streams.update({"verify stdout": out, "verify stderr": err})
        assert "Echo" in out
        _heard_everything(agent, secrets)
    for fmt in ("json", "md", "html", "intoto"):
        code, out, err = _cli(home, "export", "1", "--format", fmt, "-o", str(out_dir / f"export.{fmt}"))
        assert code == 0, err
        streams[f"export {fmt}"] = out + err
    for args in (["show", "1"], ["show", "1", "--json"], ["history", "--json"]):
        code, out, err = _cli(home, *args)
        assert code == 0, err
        streams[" ".join(args)] = out + err
    transcript = next((out_dir / "transcripts").glob("*.json"))
    code, out, err = _cli(home, "verify", "--offline", str(transcript), "--json")
    streams["verify --offline"] = out + err
    _check(streams, [home, out_dir], secrets)


@pytest.mark.parametrize("style", ["json", "duplicate", "nested", "form", "short"])
def test_a_client_secret_and_the_tokens_issued_in_any_form_are_written_nowhere(
    home: Path, tmp_path: Path, style: Style
) -> None:
    out_dir = tmp_path / "out"
    with echo_agent("oauth2", style) as agent:
        code, out, err = _cli(
            home, "verify", agent.base, "--json", "--timeout", "5", "--oauth2-client-id", "echo-client",
            "--oauth2-client-secret", "env:IE_ECHO_CLIENT", "--header", "X-Secret-Header: env:IE_ECHO_HEADER",
            "--transcripts", str(out_dir), "--junit", str(tmp_path / "junit.xml"),
        )  # fmt: skip
        issued = [t for t in agent.issued if len(t) >= 4]
        assert agent.issued, err
    report = json.loads(out)
    codes = {f["code"] for f in report["findings"]}
    if style in ("json", "nested"):
        assert "auth_failed" not in codes and report["attempts"] == 2, report["findings"]
    else:  # no usable token: asked for once, nothing put to the agent
        assert "auth_failed" in codes and report["verdict"] == "unreachable"
    streams = {"stdout": out, "stderr": err}
    code, shown, err = _cli(home, "show", "1", "--json")
    streams["show --json"] = shown + err
    secrets = [SECRETS["IE_ECHO_CLIENT"], SECRETS["IE_ECHO_HEADER"], *issued]
    _check(streams, [home, out_dir, tmp_path], secrets)
    if style == "short":  # "q7": too short to look for in text; never sent, and gone where it stood alone
        transcript = json.loads(next(out_dir.glob("*.json")).read_bytes())
        token = next(e for e in transcript["exchanges"] if e["purpose"] == "auth:token" and e["status"])
        assert b'"q7"' not in base64.b64decode(token["response_body_b64"])
        assert not any(e["purpose"].startswith("ask:") for e in transcript["exchanges"])
        assert "under 4" in next(f["detail"] for f in report["findings"] if f["code"] == "auth_failed")


def test_a_secret_of_fewer_than_four_characters_is_refused_unrepeated(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IE_SHORT", "a7x")
    monkeypatch.setenv("IE_SHORT_AUTH", "Bearer a7x")
    for option in (
        ["--bearer", "env:IE_SHORT"],
        ["--api-key", "env:IE_SHORT"],
        ["--oauth2-client-id", "me", "--oauth2-client-secret", "env:IE_SHORT"],
        ["--header", "Authorization: env:IE_SHORT_AUTH"],
        ["--header", "X-Api-Key: env:IE_SHORT"],
    ):
        code, out, err = _cli(home, "verify", "http://127.0.0.1:9/", "--no-history", *option)
        assert code == 2, (option, err)
        assert "under 4 characters" in err and "a7x" not in err + out
    # A short value of a header that carries no credential is sent (and not looked for).
    code, out, err = _cli(home, "verify", "http://127.0.0.1:9/", "--no-history", "--timeout", "1",
                          "--header", "X-Debug: 1")  # fmt: skip
    assert code == 3, err


def test_a_malformed_header_is_refused_without_repeating_it(home: Path) -> None:
    """`--header 'Authorization Bearer ...'` (the colon forgotten) is a usage error whose message
    does not print the token it holds."""
    typo = "Authorization Bearer s3cr3t-typo"
    code, out, err = _cli(home, "verify", "http://127.0.0.1:9/", "--header", typo)
    assert code == 2 and "--header expects 'Name: value'" in err
    assert "s3cr3t-typo" not in out + err
