"""The one failure a screen shows in place: `ExplorerError`, whose message is the sentence to read.

The app context and its parts (`runs`, `planner`, `exporter`) turn every failure outside the
terminal (a history that cannot be opened, a plan that cannot be made, an export that does not
apply) into this exception, so a screen catches one type and shows its words, never a traceback.
It lives in a module of its own so that those parts raise it without importing the context that
is built over them.
"""

from __future__ import annotations


class ExplorerError(Exception):
    """A failure the user should read in place (never a traceback)."""
