"""Where the explorer keeps its files: one home directory, chosen once.

The platformdirs user data dir by default, or `--home DIR` / `INTERVIEW_EXPLORER_HOME`, so tests
and CI always point it at a temporary folder. Its own module, below everything that stores a
file, so the history (`explorer.store`) finds its folder without reading the config file
(`explorer.config.file`, which plans interviews and sits above the store).
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
    path.mkdir(parents=True, exist_ok=True)
    return path
