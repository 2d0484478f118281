"""The one place that turns (target, what the person typed, the config file) into an interview.

Every surface that asks an agent, `verify`, `card`, `replay`, `watch` and the TUI (and sweeps,
later), calls `plan` (or `plan_for_run` to repeat a recorded run) and gets the same answer for
the same input: the target to ask and the `explorer.interview.procedure.Options` to ask it with.

One rule finds a configured agent: a target that is an agent's name, or its URL (a trailing slash
aside), brings that agent's config entry (`Config.agent`). Named by its name, the target becomes
the agent's URL; typed as a URL, it stays as typed. Each setting then comes from its layers, least
specific first: the config file's top level, the agent's entry, and what was typed (a replay takes
only its target from the recorded run); `explorer.config.settings` declares, per setting, which
layers may set it and how they combine. Secrets (a configured header's `env:VAR`) are resolved
here, at the last moment, and only when the surface sends them (`card` fetches without
credentials, so it plans without secrets and never needs their variables).

Nothing here touches the network or the disk beyond the environment variables a secret names.
A problem the person can fix (an unset variable, a malformed `--header`) is a `PlanError` with a
readable message, which a command reports as a usage error and the TUI as a message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from explorer.config import settings
from explorer.config.file import Config

if TYPE_CHECKING:
    import argparse

    from explorer.core.run import Run
    from explorer.interview.options import Options


class PlanError(ValueError):
    """A setting cannot be used as given; the message says which and why."""


def typed(args: argparse.Namespace | Mapping[str, Any]) -> dict[str, Any]:
    """What the person typed (argparse results, or a mapping by setting name), by setting name;
    PlanError for a value that cannot be used (`--header NoColon`)."""
    try:
        return settings.given(args)
    except ValueError as exc:
        raise PlanError(str(exc)) from None


def resolve_target(target: str, config: Config | None) -> str:
    """The URL or file to ask for a target: a configured agent's name becomes its URL."""
    agent = config.agent(target) if config is not None else None
    return agent.url if agent is not None and target == agent.name else target


def values(
    target: str,
    given: Mapping[str, Any],
    config: Config | None = None,
    *,
    secrets: bool = True,
    resolved: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every setting some layer sets, by name, combined; PlanError when a secret cannot be resolved.
    `resolved` is the top layer, values already resolved (secrets typed into the TUI's sign-in
    dialog): never read as references, so a typed secret that starts with `env:` is itself."""
    config = config if config is not None else Config()
    agent = config.agent(target)
    layers = (config.settings, agent.settings if agent is not None else {}, given)
    out: dict[str, Any] = {}
    for setting in settings.SETTINGS:
        if setting.secret and not secrets:
            continue
        found = [layer.get(setting.name) for layer in layers]
        if setting.resolve is not None:
            try:  # the config layers and what was typed (`--header 'Name: env:VAR'`) may hold references
                found = [setting.resolve(v) if v is not None else None for v in found]
            except ValueError as exc:
                raise PlanError(str(exc)) from None
        found.append((resolved or {}).get(setting.name))
        value = settings.combine(setting, found)
        if value is not None:
            if setting.secret:
                _refuse_short(setting, value)
            out[setting.name] = value
    return out


def _refuse_short(setting: settings.Setting, value: Any) -> None:
    """PlanError for a secret too short to be kept out of the records (`core.scrub`): a value of
    fewer than 4 characters cannot be told apart from ordinary text in what an agent sends back.
    A `--header` whose name says it carries a credential (`Authorization`, `X-Api-Key`, ...)
    counts, and so does the credential after its auth scheme; a short value of another header
    (`X-Debug: 1`) is sent, recorded as `<redacted>`, and not looked for in what comes back."""
    from explorer.core.scrub import MIN_LENGTH, credential_parts, is_secret_header, too_short

    why = (
        f"is under {MIN_LENGTH} characters: a secret that short cannot be told apart from ordinary text "
        "in what an agent sends back, so it could not be kept out of what is recorded (and it is guessable)"
    )
    if setting.name == "headers":
        for name, text in value:
            if is_secret_header(name) and any(too_short(part) for part in credential_parts(text)):
                raise PlanError(f"--header {name}: the credential {why}")
    elif isinstance(value, str) and too_short(value):
        raise PlanError(f"{setting.flag}: the secret {why}")


def plan(
    target: str,
    given: Mapping[str, Any] | None = None,
    config: Config | None = None,
    *,
    secrets: bool = True,
    resolved: Mapping[str, Any] | None = None,
) -> tuple[str, Options]:
    """The target to ask and the options to ask it with (see the module docstring).

    `given` is `typed(args)` (or the TUI's launch settings); `resolved`, values that win over
    every layer and are never read as references (`values`). Raises PlanError when a configured
    secret cannot be resolved.
    """
    from explorer.interview.options import Options

    found = values(target, given or {}, config, secrets=secrets, resolved=resolved)
    problem = settings.credential_problem(found) if secrets else None
    if problem is not None:
        raise PlanError(problem)
    return resolve_target(target, config), Options(**found)


def unbound_credentials(given: Mapping[str, Any], targets: int) -> str | None:
    """Why credentials typed once cannot serve `targets` agents, or None.

    A credential given on the command line (or at the TUI's launch) for a run of many agents is
    bound to none of them: sent to every card that asks, one listed agent could collect what was
    meant for another (a bearer, or an OAuth client secret at a token URL of its own). So with
    more than one target every credential must be bound to its agent in the config file, where
    the person wrote down which agent gets which (docs/CONTRACT.md, authentication). The message
    says how, and never repeats a value."""
    if targets <= 1:
        return None
    flags = [s.flag for s in settings.SETTINGS if s.name in settings.BOUND and s.name in given and s.flag]
    if not flags:
        return None
    return (
        f"{', '.join(flags)} would go to every one of the {targets} targets; in a run of many agents a "
        "credential goes only to the agent it is bound to. Bind it in the config file, one entry per agent "
        '(for example [agents.NAME] with url = "URL", bearer = "env:VAR", api_key = "env:VAR", '
        'oauth2_client_id = "ID", oauth2_client_secret = "env:VAR", headers = { Name = "env:VAR" }), and '
        "list the agent by its name or URL"
    )


def recorded_target(run: Run) -> str:
    """The target a recorded run asked, derived from its bytes: the target it states when that
    leads to the first card request it recorded, else that request's URL (so a transcript cannot
    make a replay contact a host its exchanges never asked)."""
    from explorer.core.rederive import derived_target

    target = run.recorded_report.get("target")
    return derived_target(target if isinstance(target, str) and target else None, run.exchanges)


def plan_for_run(
    run: Run, given: Mapping[str, Any] | None = None, config: Config | None = None
) -> tuple[str, Options]:
    """`plan` for asking a recorded run's interview again: its target (`recorded_target`), and
    everything else, keys, `--allow-jku`, role and runner included, from the command line and
    the config file as for any target. A recorded or imported run is never a trust root: its keys
    and its runner's name and role are its own, not the person's who replays it."""
    return plan(recorded_target(run), given, config)
