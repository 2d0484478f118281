"""Tests of `explorer.demo`: the reference agents, their ports, keys and wire behaviour."""
