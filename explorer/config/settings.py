"""Every interview setting, declared once: its command-line option, its config key, how it combines.

An interview's options come from layers, each more specific than the one before: the built-in
default (the field's default in `explorer.interview.procedure.Options`), the config file's top level, the
config file's entry for the agent being asked, and what the person typed (the command line, or what
the TUI was launched with). A recorded run fixes nothing but the target a replay asks: keys,
`--allow-jku`, role and runner are always the person's own. `explorer.interview.planning` walks the layers;
this module only says, per setting, where it may come from and how the layers combine:

- `override`: the most specific layer that sets it wins (role, runner, timeout, ...);
- `extend`: every layer adds to it, in layer order (trusted key sources);
- `merge`: (name, value) pairs, a later layer replacing a pair of the same name (headers).

Adding a setting is one change here plus the field it fills:

1. add the field to `explorer.interview.procedure.Options` (what the procedure does with it);
2. add one `Setting` row to SETTINGS: its flag and argparse keywords, its config key and where
   that key may appear (top level, agent entry), how a config value is read and checked, how
   layers combine, and whether it is a secret (resolved from `env:VAR` only when an interview
   really sends it, never stored, never shown);
3. name it in the GROUPS of the commands and screens that take it.

The config loader (`explorer.config.file`), every command's argument parser and the planning read
this table, so nothing else changes. This module imports nothing of the explorer: the config
loader sits above it, and `--help` stays instant.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ROLES = ("self", "independent", "platform")
MAX_TIMEOUT = 3600.0
MAX_DEADLINE = 6 * 3600.0

Combine = Literal["override", "extend", "merge"]
Scope = Literal["global", "agent"]


# --- readers: a config value (or a typed option) into a setting's value ---------------------------


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("must be a string or a list of strings")


def _role(value: Any) -> str:
    if value not in ROLES:
        raise ValueError("must be self, independent or platform")
    return str(value)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def _header_refs(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError("must map names to 'env:VAR' strings")
    for key, ref in value.items():
        if not ref.startswith("env:"):
            raise ValueError(
                f"{key} must be an env:VAR reference, not a literal value "
                "(secrets never live in the config file)"
            )
    return tuple((str(k), v) for k, v in value.items())


def resolve_reference(value: str) -> str:
    """An `env:VAR` reference as the variable's value (anything else as is); ValueError when the
    variable is unset, so a missing secret is a clear message and never an empty header."""
    if value.startswith("env:"):
        var = value[4:]
        if var not in os.environ:
            raise ValueError(f"environment variable {var} is not set (referenced by a header)")
        return os.environ[var]
    return value


def _resolve_headers(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((name, resolve_reference(ref)) for name, ref in pairs)


def parse_header_option(text: str) -> tuple[str, str]:
    """`--header 'Name: value'` -> (name, value); raises ValueError with a readable message."""
    name, sep, value = text.partition(":")
    name = name.strip()
    if not sep or not name or any(c.isspace() for c in name):
        # The text is not repeated: a malformed header is most often a credential (`Authorization
        # Bearer ...` without its colon), and the message lands on a terminal or in a CI log.
        raise ValueError("--header expects 'Name: value' (what was given is not shown: it may be a secret)")
    return name, value.strip()


def _typed_headers(texts: Iterable[str]) -> tuple[tuple[str, str], ...]:
    return tuple(parse_header_option(text) for text in texts)


def seconds_type(maximum: float) -> Callable[[str], float]:
    """An argparse type for a number of seconds, more than 0 and at most `maximum`."""

    def seconds(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
        if not 0 < value <= maximum:
            raise argparse.ArgumentTypeError(f"expected more than 0 and at most {maximum:g} seconds")
        return value

    return seconds


MAX_SECRET_FILE = 64 * 1024  # a token or key file is small; anything bigger is a mistake


def is_secret_reference(text: str) -> bool:
    """`env:VAR` or `file:PATH`: how a credential is named (never the credential itself)."""
    kind, sep, rest = text.partition(":")
    return bool(sep) and kind in ("env", "file") and bool(rest)


def literal_refusal(what: str) -> str:
    return (
        f"{what} takes env:VAR or file:PATH, not a literal secret (a literal would land in shell "
        "history, process listings and config files)"
    )


def read_secret(ref: str, what: str = "a credential") -> str:
    """The secret an `env:VAR` / `file:PATH` reference names (a file's surrounding whitespace
    stripped); ValueError when it is a literal, unset, unreadable, empty or several lines."""
    if not is_secret_reference(ref):
        raise ValueError(literal_refusal(what))
    kind, _, rest = ref.partition(":")
    if kind == "env":
        value = os.environ.get(rest)
        if value is None:
            raise ValueError(f"{what}: environment variable {rest} is not set")
    else:
        path = os.path.expanduser(rest)
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_SECRET_FILE + 1)
        except OSError as exc:
            raise ValueError(f"{what}: cannot read {path}: {exc.strerror or exc}") from None
        if len(data) > MAX_SECRET_FILE:
            raise ValueError(f"{what}: {path} is larger than {MAX_SECRET_FILE} bytes; not a secret")
        try:
            value = data.decode("utf-8").strip()  # `echo token > file` leaves a newline
        except UnicodeDecodeError:
            raise ValueError(f"{what}: {path} is not UTF-8 text") from None
    if not value or any(c in value for c in "\r\n\0"):
        raise ValueError(f"{what}: the secret from {ref} is empty or spans several lines")
    return value


def _reference(option: str) -> Callable[[str], str]:
    """argparse type for a SECRET: a literal is a usage error (exit 2) whose message never
    repeats the value."""

    def check(text: str) -> str:
        if not is_secret_reference(text):
            raise argparse.ArgumentTypeError(literal_refusal(option))
        return text

    return check


def _secret_ref(value: Any) -> str:
    """A config credential: an `env:VAR` or `file:PATH` reference, never the secret itself."""
    if not isinstance(value, str) or not is_secret_reference(value):
        raise ValueError(
            "must be env:VAR or file:PATH, not a literal value (secrets never live in the config file)"
        )
    return value


def _reader(what: str) -> Callable[[str], str]:
    return lambda ref: read_secret(ref, what)


def _config_seconds(maximum: float) -> Callable[[Any], float]:
    """A config value that is a number of seconds, more than 0 and at most `maximum`."""

    def read(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= maximum:
            raise ValueError(f"must be a number of seconds, more than 0 and at most {maximum:g}")
        return float(value)

    return read


def _origin_url(value: Any) -> str:
    """An http(s) URL naming an origin (`https://rpc.agent.example`; a path is allowed and
    ignored: what it pins is the origin)."""
    from urllib.parse import urlsplit

    problem = "must be an http(s) URL such as https://rpc.agent.example"
    if not isinstance(value, str):
        raise ValueError(problem)
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 - raises for a port outside 0-65535
    except ValueError:
        raise ValueError(problem) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.password is not None:
        raise ValueError(problem)
    return value.strip()


def _origin_option(text: str) -> str:
    try:
        return _origin_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--interface-origin {exc}") from None


def _reruns(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value <= 5:
        raise argparse.ArgumentTypeError("--reruns must be between 0 and 5")
    return value


# --- the table ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One interview setting: the `Options` field it fills and every way a person can set it."""

    name: str  # the explorer.interview.procedure.Options field
    flag: str | None = None  # the command-line option; None when it has none
    arg: Mapping[str, Any] = field(default_factory=dict)  # argparse keywords besides dest/default
    config: str | None = None  # the config file key; None when it cannot be configured
    scopes: frozenset[Scope] = frozenset({"global", "agent"})  # where that key may appear
    read: Callable[[Any], Any] = lambda value: value  # config value -> value; ValueError(reason)
    typed: Callable[[Any], Any] | None = None  # command-line value -> value; ValueError(message)
    combine: Combine = "override"
    secret: bool = False  # its value (configured or typed) is a reference, resolved (`resolve`) at planning
    resolve: Callable[[Any], Any] | None = None  # config value -> value sent; ValueError(message)


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "role",
        "--as",
        {
            "choices": ROLES,
            "help": "who runs the interview: self (a claim, the default), independent or platform (evidence)",
        },
        config="role",
        scopes=frozenset({"global"}),
        read=_role,
    ),
    Setting(
        "runner",
        "--runner",
        {"help": "name recorded as who ran the interview"},
        config="runner",
        scopes=frozenset({"global"}),
        read=_string,
    ),
    Setting(
        "keys",
        "--keys",
        {
            "action": "append",
            "metavar": "JWKS_FILE_OR_URL",
            "help": "trusted public keys for the card signature, looked up by kid (repeatable)",
        },
        config="keys",
        read=_strings,
        typed=tuple,
        combine="extend",
    ),
    Setting(
        "headers",
        "--header",
        {
            "action": "append",
            "metavar": "'Name: value'",
            "help": "header sent only to the agent's origin (repeatable; a value env:VAR is read from "
            "the environment); recorded as <redacted>",
        },
        config="headers",
        scopes=frozenset({"agent"}),
        read=_header_refs,
        typed=_typed_headers,
        combine="merge",
        secret=True,
        resolve=_resolve_headers,
    ),
    Setting(
        "allow_jku",
        "--allow-jku",
        {"action": "store_true", "help": "also fetch keys from the card's own jku"},
    ),
    Setting(
        "timeout",
        "--timeout",
        {
            "type": seconds_type(MAX_TIMEOUT),
            "metavar": "SECONDS",
            "help": "bound on every request, connect plus whole body (default 10)",
        },
    ),
    Setting(
        "deadline",
        "--deadline",
        {
            "type": seconds_type(MAX_DEADLINE),
            "metavar": "SECONDS",
            "help": "bound on the whole run, re-runs included (default 6 times --timeout); a run it cuts "
            "short is unreachable, with a deadline finding",
        },
        config="deadline",
        read=_config_seconds(MAX_DEADLINE),
    ),
    Setting(
        "openclasp_base",
        "--openclasp",
        {"metavar": "BASE_URL", "help": "OpenClasp base URL to resolve slugs and agent ids"},
    ),
    Setting(
        "reruns",
        "--reruns",
        {
            "type": _reruns,
            "metavar": "N",
            "help": "re-runs after a conflict before calling it persistent (default 1)",
        },
    ),
    Setting(
        "public_only",
        "--public-only",
        {
            "action": "store_true",
            "help": "https on port 443 to public addresses only, DNS pinned, no redirects",
        },
    ),
    # Credentials for the card's security schemes (explorer.net.auth decides where each goes).
    Setting(
        "bearer",
        "--bearer",
        {
            "type": _reference("--bearer"),
            "metavar": "SECRET",
            "help": "bearer token (env:VAR or file:PATH), sent as Authorization: Bearer to the JSON-RPC "
            "interface when the card declares a bearer scheme",
        },
        config="bearer",
        scopes=frozenset({"agent"}),
        read=_secret_ref,
        secret=True,
        resolve=_reader("bearer"),
    ),
    Setting(
        "api_key",
        "--api-key",
        {
            "type": _reference("--api-key"),
            "metavar": "SECRET",
            "help": "API key (env:VAR or file:PATH), sent in the header the card's API-key scheme names",
        },
        config="api_key",
        scopes=frozenset({"agent"}),
        read=_secret_ref,
        secret=True,
        resolve=_reader("api_key"),
    ),
    Setting(
        "oauth2_client_id",
        "--oauth2-client-id",
        {"metavar": "ID", "help": "OAuth 2.0 client id (client credentials grant)"},
        config="oauth2_client_id",
        scopes=frozenset({"agent"}),
        read=_string,
    ),
    Setting(
        "oauth2_client_secret",
        "--oauth2-client-secret",
        {
            "type": _reference("--oauth2-client-secret"),
            "metavar": "SECRET",
            "help": "OAuth 2.0 client secret (env:VAR or file:PATH), sent only to the token URL",
        },
        config="oauth2_client_secret",
        scopes=frozenset({"agent"}),
        read=_secret_ref,
        secret=True,
        resolve=_reader("oauth2_client_secret"),
    ),
    Setting(
        "oauth2_scopes",
        "--oauth2-scope",
        {
            "action": "append",
            "metavar": "SCOPE",
            "help": "OAuth 2.0 scope to request (repeatable; default: the scopes the card's security "
            "requirement lists)",
        },
        config="oauth2_scope",
        scopes=frozenset({"agent"}),
        read=_strings,
        typed=tuple,
    ),
    Setting(
        "oauth2_token_url",
        "--oauth2-token-url",
        {
            "metavar": "URL",
            "help": "OAuth 2.0 token endpoint (default: the tokenUrl of the card's client credentials flow)",
        },
        config="oauth2_token_url",
        scopes=frozenset({"agent"}),
        read=_string,
    ),
    # Where the credentials above may go besides the card's own origin (explorer.core.token_trust).
    Setting(
        "interface_origin",
        "--interface-origin",
        {
            "type": _origin_option,
            "metavar": "ORIGIN",
            "help": "the origin of the agent's JSON-RPC interface when the card names it on another origin "
            "than its own: credentials go there only when pinned here or a signature under a key you trust "
            "covers it",
        },
        config="interface_origin",
        scopes=frozenset({"agent"}),
        read=_origin_url,
    ),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}

# Which settings each surface offers on its command line.
WHO = ("role", "runner")
AUTH = ("bearer", "api_key", "oauth2_client_id", "oauth2_client_secret", "oauth2_scopes", "oauth2_token_url")
# The settings that carry a credential: typed once for a run of many agents, they would reach
# every agent; they must be bound to one in its config entry (`planning.unbound_credentials`).
BOUND = frozenset({"headers", *AUTH})
# Asking an agent live.
LIVE = ("headers", "keys", "allow_jku", "timeout", "deadline", "openclasp_base", *AUTH, "interface_origin")
GROUPS: dict[str, tuple[str, ...]] = {
    "verify": (*WHO, *LIVE, "reruns", "public_only"),
    "card": ("keys", "timeout"),
    "replay": (*WHO, *LIVE),  # who asks, and with which keys, is yours: never the recorded run's
    "watch": (*WHO, *LIVE),
    "read": ("keys", "allow_jku"),  # re-deriving a recorded run under your keys (show, export, ...)
    "tui": (*WHO, *LIVE, "reruns", "public_only"),  # the explorer (and `serve`) asks as verify does
}


def credential_problem(values: Mapping[str, Any]) -> str | None:
    """Why the credential settings of one interview do not fit together, or None."""
    if ("oauth2_client_id" in values) != ("oauth2_client_secret" in values):
        return (
            "--oauth2-client-id and --oauth2-client-secret go together (config: oauth2_client_id, "
            "oauth2_client_secret)"
        )
    if "oauth2_client_id" not in values and ("oauth2_scopes" in values or "oauth2_token_url" in values):
        return "--oauth2-scope and --oauth2-token-url need --oauth2-client-id and --oauth2-client-secret"
    return None


def config_keys(scope: Scope) -> frozenset[str]:
    """The config file keys the settings use at the top level or in an agent entry."""
    return frozenset(s.config for s in SETTINGS if s.config is not None and scope in s.scopes)


def read_config(table: Mapping[str, Any], scope: Scope, where: str) -> dict[str, Any]:
    """The settings found in one config table, by setting name, each read and checked.

    Raises ValueError naming `where` (e.g. `[agents.stonework] headers`) and the problem.
    """
    out: dict[str, Any] = {}
    for setting in SETTINGS:
        if setting.config is None or scope not in setting.scopes or setting.config not in table:
            continue
        try:
            out[setting.name] = setting.read(table[setting.config])
        except ValueError as exc:
            raise ValueError(f"{where}{setting.config} {exc}") from None
    return out


def add_arguments(
    parser: argparse.ArgumentParser, group: str, *, helps: Mapping[str, str] | None = None
) -> None:
    """The command-line options of the settings `GROUPS[group]` names (`helps` rewords some)."""
    for name in GROUPS[group]:
        setting = BY_NAME[name]
        if setting.flag is None:
            continue
        arg = dict(setting.arg)
        if helps and name in helps:
            arg["help"] = helps[name]
        parser.add_argument(setting.flag, dest=name, default=None, **arg)


def given(args: argparse.Namespace | Mapping[str, Any]) -> dict[str, Any]:
    """What the person typed, by setting name (options they did not give are left out).

    Raises ValueError with a readable message for a value the option's type cannot take
    (`--header NoColon`).
    """
    values = args if isinstance(args, Mapping) else vars(args)
    out: dict[str, Any] = {}
    for setting in SETTINGS:
        value = values.get(setting.name)
        if value is None or (setting.combine != "override" and not value):
            continue
        out[setting.name] = setting.typed(value) if setting.typed is not None else value
    return out


def combine(setting: Setting, layers: Iterable[Any]) -> Any:
    """One setting's value from its layers, least specific first (None: the layer is silent)."""
    present = [layer for layer in layers if layer is not None]
    if not present:
        return None
    if setting.combine == "extend":
        return tuple(item for layer in present for item in layer)
    if setting.combine == "merge":
        merged: dict[Any, Any] = {}
        for layer in present:
            merged.update(layer)
        return tuple(merged.items())
    return present[-1]
