"""Signing in to an agent that requires authentication: type the secret, use it at once.

When an interview ends in `auth_required` (or `auth_failed`), the interview screen says which
schemes the card declares and offers this dialog (`a`); when the credential the run sent was
refused (a wrong token, a client secret the token endpoint turned down), its note says that
instead (`auth_banner`), so a wrong secret never reads as if nothing had been typed. It asks
for what the card's first way in the explorer can take needs: a bearer token, an API key, or
an OAuth 2.0 client id and secret. Each secret goes into a password field (drawn as dots, never
copied out) and, on "Sign in", is handed back as `explorer.config.credentials.TypedSecrets`: the
app keeps it in memory for the session (`AppContext.sign_in`) and replays the interview with it
at once. A running program cannot see a variable exported in another shell, which is why the
dialog asks for the value itself.

Nothing typed here is ever written. For next time the dialog offers to save an `[agents.NAME]`
config entry holding `env:` references named after the agent (it shows the exact text, the file
it goes to and the variable to export before the next session); only the reference is saved,
never the value. Its checkbox is empty until ticked (`TickBox`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Static

from explorer.config.credentials import CredentialError, Credentials, TypedSecrets, entry_text, suggest
from explorer.core.auth_findings import TOKEN_PURPOSE, refused_for_auth
from explorer.core.run import REDACTED
from explorer.core.security import Security, read_security
from explorer.core.strict_json import StrictJsonError
from explorer.core.strict_json import parse as strict_parse
from explorer.tui import safe
from explorer.tui.app import context_of
from explorer.tui.errors import ExplorerError
from explorer.tui.widgets.footer import ExplorerFooter

# What each secret setting is called in the dialog.
SECRET_LABELS = {
    "bearer": "bearer token",
    "api_key": "API key",
    "oauth2_client_secret": "OAuth 2.0 client secret",
}


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


def refused_credential(run: Any) -> str | None:
    """Why the credential this run sent was refused, in words, or None when it sent none (or
    none was refused): the token endpoint's refusal (`auth_failed`, a wrong client secret), else
    an interview call answered 401 or 403 although it carried a credential (a wrong token or API
    key; values are recorded only as `<redacted>`, so a redacted header is a credential sent)."""
    failed = next((f for f in run.report.get("findings", ()) if f.get("code") == "auth_failed"), None)
    if failed is not None:
        return str(failed.get("detail") or "the token endpoint gave no token")
    for exchange in run.exchanges:
        if exchange.purpose == TOKEN_PURPOSE or not refused_for_auth(exchange):
            continue
        if any(value == REDACTED for _name, value in exchange.request_headers):
            return f"the agent answered HTTP {exchange.status} to the credential sent"
    return None


def auth_banner(run: Any) -> Content:
    """The interview screen's note on an agent that wants authentication: what the card declares
    and how to sign in, or, when the credential sent was refused, that it was, and how to try
    another (the note said "authentication required" either way, so a wrong secret looked as if
    nothing had been typed)."""
    words = safe.text(declared_words(card_security(run)), 600, single_line=False)
    refused = refused_credential(run)
    if refused is None:
        return Content.assemble(
            ("authentication required: ", "bold"),
            words,
            (
                "\npress a to sign in: type the secret (kept in memory for this session) and "
                "the interview runs again",
                "dim",
            ),
        )
    return Content.assemble(
        ("✗ sign-in refused: ", "bold"),
        safe.text(refused, 600, single_line=False),
        "\n",
        words,
        ("\npress a to sign in again with another secret; the interview runs again", "dim"),
    )


FIRST_FIELD = "#auth-client, SecretInput"  # where typing goes first: the client id, else the secret


class SignIn(NamedTuple):
    """What the dialog hands back: the typed credentials, and where an entry was saved (or None)."""

    secrets: TypedSecrets
    saved: str | None
    exports: tuple[str, ...]  # the variables the saved entry names, to export before next time


class SecretInput(Input):
    """A password field whose text is never copied out (cut and copy do nothing; paste works)."""

    HELP = """
## Secret

Type or paste the secret. It is drawn as dots, never copied out of the field, kept in this
session's memory only and sent only where the card's scheme says (the agent's JSON-RPC origin;
an OAuth 2.0 client secret only to the token URL). It is never written to the history, an
export, the config file or a screenshot.
"""

    def action_copy(self) -> None:
        self.notify("a secret is never copied", severity="warning", markup=False)

    def action_cut(self) -> None:
        self.action_copy()


class TickBox(Checkbox):
    """A checkbox whose box is empty until it is ticked.

    Textual draws an `X` in the box ticked or not and tells the two apart by colour alone, so
    without colour (NO_COLOR, a monochrome terminal, some themes) an unticked "also save a config
    entry" read as ticked, and the user waited for an entry that was never saved."""

    BUTTON_INNER = " "
    TICKED = "X"

    def __init__(self, label: str, value: bool = False, **kw: Any) -> None:
        super().__init__(label, value, **kw)
        self.BUTTON_INNER = self.TICKED if value else " "

    def watch_value(self) -> None:
        self.BUTTON_INNER = self.TICKED if self.value else " "
        super().watch_value()


class SignInScreen(ModalScreen[SignIn | None]):
    """Asks for the secret the card's scheme needs; dismisses with a SignIn, or None."""

    CSS_PATH = "auth.tcss"
    # The first field has focus as soon as the dialog is composed, before any key typed right
    # after the one that opened it is handed on (a focus() in on_mount would come later).
    AUTO_FOCUS = FIRST_FIELD
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="auth.cancel"),
    ]

    def __init__(self, security: Security, url: str, name: str, agent: str = "") -> None:
        super().__init__()
        self.security = security
        self.url = url
        self.default_name = name
        self.agent = agent or url
        # The settings the card's first usable way needs, with env: references named after the agent.
        self.way = suggest(security, name or "agent")

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="auth-box"):
            yield Static(
                Content.assemble(("Sign in to ", "bold"), safe.text(self.agent, 120, "bold")), id="auth-title"
            )
            yield Static(safe.text(declared_words(self.security), 600, single_line=False), id="auth-declared")
            if self.way is None:
                yield Static(Content("none of the declared schemes is one the explorer can satisfy"))
            else:
                needed = self.way.settings()
                if "oauth2_client_id" in needed:
                    yield Input(placeholder="OAuth 2.0 client id (not a secret)", id="auth-client")
                for setting, label in SECRET_LABELS.items():
                    if setting in needed:
                        yield SecretInput(password=True, placeholder=label, id=f"secret-{setting}")
                yield Static(
                    Content.styled(
                        "kept in this session's memory only: never written, shown, recorded or exported",
                        "dim",
                    ),
                    id="auth-memory",
                )
                yield TickBox("also save a config entry for next time (env: references only)", id="auth-save")
                yield Input(value=self.default_name, placeholder="agent name for the config", id="auth-name")
                yield Static(id="auth-preview")
            with Horizontal(id="auth-buttons"):
                yield Button("Sign in", id="sign-in", variant="primary")
                yield Button("Cancel", id="cancel")
        yield ExplorerFooter()

    def on_mount(self) -> None:
        blink = context_of(self).cursor_blink
        for field in self.query(Input).results(Input):
            field.cursor_blink = blink
        if self.focused is None:  # composed while the app had no focus (a browser tab in the background)
            first = next(iter(self.query(FIRST_FIELD).results(Input)), None)
            if first is not None:
                self.set_focus(first)
        self._update()

    def on_input_changed(self, _event: Input.Changed) -> None:
        self._update()

    def on_checkbox_changed(self, _event: Checkbox.Changed) -> None:
        self._update()

    # ---- what would be used and saved ---------------------------------------------------------
    def _saving(self) -> bool:
        return bool(self.query("#auth-save")) and self.query_one("#auth-save", Checkbox).value

    def _client_id(self) -> str | None:
        found = self.query("#auth-client").results(Input)
        value = next((i.value.strip() for i in found), "")
        return value or None

    def _typed(self) -> TypedSecrets | None:
        """The credentials as typed, or None while one is missing."""
        if self.way is None:
            return None
        values: dict[str, str] = {}
        for field in self.query(SecretInput).results(SecretInput):
            if not field.value:
                return None
            values[(field.id or "").removeprefix("secret-")] = field.value
        if "oauth2_client_secret" in values:
            client = self._client_id()
            if client is None:
                return None
            values["oauth2_client_id"] = client
        try:
            return TypedSecrets(**values)
        except CredentialError:
            return None

    def _entry(self) -> tuple[str, Credentials] | None:
        """The config entry to save: its name and references (None without a usable name)."""
        name = self.query_one("#auth-name", Input).value.strip()
        credentials = suggest(self.security, name or "agent", self._client_id())
        return (name, credentials) if name and credentials is not None else None

    def _update(self) -> None:
        saving = self._saving()
        ready = self._typed() is not None and (not saving or self._entry() is not None)
        self.query_one("#sign-in", Button).disabled = not ready
        for widget in self.query("#auth-name, #auth-preview"):
            widget.display = saving
        if saving:
            self._preview()

    def _preview(self) -> None:
        preview = self.query_one("#auth-preview", Static)
        entry = self._entry()
        if entry is None:
            preview.update(Content.styled("give the entry a name", "dim"))
            return
        name, credentials = entry
        text = entry_text(name, self.url, credentials)
        from explorer.config.file import config_path

        where = f"added to {config_path(context_of(self).home)} on Sign in"
        hint = "before the next session: export " + ", ".join(_exports(credentials)) + " (the secret)"
        preview.update(
            Content.assemble(
                safe.text(text, 2000, single_line=False),
                ("\n", ""),
                safe.text(where, 400),
                ("\n" + hint, "dim"),
            )
        )

    # ---- done ------------------------------------------------------------------------------------
    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "sign-in":
            self._sign_in()
        else:
            self.action_cancel()

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self._sign_in()

    def _sign_in(self) -> None:
        typed = self._typed()
        if typed is None:
            fields = self.query("#auth-client, SecretInput").results(Input)
            missing = next((f for f in fields if not f.value), None)
            if missing is not None:
                missing.focus()
            return
        saved: str | None = None
        exports: tuple[str, ...] = ()
        if self._saving():
            entry = self._entry()
            if entry is None:
                self.query_one("#auth-name", Input).focus()
                return
            name, credentials = entry
            try:
                path = context_of(self).save_agent(name, entry_text(name, self.url, credentials))
            except ExplorerError as exc:
                self.notify(str(exc), severity="error", markup=False)
                return
            saved, exports = str(path), _exports(credentials)
        self._forget_fields()
        self.dismiss(SignIn(typed, saved, exports))

    def _forget_fields(self) -> None:
        """The fields let go of the secret as the dialog closes (the app holds the one copy)."""
        for field in self.query(SecretInput).results(SecretInput):
            field.value = ""

    def action_cancel(self) -> None:
        self._forget_fields()
        self.dismiss(None)


def _exports(credentials: Credentials) -> tuple[str, ...]:
    return tuple(str(ref)[4:] for ref in credentials.to_config().values() if str(ref).startswith("env:"))
