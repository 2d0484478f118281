"""When an agent is down rather than dishonest: the one rule the procedure and the evaluation share.

An agent whose every interview call fails at the transport, or is answered with HTTP 5xx or 429
(after any `Retry-After` the run's time budget allowed was waited out), put no question to the
test: nothing it said can be compared with anything it signed. Its verdict is `unreachable`
(docs/CONTRACT.md), with the `http_status` findings still naming each status, never
`nonconformant`. A mix of answers and failures is judged call by call as before.

The procedure uses the same rule to stop after a first round that was all down (the second round,
the probes and a re-run would only ask a down agent again); the evaluation uses it to decide
`unreachable` from the recorded exchanges alone, so `verify --offline` reaches the same verdict.
"""

from __future__ import annotations

from collections.abc import Iterable

from explorer.core.run import Exchange

# What "busy or broken, come back later" looks like at the HTTP level: the server's own failures
# and rate limiting. 4xx answers other than 429 are answers about the request and are judged.
THROTTLED = 429


def down_answer(ex: Exchange) -> bool:
    """An interview call that got nothing from the agent: a transport failure (a body cut at the
    size cap is an answer, judged as such), an HTTP 5xx, or a final 429."""
    if ex.error is not None:
        return ex.error != "body_too_large"
    return ex.status is not None and (ex.status >= 500 or ex.status == THROTTLED)


def all_down(calls: Iterable[Exchange]) -> bool:
    """True when there was at least one call and every one got nothing from the agent."""
    seen = False
    for ex in calls:
        if not down_answer(ex):
            return False
        seen = True
    return seen
