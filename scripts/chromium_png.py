"""Render local SVG or HTML files to PNG with headless Chromium, offline and with local fonts.

Why PNG beside the SVG: an SVG terminal picture is drawn by whatever the viewer has. Browsers
draw Textual's export right, but librsvg-based viewers (image previews, some Git front ends)
glue neighbouring labels together ("steadyexpected:") and every viewer picks its own fallback
font. A PNG rendered once by a browser engine is the same picture everywhere.

Why offline: Rich's SVG export asks a CDN for the Fira Code font. `local_fonts` rewrites the
`@font-face` rules to `local(...)` sources only and names local monospace fallbacks, and Chromium
runs with every host name mapped to "not found", a fresh profile and no background networking,
so rendering never reaches the network whatever the page asks for.

Generic on purpose (any local SVG or HTML page, any size), so other pictures of the project can
use it:

    python scripts/chromium_png.py screenshots/load.svg                # -> screenshots/load.png
    python scripts/chromium_png.py page.html --size 1280x800 -o page.png
    python scripts/chromium_png.py a.svg b.svg --out-dir pngs --scale 2

An SVG's size comes from its viewBox (`--size` overrides); an HTML page needs `--size`; the
smallest size is 300x200 (below it headless Chromium shrinks the shot).
Chromium is `--chromium PATH`, else the one scripts/chromium.py finds (`$CHROMIUM`, or chromium,
chromium-browser, google-chrome on PATH), started with that module's quiet flags.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# Chromium's own quiet flags come from scripts/chromium.py (one list for every script that starts
# it); a picture of a local file needs no host at all, so no host resolves, loopback included.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND"
# Monospace families a viewer is likely to have, after the one the export names.
MONOSPACE = '"Fira Code", "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace'
TIMEOUT = 120.0
# Below about this size headless Chromium lays the page out in a larger viewport and scales the
# shot down, so a small picture comes out shrunk or blank: refused rather than drawn wrong.
MIN_SIZE = (300, 200)

_STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.DOTALL | re.IGNORECASE)
_SOURCES = re.compile(r"\bsrc:([^;}]*)", re.IGNORECASE)
_FIRA_FAMILY = re.compile(r"font-family:\s*Fira Code,\s*monospace;")
_SVG_ROOT = re.compile(r"<svg\b[^>]*>", re.IGNORECASE)
_VIEWBOX = re.compile(r"viewBox=\"\s*([-\d.]+)[\s,]+([-\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)\s*\"")


class RenderError(RuntimeError):
    """Chromium is missing, failed, or wrote no picture."""


def _local_sources(match: re.Match[str]) -> str:
    """One `src:` declaration with only its `local(...)` entries (a font name never holds a comma)."""
    entries = (entry.strip() for entry in match.group(1).split(","))
    kept = [entry for entry in entries if entry.lower().startswith("local(")]
    return "src: " + (", ".join(kept) if kept else 'local("none")')


def _local_style(match: re.Match[str]) -> str:
    css = _FIRA_FAMILY.sub(f"font-family: {MONOSPACE};", _SOURCES.sub(_local_sources, match.group(2)))
    return match.group(1) + css + match.group(3)


def local_fonts(svg: str) -> str:
    """`svg` whose style sheets load no font from anywhere: each `src:` keeps only its `local(...)`
    sources, and Rich's `Fira Code, monospace` is widened to local monospace fallbacks. Only
    `<style>` elements are touched, never the text drawn (which may quote anything)."""
    return _STYLE.sub(_local_style, svg)


def svg_size(svg: str) -> tuple[int, int]:
    """The pixel size of an SVG's viewBox, rounded up; RenderError when it has none."""
    match = _VIEWBOX.search(svg)
    if match is None:
        raise RenderError("the SVG has no viewBox; give --size")
    return math.ceil(float(match.group(3))), math.ceil(float(match.group(4)))


def pinned_size(svg: str, size: tuple[int, int]) -> str:
    """`svg` whose root element is drawn at exactly `size` from the top left corner (without
    width and height an SVG document stretches to whatever viewport the browser has)."""
    root = _SVG_ROOT.search(svg)
    if root is None:
        raise RenderError("not an SVG document")
    tag = re.sub(r"\s(?:width|height)=\"[^\"]*\"", "", root.group(0))
    tag = tag[:4] + f' width="{size[0]}" height="{size[1]}"' + tag[4:]
    return svg[: root.start()] + tag + svg[root.end() :]


def _chromium_module() -> Any:
    """scripts/chromium.py, loaded by path (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("chromium", Path(__file__).with_name("chromium.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chromium_flags() -> list[str]:
    """The shared quiet flags, with every host name (and address) unresolvable."""
    shared = _chromium_module().FLAGS
    return [flag for flag in shared if not flag.startswith("--host-resolver-rules=")] + [
        OFFLINE,
        "--hide-scrollbars",
        "--default-background-color=00000000",
    ]


def find_chromium(given: str | None = None) -> str:
    """The Chromium executable to run (`given`, else as scripts/chromium.py finds it); RenderError
    when there is none."""
    found = shutil.which(given) if given else _chromium_module().browser_path()
    if not found:
        raise RenderError(f"no Chromium found ({given or 'set CHROMIUM, or install chromium'})")
    return found


def render(
    source: Path,
    out: Path,
    size: tuple[int, int] | None = None,
    *,
    scale: float = 1.0,
    chromium: str | None = None,
) -> Path:
    """Render a local SVG or HTML file to the PNG `out` at `size` CSS pixels times `scale`.

    An SVG is rendered from a copy with `local_fonts` applied (the file itself is not changed).
    """
    source = source.resolve()
    executable = find_chromium(chromium)
    with tempfile.TemporaryDirectory(prefix="chromium-png-") as tmp:
        page = source
        if source.suffix.lower() == ".svg":
            text = source.read_text(encoding="utf-8")
            size = size or svg_size(text)
            page = Path(tmp) / source.name
            page.write_text(pinned_size(local_fonts(text), size), encoding="utf-8")
        if size is None:
            raise RenderError(f"{source.name}: give the page size (--size WIDTHxHEIGHT)")
        if size[0] < MIN_SIZE[0] or size[1] < MIN_SIZE[1]:
            raise RenderError(
                f"{source.name}: {size[0]}x{size[1]} is below the smallest size Chromium "
                f"draws faithfully, {MIN_SIZE[0]}x{MIN_SIZE[1]}"
            )
        target = Path(tmp) / "out.png"
        command = [
            executable,
            *chromium_flags(),
            f"--user-data-dir={Path(tmp) / 'profile'}",
            f"--window-size={size[0]},{size[1]}",
            f"--force-device-scale-factor={scale}",
            f"--screenshot={target}",
            page.as_uri(),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise RenderError(f"{source.name}: Chromium did not finish in {TIMEOUT:.0f} s") from None
        if not target.is_file() or target.stat().st_size == 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-5:])
            raise RenderError(f"{source.name}: Chromium wrote no picture (exit {done.returncode})\n{tail}")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(target), out)
    return out


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT such as 1280x800, got {text!r}") from None
    if not (MIN_SIZE[0] <= width <= 8000 and MIN_SIZE[1] <= height <= 8000):
        raise argparse.ArgumentTypeError(f"expected {MIN_SIZE[0]}-8000 by {MIN_SIZE[1]}-8000 pixels")
    return width, height


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", type=Path, help="local .svg or .html files")
    parser.add_argument("-o", "--output", type=Path, help="the PNG (one source only)")
    parser.add_argument("--out-dir", type=Path, help="write NAME.png here (default: beside each source)")
    parser.add_argument("--size", type=_size, help="WIDTHxHEIGHT in CSS pixels (default: an SVG's viewBox)")
    parser.add_argument("--scale", type=float, default=1.0, help="device pixels per CSS pixel (default 1)")
    parser.add_argument("--chromium", help="the Chromium executable")
    args = parser.parse_args(argv)
    if args.output is not None and len(args.sources) != 1:
        parser.error("-o/--output takes one source; use --out-dir for several")
    if not 0.25 <= args.scale <= 4:
        parser.error("--scale must be between 0.25 and 4")
    status = 0
    for source in args.sources:
        out = args.output or (args.out_dir or source.parent) / f"{source.stem}.png"
        try:
            print(render(source, out, args.size, scale=args.scale, chromium=args.chromium))
        except (RenderError, OSError) as exc:
            print(f"chromium_png: {exc}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
