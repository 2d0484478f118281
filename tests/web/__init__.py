"""Tests of `explorer.web`: the served explorer against real clients and a real browser."""
