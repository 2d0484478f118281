"""docs/ARCHITECTURE.md is true to the code: every module where it is, every report member named.

The module map is the indented tree in the code block that starts with `explorer/`: a line whose
first word ends in `/` is a package, one ending in `.py` a module inside the package above it;
deeper-indented lines carry on a description. The first test rebuilds the paths from that tree
and compares them with the modules under explorer/: a module added, moved or deleted without the
map following fails here, naming it. The second holds the page's report shape to what
`explorer.core.evaluate` actually builds.
"""

from __future__ import annotations

import re

from tests.support.paths import REPO

PAGE = REPO / "docs" / "ARCHITECTURE.md"
ENTRY = re.compile(r"^(?P<indent> *)(?P<name>[\w.]+(?:/|\.py))(?:\s{2,}.*)?$")


def _block(starts: str) -> str:
    """The page's first code block whose text starts with `starts`."""
    blocks = PAGE.read_text(encoding="utf-8").split("```")[1::2]
    return next(b for b in blocks if b.lstrip("\n").startswith(starts))


def _mapped_paths() -> set[str]:
    block = _block("explorer/")
    paths: set[str] = set()
    stack: list[tuple[int, str]] = []  # (indent, package path) of the packages above this line
    last_indent = -1
    for line in block.strip("\n").splitlines():
        match = ENTRY.match(line)
        if match is None or len(match["indent"]) > last_indent + 2 and stack:
            continue  # a description carried over from the line above
        indent, name = len(match["indent"]), match["name"]
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        path = parent + name
        if name.endswith("/"):
            stack.append((indent, path))
        else:
            paths.add(path)
        last_indent = indent
    return paths


def _module_paths() -> set[str]:
    found = set()
    for path in (REPO / "explorer").rglob("*"):
        if path.suffix != ".py" or "__pycache__" in path.parts:
            continue
        if path.name == "__init__.py" and path.parent != REPO / "explorer":
            continue  # a subpackage's __init__ is its docstring; the package line stands for it
        found.add(path.relative_to(REPO).as_posix())
    return found


def test_every_module_is_in_the_map_where_it_is() -> None:
    mapped, actual = _mapped_paths(), _module_paths()
    missing, gone = sorted(actual - mapped), sorted(mapped - actual)
    assert not missing, f"add these modules to docs/ARCHITECTURE.md's module map: {missing}"
    assert not gone, f"docs/ARCHITECTURE.md's module map lists modules that do not exist: {gone}"


def test_the_report_shape_names_every_member_evaluate_builds() -> None:
    from explorer.core.evaluate import evaluate

    report = evaluate(
        (),
        {},
        target="http://127.0.0.1:9/",
        ran_by={"name": "doc", "role": "self"},
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:01Z",
    )
    named = set(re.findall(r'"(\w+)"\*?:', _block("{")))
    members = set(report) | set(report["card"]) | set(report["card"]["signature"])
    assert sorted(members - named) == [], "name these report members in docs/ARCHITECTURE.md's report shape"
