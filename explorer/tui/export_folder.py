"""Where the export dialog starts: the folder exported to last, else the user's documents.

The dialog used to start in the current directory, which for a newcomer is the clone of this
repository, and forgot the folder chosen as soon as it closed. A folder chosen is now kept for
the session (`AppContext.export_dir`) and, in one line of a small file in the explorer's home
(`LAST_FOLDER_FILE`), for the sessions after it; with nothing kept (or a kept folder since
removed), the dialog starts in the user's Documents folder, or their home folder when there is
none. Remembering is best effort: a home that cannot be written only means the next session
starts in the documents again, never a failed export.
"""

from __future__ import annotations

from pathlib import Path

from explorer.home import home_dir

LAST_FOLDER_FILE = "last-export-folder"  # in the explorer's home: the folder exported to last


def usual_folder() -> Path:
    """The user's Documents folder when there is one, else their home folder."""
    home = Path.home()
    documents = home / "Documents"
    return documents if documents.is_dir() else home


def _kept(home: Path | None) -> Path:
    return home_dir(home) / LAST_FOLDER_FILE


def starting_folder(home: Path | None = None) -> Path:
    """The folder exported to last (in any session of this explorer home), while it still exists;
    else `usual_folder()`."""
    try:
        kept = Path(_kept(home).read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError, ValueError):
        return usual_folder()
    return kept if kept.is_absolute() and kept.is_dir() else usual_folder()


def remember(home: Path | None, folder: Path) -> None:
    """Keep `folder` (made absolute) as the one the next session's dialog starts in."""
    try:
        _kept(home).write_text(f"{folder.resolve()}\n", encoding="utf-8")
    except OSError:
        pass  # best effort (module docstring)
