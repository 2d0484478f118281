"""The test suite, laid out like the package it tests.

Each folder holds the tests of one part of `explorer/` (core, net, store, config, evidence,
interview, commands for the command line, tui, web, demo); `repo/` holds the checks of the whole
repository (lint, import contracts, the architecture page, the README, screenshots). What the
tests share lives in `support/` (imported as `tests.support.<module>`), the fixtures in
`conftest.py`, and the data they read in `data/`, `vectors/` and `interop/`. A package, so that
every test imports the shared modules the same way from any folder.
"""
