"""The user's credentials for agents that require authentication: references, and their values.

A secret is never typed on a command line or written in a config file: it is named by a
reference, `env:VAR` (an environment variable) or `file:PATH` (a file holding it, such as a
mounted secret), and a literal is refused, because it would land in shell history, process
listings and shared config files (docs/CONTRACT.md "Agents that require authentication").

The options and config keys themselves are rows of `explorer.settings` (read, checked and
resolved there, combined by `explorer.planning`); this module gives the two shapes the rest of
the explorer passes around, so that what may be shown and what may not are different types:

- `Credentials` holds the references and the OAuth 2.0 client id, scopes and token URL. It is
  safe to print, compare and save (the TUI writes one into a config agent entry; the demo's
  guarded agents describe their demo credentials with one).
- `Secrets` (declared in `explorer.net.auth`, which consumes it) holds the resolved values. Its
  repr hides them; it lives only in memory for the run (`procedure.Options.secrets`), and
  `net.auth` sends each value only where the card's scheme says.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from explorer.core.security import Security
from explorer.net.auth import Secrets
from explorer.settings import is_secret_reference, literal_refusal, read_secret


class CredentialError(ValueError):
    """A secret reference that is a literal, names an unset variable or an unreadable file."""


def check_reference(text: str, what: str) -> str:
    """`text` when it is an `env:VAR` or `file:PATH` reference; CredentialError otherwise."""
    if not is_secret_reference(text):
        raise CredentialError(literal_refusal(what))
    return text


def resolve_reference(ref: str, what: str) -> str:
    """The secret a reference names; CredentialError when it cannot be read or is empty."""
    try:
        return read_secret(ref, what)
    except ValueError as exc:
        raise CredentialError(str(exc)) from None


@dataclass(frozen=True)
class Credentials:
    """Credential references and OAuth 2.0 client settings: safe to show and to save."""

    bearer: str | None = None
    api_key: str | None = None
    oauth2_client_id: str | None = None
    oauth2_client_secret: str | None = None
    oauth2_scopes: tuple[str, ...] = ()
    oauth2_token_url: str | None = None

    def __post_init__(self) -> None:
        for name, ref in (
            ("--bearer", self.bearer),
            ("--api-key", self.api_key),
            ("--oauth2-client-secret", self.oauth2_client_secret),
        ):
            if ref is not None:
                check_reference(ref, name)
        if (self.oauth2_client_id is None) != (self.oauth2_client_secret is None):
            raise CredentialError("--oauth2-client-id and --oauth2-client-secret go together")
        if self.oauth2_client_id is None and (self.oauth2_scopes or self.oauth2_token_url):
            raise CredentialError(
                "--oauth2-scope and --oauth2-token-url need --oauth2-client-id and --oauth2-client-secret"
            )

    @property
    def empty(self) -> bool:
        return self.bearer is None and self.api_key is None and self.oauth2_client_id is None

    def kinds(self) -> tuple[str, ...]:
        """Which kinds of credential are configured: bearer, api-key, oauth2."""
        out = []
        if self.bearer is not None:
            out.append("bearer")
        if self.api_key is not None:
            out.append("api-key")
        if self.oauth2_client_id is not None:
            out.append("oauth2")
        return tuple(out)

    def merged(self, override: Credentials) -> Credentials:
        """These settings with `override`'s (the command line's) taking precedence per setting."""
        return Credentials(
            bearer=override.bearer or self.bearer,
            api_key=override.api_key or self.api_key,
            oauth2_client_id=override.oauth2_client_id or self.oauth2_client_id,
            oauth2_client_secret=override.oauth2_client_secret or self.oauth2_client_secret,
            oauth2_scopes=override.oauth2_scopes or self.oauth2_scopes,
            oauth2_token_url=override.oauth2_token_url or self.oauth2_token_url,
        )

    def resolve(self) -> Secrets:
        """The values the references name, read now; CredentialError when one cannot be read."""
        return Secrets(
            bearer=resolve_reference(self.bearer, "--bearer") if self.bearer else None,
            api_key=resolve_reference(self.api_key, "--api-key") if self.api_key else None,
            client_id=self.oauth2_client_id,
            client_secret=(
                resolve_reference(self.oauth2_client_secret, "--oauth2-client-secret")
                if self.oauth2_client_secret
                else None
            ),
            scopes=self.oauth2_scopes,
            token_url=self.oauth2_token_url,
        )

    def settings(self) -> dict[str, Any]:
        """These settings by `explorer.settings` name, as typed (references unresolved): what a
        surface hands `explorer.planning` when it supplies credentials itself (the TUI's demo)."""
        out: dict[str, Any] = {
            "bearer": self.bearer,
            "api_key": self.api_key,
            "oauth2_client_id": self.oauth2_client_id,
            "oauth2_client_secret": self.oauth2_client_secret,
            "oauth2_scopes": self.oauth2_scopes,
            "oauth2_token_url": self.oauth2_token_url,
        }
        return {k: v for k, v in out.items() if v}

    def option_values(self) -> dict[str, Any]:
        """The resolved values by `explorer.procedure.Options` field (what planning would give);
        CredentialError when a reference cannot be read."""
        secrets = self.resolve()
        out: dict[str, Any] = {
            "bearer": secrets.bearer,
            "api_key": secrets.api_key,
            "oauth2_client_id": secrets.client_id,
            "oauth2_client_secret": secrets.client_secret,
            "oauth2_scopes": secrets.scopes,
            "oauth2_token_url": secrets.token_url,
        }
        return {k: v for k, v in out.items() if v}

    def to_config(self) -> dict[str, Any]:
        """The settings as a config agent entry's members (references only)."""
        out: dict[str, Any] = {}
        if self.bearer:
            out["bearer"] = self.bearer
        if self.api_key:
            out["api_key"] = self.api_key
        if self.oauth2_client_id:
            out["oauth2_client_id"] = self.oauth2_client_id
            out["oauth2_client_secret"] = self.oauth2_client_secret
        if self.oauth2_scopes:
            out["oauth2_scope"] = list(self.oauth2_scopes)
        if self.oauth2_token_url:
            out["oauth2_token_url"] = self.oauth2_token_url
        return out


# --- what an agent entry carries, and suggesting one -------------------------------------------

_KIND_OF_SETTING = {"bearer": "bearer token", "api_key": "API key", "oauth2_client_id": "OAuth 2.0 client"}


def carried(agent_settings: Mapping[str, Any]) -> tuple[str, ...]:
    """The kinds of credential a config agent entry carries (its settings by name), in words."""
    return tuple(label for name, label in _KIND_OF_SETTING.items() if agent_settings.get(name))


def env_name(agent: str, what: str) -> str:
    """An environment variable name for one agent's secret: `STONEWORK_BEARER`."""
    stem = "".join(c if c.isalnum() else "_" for c in agent.upper()).strip("_") or "AGENT"
    if stem[0].isdigit():
        stem = f"AGENT_{stem}"
    return f"{stem}_{what}"


def suggest(security: Security, agent: str, client_id: str | None = None) -> Credentials | None:
    """The credential settings that would satisfy the card's first way in the explorer can take,
    with `env:` references named after the agent (never a value); None when there is none."""
    for way in security.alternatives():
        schemes = [security.schemes.get(name) for name in way]
        if not way or not all(s is not None and s.supported for s in schemes):
            continue
        out: dict[str, Any] = {}
        for scheme in schemes:
            assert scheme is not None
            if scheme.kind == "apiKey":
                out["api_key"] = f"env:{env_name(agent, 'API_KEY')}"
            elif scheme.kind == "bearer":
                out["bearer"] = f"env:{env_name(agent, 'BEARER')}"
            elif scheme.kind == "oauth2":
                out["oauth2_client_id"] = client_id or "CLIENT_ID"
                out["oauth2_client_secret"] = f"env:{env_name(agent, 'CLIENT_SECRET')}"
        return Credentials(**out)
    return None


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=True)  # a JSON string with ASCII escapes is a TOML basic string


def entry_text(agent: str, url: str, credentials: Credentials) -> str:
    """A config `[agents.NAME]` table for this agent: its URL and credential references."""
    lines = [f"[agents.{_toml_string(agent)}]", f"url = {_toml_string(url)}"]
    for key, value in credentials.to_config().items():
        if isinstance(value, list):
            lines.append(f"{key} = [{', '.join(_toml_string(v) for v in value)}]")
        else:
            lines.append(f"{key} = {_toml_string(value)}")
    return "\n".join(lines) + "\n"
