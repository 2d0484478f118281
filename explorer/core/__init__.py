"""The pure verification core.

Everything that decides whether an agent's words match its signed bytes lives here, as plain
functions over plain data, so that it can be tested without a network, a disk or a terminal.
Nothing in this package imports httpx, textual, sqlite3 or any other layer of the explorer.
"""
