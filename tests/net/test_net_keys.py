"""Loading trusted keys: public keys only, from files and URLs, with clear errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from explorer.net.keys import KeysError, load_keys, load_keys_sync, public_keys
from tests.support.http_server import base_url, serving

EC_PRIVATE = {
    "kty": "EC",
    "crv": "P-256",
    "kid": "k1",
    "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
    "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0",
    "d": "jpsQnnGQmL-YBIffH1136cLhwqkCLgBO8Xlt_W5fBbI",
}
OKP_PUBLIC = {"kty": "OKP", "crv": "Ed25519", "kid": "k2", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
OCT = {"kty": "oct", "kid": "h1", "k": "c2VjcmV0"}


def test_private_members_and_oct_keys_are_dropped() -> None:
    keys, notes = public_keys({"keys": [EC_PRIVATE, OKP_PUBLIC, OCT]}, "mine.jwks")
    assert [k["kid"] for k in keys] == ["k1", "k2"]
    assert "d" not in keys[0] and keys[0]["x"] == EC_PRIVATE["x"]
    assert any("private members d dropped" in n for n in notes)
    assert any("oct" in n and "'h1'" in n for n in notes)


def test_a_single_jwk_is_accepted() -> None:
    keys, _ = public_keys(OKP_PUBLIC, "one.jwk")
    assert keys == [OKP_PUBLIC]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "not a JWKS"),
        ({"keys": {}}, "'keys' must be a list"),
        ({"keys": [{"kid": "x"}]}, "key 0: not a JWK"),
        ({"keys": [{"kty": "EC", "kid": 5}]}, "'kid' must be a string"),
    ],
)
def test_malformed_sets_say_what_is_wrong(data: object, message: str) -> None:
    with pytest.raises(KeysError, match=message):
        public_keys(data, "bad.jwks")


def test_files_are_read_and_merged(tmp_path: Path) -> None:
    a = tmp_path / "a.jwks"
    b = tmp_path / "b.jwks"
    a.write_text(json.dumps({"keys": [EC_PRIVATE]}))
    b.write_text(json.dumps({"keys": [OKP_PUBLIC, {k: v for k, v in EC_PRIVATE.items() if k != "d"}]}))
    jwks, notes = load_keys_sync([str(a), str(b)])
    assert [k["kid"] for k in jwks["keys"]] == ["k1", "k2"]
    assert len(notes) == 1


def test_file_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(KeysError, match="no such file"):
        load_keys_sync([str(tmp_path / "missing.jwks")])
    bad = tmp_path / "dup.jwks"
    bad.write_text('{"keys": [], "keys": []}')
    with pytest.raises(KeysError, match="not valid JSON"):
        load_keys_sync([str(bad)])


@pytest.fixture
def keys_url() -> Iterator[str]:
    body = json.dumps({"keys": [OKP_PUBLIC, OCT]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (stdlib name)
            status = 200 if self.path == "/keys.jwks" else 404
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with serving(Handler) as server:
        yield base_url(server)


async def test_keys_from_a_url(keys_url: str) -> None:
    jwks, notes = await load_keys([keys_url + "/keys.jwks"])
    assert jwks == {"keys": [OKP_PUBLIC]}
    assert notes and "oct" in notes[0]
    with pytest.raises(KeysError, match="HTTP 404"):
        await load_keys([keys_url + "/nope.jwks"])
