"""`python -m explorer` runs the same entry point as the `interview-explorer` script."""

from explorer.cli import entry

entry()
