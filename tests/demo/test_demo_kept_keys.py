"""The reference agents keep their signing keys across demo sessions (`explorer.demo.kept_keys`).

A user runs `demo` today and again tomorrow: the same agent must be the same signer, or every
earlier run reads as "signed by another key under the same kid" and a `verify --keys` line copied
from one session stops catching `forged` once another session rewrote the key file. Real fleets
on 127.0.0.1, real signatures, real key files."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from explorer.cli import main
from explorer.demo.fleet import Fleet
from explorer.demo.kept_keys import FOLDER
from explorer.demo.keyfile import public_jwks, write_jwks


def _session(keys_in: Path | None) -> tuple[dict[str, Any], dict[str, str]]:
    with Fleet(["steady", "forged", "drifting"], keys_in=keys_in) as fleet:
        return public_jwks(fleet.agents.values()), {n: a.card_url for n, a in fleet.agents.items()}


def test_two_demo_sessions_sign_with_the_same_keys_and_a_copied_keys_file_still_catches_forged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "home" / FOLDER
    first, _ = _session(kept)
    keys_file = write_jwks(tmp_path / "first-session.jwks", first)
    with Fleet(["steady", "forged"], keys_in=kept) as fleet:
        assert public_jwks(fleet.agents.values()) == {
            "keys": [k for k in first["keys"] if k["kid"] in ("steady-card-1", "forged-card-1")]
        }
        for name, verdict, code in (("steady", "conformant", 0), ("forged", "nonconformant", 1)):
            exit_code = main(["verify", fleet.agents[name].card_url, "--keys", str(keys_file), "--json",
                              "--no-history"])  # fmt: skip
            report = json.loads(capsys.readouterr().out)
            assert (exit_code, report["verdict"]) == (code, verdict), name
            expected = "invalid" if name == "forged" else "verified"
            assert report["card"]["signature"]["status"] == expected
    private = sorted(p.name for p in kept.iterdir())
    assert "steady.jwk" in private and "provider.ed25519" in private
    assert stat.S_IMODE(kept.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in kept.iterdir())


def test_without_a_place_to_keep_them_each_session_makes_new_keys(tmp_path: Path) -> None:
    assert _session(None)[0] != _session(None)[0]


def test_a_damaged_key_file_is_left_alone_and_the_session_signs_with_a_fresh_key(tmp_path: Path) -> None:
    kept = tmp_path / FOLDER
    kept.mkdir()
    (kept / "steady.jwk").write_text('{"kty": "EC", "kid": "steady-card-1"', encoding="utf-8")
    jwks, _ = _session(kept)
    assert any(k["kid"] == "steady-card-1" for k in jwks["keys"])  # it still serves, signed
    assert (kept / "steady.jwk").read_text(encoding="utf-8") == '{"kty": "EC", "kid": "steady-card-1"'
    assert _session(kept)[0]["keys"][1:] == jwks["keys"][1:]  # the others are kept as usual
