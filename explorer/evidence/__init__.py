"""What makes a run evidence: signing a finished run, reading the standing of a stored or
received one, and the runner keys on disk.

Above `config`, `store`, `net` and `core`; below `interview` (pyproject.toml's `layers` contract).
"""
