"""The explorer as one browser session's process: `python -m explorer.tui.served`.

`interview-explorer serve` (explorer.web) starts this module once per browser tab, with Textual's
web driver selected in the environment and the session's launch (`explorer.web.handover.Launch`)
in `INTERVIEW_EXPLORER_SESSION`. It builds the app exactly as `interview-explorer TARGET ...`
does (`explorer.tui.launch.build_app`), adopts the reference agents `demo --browser` runs in the
server, and runs it. In the browser, exports, copies and screenshots are delivered as downloads
(`App.is_web`; explorer.tui.clipboard and explorer.tui.screens.export), never written on the
server.

`--check` builds the app without running it and exits 2 with the launcher's message when it
cannot be built: `serve` runs that once before it prints its URL, so a bad TARGET or option is
reported in the terminal, as the terminal explorer would, not as a browser tab that closes.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any

from explorer.web.handover import SESSION_ENV, DemoHandover, Launch


def adopt_demo(context: Any, demo: DemoHandover) -> None:
    """What `demo` gives the terminal explorer in memory, from the server's handover."""
    from types import SimpleNamespace

    from explorer.config.credentials import Credentials
    from explorer.tui.demo_agents import demo_agents

    fleet = SimpleNamespace(agents={name: SimpleNamespace(card_url=url) for name, url in demo.agents})
    context.demo = tuple(demo_agents(fleet))
    context.demo_skipped = dict(demo.skipped)
    context.trust(demo.keys)

    def credentials(refs: Mapping[str, Any]) -> Credentials:
        settings: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in refs.items()}
        return Credentials(**settings)

    context.demo_credentials = {url: credentials(refs) for url, refs in demo.credentials.items()}


def build(launch: Launch) -> Any:
    """The app for this launch (not running); raises LaunchError."""
    from explorer.tui.app import Start
    from explorer.tui.launch import build_app

    app = build_app(argparse.Namespace(**launch.options))
    if launch.demo is not None:
        adopt_demo(app.context, launch.demo)
        if launch.demo.fleet:
            app.start = Start(fleet=launch.demo.fleet)
    return app


def main(argv: list[str] | None = None) -> int:
    from explorer.tui.launch import LaunchError, run_app

    check = "--check" in (sys.argv[1:] if argv is None else argv)
    text = os.environ.pop(SESSION_ENV, None)
    if text is None:
        print(
            f"interview-explorer: {SESSION_ENV} is not set (`interview-explorer serve` starts this)",
            file=sys.stderr,
        )
        return 2
    try:
        app = build(Launch.from_json(text))
    except LaunchError as exc:
        print(f"interview-explorer: {exc}", file=sys.stderr)
        return 2
    if check:
        app.context.close()
        return 0
    try:
        return run_app(app)
    finally:
        app.context.close()


if __name__ == "__main__":
    sys.exit(main())
