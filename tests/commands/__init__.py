"""Tests of the command line (`explorer.cli` and `explorer.commands`), run as a user runs it."""
