"""explorer.core stays pure: importing all of it pulls in no network, storage or terminal library.

This is what lets `verify --offline` and the tests run the verification without a network or a
terminal, and it must keep holding as modules are added, so every module found on disk is
imported, in a fresh interpreter whose sys.modules nothing else has touched.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from typing import Any

from tests.support.paths import REPO

FORBIDDEN = ("httpx", "textual", "rich", "sqlite3", "starlette", "uvicorn")

# Import failures are collected rather than fatal, so a module that fails half-way still has
# its imports so far checked for purity, and the failure itself is reported by its own test.
_PROBE = """
import importlib, json, pkgutil, sys
import explorer.core
names = [m.name for m in pkgutil.walk_packages(explorer.core.__path__, "explorer.core.")]
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
loaded = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"modules": names, "failed": failed, "loaded": loaded}))
"""


@functools.cache
def _probe() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_core_module_imports() -> None:
    assert _probe()["failed"] == {}


def test_core_imports_nothing_impure() -> None:
    result = _probe()
    assert "explorer.core.strict_json" in result["modules"]
    assert "explorer.core.canonical" in result["modules"]
    assert "explorer.core.pointer" in result["modules"]
    impure = [name for name in FORBIDDEN if name in result["loaded"]]
    assert impure == [], f"explorer.core pulled in {impure}"
