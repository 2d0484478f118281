"""A history holds every agent's raw answers: its file is the user's alone, and so are its folders.

The SQLite file, its -wal and -shm files are 0600 and every folder the explorer creates for them
0700, whatever the umask (the test runs under umask 0 too, where Python and SQLite would otherwise
make them world-writable); a folder that was already there keeps its own mode. Read with os.stat,
through the store and through the command a user runs.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.store.sqlite import History
from explorer.store.sqlite_schema import HISTORY_FILE
from tests.support.runs import make_run


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture(params=[0o022, 0o000], ids=["umask 022", "umask 000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_a_new_history_file_and_its_folders_are_private(tmp_path: Path, umask: int) -> None:
    tmp_path.chmod(0o755)
    path = tmp_path / "a" / "b" / HISTORY_FILE
    with History.open_file(path) as history:
        history.record(make_run())
        files = [path, path.with_name(HISTORY_FILE + "-wal"), path.with_name(HISTORY_FILE + "-shm")]
        assert all(f.exists() for f in files)
        assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
    assert mode(tmp_path / "a") == 0o700 and mode(tmp_path / "a" / "b") == 0o700
    assert mode(tmp_path) == 0o755  # a folder that was there keeps its mode


def test_the_history_in_a_new_home_is_private(
    tmp_path: Path, umask: int, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path.chmod(0o755)
    home = tmp_path / "new" / "home"
    card = tmp_path / "card.json"
    card.write_text('{"name": "Silent"}', encoding="utf-8")
    code = main(["verify", str(card), "--home", str(home)])
    _, err = capsys.readouterr()
    assert "recorded as run 1" in err, (code, err)
    assert mode(home / HISTORY_FILE) == 0o600
    assert mode(home) == 0o700 and mode(home.parent) == 0o700


def test_an_existing_history_file_keeps_the_mode_its_owner_gave_it(tmp_path: Path) -> None:
    """Shared on purpose (a group's history on one host, say): the explorer does not take it back."""
    path = tmp_path / HISTORY_FILE
    with History.open_file(path):
        pass
    path.chmod(0o640)
    with History.open_file(path) as history:
        history.record(make_run())
    assert mode(path) == 0o640
