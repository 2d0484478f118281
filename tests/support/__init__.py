"""What the tests share (no tests here), imported as `tests.support.<module>` from every folder.

- `paths`: the repository's folders as the tests reach them (REPO, TESTS, DATA, VECTORS, INTEROP).
- `http_server`: a canned loopback HTTP server, and a listener that never answers.
- `demo_serve`: `interview-explorer demo --serve` in a subprocess, its printed agents, its stop.
- `cards`: a generic Agent Card as JSON (`agent_card(...)`), for tests whose subject is not the card.
- `runs`: synthetic runs shaped like the procedure's, for the history, compare and export tests.
- `strategies`: the Hypothesis strategies of JSON values the property tests draw from.
- `tui`: the app as the TUI tests build it, waiting for screens and reading widgets.
- `web`: the served explorer (`serve`, `demo --browser`) and its real clients.
- `postgres`: a PostgreSQL server of the test session's own.
- `secret_echo`: a malicious agent that echoes every secret it is sent.
- `restarts`: one reference agent restarted on one address: signed again, its key rotated, or
  its declarations changed.
- `loopback_only`: the guard (installed by `tests/conftest.py`) that refuses any name lookup or
  connection beyond loopback and fails the test that tried one.
"""
