"""An agent that declares the interview but implements none of it: the root cause, said first.

A card can declare the interview extension while the server behind it has no interview method:
an a2a-sdk agent whose card was given the extension answers every `interview/*` call "method not
found" (JSON-RPC -32601) in HTTP 200, and other stacks do the same inside HTTP 400 (read as the
error, `explorer.core.questions.reads_as_answer`). Judged call by call, that is a `method_error`
per question and a closure failure per probe, and no line says what happened. So when every
interview call of an attempt (each ask of each question, each probe) was answered -32601, one
`interview_not_implemented` finding (error) says so, leads the findings (`findings.LEADING`),
and every finding it explains stays, marked `"cause": "interview_not_implemented"`: a script
matching on codes sees what it saw before, and a reader sees why.

Reading of the texts where they are silent: the unactivated probes must get -32601 anyway, but
they are interview calls like the others, so the cause needs them answered -32601 too (an agent
that answers them otherwise implements something); a call refused for a credential, cut, or
answered 5xx or 429 got no answer at all, so an attempt with one is never read as this cause.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from explorer.core.attempt import Attempt
from explorer.core.probes import METHOD_NOT_FOUND
from explorer.core.questions import read_reply, reads_as_answer
from explorer.core.run import Exchange

CAUSE = "interview_not_implemented"
# What an agent that implements no interview method draws beside its method_error findings.
EXPLAINED: frozenset[str] = frozenset({
    "method_error", "closure_method_not_refused", "closure_selector_not_refused",
    "nondeterministic_answer", "activation_not_echoed",
})  # fmt: skip


def _method_not_found(ex: Exchange) -> bool:
    if not reads_as_answer(ex):
        return False
    reply = read_reply(ex)
    return reply.kind == "error" and reply.code == METHOD_NOT_FOUND


def explain_unimplemented(a: Attempt, calls: Sequence[Exchange]) -> None:
    """When every interview call (`calls`, the last exchange of each) was answered -32601: the
    leading `interview_not_implemented` finding, and `cause` on every finding it explains."""
    asks = {ex.purpose.split("#", 1)[0] for ex in calls if ex.purpose.startswith("ask:")}
    if not asks or not all(_method_not_found(ex) for ex in calls):
        return
    explained = sum(f.code in EXPLAINED for f in a.findings)
    a.findings[:] = [replace(f, cause=CAUSE) if f.code in EXPLAINED else f for f in a.findings]
    probes = len({ex.purpose for ex in calls if ex.purpose.startswith("probe:")})
    statuses = "/".join(str(s) for s in sorted({ex.status for ex in calls if ex.status is not None}))
    sent = f"{len(asks)} question{'s' if len(asks) != 1 else ''}" + (
        f" and {probes} probe{'s' if probes != 1 else ''}" if probes else ""
    )
    marked = (
        f"the {explained} findings marked with this cause follow"
        if explained != 1
        else "the finding marked with this cause follows"
    )
    a.add(
        CAUSE,
        f"the card declares the interview extension, but every interview call ({sent}) was answered "
        f"JSON-RPC error -32601, method not found (in HTTP {statuses}): the agent does not implement the "
        f"interview; {marked} from it",
    )
