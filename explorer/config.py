"""Where the explorer keeps its files, and the user's config file.

Everything the explorer stores lives under one home directory: the platformdirs user data dir
by default, or `--home DIR` / `INTERVIEW_EXPLORER_HOME`, so tests and CI always point it at a
temporary folder. The config is TOML (stdlib `tomllib`, read-only) in the platformdirs config
dir, or `config.toml` inside an explicit home:

    runner = "ci@example.org"          # who runs interviews, recorded in every result
    role = "independent"               # self | independent | platform
    keys = ["~/keys/agents.jwks"]      # trusted JWKS files or URLs, looked up by kid
    watch_every = 60                   # seconds between replays when the TUI watches an agent
    sign_key = "~/.config/interview-explorer/runner-key.pem"   # sign independent/platform runs
    trusted_runners = ["~/keys/ci-runner.jwks"]                 # runner keys whose results are evidence

    [agents.stonework]
    url = "https://stonework.example"
    headers = { Authorization = "env:STONEWORK_TOKEN" }   # never a literal secret
    keys = ["https://stonework.example/keys.jwks"]

    [keymap]
    "app.quit" = "ctrl+q"

Header values are references (`env:VAR`) resolved at run time and never written anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

APP_NAME = "interview-explorer"
HOME_ENV = "INTERVIEW_EXPLORER_HOME"
MAX_WATCH_EVERY = 86_400.0  # a day: the longest interval `watch` and the TUI accept


class ConfigError(Exception):
    """The config file exists but cannot be used; the message says why and where."""


@dataclass(frozen=True)
class AgentConfig:
    name: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)  # values are env: references
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    runner: str | None = None
    role: str | None = None
    keys: tuple[str, ...] = ()
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    keymap: dict[str, str] = field(default_factory=dict)
    watch_every: float | None = None
    sign_key: str | None = None  # the runner's private key file (explorer.runner_keys)
    trusted_runners: tuple[str, ...] = ()  # JWKS files or URLs of runner keys read as evidence
    path: Path | None = None
    ignored: tuple[str, ...] = ()  # settings this explorer does not know (typos, or a newer version's)

    def ignored_note(self) -> str | None:
        """One line naming the settings that were ignored, or None when every one was used."""
        if not self.ignored:
            return None
        from explorer.core.text import safe_text

        names = ", ".join(safe_text(name, limit=80) for name in self.ignored)
        return f"{self.path}: ignored settings this version does not know: {names}"

    def agent(self, target: str, *, by_url: bool = False) -> AgentConfig | None:
        """The configured agent a target names: by its name, and with `by_url` also by its URL."""
        if target in self.agents:
            return self.agents[target]
        if not by_url:
            return None
        wanted = target.rstrip("/")
        return next((a for a in self.agents.values() if a.url.rstrip("/") == wanted), None)

    def key_sources(self, agent: AgentConfig | None = None) -> tuple[str, ...]:
        """The trusted key sources for an interview: the global ones, then the agent's own."""
        return self.keys + (agent.keys if agent is not None else ())


def home_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The directory that holds history (and config, when explicit); created on demand."""
    chosen = explicit or os.environ.get(HOME_ENV)
    if chosen:
        path = Path(chosen).expanduser()
    else:
        import platformdirs  # lazily: headless commands with --home never pay for it

        path = Path(platformdirs.user_data_dir(APP_NAME))
    path.mkdir(parents=True, exist_ok=True)
    return path


def config_path(explicit_home: str | os.PathLike[str] | None = None) -> Path:
    chosen = explicit_home or os.environ.get(HOME_ENV)
    if chosen:
        return Path(chosen).expanduser() / "config.toml"
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


def load_config(explicit_home: str | os.PathLike[str] | None = None) -> Config:
    path = config_path(explicit_home)
    if not path.exists():
        return Config(path=path)
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # TOMLDecodeError is a ValueError
        raise ConfigError(f"cannot read config {path}: {exc}") from None
    return _from_toml(data, path)


def _strs(value: Any, what: str, path: Path) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{path}: {what} must be a string or a list of strings")


KNOWN_SETTINGS = frozenset(
    {"runner", "role", "keys", "watch_every", "agents", "keymap", "sign_key", "trusted_runners"}
)
KNOWN_AGENT_SETTINGS = frozenset({"url", "headers", "keys"})


def _from_toml(data: dict[str, Any], path: Path) -> Config:
    agents: dict[str, AgentConfig] = {}
    # Unknown settings are reported, not refused: a config written for a newer explorer still works.
    ignored = [key for key in data if key not in KNOWN_SETTINGS]
    for name, entry in (data.get("agents") or {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            raise ConfigError(f"{path}: [agents.{name}] needs a url")
        ignored += [f"agents.{name}.{key}" for key in entry if key not in KNOWN_AGENT_SETTINGS]
        headers = entry.get("headers") or {}
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise ConfigError(f"{path}: [agents.{name}] headers must map names to 'env:VAR' strings")
        for key, value in headers.items():
            if not value.startswith("env:"):
                raise ConfigError(
                    f"{path}: [agents.{name}] header {key} must be an env:VAR reference, "
                    "not a literal value (secrets never live in the config file)"
                )
        agents[name] = AgentConfig(
            name=name,
            url=entry["url"],
            headers=dict(headers),
            keys=_strs(entry.get("keys"), f"[agents.{name}] keys", path),
        )
    keymap = data.get("keymap") or {}
    if not isinstance(keymap, dict) or not all(isinstance(v, str) for v in keymap.values()):
        raise ConfigError(f"{path}: [keymap] must map binding ids to key strings")
    role = data.get("role")
    if role is not None and role not in ("self", "independent", "platform"):
        raise ConfigError(f"{path}: role must be self, independent or platform")
    runner = data.get("runner")
    if runner is not None and not isinstance(runner, str):
        raise ConfigError(f"{path}: runner must be a string")
    sign_key = data.get("sign_key")
    if sign_key is not None and (not isinstance(sign_key, str) or not sign_key):
        raise ConfigError(f"{path}: sign_key must be the path of a key file (see keygen)")
    watch_every = data.get("watch_every")
    if watch_every is not None and (
        isinstance(watch_every, bool)
        or not isinstance(watch_every, int | float)
        or not 0 < watch_every <= MAX_WATCH_EVERY
    ):
        raise ConfigError(f"{path}: watch_every must be a number of seconds, more than 0 and at most 86400")
    return Config(
        runner=runner,
        role=role,
        keys=_strs(data.get("keys"), "keys", path),
        agents=agents,
        keymap=dict(keymap),
        watch_every=float(watch_every) if watch_every is not None else None,
        sign_key=sign_key,
        trusted_runners=_strs(data.get("trusted_runners"), "trusted_runners", path),
        path=path,
        ignored=tuple(ignored),
    )


def resolve_header_value(value: str) -> str:
    """Turn an `env:VAR` reference into its value; a missing variable is an error, not ''."""
    if value.startswith("env:"):
        var = value[4:]
        if var not in os.environ:
            raise ConfigError(f"environment variable {var} is not set (referenced by a header)")
        return os.environ[var]
    return value


def agent_headers(
    agent: AgentConfig | None, given: Iterable[tuple[str, str]] = ()
) -> tuple[tuple[str, str], ...]:
    """The agent's configured headers with their `env:` references resolved, then `given` (the
    command line's), which win over a configured header of the same name. ConfigError when a
    referenced variable is unset."""
    merged = {name: resolve_header_value(ref) for name, ref in (agent.headers if agent else {}).items()}
    merged.update(given)
    return tuple(merged.items())


def parse_header_option(text: str) -> tuple[str, str]:
    """`--header 'Name: value'` -> (name, value); raises ValueError with a readable message."""
    name, sep, value = text.partition(":")
    name = name.strip()
    if not sep or not name or any(c.isspace() for c in name):
        raise ValueError(f"--header expects 'Name: value', got {text!r}")
    return name, value.strip()
