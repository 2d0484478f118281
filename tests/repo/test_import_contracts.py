"""The layering holds: import-linter's contracts in pyproject.toml, run as a test so CI checks them.

docs/ARCHITECTURE.md says which way imports go; `[tool.importlinter]` in pyproject.toml states it
as one `layers` contract (cli, then the TUI and the commands, the web bridge, the reference
agents, interviews, evidence, config, store and net, home, core) plus a few forbidden-library
contracts, and `lint-imports` proves them against every import in the package, direct or through
others. The second test keeps the layers whole: every top-level package or module of `explorer`
(but the package's own `__init__`/`__main__`) has a layer, so a new one is placed the day it is
added.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.paths import REPO

PACKAGE = REPO / "explorer"


def _layers() -> set[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers"]
    return {name.strip() for layer in contract["layers"] for name in layer.split("|")}


def _top_level_modules() -> set[str]:
    names = {p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    names |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    return {f"explorer.{name}" for name in names}


def test_the_import_contracts_hold() -> None:
    tool = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(tool).exists():
        pytest.skip("import-linter is not installed (it is part of the test extra)")
    result = subprocess.run([tool, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_top_level_module_has_a_layer() -> None:
    missing = sorted(_top_level_modules() - _layers())
    assert missing == [], f"give {missing} a place in the 'layers' contract of pyproject.toml"


def test_the_package_root_holds_only_entry_points_and_the_home() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "cli.py", "home.py"]
