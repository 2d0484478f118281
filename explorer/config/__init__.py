"""What a person configures: every interview setting once, the TOML config file, credentials
as references, and which history a session uses.

Above `store`, `net`, `home` and `core`; below `evidence` (pyproject.toml's `layers` contract).
"""
