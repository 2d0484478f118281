"""One module per screen, each with its own .tcss file beside it.

`all_screens()` imports them on demand; the app uses it to know every binding id a user keymap
may name, without importing the screens at startup.
"""

from __future__ import annotations

from typing import Any


def all_screens() -> tuple[type[Any], ...]:
    from explorer.tui.screens.auth import SignInScreen
    from explorer.tui.screens.card import CardScreen
    from explorer.tui.screens.compare import CompareScreen
    from explorer.tui.screens.confirm import ConfirmScreen
    from explorer.tui.screens.export import ExportScreen
    from explorer.tui.screens.fleet import FleetScreen
    from explorer.tui.screens.help import HelpScreen
    from explorer.tui.screens.history import HistoryScreen
    from explorer.tui.screens.interview import InterviewScreen
    from explorer.tui.screens.load import LoadScreen
    from explorer.tui.screens.progress import ProgressScreen
    from explorer.tui.screens.value import ValueScreen
    from explorer.tui.screens.watch import WatchScreen

    return (
        LoadScreen,
        ProgressScreen,
        InterviewScreen,
        HistoryScreen,
        FleetScreen,
        CompareScreen,
        WatchScreen,
        ConfirmScreen,
        ExportScreen,
        ValueScreen,
        CardScreen,
        SignInScreen,
        HelpScreen,
    )
