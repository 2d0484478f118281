"""Shared fixtures: a temporary explorer home for every test, and paths to the shared vectors."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
VECTORS = SHARED / "vectors"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test ever reads or writes the user's real history or config."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("INTERVIEW_EXPLORER_HOME", str(home))
    monkeypatch.setenv("NO_COLOR", "1")
    return home
