"""The options of signed evidence and of reading a recorded run, shared by `verify`, `show`,
`compare`, `export`, `history import`, `replay` and `watch`.

- `--sign-key PATH` (or the config's `sign_key`): the runner key `verify` signs a live run with.
  Signing needs a runner name and an `independent` or `platform` role. `--sign-key` with the
  role `self` is refused with a usage error rather than recorded: a self-run result is a claim
  whatever the signature, and a signed claim would only look like evidence. A `sign_key` in the
  config simply does not sign self-run interviews (said once on stderr).
- `--trust-runner JWKS` (repeatable, files or URLs; plus the config's `trusted_runners`): the
  runner keys whose signed results read as evidence. The reader's own configured `sign_key`
  counts as trusted on the reader's machine: they hold its private half.
- `--keys` and `--allow-jku` on a command that reads a recorded run: the card keys it is checked
  again under (`explorer.evidence.reading`). A recorded run's own keys are never among them.

Errors are `UsageError`s (exit status 2) naming the file and the problem, never a key's bytes.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.commands.common import UsageError, load_trusted_keys, say

if TYPE_CHECKING:
    from explorer.config.file import Config
    from explorer.core.run import Run
    from explorer.evidence.reading import ReaderTrust
    from explorer.evidence.runner_keys import RunnerKey


def add_sign_key_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sign-key",
        metavar="PATH",
        default=None,
        help="sign the result with this runner key (see keygen); "
        "needs --runner and --as independent or platform",
    )


def add_trust_runner_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust-runner",
        action="append",
        default=[],
        metavar="JWKS",
        help="a runner's public key set (file or URL); results it signed read as evidence (repeatable)",
    )


def config_file_path(config: Config, text: str) -> Path:
    """A path from the config file: `~` expanded, relative to the config file's folder."""
    from explorer.evidence.runner_keys import config_path_of

    return config_path_of(config, text)


def _load(path: Path | str, what: str) -> RunnerKey:
    from explorer.core.text import safe_text
    from explorer.evidence.runner_keys import RunnerKeyError, load, loose_permissions

    try:
        key = load(path)
    except RunnerKeyError as exc:
        raise UsageError(f"{what}: {safe_text(str(exc), limit=400)}") from None
    if loose_permissions(key.path):
        say(f"warning: {safe_text(str(key.path), limit=300)} can be read by others; chmod 600 it")
    return key


def signing_key(
    explicit: str | None, config: Config, role: str, runner: str | None, command: str
) -> RunnerKey | None:
    """The key a live run is signed with, or None; UsageError when signing cannot be honest."""
    if explicit is None and config.sign_key is None:
        return None
    if role == "self":
        if explicit is not None:
            raise UsageError(
                "--sign-key signs evidence, and a self-run result is a claim whatever the signature: "
                "run with --as independent or --as platform (and --runner NAME), or drop --sign-key"
            )
        say("note: the config's sign_key is not used for a self-run interview (a claim)", command)
        return None
    if not runner:
        raise UsageError("--sign-key needs --runner NAME (or runner in the config): who signs is who ran it")
    if explicit is not None:
        return _load(explicit, "--sign-key")
    assert config.sign_key is not None
    return _load(config_file_path(config, config.sign_key), "sign_key in the config")


def trusted_runners(sources: list[str], config: Config, timeout: float, command: str) -> dict[str, bytes]:
    """Thumbprint -> raw key of every trusted runner key: --trust-runner, the config's
    trusted_runners, and the reader's own configured sign_key."""
    from explorer.evidence.runner_keys import RunnerKeyError, load, trusted_set

    configured = [s if "://" in s else str(config_file_path(config, s)) for s in config.trusted_runners]
    jwks = load_trusted_keys([*sources, *configured], timeout, command, "--trust-runner")
    own = None
    if config.sign_key is not None:
        try:
            own = load(config_file_path(config, config.sign_key))
        except RunnerKeyError as exc:
            say(f"note: the config's sign_key is not trusted here: {exc}", command)
    return trusted_set(jwks, own)


def add_reader_arguments(parser: argparse.ArgumentParser) -> None:
    """`--keys`, `--allow-jku` and `--trust-runner`: the reader's trust roots for a recorded run."""
    from explorer.commands.common import add_setting_arguments

    add_setting_arguments(
        parser,
        "read",
        helps={
            "keys": "your trusted public keys for the card signature (repeatable; with the config's "
            "keys): a recorded run is checked again under them, never under the keys it carries",
            "allow_jku": "accept a key set the recorded run fetched from the card's own jku",
        },
    )
    add_trust_runner_argument(parser)


def reader_trust(
    args: argparse.Namespace, config: Config, command: str, agent: str = "", timeout: float = 10.0
) -> ReaderTrust:
    """The reader's trust roots for a recorded run of `agent` (a card URL): the card keys of
    `--keys` and the config (its top level and that agent's entry), `--allow-jku`, and the runner
    keys of `--trust-runner`, the config's `trusted_runners` and its own `sign_key`. UsageError
    for a key source that cannot be used."""
    from explorer.commands.common import load_trusted_keys, typed_settings
    from explorer.evidence.reading import ReaderTrust
    from explorer.interview.planning import values
    from explorer.net.keys import KeysError, user_keys

    found = values(agent, typed_settings(args), config, secrets=False)
    items = tuple(found.get("keys", ()))
    loaded = load_trusted_keys([k for k in items if isinstance(k, str)], timeout, command)
    try:
        keys, notes = user_keys(items, loaded)
    except KeysError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        say(f"note: {note}", command)
    runners = trusted_runners(getattr(args, "trust_runner", None) or [], config, timeout, command)
    return ReaderTrust(keys, bool(found.get("allow_jku")), runners)


def assessed(runs: list[Run], args: argparse.Namespace, command: str) -> list[Run]:
    """Stored runs as read here (`explorer.evidence.reading`): each report derived again from its bytes under
    your keys (`--keys`, `--allow-jku`, the config) and its standing under the runner keys you
    trust (`--trust-runner`, the config). UsageError for an unusable key source or a run that
    cannot be read."""
    from explorer.commands.common import config_of
    from explorer.evidence.reading import read_run

    config = config_of(args)
    trusts: dict[str, ReaderTrust] = {}
    out = []
    for run in runs:
        agent = _agent_of(run)
        if agent not in trusts:
            trusts[agent] = reader_trust(args, config, command, agent)
        try:
            out.append(read_run(run, trusts[agent]))
        except ValueError as exc:
            raise UsageError(f"the run cannot be read again from its bytes: {exc}") from None
    return out


def _agent_of(run: Run) -> str:
    from explorer.store.sqlite import agent_of

    return agent_of(run.recorded_report)


def sign_or_keep(run: Run, key: RunnerKey, target: str, command: str = "verify") -> Run:
    """The run signed with the runner key; unsigned (with a warning) when it cannot be."""
    from explorer.core.text import safe_text
    from explorer.evidence.signing import SigningError, sign_run

    try:
        return sign_run(run, key)
    except SigningError as exc:
        say(f"warning: {safe_text(target, limit=300)}: the run stays unsigned: {exc}", command)
        return run


def signed_run_fn(key: RunnerKey | None, target: str, command: str) -> Any:
    """A `run_fn` for `explorer.interview.replay.interview` that signs each run with `key` (None: plain);
    a warning names `command`, the one the user typed."""
    if key is None:
        return None
    from explorer.interview.procedure import run_interview_sync

    return lambda url, options: sign_or_keep(run_interview_sync(url, options), key, target, command)


def signed_async_run_fn(key: RunnerKey | None, target: str, command: str) -> Any:
    """`signed_run_fn` for `explorer.interview.replay.interview_async` (watch)."""
    if key is None:
        return None
    from explorer.interview.procedure import run_interview

    async def run(url: str, options: Any) -> Any:
        return sign_or_keep(await run_interview(url, options), key, target, command)

    return run
