"""Running interviews: the options type, the procedure, planning, sweeps, replays and target checks.

Above `evidence`, `config`, `store`, `net` and `core`; below the commands, the TUI and the web face
(pyproject.toml's `layers` contract).
"""
