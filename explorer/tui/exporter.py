"""A run as a file: the export formats a screen offers, the file name, the text, the file written.

The formats and their text are `explorer.store.export`'s (shared with the headless `export`
command); what is the TUI's own is the file name, derived from the agent's name slugged (agent
text never chooses a path) and the run id (or, for an unrecorded run, the session clock's
moment), and the rule that a file of that name is never overwritten. The functions hold no
state: `AppContext` passes the export directory and the clock, which a test or a picture sets.
What they use is imported on first use, so startup pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.tui.errors import ExplorerError

if TYPE_CHECKING:
    from explorer.core.run import Run


def export_formats(run: Run | None = None) -> list[tuple[str, str]]:
    """(key, label) of every export format, in the store's order; for a signed run, also its
    attestation alone (the runner's DSSE envelope)."""
    from explorer.store.export import ATTESTATION_FORMAT, EXPORT_FORMATS

    formats = [(key, spec.label) for key, spec in EXPORT_FORMATS.items()]
    if run is not None and run.attestation is not None:
        formats.append((ATTESTATION_FORMAT.name, ATTESTATION_FORMAT.label))
    return formats


def write_export(run: Run, fmt: str, folder: Path, run_id: int | None, clock: Callable[[], datetime]) -> Path:
    """Write the run in `fmt` (a key of the store's formats) into `folder`; returns the path. A
    file of that name is never overwritten: the new one gets a number (`...-run3-2.md`)."""
    from explorer.store.export import ExportError
    from explorer.store.export import write_export as write

    try:
        return write(run, fmt, folder / export_name(run, fmt, run_id, clock), number=True)
    except ExportError as exc:
        raise ExplorerError(str(exc)) from None


def export_file(
    run: Run, fmt: str, run_id: int | None, clock: Callable[[], datetime]
) -> tuple[str, str, str]:
    """The export as (file name, text, media type), written nowhere: what a browser session
    delivers as a download. ExplorerError when the format does not apply."""
    from explorer.store.export import ALL_FORMATS, ExportError
    from explorer.store.export import export as export_text

    name = export_name(run, fmt, run_id, clock)
    try:
        return name, export_text(run, fmt), ALL_FORMATS[fmt].media_type
    except ExportError as exc:
        raise ExplorerError(str(exc)) from None


def export_name(run: Run, fmt: str, run_id: int | None, clock: Callable[[], datetime]) -> str:
    """`{agent}-run{id}{suffix}`: the agent's name slugged, so agent text chooses no path; an
    unrecorded run is named by the moment instead (`{agent}-20260101T120000Z.md`)."""
    from explorer.core.view import ReportView
    from explorer.store.export import ALL_FORMATS

    spec = ALL_FORMATS.get(fmt)
    if spec is None:
        raise ExplorerError(f"unknown export format {fmt!r}")
    stem = _slug(ReportView.of(run.report).agent_name) or "agent"
    tail = f"run{run_id}" if run_id is not None else clock().strftime("%Y%m%dT%H%M%SZ")
    return f"{stem}-{tail}{spec.suffix}"


def _slug(text: str) -> str:
    out = "".join(ch.lower() if ch.isascii() and ch.isalnum() else "-" for ch in text)
    return "-".join(part for part in out.split("-") if part)[:40]
