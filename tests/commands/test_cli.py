"""The entry point: commands dispatch, usage errors exit 2, and `python -m explorer` works."""

from __future__ import annotations

import subprocess
import sys

from explorer import __version__
from explorer.cli import COMMANDS, main


def test_version_via_python_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "explorer", "--version"], capture_output=True, text=True, check=True
    )
    assert __version__ in out.stdout


def test_help_lists_every_command() -> None:
    out = subprocess.run([sys.executable, "-m", "explorer", "--help"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for name in COMMANDS:
        assert name in out.stdout


def test_unknown_option_is_a_usage_error(capsys) -> None:
    try:
        code = main(["verify", "--no-such-option"])
    except SystemExit as exc:  # argparse exits 2 on usage errors
        code = exc.code
    assert code == 2
