"""The user's config file.

Everything the explorer stores lives under one home directory (`explorer.home`: the platformdirs
user data dir by default, or `--home DIR` / `INTERVIEW_EXPLORER_HOME`, so tests and CI always
point it at a temporary folder). The config is TOML (stdlib `tomllib`, read-only) in the platformdirs config
dir, or `config.toml` inside an explicit home:

    runner = "ci@example.org"          # who runs interviews, recorded in every result
    role = "independent"               # self | independent | platform
    keys = ["~/keys/agents.jwks"]      # trusted JWKS files or URLs, looked up by kid
    watch_every = 60                   # seconds between replays when the TUI watches an agent
    sign_key = "~/.config/interview-explorer/runner-key.pem"   # sign independent/platform runs
    trusted_runners = ["~/keys/ci-runner.jwks"]                 # runner keys whose results are evidence
    history = "postgresql://runner@db.example:5432/evidence"    # where runs are recorded (a URL or path)

    [agents.stonework]
    url = "https://stonework.example"
    headers = { Authorization = "env:STONEWORK_TOKEN" }   # never a literal secret
    keys = ["https://stonework.example/keys.jwks"]
    oauth2_client_id = "ci-runner"                        # credentials for the card's schemes:
    oauth2_client_secret = "file:~/.secrets/stonework"    # bearer, api_key, oauth2_* (env:/file:)

    [keymap]
    "app.quit" = "ctrl+q"

Header values are references (`env:VAR`) resolved at run time and never written anywhere.

A relative path in the file (a `keys` or `trusted_runners` file, `sign_key`, a `file:PATH`
credential, a `history` path or `sqlite:///` URL) is read from the config file's own folder,
never from the working directory: the same file means the same files whoever starts the explorer
from wherever (`serve` runs each browser session from a private temporary folder). `~` is the
user's home, as everywhere.

The interview settings (`runner`, `role`, `keys`, an agent's `headers` and `keys`, and any added
later) are declared, read and checked by `explorer.config.settings`, beside their command-line options;
this module knows only where the file is, the agent entries' names and URLs, the TUI's own
settings (`watch_every`, `keymap`) and the run-signing ones (`sign_key`, `trusted_runners`),
which are not interview options. `explorer.interview.planning` combines it all for one interview.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.config import settings
from explorer.home import APP_NAME, HOME_ENV
from explorer.home import home_dir as home_dir  # re-exported: where files live is explorer.home's

MAX_WATCH_EVERY = 86_400.0  # a day: the longest interval `watch` and the TUI accept


class ConfigError(Exception):
    """The config file exists but cannot be used; the message says why and where."""


@dataclass(frozen=True)
class AgentConfig:
    """One `[agents.NAME]` entry: where the agent is, and its interview settings (by setting name,
    as `explorer.config.settings` read them; header values are still `env:` references)."""

    name: str
    url: str
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def headers(self) -> dict[str, str]:
        return dict(self.settings.get("headers", ()))

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.settings.get("keys", ()))


@dataclass(frozen=True)
class Config:
    settings: dict[str, Any] = field(default_factory=dict)  # top-level interview settings, by name
    agents: dict[str, AgentConfig] = field(default_factory=dict)
    keymap: dict[str, str] = field(default_factory=dict)
    watch_every: float | None = None
    sign_key: str | None = None  # the runner's private key file (explorer.evidence.runner_keys)
    trusted_runners: tuple[str, ...] = ()  # JWKS files or URLs of runner keys read as evidence
    history: str | None = None  # the history URL (config.history_choice), unless --history or the env
    path: Path | None = None
    ignored: tuple[str, ...] = ()  # settings this explorer does not know (typos, or a newer version's)

    @property
    def runner(self) -> str | None:
        return self.settings.get("runner")

    @property
    def role(self) -> str | None:
        return self.settings.get("role")

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.settings.get("keys", ()))

    def ignored_note(self) -> str | None:
        """One line naming the settings that were ignored, or None when every one was used."""
        if not self.ignored:
            return None
        from explorer.core.text import safe_text

        names = ", ".join(safe_text(name, limit=80) for name in self.ignored)
        return f"{self.path}: ignored settings this version does not know: {names}"

    def agent(self, target: str) -> AgentConfig | None:
        """The configured agent a target names: by its name, else by its URL (a trailing slash
        aside). The one rule every command and the TUI use."""
        if target in self.agents:
            return self.agents[target]
        wanted = target.strip().rstrip("/")
        if not wanted:
            return None
        return next((a for a in self.agents.values() if a.url.rstrip("/") == wanted), None)


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


KNOWN_SETTINGS = frozenset(
    {"watch_every", "agents", "keymap", "sign_key", "trusted_runners", "history"}
) | settings.config_keys("global")
KNOWN_AGENT_SETTINGS = frozenset({"url"}) | settings.config_keys("agent")


def _read(table: dict[str, Any], scope: settings.Scope, where: str, path: Path) -> dict[str, Any]:
    try:
        return settings.read_config(table, scope, where)
    except ValueError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _strs(value: Any, what: str, path: Path) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{path}: {what} must be a string or a list of strings")


def _from_toml(data: dict[str, Any], path: Path) -> Config:
    agents: dict[str, AgentConfig] = {}
    # Unknown settings are reported, not refused: a config written for a newer explorer still works.
    ignored = [key for key in data if key not in KNOWN_SETTINGS]
    entries = data.get("agents") or {}
    if not isinstance(entries, dict):
        raise ConfigError(f"{path}: [agents] must be a table of agent entries")
    for name, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            raise ConfigError(f"{path}: [agents.{name}] needs a url")
        ignored += [f"agents.{name}.{key}" for key in entry if key not in KNOWN_AGENT_SETTINGS]
        found = _beside_file(_read(entry, "agent", f"[agents.{name}] ", path), path.parent)
        agents[name] = AgentConfig(name=name, url=entry["url"], settings=found)
    keymap = data.get("keymap") or {}
    if not isinstance(keymap, dict) or not all(isinstance(v, str) for v in keymap.values()):
        raise ConfigError(f"{path}: [keymap] must map binding ids to key strings")
    sign_key = data.get("sign_key")
    if sign_key is not None and (not isinstance(sign_key, str) or not sign_key):
        raise ConfigError(f"{path}: sign_key must be the path of a key file (see keygen)")
    history = data.get("history")
    if history is not None and (not isinstance(history, str) or not history.strip()):
        raise ConfigError(f"{path}: history must be a history URL or path (sqlite:///PATH, postgresql://...)")
    watch_every = data.get("watch_every")
    if watch_every is not None and (
        isinstance(watch_every, bool)
        or not isinstance(watch_every, int | float)
        or not 0 < watch_every <= MAX_WATCH_EVERY
    ):
        raise ConfigError(f"{path}: watch_every must be a number of seconds, more than 0 and at most 86400")
    folder = path.parent
    return Config(
        settings=_beside_file(_read(data, "global", "", path), folder),
        agents=agents,
        keymap=dict(keymap),
        watch_every=float(watch_every) if watch_every is not None else None,
        sign_key=_file_path(sign_key, folder) if sign_key is not None else None,
        trusted_runners=tuple(
            _key_source(s, folder) for s in _strs(data.get("trusted_runners"), "trusted_runners", path)
        ),
        history=_history_spec(history, folder) if history is not None else None,
        path=path,
        ignored=tuple(ignored),
    )


# --- relative paths: read from the config file's folder -------------------------------------------

_SECRET_FILE_SETTINGS = ("bearer", "api_key", "oauth2_client_secret")  # env:VAR or file:PATH


def _file_path(text: str, folder: Path) -> str:
    """A file named in the config file: a relative path joined to the file's folder (`~` expanded
    first, as for a path typed on the command line; an absolute one is kept as written)."""
    path = Path(text).expanduser()
    return text if path.is_absolute() else str(folder / path)


def _key_source(text: str, folder: Path) -> str:
    """A `keys` or `trusted_runners` entry: an http(s) URL as is, a file beside the config file."""
    return text if text.lower().startswith(("http://", "https://")) else _file_path(text, folder)


def _secret_reference(ref: str, folder: Path) -> str:
    """`file:PATH` with PATH read from the config file's folder; `env:VAR` as is."""
    kind, _, rest = ref.partition(":")
    return f"file:{_file_path(rest, folder)}" if kind == "file" else ref


def _beside_file(found: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The settings of one table with their relative file paths read from `folder`."""
    out = dict(found)
    if "keys" in out:
        out["keys"] = tuple(_key_source(source, folder) for source in out["keys"])
    for name in _SECRET_FILE_SETTINGS:
        if isinstance(out.get(name), str):
            out[name] = _secret_reference(out[name], folder)
    return out


def _history_spec(text: str, folder: Path) -> str:
    """The configured history with a relative SQLite path read from `folder`: a plain relative
    path becomes the absolute path, `sqlite:///RELATIVE` the absolute `sqlite:////...` URL; a
    PostgreSQL URL or keyword string, an absolute path, and a spec the store will refuse when it
    is used (with its own message) are kept as written."""
    from urllib.parse import quote

    from explorer.store.location import StoreUrlError, parse_location

    try:
        where = parse_location(text)
    except StoreUrlError:
        return text
    if where.kind != "sqlite" or where.path is None or where.path.is_absolute():
        return text
    if "://" in text:  # sqlite:///RELATIVE: the URL of the absolute path (four slashes)
        return "sqlite:///" + quote(str(folder / where.path))
    return str(folder / Path(text.strip()).expanduser())  # a folder there means the file inside it


def append_agent(path: Path, name: str, entry: str) -> None:
    """Add an `[agents.NAME]` table (TOML text holding only references) to the config at `path`,
    creating the file and its folder if needed; ConfigError when the name is taken or the
    result would not load."""
    import tomllib

    old = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        data = tomllib.loads(old) if old else {}
    except ValueError as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from None
    if name in (data.get("agents") or {}):
        raise ConfigError(f"{path} already has an agent called {name!r}; choose another name")
    text = old + ("\n" if old and not old.endswith("\n") else "") + ("\n" if old else "") + entry
    try:
        _from_toml(tomllib.loads(text), path)
    except (ValueError, ConfigError) as exc:
        raise ConfigError(f"the entry would not load: {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
