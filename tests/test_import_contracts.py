"""The layering holds: import-linter's contracts in pyproject.toml, run as a test so CI checks them.

docs/ARCHITECTURE.md says which way imports go (core <- net <- procedure <- store/screens, and no
headless command ever imports textual); `[tool.importlinter]` in pyproject.toml states that as
contracts, and `lint-imports` proves them against every import in the package, direct or through
others. The second test keeps the contracts honest as the package grows: the core, net and
store contracts must forbid every top-level module of the package other than the layers they
stand on, so a new module is covered the day it is added.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "explorer"


def _contracts() -> dict[str, dict[str, object]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


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


@pytest.mark.parametrize(
    ("contract", "allowed"),
    [
        ("core-is-pure", {"explorer.core"}),
        ("net-on-core", {"explorer.core", "explorer.net"}),
        ("store-on-core", {"explorer.core", "explorer.home", "explorer.store"}),
    ],
)
def test_the_lowest_layers_forbid_every_module_above_them(contract: str, allowed: set[str]) -> None:
    forbidden = set(_contracts()[contract]["forbidden_modules"])  # type: ignore[arg-type]
    missing = sorted(_top_level_modules() - allowed - forbidden)
    assert missing == [], f"add {missing} to the forbidden_modules of contract {contract!r} in pyproject.toml"


def test_every_module_but_net_is_kept_from_the_http_libraries() -> None:
    sources = set(_contracts()["http-in-net"]["source_modules"])  # type: ignore[arg-type]
    missing = sorted(_top_level_modules() - {"explorer.net"} - sources)
    assert missing == [], f"add {missing} to the source_modules of contract 'http-in-net' in pyproject.toml"
