"""The footer every screen shows: its keys, cut to the terminal's width, never losing quit or help.

Textual's footer lays out every shown binding in one row and lets the row run off the right
edge, so on an 80-column terminal the interview screen lost `^q Quit` and `f1 Help`, the two
keys a newcomer needs most (the README promises every footer shows quit). This footer measures
each key as Textual draws it and, when the row is too wide, leaves out the screen's keys from
the end of its list (screens list their keys most useful first) until the rest fits; quit, help
and the palette always stay. A key left out is still bound, and listed by F1 and by the palette
(ctrl+p). The row is fitted again whenever the width changes, and drawn from the first frame
even while the app has no focus (a browser tab that has not been clicked yet).
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# Binding ids (and the actions behind them) that every footer keeps, whatever the width; the
# app binds both with priority, so they work on dialogs too.
KEPT_IDS = frozenset({"app.quit", "app.help"})
KEPT_ACTIONS = frozenset({"quit", "app.quit", "toggle_help", "app.toggle_help"})


def key_width(key_display: str, description: str) -> int:
    """Cells a FooterKey takes: the key padded one each side, the description one on the right."""
    return cell_len(key_display) + 2 + (cell_len(description) + 1 if description else 0)


def fitted(widths: list[int], kept: list[bool], room: int) -> list[bool]:
    """Which keys to show: all when they fit in `room`, else drop unkept keys from the end."""
    shown = [True] * len(widths)
    total = sum(widths)
    for index in reversed(range(len(widths))):
        if total <= room:
            break
        if not kept[index]:
            shown[index] = False
            total -= widths[index]
    return shown


class ExplorerFooter(Footer):
    """A Footer whose row fits the width: quit, help and the palette always shown."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fitted_width = 0  # the width the row was last fitted to
        self._width = 0  # the width of the latest resize (the layout's size may lag behind it)

    def _room(self) -> int:
        return self._width or self.size.width or self.screen.size.width or self.app.size.width

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        self._fitted_width = room = self._room()
        active = self.screen.active_bindings
        seen: set[str] = set()
        rows: list[tuple[Any, bool, str]] = []
        for _node, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in seen:
                seen.add(binding.action)
                rows.append((binding, enabled, tooltip))
        # A dialog's bindings stop at the dialog, but the app's priority keys (quit, help) still
        # work there: they are shown too.
        for _key, binding in self.app._bindings:
            if binding.id in KEPT_IDS and binding.priority and binding.show and binding.action not in seen:
                seen.add(binding.action)
                rows.append((binding, True, binding.tooltip))
        palette = self._palette(active)
        if palette is not None:
            room -= key_width(palette[1], palette[0].description) + 1  # and its border
        displays = [self.app.get_key_display(binding) for binding, _e, _t in rows]
        widths = [key_width(d, b.description) for d, (b, _e, _t) in zip(displays, rows, strict=True)]
        kept = [b.id in KEPT_IDS or b.action in KEPT_ACTIONS for b, _e, _t in rows]
        shown = fitted(widths, kept, room)
        for (binding, enabled, tooltip), display, show in zip(rows, displays, shown, strict=True):
            if show:
                yield FooterKey(
                    binding.key,
                    display,
                    binding.description,
                    binding.action,
                    disabled=not enabled,
                    tooltip=tooltip,
                ).data_bind(compact=Footer.compact)
        if palette is not None:
            binding, display, enabled = palette
            yield FooterKey(
                binding.key,
                display,
                binding.description,
                binding.action,
                classes="-command-palette",
                disabled=not enabled,
                tooltip=binding.tooltip or binding.description,
            )

    def _palette(self, active: Any) -> tuple[Any, str, bool] | None:
        if not (self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE):
            return None
        found = active.get(self.app.COMMAND_PALETTE_BINDING)
        if found is None:
            return None
        _node, binding, enabled, _tooltip = found
        return binding, self.app.get_key_display(binding), enabled

    def bindings_changed(self, screen: Screen) -> None:
        """Draw the keys as soon as the screen has them, focused app or not. Textual's footer waits
        for the app to have focus, and a browser tab (`serve`) starts without it: its first frame
        had no footer at all until the first click or key."""
        self._bindings_ready = True
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self.recompose)

    def on_resize(self, event: events.Resize) -> None:
        self._width = event.size.width
        if self._bindings_ready and event.size.width != self._fitted_width:
            self.call_after_refresh(self.recompose)
