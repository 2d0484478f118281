"""Where the explorer keeps its files: one home directory, chosen once.

The platformdirs user data dir by default, or `--home DIR` / `INTERVIEW_EXPLORER_HOME`, so tests
and CI always point it at a temporary folder. Its own module, below everything that stores a
file, so the history (`explorer.store`) finds its folder without reading the config file
(`explorer.config.file`, which plans interviews and sits above the store).

What the home holds is the user's alone (every agent's raw answers, runner keys), so each folder
the explorer creates for it is made private, 0700 (`private_folder`); a folder that already
exists keeps the mode its owner gave it.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "interview-explorer"
HOME_ENV = "INTERVIEW_EXPLORER_HOME"


def home_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The directory that holds history (and config, when explicit); created on demand."""
    chosen = explicit or os.environ.get(HOME_ENV)
    if chosen:
        path = Path(chosen).expanduser()
    else:
        import platformdirs  # lazily: headless commands with --home never pay for it

        path = Path(platformdirs.user_data_dir(APP_NAME))
    private_folder(path)
    return path


def private_folder(path: Path) -> None:
    """Create `path` and any missing folder above it, each 0700 whatever the umask (`mkdir -p`
    would give the parents the umask's mode); folders already there are left as they are.
    Raises OSError."""
    missing = [folder for folder in (path, *path.parents) if not folder.is_dir()]
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue  # made meanwhile by another process, or a file in the way (said above)
        os.chmod(folder, 0o700)  # mkdir's mode is masked by the umask
