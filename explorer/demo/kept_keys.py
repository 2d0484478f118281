"""The reference agents' signing keys, kept in the explorer's home so every demo session signs
with the same ones.

Keys made afresh each session broke two promises: the history's earlier runs of an agent read
as signed by "another key under the same kid" once a new session had written its public keys
over `demo-keys.jwks`, and a `verify ... --keys demo-keys.jwks` line copied from one session
passed `forged` as conformant after another session had rewritten that file. With the keys kept,
one agent is one signer across sessions, and the public key file every session writes is the
same file.

Each key is its own file in `demo-card-keys/` under the home (0600, the folder 0700): an ES256
card key as a private JWK (`NAME.jwk`), an Ed25519 provider key as its raw 32 bytes in hex
(`NAME.ed25519`). A key is written to a temporary file and linked into place, so two sessions
starting at once agree on one key and a reader never sees half a file. A file that cannot be
read as the key it should hold is left alone and a fresh key is used for this session only.
These are demo keys on the user's machine: they sign loopback agents' cards and nothing else.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from explorer.core import signatures

FOLDER = "demo-card-keys"


def card_key(folder: Path | None, name: str, kid: str) -> Any:
    """The ES256 private key `name` signs its card with, under `kid`: kept in `folder` (None:
    made for this session only)."""
    if folder is None:
        return signatures.generate_key("ES256", kid=kid)
    path = folder / f"{name}.jwk"
    found = _read(path)
    if found is not None:
        key = _card_key_of(found, kid)
        if key is not None:
            return key
        return signatures.generate_key("ES256", kid=kid)  # a damaged or foreign file: not ours to fix
    key = signatures.generate_key("ES256", kid=kid)
    kept = _keep(path, json.dumps(key.as_dict(private=True)))
    return _card_key_of(kept, kid) or key


def ed25519_key(folder: Path | None, name: str) -> Ed25519PrivateKey:
    """The Ed25519 private key `name`: kept in `folder` (None: made for this session only)."""
    if folder is None:
        return Ed25519PrivateKey.generate()
    path = folder / f"{name}.ed25519"
    found = _read(path)
    if found is None:
        fresh = Ed25519PrivateKey.generate()
        found = _keep(path, fresh.private_bytes_raw().hex())
    try:
        return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(found.strip()))
    except ValueError:
        return Ed25519PrivateKey.generate()


def _card_key_of(text: str, kid: str) -> Any:
    from joserfc.jwk import ECKey

    try:
        data = json.loads(text)
        key = ECKey.import_key(data, {"alg": "ES256", "use": "sig", "kid": kid})
    except Exception:  # joserfc raises many kinds for a bad key; any of them means "not this key"
        return None
    return key if data.get("kid") == kid and data.get("crv") == "P-256" and data.get("d") else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError):
        return ""  # unreadable: treated as damaged


def _keep(path: Path, text: str) -> str:
    """Write `text` to `path` unless another session got there first; what `path` holds then."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".key-", dir=path.parent)
    except OSError:
        return text  # a read-only home: this session's key, not kept
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.link(tmp, path)  # fails if the file exists: the first session's key wins
    except FileExistsError:
        return _read(path) or text
    except OSError:
        return text
    finally:
        Path(tmp).unlink(missing_ok=True)
    return text
