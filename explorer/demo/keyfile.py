"""The public keys a running fleet signs its cards with, as one JWKS a user can pass to `--keys`.

Every reference agent signs its card with a key generated when the fleet starts, and its card
names that key set by `jku`. A verifier trusts no `jku` by default (a card cannot vouch for
itself), so a headless `verify` of a demo agent would only say `card_signature_unverifiable`,
and `forged` would look conformant. `demo --serve` therefore writes the fleet's public keys to a
file and says how to pass it, and the TUI trusts the same set in memory: the demo's promise
(every agent gets its expected verdict) then holds from the command line too.

Only public members leave here: the fleet's key sets are built public, and `public_jwks` keeps
`kty`, `crv`, `x`, `y`, `n`, `e`, `kid`, `alg`, `use` and nothing else, whatever a set holds.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PUBLIC_MEMBERS = ("kty", "crv", "x", "y", "n", "e", "kid", "alg", "use")
FILE_NAME = "demo-keys.jwks"


def public_jwks(agents: Iterable[Any]) -> dict[str, Any]:
    """One JWKS holding the public card keys of every signed agent (by `kid`, first wins)."""
    keys: list[dict[str, Any]] = []
    seen: set[str] = set()
    for agent in agents:
        jwks = getattr(agent, "jwks", None)
        if not getattr(agent, "jwks_url", None) or not isinstance(jwks, dict):
            continue  # unsigned and OpenClasp agents name no card key set
        for key in jwks.get("keys") or []:
            if not isinstance(key, dict) or key.get("kid") in seen:
                continue
            seen.add(str(key.get("kid")))
            keys.append({k: key[k] for k in PUBLIC_MEMBERS if k in key})
    return {"keys": keys}


def write_jwks(path: Path, jwks: dict[str, Any]) -> Path:
    """Write `jwks` to `path` whole or not at all (a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".demo-keys-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(jwks, out, indent=1)
            out.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
