"""Draw the README's screenshots into `screenshots/`: Textual's own SVG export, and a PNG of each.

The scenes are the ones the snapshot tests check (`explorer.tui.pictures`): the load screen
with the reference agents, the interview on steady, on drifting with the mismatch selected, the
compare of two runs of the churning agent, the history, the fleet view, and the hostile agent;
named on the command line, also the scenes the snapshot tests draw with keys pressed
(`EXTRA_SCENES`), such as `declared` (an agent that does not offer the interview, each question
read from its card: "declared, not answered") and `card` (everything its card declares). It starts the
reference agents on 127.0.0.1, interviews them, records the runs in a temporary history, and
exports each screen at a fixed size with the fixed clock; nothing touches the user's files.

Each SVG is written with local fonts only (`chromium_png.local_fonts`: Rich's export would load
Fira Code from a CDN), and rendered to a PNG of the same name by headless Chromium
(`scripts/chromium_png.py`), so every viewer shows the same picture; `--no-png` skips that.

    python scripts/screenshots.py [--out screenshots] [--text] [--size 80x24] [--no-png] [SCENE ...]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FILES = {  # the README's names
    "steady": "interview-steady",
    "drifting": "interview-drifting",
    "declared": "interview-declared",
    "card": "card-silent",
}
TITLES = {
    "declared": "interview: silent (not offered), each question from its card",
    "card": "card: everything silent's card declares",
    "load": "interview-explorer demo",
    "steady": "interview: steady (conformant)",
    "drifting": "interview: drifting (the conflicting member selected)",
    "compare": "compare: two runs of churning",
    "history": "history",
    "fleet": "fleet: every agent's latest verdict and churn",
    "hostile": "interview: hostile (rendered as text)",
}


def draw(name: str, app: Any, before: Any, out: Path, size: tuple[int, int], text: bool) -> Path:
    from chromium_png import local_fonts

    from explorer.tui.pictures import screen_text

    path = out / f"{FILES.get(name, name)}.svg"

    async def pilot(p: Any) -> None:
        await before(p)
        svg = app.export_screenshot(title=TITLES.get(name, name))
        path.write_text(local_fonts(svg), encoding="utf-8")
        if text:
            print(f"===== {name} =====\n{screen_text(app)}")
        app.exit()

    app.run(headless=True, size=size, auto_pilot=pilot)
    return path


def _size(text: str) -> tuple[int, int]:
    try:
        cols, rows = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected COLSxROWS such as 80x24, got {text!r}") from None
    if not (20 <= cols <= 500 and 10 <= rows <= 200):
        raise argparse.ArgumentTypeError("expected 20-500 columns and 10-200 rows")
    return cols, rows


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "scripts"))
    from chromium_png import RenderError, render

    from explorer.demo.fleet import Fleet
    from explorer.tui.pictures import EXTRA_SCENES, SCENES, SIZE, collect_runs, record_history, scene

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(REPO / "screenshots"), help="directory for the SVGs")
    parser.add_argument("--text", action="store_true", help="also print each screen as plain text")
    parser.add_argument(
        "--size", type=_size, default=None, metavar="COLSxROWS", help="terminal size (default: the README's)"
    )
    parser.add_argument("--no-png", action="store_true", help="write the SVGs only (no Chromium)")
    parser.add_argument(
        "scenes", nargs="*", default=list(SCENES), help=f"any of {', '.join((*SCENES, *EXTRA_SCENES))}"
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    status = 0

    with (
        tempfile.TemporaryDirectory(prefix="ie-shots-") as tmp,
        Fleet() as fleet,
        Fleet(["churning"]) as churn,
    ):
        fleet.wait_ready(timeout=60)
        home = Path(tmp)
        runs = asyncio.run(collect_runs(fleet, churn))
        ids = record_history(runs, home)
        for name in args.scenes:
            app, before = scene(name, fleet, home, runs, ids)
            svg = draw(name, app, before, out, args.size or SIZE, args.text)
            print(svg)
            if not args.no_png:
                try:
                    print(render(svg, svg.with_suffix(".png")))
                except RenderError as exc:
                    print(f"screenshots: no PNG for {svg.name}: {exc}", file=sys.stderr)
                    status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
