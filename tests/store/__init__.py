"""Tests of `explorer.store`: the history on each backend, its exports, crashes and faults."""
