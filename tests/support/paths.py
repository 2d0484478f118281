"""Where the tests find the repository and their data, wherever in tests/ the test file sits.

Tests live one folder below tests/ (tests/core, tests/tui, ...), so a path computed from a test's
own `__file__` depends on that depth; these are computed once, from this file's place.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
DATA = TESTS / "data"  # card and key files (tests/data/make_cards.py writes them)
VECTORS = TESTS / "vectors"  # the published test vectors (see its README)
INTEROP = TESTS / "interop"  # agents built on other SDKs (js_agent: the official JavaScript one)
