"""Export a run as JSON, Markdown or HTML: into a directory in a terminal, as a download in a browser.

The formats come from `explorer.store.export` (shared with the headless `export` command); the
file name is derived from the agent's name (slugged, so agent text cannot choose a path) and
the run id. In a terminal the user can change the directory and a toast names the path written;
the dialog starts in the folder exported to last (`explorer.tui.export_folder`: kept for the
session and the next ones), else in the user's documents, never in the current directory.
Served to a browser (`interview-explorer serve`, `App.is_web`), the directory field is not
offered at all: the file goes to the browser as a download (Textual's `deliver_text`), so a
browser user never chooses, or writes to, a path on the server. `export_run` is that one rule,
used by this dialog and by the interview screen's direct exports alike.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from explorer.tui.app import ExplorerApp, context_of, explorer_of
from explorer.tui.errors import ExplorerError

if TYPE_CHECKING:
    from explorer.core.run import Run


def export_run(
    app: ExplorerApp, run: Run, fmt: str, run_id: int | None, directory: Path | None = None
) -> str:
    """Export `run` in `fmt`: delivered to the browser when served, else written into `directory`
    (the export directory by default). Returns what the toast says; ExplorerError if it fails."""
    context = app.context
    if app.is_web:
        name, text, media_type = context.export_file(run, fmt, run_id)
        app.deliver_text(io.StringIO(text), save_filename=name, mime_type=media_type, encoding="utf-8")
        return f"{name}: sent to the browser as a download"
    return f"exported to {context.export(run, fmt, run_id, directory=directory)}"


class ExportScreen(ModalScreen[str | None]):
    """Pick a format (and, in a terminal, a directory); exports and dismisses with the toast text."""

    CSS_PATH = "export.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="export.close"),
    ]

    def __init__(self, run: Run, run_id: int | None) -> None:
        super().__init__()
        self.run = run
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        context = context_of(self)
        with Vertical(id="export-box"):
            yield Static(Content.styled("Export this run", "bold"))
            if self.app.is_web:
                yield Static(Content.styled("the file downloads in your browser", "dim"))
            else:
                yield Static(Content.styled("directory", "dim"))
                field = Input(str(context.export_dir), id="export-dir")
                field.cursor_blink = context.cursor_blink
                yield field
            with Horizontal(id="export-buttons"):
                for fmt, label in context.export_formats(self.run):
                    yield Button(label, id=f"export-{fmt}")
            yield Static(id="export-error")

    def on_mount(self) -> None:
        if self.app.is_web:
            self.query_one("#export-buttons Button", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        fmt = (event.button.id or "").removeprefix("export-")
        directory = None
        if not self.app.is_web:
            directory = Path(self.query_one("#export-dir", Input).value.strip() or ".").expanduser()
        try:
            said = export_run(explorer_of(self), self.run, fmt, self.run_id, directory)
        except ExplorerError as exc:
            self.query_one("#export-error", Static).update(Content(str(exc)))
            return
        except Exception as exc:
            self.query_one("#export-error", Static).update(Content(f"export failed: {exc}"))
            return
        if directory is not None:  # the next export starts here, this session and the next ones
            context_of(self).choose_export_dir(directory)
        self.app.notify(said, title="export", markup=False)
        self.dismiss(said)

    def action_close(self) -> None:
        self.dismiss(None)
