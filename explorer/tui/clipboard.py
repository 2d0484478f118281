"""Copy a pointer or a value: OSC 52 to the terminal, plus a fallback that does not need it.

OSC 52 works over SSH and in most terminals but is silently dropped by some (and by tmux
without `set-clipboard on`), and the app cannot tell. So every copy also goes to a local
clipboard tool when one is installed (wl-copy, xclip, xsel, pbcopy, clip.exe), and otherwise
to a file in the explorer's home; the toast says which, so the user always knows where the
text went.

Served to a browser (`interview-explorer serve`), none of that applies: the server's clipboard
tools and home are not the browser user's, and the browser's terminal ignores OSC 52. The text
reaches the browser as a small download (Textual's `deliver_text`) instead, and nothing is
written on the server.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.tui import safe

if TYPE_CHECKING:
    from explorer.tui.app import ExplorerApp

_TOOLS: tuple[tuple[str, ...], ...] = (
    ("wl-copy",),
    ("xclip", "-selection", "clipboard"),
    ("xsel", "--clipboard", "--input"),
    ("pbcopy",),
    ("clip.exe",),
)


def _tool_copy(text: str) -> str | None:
    for command in _TOOLS:
        if command[0] in ("wl-copy",) and not os.environ.get("WAYLAND_DISPLAY"):
            continue
        if command[0] in ("xclip", "xsel") and not os.environ.get("DISPLAY"):
            continue
        if shutil.which(command[0]) is None:
            continue
        try:
            subprocess.run(
                command,
                input=text.encode("utf-8"),
                timeout=2,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        return command[0]
    return None


def copy(app: ExplorerApp, text: str, what: str) -> None:
    """Copy `text` for the user of `app`; a toast says where it went. `what` names it (`pointer`)."""
    if app.is_web:
        name = f"copied-{re.sub(r'[^a-z0-9]+', '-', what.lower()).strip('-') or 'text'}.txt"
        app.deliver_text(io.StringIO(text), save_filename=name, mime_type="text/plain", encoding="utf-8")
        app.notify(
            f"copied {what}: {name} downloads in your browser\n{safe.visible(text, 120)}",
            title="copy",
            markup=False,
        )
        return
    from explorer.config.file import home_dir

    app.copy_to_clipboard(text)
    try:
        home = home_dir(app.context.home)
    except OSError:
        home = Path.cwd()
    how = fallback_copy(text, home)
    app.notify(f"copied {what} (OSC 52; also {how})\n{safe.visible(text, 120)}", title="copy", markup=False)


def fallback_copy(text: str, home: Path) -> str:
    """Copy without the terminal; returns how (a tool name or the file written)."""
    tool = _tool_copy(text)
    if tool is not None:
        return tool
    path = home / "clipboard.txt"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        return f"nothing else ({exc.strerror or exc})"
    return str(path)
