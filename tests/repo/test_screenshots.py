"""The README's pictures: SVGs that load nothing, and PNGs rendered from them by headless Chromium.

An SVG terminal picture is drawn by each viewer its own way (librsvg glues labels together), so
the README shows a PNG rendered from each SVG by a browser engine (`scripts/chromium_png.py`, run
by `scripts/screenshots.py`). The fast tests hold the committed files to that: no SVG names a
remote font, every SVG has its PNG at the SVG's size, and the README shows the PNGs. The slow
ones run Chromium on pictures made here: the PNG has the SVG's pixels where the SVG puts them, and
a font the SVG asks for on a (loopback) server is never requested.
"""

from __future__ import annotations

import re
import struct
import sys
import zlib
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.support.http_server import base_url, serving
from tests.support.paths import REPO

sys.path.insert(0, str(REPO / "scripts"))

from chromium_png import RenderError, find_chromium, local_fonts, render, svg_size  # noqa: E402

SHOTS = REPO / "screenshots"
SVGS = sorted(SHOTS.glob("*.svg"))


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def png_pixels(data: bytes) -> list[list[tuple[int, ...]]]:
    """Rows of pixels of an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes)."""
    width, height = png_size(data)
    depth, colour, interlace = data[24], data[25], data[28]
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    channels = 4 if colour == 6 else 3
    chunks, offset = [], 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset : offset + 8])
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + predictor) & 0xFF
        rows.append(line)
        previous = line
    return [[tuple(row[x : x + channels]) for x in range(0, stride, channels)] for row in rows]


# --- the committed pictures ------------------------------------------------------------------------


def test_there_are_pictures() -> None:
    assert len(SVGS) >= 7, SVGS


@pytest.mark.parametrize("svg", SVGS, ids=lambda p: p.name)
def test_an_svg_loads_no_font_from_anywhere(svg: Path) -> None:
    text = svg.read_text(encoding="utf-8")
    style = "".join(re.findall(r"<style[^>]*>(.*?)</style>", text, re.DOTALL))
    assert "@font-face" in style
    assert "url(" not in style.replace("url(#", ""), f"{svg.name} loads a font"
    assert local_fonts(text) == text, f"{svg.name} was not written through local_fonts"


@pytest.mark.parametrize("svg", SVGS, ids=lambda p: p.name)
def test_every_svg_has_its_png_at_the_same_size(svg: Path) -> None:
    png = svg.with_suffix(".png")
    assert png.is_file(), f"{png.name} is missing: run scripts/screenshots.py"
    assert png_size(png.read_bytes()) == svg_size(svg.read_text(encoding="utf-8"))


def test_the_readme_shows_the_pngs_and_links_the_svgs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"!\[[^\]]*\]\((screenshots/[^)]+)\)", readme))
    linked = set(re.findall(r"(?<!!)\[[^\]]*\]\((screenshots/[^)]+)\)", readme))
    assert shown and all(path.endswith(".png") for path in shown), shown
    for svg in SVGS:
        name = f"screenshots/{svg.name}"
        assert name in linked, f"the README does not link {name}"
        assert name.replace(".svg", ".png") in shown | linked, f"the README does not show {svg.stem}.png"


# --- rendering -------------------------------------------------------------------------------------


def _has_chromium() -> bool:
    try:
        find_chromium()
    except RenderError:
        return False
    return True


chromium = pytest.mark.skipif(not _has_chromium(), reason="headless Chromium is not installed")

PICTURE = """<svg viewBox="0 0 400 200" xmlns="http://www.w3.org/2000/svg">
<style>
@font-face {{ font-family: "Remote Mono"; src: url("{font}") format("woff2"); }}
.label {{ font-family: "Remote Mono", monospace; font-size: 20px; }}
</style>
<rect x="0" y="0" width="400" height="200" fill="#000000"/>
<rect x="200" y="0" width="200" height="100" fill="#ff0000"/>
<text class="label" x="4" y="180" fill="#ffffff">src: url(http://example.invalid/a)</text>
</svg>
"""


def test_local_fonts_drops_every_remote_source_and_keeps_the_text() -> None:
    svg = PICTURE.format(font="https://cdn.example/font.woff2").replace(
        "src: url(", 'src: local("Remote Mono"), url(', 1
    )
    local = local_fonts(svg)
    assert 'src: local("Remote Mono");' in local
    assert "cdn.example" not in local
    assert ">src: url(http://example.invalid/a)</text>" in local  # what is drawn is never rewritten
    only_remote = local_fonts(PICTURE.format(font="https://cdn.example/font.woff2"))
    assert "cdn.example" not in only_remote and 'src: local("none")' in only_remote


class Recorder(BaseHTTPRequestHandler):
    """Records every path asked for (a font, an image) and answers 404."""

    asked: list[str]

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.asked.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


@pytest.mark.slow
@chromium
def test_chromium_draws_the_svg_and_never_fetches_its_font(tmp_path: Path) -> None:
    handler = type("Fonts", (Recorder,), {"asked": []})
    with serving(handler) as server:
        svg = tmp_path / "picture.svg"
        svg.write_text(PICTURE.format(font=f"{base_url(server)}/font.woff2"), encoding="utf-8")
        png = render(svg, tmp_path / "picture.png", chromium=find_chromium())
    assert handler.asked == [], f"Chromium asked the font server for {handler.asked}"
    pixels = png_pixels(png.read_bytes())
    assert (len(pixels[0]), len(pixels)) == (400, 200)
    assert pixels[10][390][:3] == (255, 0, 0)  # the red rectangle, top right
    assert pixels[90][210][:3] == (255, 0, 0)
    assert pixels[110][390][:3] == (0, 0, 0)  # the black background below it
    assert pixels[10][10][:3] == (0, 0, 0)
    text = [pixels[y][x][:3] for y in range(160, 190) for x in range(4, 396)]
    assert any(min(p) > 200 for p in text), "the text was not drawn"
    assert "url(" in svg.read_text(encoding="utf-8"), "the source file is left as it was"


@pytest.mark.slow
@chromium
def test_the_script_renders_an_html_page_at_the_size_given(tmp_path: Path) -> None:
    import subprocess

    page = tmp_path / "page.html"
    page.write_text(
        '<html><body style="margin:0;background:#00ff00"><div style="width:40px;height:30px;'
        'background:#0000ff"></div></body></html>',
        encoding="utf-8",
    )
    out = tmp_path / "shots" / "page.png"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "chromium_png.py"),
            str(page),
            "--size",
            "320x200",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    pixels = png_pixels(out.read_bytes())
    assert (len(pixels[0]), len(pixels)) == (320, 200)
    assert pixels[10][10][:3] == (0, 0, 255) and pixels[150][300][:3] == (0, 255, 0)


@pytest.mark.slow
@chromium
def test_a_page_that_asks_the_network_gets_nothing(tmp_path: Path) -> None:
    """An HTML page is rendered as it is (no font rewriting): Chromium itself resolves no host,
    not even a loopback address, so whatever a page names is never fetched."""
    handler = type("Anything", (Recorder,), {"asked": []})
    with serving(handler) as server:
        page = tmp_path / "page.html"
        page.write_text(
            f'<html><head><link rel="stylesheet" href="{base_url(server)}/style.css"></head>'
            f'<body><img src="{base_url(server)}/picture.png"></body></html>',
            encoding="utf-8",
        )
        render(page, tmp_path / "page.png", (320, 200), chromium=find_chromium())
    assert handler.asked == [], f"Chromium asked for {handler.asked}"


def test_a_picture_too_small_to_draw_faithfully_is_refused(tmp_path: Path) -> None:
    svg = tmp_path / "tiny.svg"
    svg.write_text('<svg viewBox="0 0 200 100" xmlns="http://www.w3.org/2000/svg"></svg>', encoding="utf-8")
    with pytest.raises(RenderError, match="smallest size"):
        render(svg, tmp_path / "tiny.png", chromium=sys.executable)


def test_an_html_page_needs_a_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chromium_png import main

    page = tmp_path / "page.html"
    page.write_text("<html></html>", encoding="utf-8")
    assert main([str(page), "--chromium", sys.executable]) == 1
    assert "give the page size" in capsys.readouterr().err
    assert not (tmp_path / "page.png").exists()
