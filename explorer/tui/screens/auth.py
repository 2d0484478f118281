"""Saving a config agent entry for an agent that requires authentication.

When an interview ends in `auth_required`, the interview screen says which schemes the card
declares and offers this dialog: it proposes an `[agents.NAME]` entry whose credentials are
`env:` references named after the agent (a client id for OAuth 2.0 is asked for, it is not a
secret), shows the exact text that will be added to the config file, and writes it only on an
explicit save. The secret itself is never asked for, shown or written: the dialog ends by
naming the environment variables to export before asking again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from explorer.core.security import Security, read_security
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.credentials import Credentials, entry_text, suggest
from explorer.tui import safe
from explorer.tui.context import ExplorerError


def card_security(run: Any) -> Security:
    """The security declaration of the card a run read (empty when there is none)."""
    card = next((e for e in reversed(run.exchanges) if e.purpose == "card"), None)
    try:
        doc = strict_parse(card.response_body) if card is not None and card.response_body else None
    except StrictJsonError:
        doc = None
    return read_security(doc) if isinstance(doc, Mapping) else Security()


def declared_words(security: Security) -> str:
    """The declared schemes in words, for the interview screen's note."""
    if not security.schemes:
        return "the card declares no security scheme"
    return "the card declares " + "; ".join(s.describe() for s in security.schemes.values())


class AuthEntryScreen(ModalScreen[str | None]):
    """Proposes a config agent entry with env: references; dismisses with the saved path or None."""

    CSS_PATH = "auth.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="auth.cancel"),
    ]

    def __init__(self, security: Security, url: str, name: str) -> None:
        super().__init__()
        self.security = security
        self.url = url
        self.default_name = name
        self.oauth2 = any(s.kind == "oauth2" and s.supported for s in security.schemes.values())

    def compose(self) -> ComposeResult:
        with Vertical(id="auth-box"):
            yield Static(Content.styled("Save a config entry for this agent", "bold"))
            yield Static(safe.text(declared_words(self.security), 600, single_line=False), id="auth-declared")
            yield Input(value=self.default_name, placeholder="agent name", id="auth-name")
            if self.oauth2:
                yield Input(placeholder="OAuth 2.0 client id (not a secret)", id="auth-client")
            yield Static(id="auth-preview")
            with Horizontal(id="auth-buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#auth-name", Input).focus()
        self._preview()

    def on_input_changed(self, _event: Input.Changed) -> None:
        self._preview()

    def _proposal(self) -> tuple[str, Credentials | None]:
        name = self.query_one("#auth-name", Input).value.strip()
        client = self.query_one("#auth-client", Input).value.strip() if self.oauth2 else None
        return name, suggest(self.security, name or "agent", client or None)

    def _preview(self) -> None:
        name, credentials = self._proposal()
        preview = self.query_one("#auth-preview", Static)
        save = self.query_one("#save", Button)
        if credentials is None:
            preview.update(Content("none of the declared schemes is one the explorer can satisfy"))
            save.disabled = True
            return
        save.disabled = not name
        text = entry_text(name or "NAME", self.url, credentials)
        exports = [ref[4:] for ref in credentials.to_config().values() if str(ref).startswith("env:")]
        hint = "then export " + ", ".join(exports) + " before interviewing it" if exports else ""
        preview.update(Content.assemble(safe.text(text, 2000, single_line=False), ("\n" + hint, "dim")))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self._save()
        else:
            self.dismiss(None)

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self._save()

    def _save(self) -> None:
        name, credentials = self._proposal()
        if not name or credentials is None:
            return
        try:
            path = self.app.context.save_agent(name, entry_text(name, self.url, credentials))  # type: ignore[attr-defined]
        except ExplorerError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self.dismiss(str(path))

    def action_cancel(self) -> None:
        self.dismiss(None)
