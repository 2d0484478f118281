"""What the served explorer sends a browser besides the terminal: its page, its files, its refusals.

The page is the explorer's own (`static/page.html`), not textual-serve's template, which links
a font from fonts.googleapis.com on every view: its terminal font is textual-serve's Roboto Mono,
served from the installed package. The files a page may load are listed by name (`STATIC`); there
is no directory listing and no path from a request reaches the file system.

Every response carries `HEADERS`: a Content-Security-Policy that lets the page load scripts,
styles, fonts and its WebSocket from its own origin only and be framed by no one (another page
cannot overlay it and lead the user's clicks), no referrer, no content sniffing, no caching.
Downloads get `DOWNLOAD_HEADERS` on top: always an attachment, in a sandbox, so a delivered file
never runs as a page of this origin.

The refusal pages are plain HTML with nothing to load: they say what happened and what to do.
"""

from __future__ import annotations

import html
from importlib.resources import files
from pathlib import Path
from string import Template
from urllib.parse import quote

CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",  # xterm.js sets element styles
        "font-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",  # the page's own WebSocket (ws: on the same host and port)
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    )
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
DOWNLOAD_CSP = "default-src 'none'; sandbox"

FONTS = ("RobotoMono-VariableFont_wght.ttf", "RobotoMono-Italic-VariableFont_wght.ttf")  # textual-serve's
DEFAULT_FONT_SIZE = 16
FONT_SIZES = range(8, 41)


def _textual_serve_static() -> Path:
    import textual_serve

    return Path(textual_serve.__file__).resolve().parent / "static"


def _own_static() -> Path:
    return Path(str(files("explorer.web") / "static"))


def static_files() -> dict[str, tuple[Path, str]]:
    """Every file a page may load, by the path after `/static/`: (file, content type)."""
    theirs, ours = _textual_serve_static(), _own_static()
    script, style, font = "text/javascript; charset=utf-8", "text/css; charset=utf-8", "font/ttf"
    return {
        "js/textual.js": (theirs / "js" / "textual.js", script),
        "css/xterm.css": (theirs / "css" / "xterm.css", style),
        **{f"fonts/{name}": (theirs / "fonts" / name, font) for name in FONTS},
        "page.js": (ours / "page.js", script),
        "page.css": (ours / "page.css", style),
    }


def font_size(text: str | None) -> int:
    """The `?fontsize=N` a user may add to the page's address, kept within reason."""
    try:
        size = int(text or "")
    except ValueError:
        return DEFAULT_FONT_SIZE
    return size if size in FONT_SIZES else DEFAULT_FONT_SIZE


def page(size: int = DEFAULT_FONT_SIZE) -> str:
    template = Template((_own_static() / "page.html").read_text(encoding="utf-8"))
    return template.substitute(font_size=int(size))


def _notice(title: str, *paragraphs: str) -> str:
    body = "".join(f"<p>{html.escape(text)}</p>" for text in paragraphs)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{font:16px/1.5 monospace;margin:3em auto;max-width:40em;padding:0 1em;"
        "background:#0c181f;color:#eee}h1{font-size:1.3em}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )


def forbidden_page() -> str:
    return _notice(
        "Interview Explorer: not allowed",
        "This address needs the one `interview-explorer serve` printed, with its token.",
        "Open that address (copy it from the terminal where serve runs), or restart serve to get a new one.",
    )


def full_page(limit: int) -> str:
    sessions = "session" if limit == 1 else "sessions"
    return _notice(
        "Interview Explorer: too many sessions",
        f"{limit} {sessions} of the explorer are open already, as many as this server allows "
        f"(serve --max-sessions {limit}).",
        "Close a tab that has the explorer open, then reload this page.",
    )


def full_message(limit: int) -> bytes:
    """What a WebSocket over the limit is told in its terminal before it is closed."""
    return (
        f"\r\nInterview Explorer: {limit} sessions are open already, as many as this server allows "
        f"(serve --max-sessions {limit}).\r\n"
        "Close a tab that has the explorer open, then reload this page.\r\n"
    ).encode()


def content_disposition(name: str) -> str:
    """`attachment` with the file name both as plain ASCII and as RFC 5987 UTF-8."""
    ascii_name = name.encode("ascii", "replace").decode("ascii").replace('"', "_").replace("\\", "_")
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"
