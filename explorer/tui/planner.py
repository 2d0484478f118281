"""What to interview and with what: a typed target planned as every command plans it, then run.

A target typed in the TUI may be a URL, a card file, a configured agent's name, a reference
agent's name (`drifting`, under `demo`) or a card name the history knows for exactly one agent;
`Planner.plan` turns it into the URL and the procedure's Options (`explorer.interview.planning`,
the one planner of every surface), the launch settings winning over the config. Credentials
typed in the sign-in dialog are kept here, in memory only, by agent URL, and win over every
stored reference (they are never written, never put in the environment, and forgotten when the
session closes). A planned interview is run, and, when the config names a `sign_key` and the
run is an independent party's or a platform's, signed as `verify --sign-key` signs it; a sweep
plans and runs many at once, recording each.

The planner reads the session's `AppContext` at each use (its settings, config and reference
agents change during a session) and imports the procedure and the planning on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from explorer.tui.errors import ExplorerError

if TYPE_CHECKING:
    from explorer.core.run import Run
    from explorer.tui.context import AppContext


class Planner:
    """Planning, sign-in and running interviews for one TUI session."""

    def __init__(self, session: AppContext) -> None:
        self._session = session
        # Credentials typed into the sign-in dialog, by agent URL: memory only, forgotten on close.
        self._typed: dict[str, Any] = {}
        self._sign_key: Any = None  # the config's sign_key, loaded on first signed run (False: unusable)

    # ---- planning ----------------------------------------------------------------------------
    def plan(self, target: str) -> tuple[str, Any]:
        """The URL to interview and the procedure's Options for a target (`explorer.interview.planning`,
        as every command plans): a configured agent, by name or URL, brings its headers (their
        `env:` references resolved now, never stored) and keys; the launch settings win. Under
        `demo`, a reference agent's name (`drifting`) stands for its URL, unless the config
        names an agent the same.
        Otherwise a card name the history knows for exactly one agent stands for that agent's
        card URL, as in `history NAME`.
        Raises ExplorerError when a referenced environment variable is unset.
        """
        from explorer.interview.planning import PlanError, plan

        session = self._session
        if session.config is None or session.config.agent(target) is None:
            target = self._demo_target(target)
            target = self.recorded_agent(target) or target
        try:
            given = dict(session.settings)
            demo = session.demo_credentials.get(target)
            if demo is not None:  # a guarded reference agent: its demo credentials, as typed
                given.update(demo.settings())
            typed = self.typed_credentials(target)
            if typed is None:
                return self._plan_stored(target, given)
            # Typed values win over every reference (which is then not read: the variable a
            # saved entry names is usually unset in this session), as a replay's recorded values
            # do: they are already resolved.
            stored = _config_without_credentials(session.config, target)
            return plan(target, _without_credentials(given), stored, resolved=typed.settings())
        except PlanError as exc:
            raise ExplorerError(str(exc)) from None

    def _plan_stored(self, target: str, given: dict[str, Any]) -> tuple[str, Any]:
        """`plan` with the stored credentials; when one of their references cannot be read (the
        variable a saved entry names is not exported in this session), the interview goes ahead
        without them and a warning says so: the agent then asks, and the sign-in dialog (a)
        takes the secret."""
        from explorer.interview.planning import PlanError, plan

        config = self._session.config
        try:
            return plan(target, given, config)
        except PlanError as exc:
            try:
                without = _config_without_credentials(config, target)
                planned = plan(target, _without_credentials(given), without)
            except PlanError:
                raise exc from None
            self._session.warnings.append(
                f"{exc}; interviewing without credentials (if the agent asks for "
                "them, press a on its interview to type the secret)"
            )
            return planned

    def _demo_target(self, target: str) -> str:
        """A reference agent's name as its URL; ExplorerError when that agent could not start."""
        url = self._session.demo_url(target)
        if url is not None:
            return url
        skipped_agents = self._session.demo_skipped
        wanted = target.strip().casefold()
        skipped = next((name for name in skipped_agents if name.casefold() == wanted), None)
        if skipped is not None:
            raise ExplorerError(f"the reference agent {skipped} is not running: {skipped_agents[skipped]}")
        return target

    def recorded_agent(self, name: str) -> str | None:
        """The card URL of the one recorded agent a bare name means (its card name, any case;
        `History.match_agents`), or None (a URL or file, a reference agent's name, none, several)."""
        text = name.strip()
        if not text or "/" in text or ":" in text or not self._session.use_history:
            return None
        from explorer.demo.variants import VARIANTS

        if text.casefold() in VARIANTS:
            return None  # a reference agent lives at a new port each demo: start the demo instead
        try:
            found = self._session.history().match_agents(text)
        except ExplorerError:
            return None
        return found[0] if len(found) == 1 else None

    def target_problem(self, target: str) -> str | None:
        """Why `target` cannot name an agent (`explorer.interview.targets`), or None: a URL, a card file, a
        configured agent, an OpenClasp reference, or, in this session, a running reference agent."""
        from explorer.interview.targets import target_problem

        session = self._session
        wanted = target.strip().casefold()
        if session.demo_url(target) is not None or any(n.casefold() == wanted for n in session.demo_skipped):
            return None  # a skipped reference agent: planning says why it is not running
        if self.recorded_agent(target) is not None:
            return None
        agents = list(session.config.agents) if session.config is not None else []
        configured = getattr(session.config, "settings", None) or {}
        base = session.settings.get("openclasp_base") or configured.get("openclasp_base")
        return target_problem(target, agents=agents, demo=_ReferenceNames(), openclasp_base=base)

    # ---- sign-in -----------------------------------------------------------------------------
    def sign_in(self, urls: Sequence[str], typed: Any) -> None:
        """Use credentials typed in the sign-in dialog (`explorer.config.credentials.TypedSecrets`) for
        the agent at `urls` (its target and its card URL) for the rest of the session. They stay
        in this object: never written, never put in the environment, forgotten by `forget_typed`."""
        for url in urls:
            if url:
                self._typed[_url_key(url)] = typed

    def typed_credentials(self, target: str) -> Any:
        """The credentials typed this session for a target (by its URL, or the URL a configured
        agent's name stands for), or None."""
        config = self._session.config
        agent = config.agent(target) if config is not None else None
        for url in (target, agent.url if agent is not None else ""):
            found = self._typed.get(_url_key(url)) if url else None
            if found is not None:
                return found
        return None

    def forget_typed(self) -> None:
        """Forget every credential typed this session (the session is closing)."""
        self._typed.clear()

    # ---- running -----------------------------------------------------------------------------
    async def interview(self, target: str, progress: Callable[[Any], None] | None = None) -> Run:
        return await self.planned(target)(progress)

    def planned(self, target: str) -> Callable[[Callable[[Any], None] | None], Coroutine[Any, Any, Run]]:
        """`interview` in two halves: the planning now (raises ExplorerError), the asking when
        the returned coroutine function is called; the early interview plans in the launching
        process and may ask from a child of it (`explorer.tui.early`)."""
        url, options = self.plan(target)

        async def interview(progress: Callable[[Any], None] | None = None) -> Run:
            from explorer.interview.procedure import run_interview

            run = await run_interview(url, options, progress)
            return await self._signed(run, options)

        return interview

    def sweep(
        self,
        targets: Sequence[str],
        concurrency: int,
        *,
        stopped: Callable[[], bool],
        on_error: Callable[[str, str], None],
        on_done: Callable[[str, Run | None, int | None], None],
    ) -> None:
        """Interview `targets` (as typed), `concurrency` at once, each planned as `plan` plans it
        and its run recorded. `on_error(target, message)` for a target that cannot be planned;
        `on_done(target, run or None when unreachable, run id)` as each finishes. No new target
        starts once `stopped()`. Blocks on an event loop of its own: call it from a thread."""
        import asyncio

        from explorer.interview.planning import unbound_credentials
        from explorer.interview.sweep import Job, sweep

        unbound = unbound_credentials(self._session.settings, len(targets))
        if unbound is not None:  # the launch's credentials are bound to no agent of the list
            for given in targets:
                on_error(given, unbound)
            return
        jobs = []
        for position, given in enumerate(targets):
            try:
                url, options = self.plan(given)
            except ExplorerError as exc:
                on_error(given, str(exc))
                continue
            jobs.append(Job(position, url, options))
        by_url = {job.target: targets[job.position] for job in jobs}

        def finished(done: Any) -> None:
            target = by_url.get(done.job.target, done.job.target)
            on_done(target, done.run, None if done.run is None else self._session.record(done.run))

        asyncio.run(sweep((j for j in jobs if not stopped()), finished, concurrency=concurrency))

    async def _signed(self, run: Run, options: Any) -> Run:
        """The live run signed with the config's `sign_key` when it runs as an independent party
        or a platform under a runner name (as `verify --sign-key` does); else as it is."""
        key = self._signing_key(options)
        if key is None:
            return run
        import asyncio

        from explorer.evidence.signing import SigningError, sign_run

        try:
            return await asyncio.to_thread(sign_run, run, key)
        except SigningError as exc:
            self._session.warnings.append(f"run not signed: {exc}")
            return run

    def _signing_key(self, options: Any) -> Any:
        config = self._session.config
        path = getattr(config, "sign_key", None)
        if not path or options.role not in ("independent", "platform") or not options.runner:
            return None
        if self._sign_key is None:
            from explorer.evidence.runner_keys import RunnerKeyError, config_path_of, load

            try:
                self._sign_key = load(config_path_of(config, path))
            except RunnerKeyError as exc:
                self._session.warnings.append(f"runs are not signed: {exc}")
                self._sign_key = False
        return self._sign_key or None


def _url_key(url: str) -> str:
    return url.strip().rstrip("/")


def _without_credentials(settings: Mapping[str, Any]) -> dict[str, Any]:
    from explorer.config.settings import AUTH

    return {name: value for name, value in settings.items() if name not in AUTH}


def _config_without_credentials(config: Any, target: str) -> Any:
    """The config with no credential setting at its top level or in the entry `target` names."""
    if config is None:
        return None
    from dataclasses import replace

    agents = dict(config.agents)
    agent = config.agent(target)
    if agent is not None:
        agents[agent.name] = replace(agent, settings=_without_credentials(agent.settings))
    return replace(config, settings=_without_credentials(config.settings), agents=agents)


class _ReferenceNames:
    """The reference agents' names, read only when a target that names nothing needs a hint:
    their module defines every reference agent (about 8 ms to import), which a URL never needs."""

    def __iter__(self) -> Iterator[str]:
        from explorer.demo.variants import VARIANTS

        return iter(VARIANTS)
