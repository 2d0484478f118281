"""The repository stands on its own: nothing in it points outside it.

A clone with nothing beside it must test, build and read completely: no test may read a file
from a sibling folder, and code and documents cite the specifications by their public names and
section numbers (docs/PROTOCOL.md section 0 lists them), never a private copy or its file name.
`.ci/run` proves the first half by running the suite in a copy of the commit alone; this test
catches the second half, and a stray path, before CI does.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.paths import REPO

FORBIDDEN = {
    "a path outside the repository": re.compile(r"\.\./shared|/work/shared|parents\[2\] / \"shared\""),
    "a citation of a private copy of a specification": re.compile(
        r"\bseeds? sections?\b|\bseed \d+(?:\.\d| rule)|\bthe seed's\b|\bsecond seed\b", re.IGNORECASE
    ),
    "PROTOCOL.md without its folder (it is docs/PROTOCOL.md)": re.compile(r"(?<![/\[(])\bPROTOCOL\.md(?!\])"),
}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".tcss", ".html", ".sh", ""}


SKIPPED_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", "vectors"}


def _text_files() -> list[Path]:
    """The repository's text files: git's list in a checkout, else the tree (CI runs in a copy)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True, timeout=30
        )
        paths = [REPO / line for line in listed.stdout.splitlines()]
    except (OSError, subprocess.SubprocessError):
        paths = [p for p in REPO.rglob("*") if not SKIPPED_DIRS & set(p.relative_to(REPO).parts)]
    return [
        p
        for p in paths
        if p.suffix in TEXT_SUFFIXES
        and p.is_file()
        and not SKIPPED_DIRS & set(p.relative_to(REPO).parts)
        and not p.name.endswith(".egg-info")
    ]


def test_nothing_points_outside_the_repository() -> None:
    found = []
    for path in _text_files():
        if path == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for what, pattern in FORBIDDEN.items():
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(REPO)}:{line}: {what}: {match.group(0)!r}")
    assert found == [], "\n".join(found)
