"""Which history a session uses: `--history URL`, else INTERVIEW_EXPLORER_HISTORY, else the
config file's `history = "URL"`, else the SQLite file in the explorer home.

One rule for every command and the TUI, decided before anything is interviewed or opened, so a
history URL that cannot be used (a literal password, an unknown scheme, PostgreSQL without the
`postgres` extra, a password reference that cannot be read) is a usage error up front, naming
where the URL came from and never repeating it. The store itself (`explorer.store.location`)
reads the URL; this module adds what the store may not import: the environment and the config
file, and the secret rules of `explorer.config.settings` for the password reference.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from explorer.store.base import HistoryStore
    from explorer.store.location import StoreLocation

HISTORY_ENV = "INTERVIEW_EXPLORER_HISTORY"


class HistoryChoiceError(ValueError):
    """The chosen history URL cannot be used as written (a usage error); str() says why."""


@dataclass(frozen=True)
class HistoryChoice:
    """The history a session opens; `shown` is safe to print."""

    location: StoreLocation | None  # None: the SQLite file in the home
    password: str | None = None
    source: str = "default"  # "--history", the environment variable, or "the config file's history"

    @property
    def shown(self) -> str:
        return "the history in the explorer home" if self.location is None else self.location.shown

    def open(
        self, home: str | Path | None = None, clock: Callable[[], datetime] | None = None
    ) -> HistoryStore:
        """The store, created or migrated as needed; HistoryError when it cannot be used."""
        from explorer.store.location import open_store

        if clock is None:
            return open_store(self.location, home=home, password=self.password)
        return open_store(self.location, home=home, password=self.password, clock=clock)


def _configured(home: str | Path | None) -> str | None:
    from explorer.config.file import ConfigError, load_config

    try:
        return load_config(home).history
    except ConfigError:
        return None  # the command reports a broken config itself, in its own words


def choose_history(flag: str | None, home: str | Path | None = None) -> HistoryChoice:
    """The history `--history` (`flag`), the environment or the config name; HistoryChoiceError."""
    text: str | None
    if flag is not None:
        text, source = flag, "--history"
    elif os.environ.get(HISTORY_ENV):
        text, source = os.environ[HISTORY_ENV], HISTORY_ENV
    else:
        text, source = _configured(home), "the config file's history"
    if text is None:
        return HistoryChoice(None)  # the file in the home: nothing to parse, so the store is not imported
    from explorer.store.location import INSTALL_POSTGRES, StoreUrlError, parse_location, postgres_available

    try:
        location = parse_location(text)
    except StoreUrlError as exc:
        raise HistoryChoiceError(f"{source}: {exc}") from None
    if location.kind == "postgresql" and not postgres_available():
        needs = f"a PostgreSQL history needs the postgres extra: {INSTALL_POSTGRES}"
        raise HistoryChoiceError(f"{source}: {needs}")
    password = None
    if location.password_ref is not None:
        from explorer.config.settings import read_secret

        try:
            password = read_secret(location.password_ref, f"{source} (the history's password)")
        except ValueError as exc:
            raise HistoryChoiceError(str(exc)) from None
    return HistoryChoice(location, password, source)
