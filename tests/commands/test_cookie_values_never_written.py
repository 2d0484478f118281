"""What is secret in a header is its values, not the way the header writes them (issue 29 item 4).

`--header 'Cookie: sid=VALUE; other=V2'` sends two secrets, VALUE and V2, and an agent that
echoes VALUE alone (not `sid=VALUE`, not the whole header) used to get it into stdout, the
history and the exports in clear: only the whole header value was looked for. Here an agent
echoes each value of every `name=value` pair it is sent, on its own, in every encoding JSON and
URLs allow (`tests/support/secret_echo.encodings`), in its card, its answers, its JSON-RPC
errors and its response headers; the explorer is run as a user runs it (subprocesses), and every
byte it wrote is searched: both output streams, the transcripts, the JUnit file, the exports in
every format and every cell of the history file, decompressed. The same holds for a header of
another name whose value is made of pairs (`X-Session: token=...`).
"""

from __future__ import annotations

import base64
import html
import json
import os
import sqlite3
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import pytest

from tests.support.cards import INTERVIEW_URI
from tests.support.http_server import base_url, serving
from tests.support.paths import REPO
from tests.support.secret_echo import encodings

pytestmark = pytest.mark.slow  # an echoing agent, subprocesses, every output

SESSION = 's3ss10n/"v\\alue+%41z'  # cookie-octets aside, what matters is that each form differs
OTHER = "0ther-V2-c00kie+v%2F"
TOKEN = "x-sess10n-t0ken/v"
_NOT_IN_JSON = ("raw", "html")


class _PairEcho(BaseHTTPRequestHandler):
    """An agent that hears the value of each `name=value` pair in a `Cookie` or `X-Session`
    header, alone, and echoes every value it heard in every answer from then on."""

    heard: ClassVar[list[str]] = []
    lock = threading.Lock()

    def _listen(self) -> bytes:
        for name in ("cookie", "x-session"):
            for item in (self.headers.get(name) or "").split(";"):
                value = item.partition("=")[2].strip()
                with self.lock:
                    if value and value not in self.heard:
                        self.heard.append(value)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _echo(self) -> list[str]:
        with self.lock:
            heard = list(self.heard)
        return [
            form for value in heard for name, form in encodings(value).items() if name not in _NOT_IN_JSON
        ]

    def _text(self) -> str:
        with self.lock:
            return " | ".join(self.heard)

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        with self.lock:
            heard = list(self.heard)
        for index, value in enumerate(heard):
            self.send_header(f"X-Echo-Raw-{index}", value)
            self.send_header(f"X-Echo-Pct-{index}", quote(value, safe=""))
        self.end_headers()
        self.wfile.write(body)

    def _with_echo(self, doc: dict[str, Any]) -> bytes:
        """`doc` as JSON with an `echo` member whose strings are written byte by byte."""
        text = json.dumps(doc)
        return (text[:-1] + ',"echo":[' + ",".join(f'"{form}"' for form in self._echo()) + "]}").encode()

    def do_GET(self) -> None:
        self._listen()
        base = f"http://{self.headers.get('Host')}"
        card = {
            "name": f"Echo {self._text()}",
            "description": f"I repeat your cookies: {self._text()}",
            "version": "1.0.0",
            "supportedInterfaces": [
                {"url": f"{base}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {"extensions": [{"uri": INTERVIEW_URI}]},
            "skills": [{"id": "echo", "name": "echo", "description": self._text(), "tags": []}],
        }
        self._send(self._with_echo(card))

    def do_POST(self) -> None:
        body = self._listen()
        try:
            ident = json.loads(body).get("id")
        except (ValueError, AttributeError):
            ident = None
        if any(k.lower().endswith("a2a-extensions") for k in self.headers):
            answer = {"jsonrpc": "2.0", "id": ident, "result": {"identity": {"name": self._text()}}}
            text = json.dumps(answer)
            echo = ',"echo":[' + ",".join(f'"{form}"' for form in self._echo()) + "]"
            self._send((text[:-2] + echo + "}}").encode())
        else:
            error = {"code": -32000, "message": f"no, and your cookies are {self._text()}"}
            self._send(json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}).encode())

    def log_message(self, *args: Any) -> None:
        pass


def _cli(home: Path, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(home), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def _blobs(data: bytes) -> Iterator[bytes]:
    """Bytes, and every base64 body inside them when they are JSON (transcripts, exports)."""
    yield data
    try:
        stack: list[Any] = [json.loads(data)]
    except ValueError:
        return
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key.endswith("_b64") and isinstance(value, str):
                    yield base64.b64decode(value)
                elif key == "payload" and isinstance(value, str):
                    yield from _blobs(base64.b64decode(value))
                else:
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)


def _written(root: Path) -> Iterator[tuple[str, bytes]]:
    """Every file under `root`: a SQLite file cell by cell (each inflated when compressed)."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if not data.startswith(b"SQLite format 3\x00"):
            yield from ((str(path), blob) for blob in _blobs(data))
            if path.suffix in (".xml", ".html"):
                yield str(path), html.unescape(data.decode("utf-8", "replace")).encode()
            continue
        with sqlite3.connect(path) as db:
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in tables:
                for row in db.execute(f'SELECT * FROM "{table}"'):
                    for cell in row:
                        blob = cell if isinstance(cell, bytes) else str(cell).encode()
                        try:
                            blob = zlib.decompress(blob)
                        except zlib.error:
                            pass
                        yield from ((f"{path}:{table}", b) for b in _blobs(blob))


def _leaks(where: str, data: bytes, secrets: list[str]) -> list[str]:
    return [
        f"{where}: {secret!r} as {name}"
        for secret in secrets
        for name, form in encodings(secret).items()
        if form.encode() in data
    ]


def test_each_value_of_a_cookie_is_a_secret_on_its_own(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    out.mkdir()
    _PairEcho.heard = []
    streams: dict[str, str] = {}
    key = tmp_path / "runner.pem"
    assert _cli(home, "keygen", "--out", str(key))[0] == 0  # a signed run has every export format
    with serving(_PairEcho) as server:
        agent = base_url(server)
        common = [
            "--timeout",
            "5",
            "--header",
            f"Cookie: sid={SESSION}; other={OTHER}",
            "--header",
            f"X-Session: token={TOKEN}",
            "--sign-key",
            str(key),
            "--as",
            "independent",
            "--runner",
            "tester",
        ]
        code, stdout, stderr = _cli(
            home,
            "verify",
            agent,
            "--json",
            *common,
            "--transcripts",
            str(out / "transcripts"),
            "--junit",
            str(out / "junit.xml"),
        )
        streams.update({"verify --json stdout": stdout, "verify --json stderr": stderr})
        report = json.loads(stdout)
        assert report["attempts"] >= 1 and report["verdict"] != "unreachable", report["findings"]
        code, stdout, stderr = _cli(home, "verify", agent, *common)
        streams.update({"verify stdout": stdout, "verify stderr": stderr})
    assert set(_PairEcho.heard) == {SESSION, OTHER, TOKEN}  # each was there to leak, alone
    assert "Echo" in streams["verify stdout"]
    for fmt in ("json", "md", "html", "intoto"):
        code, stdout, stderr = _cli(home, "export", "1", "--format", fmt, "-o", str(out / f"export.{fmt}"))
        assert code == 0, stderr
        streams[f"export {fmt}"] = stdout + stderr
    for args in (["show", "1"], ["show", "1", "--json"], ["history", "--json"]):
        code, stdout, stderr = _cli(home, *args)
        assert code == 0, stderr
        streams[" ".join(args)] = stdout + stderr
    secrets = [SESSION, OTHER, TOKEN]
    leaks = [leak for where, text in streams.items() for leak in _leaks(where, text.encode(), secrets)]
    for root in (home, out):
        leaks += [leak for where, blob in _written(root) for leak in _leaks(where, blob, secrets)]
    assert list(home.rglob("*.sqlite3"))  # the history was searched
    assert not leaks, "\n".join(sorted(set(leaks))[:40])
