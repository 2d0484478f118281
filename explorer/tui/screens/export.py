"""Export a run as JSON, Markdown or HTML into a directory the user can change.

The formats come from `explorer.store.export` (shared with the headless `export` command); the
file name is derived from the agent's name (slugged, so agent text cannot choose a path) and
the run id. A toast names the path written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from explorer.tui.context import ExplorerError

if TYPE_CHECKING:
    from explorer.core.run import Run


class ExportScreen(ModalScreen[Path | None]):
    """Pick a format (and a directory); writes the file and dismisses with its path."""

    CSS_PATH = "export.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="export.close"),
    ]

    def __init__(self, run: Run, run_id: int | None) -> None:
        super().__init__()
        self.run = run
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        context = self.app.context  # type: ignore[attr-defined]
        with Vertical(id="export-box"):
            yield Static(Content.styled("Export this run", "bold"))
            yield Static(Content.styled("directory", "dim"))
            field = Input(str(context.export_dir), id="export-dir")
            field.cursor_blink = context.cursor_blink
            yield field
            with Horizontal(id="export-buttons"):
                for fmt, label in context.export_formats(self.run):
                    yield Button(label, id=f"export-{fmt}")
            yield Static(id="export-error")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        fmt = (event.button.id or "").removeprefix("export-")
        context = self.app.context  # type: ignore[attr-defined]
        directory = Path(self.query_one("#export-dir", Input).value.strip() or ".").expanduser()
        try:
            path = context.export(self.run, fmt, self.run_id, directory=directory)
        except ExplorerError as exc:
            self.query_one("#export-error", Static).update(Content(str(exc)))
            return
        except Exception as exc:
            self.query_one("#export-error", Static).update(Content(f"export failed: {exc}"))
            return
        self.app.notify(f"exported to {path}", title="export", markup=False)
        self.dismiss(path)

    def action_close(self) -> None:
        self.dismiss(None)
