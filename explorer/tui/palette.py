"""The command palette: every action of the explorer as a "verb: object" command.

Commands come from two places: the app (open a demo agent, show history, help, theme, quit)
and the active screen, which knows what "this run" or "the selected run" is. A screen offers
its commands by defining `palette_commands()`; the provider asks the screen the palette was
opened from, so the list always fits what is on screen. Command names are our own words, but a
demo agent's name is agent-controlled text, so every prompt goes through `safe.text`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from textual.command import DiscoveryHit, Hit, Hits, Provider

from explorer.tui import safe


class PaletteCommand(NamedTuple):
    """One palette entry: `name` in "verb: object" form, what it does, and the callback."""

    name: str
    help: str
    run: Callable[[], Any]


def screen_commands(screen: Any) -> list[PaletteCommand]:
    provider = getattr(screen, "palette_commands", None)
    return list(provider()) if callable(provider) else []


class ExplorerCommands(Provider):
    """App commands plus the commands of the screen the palette was opened from."""

    def _commands(self) -> Iterable[PaletteCommand]:
        app_commands = getattr(self.app, "palette_commands", None)
        yield from screen_commands(self.screen)
        if callable(app_commands):
            yield from app_commands(self.screen)

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(
                safe.text(command.name, 120), command.run, text=command.name, help=command.help
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(safe.visible(command.name, 120)),
                    command.run,
                    text=command.name,
                    help=command.help,
                )
