"""How the misbehaving reference agents go wrong: small edits to an honest answer.

Each misbehaving agent first builds the honest answer with `explorer.demo.projection`, exactly as
the conformant agents do, and then applies the faults its `Variant` names. Keeping the faults as
edits of a correct answer (instead of hand-written wrong answers) means every misbehaving agent
differs from a conformant one in exactly the way its description says, and nothing else, so a
verifier's findings can be checked code for code.

- "drift": one usage projection (`/defaultOutputModes`) and one terms projection (`/price`)
  carry values that differ from their members.
- "misquote": one capabilities projection points at a member that does not exist.
- "fabricate": the terms answer also cites a proposal the card never committed to.
- "extra_member": every answer carries a free-text `note`, which the interview extension
  forbids (section 5 rule 3).
- "alternate_order": the capabilities answer lists its projections in a different order on every
  ask, cycling through seventeen orders, so two identical asks give different bytes and so do
  two verifier runs in a row (see `ask_forms`).
- "narrow_boundary": the refusals answer leaves the last declared skill out of the boundary.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Sequence
from typing import Any

from explorer.demo.projection import Committed, terms

CHATTY_NOTE = "Happy to help! I can also summarise my terms in plain words if you prefer."


def _find(answer: dict[str, Any], member: str) -> dict[str, Any] | None:
    for proj in answer["projections"]:
        if proj["source"]["member"] == member:
            return proj
    return None


def _drift(question: str, answer: dict[str, Any]) -> None:
    if question == "usage":
        proj = _find(answer, "/defaultOutputModes")
        if proj is not None:
            proj["value"] = [*proj["value"], "text/html"]
    elif question == "terms":
        proj = _find(answer, "/price")
        if proj is not None:
            rate = proj["value"]["rates"][0]
            rate["per_task"] = rate["per_task"] - 500000


def _misquote(question: str, answer: dict[str, Any]) -> None:
    if question == "capabilities" and answer["projections"]:
        source = answer["projections"][-1]["source"]
        source["member"] = source["member"].rsplit("/", 1)[0] + "/summary"


def apply(
    faults: frozenset[str], question: str, answer: dict[str, Any], uncommitted: Sequence[Committed] = ()
) -> dict[str, Any]:
    """The answer with the named faults applied (a deep copy; the honest answer is untouched)."""
    if not faults:
        return answer
    out = copy.deepcopy(answer)
    if "drift" in faults:
        _drift(question, out)
    if "misquote" in faults:
        _misquote(question, out)
    if "fabricate" in faults and question == "terms" and uncommitted:
        out["projections"] += terms(uncommitted)["projections"]
    if "narrow_boundary" in faults and question == "refusals" and out["projections"]:
        out["projections"].pop()
    if "extra_member" in faults:
        out["note"] = CHATTY_NOTE
    return out


# One verifier run asks capabilities twice per attempt, in at most six attempts, so consecutive
# runs start 2 to 12 asks apart; the two asks of an attempt run concurrently, so the answer a run
# keeps may be either of them: 1 to 13 asks apart. A cycle longer than that never brings a run
# back to the form the run before it kept, so `watch` sees the churn run by run.
FLAKY_PERIOD = 17


def ask_forms(faults: frozenset[str], question: str, answer: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The forms a flaky agent cycles through, one per ask, `answer` first; None when it has none.

    Each form is the same projections in another order (the permutations in their standard
    order, the answer's own first), so every form on its own is an exact projection and only the
    bytes of two asks differ. Fewer projections give a shorter cycle (4 give 24 orders).
    """
    if "alternate_order" not in faults or question != "capabilities":
        return None
    items = list(answer["projections"])
    orders = [list(order) for order in itertools.islice(itertools.permutations(items), FLAKY_PERIOD)]
    if len(orders) < 2:
        return None
    return [{**answer, "projections": order} for order in orders]
