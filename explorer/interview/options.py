"""How to run an interview: the one options type every surface fills and the procedure reads.

Kept apart from the procedure because nearly everything above the core names it (planning, the
commands, replays, sweeps, the TUI) while few of those need the procedure's I/O: importing the
type costs none of it, not even the network layer's (`explorer.net.auth` is imported when a
run's credentials are first read). The TUI plans its launch target before textual is imported
and interviews it in a child process (`explorer.tui.early`): the planning must stay light.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.net.auth import Secrets, TokenCache


@dataclass(frozen=True)
class Options:
    """How to run an interview. `keys` holds JWKs / JWKS objects, or file paths and URLs of
    key sets to load; `headers` are (name, value) pairs sent only to the agent's origin.

    The one settings type: `explorer.interview.planning` fills it from the target, the command line and
    the config file, and each field a person can set is declared once in `explorer.config.settings`
    (its option, its config key, how the two combine). `bearer`, `api_key` and
    `oauth2_client_secret` hold credential values (resolved from `env:`/`file:` references) for
    the card's security schemes (`secrets` gathers them, with the pinned `oauth2_token_url` and
    `interface_origin` that say where they may go); `tokens` is the cache of OAuth 2.0
    access tokens (the process-wide one unless a caller brings its own).
    """

    keys: tuple[Any, ...] = ()
    allow_jku: bool = False
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # secrets: never printed
    role: str = "self"
    runner: str | None = None
    reruns: int = 1
    timeout: float = 10.0
    max_bytes: int = 8 * 1024 * 1024  # 8 MiB
    public_only: bool = False
    openclasp_base: str | None = None
    bearer: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    oauth2_client_id: str | None = None
    oauth2_client_secret: str | None = field(default=None, repr=False)
    oauth2_scopes: tuple[str, ...] = ()
    oauth2_token_url: str | None = None
    interface_origin: str | None = None  # the origin the user pinned for the JSON-RPC interface
    tokens: TokenCache | None = field(default=None, repr=False, compare=False)
    deadline: float | None = None  # seconds for the whole run, re-runs included (None: `run_deadline`)

    @property
    def secrets(self) -> Secrets | None:
        """The credentials for the card's security schemes, or None when none were given."""
        if self.bearer is None and self.api_key is None and self.oauth2_client_id is None:
            return None
        from explorer.net.auth import Secrets

        return Secrets(
            bearer=self.bearer,
            api_key=self.api_key,
            client_id=self.oauth2_client_id,
            client_secret=self.oauth2_client_secret,
            scopes=tuple(self.oauth2_scopes),
            token_url=self.oauth2_token_url,
            interface_origin=self.interface_origin,
        )
