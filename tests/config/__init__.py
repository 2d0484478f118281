"""Tests of `explorer.config`: the config file and the settings read from it."""
