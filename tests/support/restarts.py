"""One reference agent restarted on one address, or moved, as a deployment does it (no tests here).

`Restarts(folder)` serves the steady reference agent (`explorer.demo`) on one loopback port, one
session at a time: `with restarts.session() as card_url:` starts it, and leaving the block stops
it. Every start signs the card again (ES256: other signature bytes every time), as an agent that
signs at start-up does; its keys are kept in a folder across sessions, as `demo` keeps them
(`explorer.demo.kept_keys`):

- `session()`: the same card key, the same card: the card is only signed again;
- `session(rotated=True)`: another card key under the same kid (the provider's proposal keys
  unchanged): the signing key rotated, nothing declared changed;
- `session(description=...)`: another description: the declarations changed;
- `session(moved=True)`: the same keys and card on another loopback port (`other_port`), as
  an agent restarted where its usual port was taken.

`jwks_file` trusts both card keys, so every session's signature verifies.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from explorer.demo import documents
from explorer.demo.fleet import Fleet
from explorer.demo.variants import VARIANTS

NAME = "steady"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Restarts:
    """The steady reference agent on one address, restarted as asked (see the module)."""

    def __init__(self, folder: Path) -> None:
        self.port = _free_port()
        self.other_port = _free_port()
        while self.other_port == self.port:
            self.other_port = _free_port()
        self.keys = folder / "keys"
        self.rotated = folder / "rotated-keys"
        first = documents.CardKey.generate(NAME, self.keys)
        documents.Provider(self.keys)  # the provider's keys, kept beside it: the same after rotation
        self.rotated.mkdir(parents=True, exist_ok=True)
        for kept in self.keys.glob("*.ed25519"):
            shutil.copy(kept, self.rotated / kept.name)
        second = documents.CardKey.generate(NAME, self.rotated)
        self.jwks = {"keys": [*first.jwks["keys"], *second.jwks["keys"]]}
        self.jwks_file = folder / "trusted.jwks"
        self.jwks_file.write_text(json.dumps(self.jwks), encoding="utf-8")

    @contextmanager
    def session(
        self, *, rotated: bool = False, description: str | None = None, moved: bool = False
    ) -> Iterator[str]:
        """The agent started (its card signed now), its card URL while the block runs."""
        port = self.other_port if moved else self.port
        fleet = Fleet([NAME], port=port, keys_in=self.rotated if rotated else self.keys)
        if description is not None:
            fleet.variants = [replace(VARIANTS[NAME], description=description)]
        fleet.start()
        try:
            assert fleet.wait_ready(timeout=30.0), fleet.errors
            yield fleet.agents[NAME].card_url
        finally:
            fleet.stop()
