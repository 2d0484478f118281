"""Tests of `explorer.tui`: the screens under Textual's Pilot, in a pseudo-terminal, and as SVG snapshots."""
