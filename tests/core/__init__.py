"""Tests of `explorer.core`: the pure rules (cards, signatures, JSON, pointers, the diff, the report)."""
