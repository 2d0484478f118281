"""The user's credentials for agents that require authentication: references, and their values.

A secret is never typed on a command line or written in a config file: it is named by a
reference, `env:VAR` (an environment variable) or `file:PATH` (a file holding it, such as a
mounted secret), and a literal is refused, because it would land in shell history, process
listings and shared config files (docs/CONTRACT.md "Agents that require authentication").

The options and config keys themselves are rows of `explorer.config.settings` (read, checked and
resolved there, combined by `explorer.interview.planning`); this module gives the two shapes the rest of
the explorer passes around, so that what may be shown and what may not are different types:

- `Credentials` holds the references and the OAuth 2.0 client id, scopes and token URL. It is
  safe to print, compare and save (the TUI writes one into a config agent entry; the demo's
  guarded agents describe their demo credentials with one).
- `Secrets` (declared in `explorer.net.auth`, which consumes it) holds the resolved values. Its
  repr hides them; it lives only in memory for the run (`procedure.Options.secrets`), and
  `net.auth` sends each value only where the card's scheme says.
- `TypedSecrets` holds values a person typed into the explorer's sign-in dialog (a running
  program cannot read a variable exported in another shell). They are values, not references,
  so they never pass through a config file: the TUI keeps them in memory for its session only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from explorer.config.settings import credential_problem, is_secret_reference, literal_refusal, read_secret
from explorer.core.security import Security
from explorer.net.auth import Secrets


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


# The settings that hold a reference to a secret, and the option that names each.
_OPTION = {"bearer": "--bearer", "api_key": "--api-key", "oauth2_client_secret": "--oauth2-client-secret"}


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
        for name, option in _OPTION.items():
            ref = getattr(self, name)
            if ref is not None:
                check_reference(ref, option)
        problem = credential_problem(self.settings())
        if problem is not None:
            raise CredentialError(problem)

    def settings(self) -> dict[str, Any]:
        """These settings by `explorer.config.settings` name (the field names), as typed: references
        unresolved. What a surface hands `explorer.interview.planning` when it supplies credentials itself
        (the TUI's demo)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def option_values(self) -> dict[str, Any]:
        """The same settings with every reference read, as `explorer.interview.procedure.Options` takes
        them; CredentialError when a reference cannot be read."""
        return {
            name: resolve_reference(value, _OPTION[name]) if name in _OPTION else value
            for name, value in self.settings().items()
        }

    def resolve(self) -> Secrets:
        """The values the references name, read now; CredentialError when one cannot be read."""
        values = self.option_values()
        return Secrets(
            bearer=values.get("bearer"),
            api_key=values.get("api_key"),
            client_id=values.get("oauth2_client_id"),
            client_secret=values.get("oauth2_client_secret"),
            scopes=tuple(values.get("oauth2_scopes", ())),
            token_url=values.get("oauth2_token_url"),
        )

    def to_config(self) -> dict[str, Any]:
        """The settings as a config agent entry's members (references only; the config key of
        the scopes is `oauth2_scope`, like the option)."""
        out = self.settings()
        if "oauth2_scopes" in out:
            out["oauth2_scope"] = list(out.pop("oauth2_scopes"))
        return out


@dataclass(frozen=True)
class TypedSecrets:
    """Credential values typed into the explorer for one agent: memory only, repr shows none.

    `settings()` gives them by setting name, as `explorer.interview.planning` takes values that are
    already resolved (never read as references, never written)."""

    bearer: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    oauth2_client_id: str | None = None  # not a secret, but it goes with the one below
    oauth2_client_secret: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        problem = credential_problem(self.settings())
        if problem is not None:
            raise CredentialError(problem)

    def settings(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def values(self) -> tuple[str, ...]:
        """The secret values held (what must never be written anywhere)."""
        return tuple(v for v in (self.bearer, self.api_key, self.oauth2_client_secret) if v)


# --- what an agent entry carries, and suggesting one -------------------------------------------

_KIND_OF_SETTING = {"bearer": "bearer token", "api_key": "API key", "oauth2_client_id": "OAuth 2.0 client"}


def carried(agent_settings: Mapping[str, Any]) -> tuple[str, ...]:
    """The kinds of credential a config agent entry carries (its settings by name), in words."""
    return tuple(label for name, label in _KIND_OF_SETTING.items() if agent_settings.get(name))


def env_name(agent: str, what: str) -> str:
    """An environment variable name for one agent's secret: `STONEWORK_TOKEN`. The agent's name
    is not repeated into the kind of secret: `guarded-apikey` gets `GUARDED_API_KEY`, not
    `GUARDED_APIKEY_API_KEY`, and `stonework-token` gets `STONEWORK_TOKEN`."""
    words = "".join(c if c.isascii() and c.isalnum() else " " for c in agent.upper()).split()
    kind = what.split("_")
    squashed = "".join(kind)
    for size in range(len(words), 0, -1):  # the longest tail of the name that spells the kind
        if "".join(words[-size:]) == squashed:
            del words[-size:]
            break
    stem = "_".join(words) or "AGENT"
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
                out["bearer"] = f"env:{env_name(agent, 'TOKEN')}"
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
