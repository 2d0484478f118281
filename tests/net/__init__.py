"""Tests of `explorer.net`: fetching, discovery, keys, addresses and authentication on the wire."""
