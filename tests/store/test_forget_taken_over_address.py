"""`forget ADDRESS` when another agent took the address over, on each backend.

CONTRACT "Signatures are proofs" reads an address as naming "the agent whose latest run was
there, else every agent seen there". When another agent took a port over, the agent that left
and the one living there may both have their latest run at that address; `forget` deletes only
the one that answered there last, as a new run there would be recorded for it
(`explorer.store.identity.RESIDENT`), and leaves the other's runs alone; `forget NAME` forgets
the agent of that card name, even where another one answers now. An address no agent lives at any
more still names every agent seen there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.store.base import RunQuery
from tests.store.test_history_agents import K1, K3, A, B, _fleet, _run


def test_forgetting_a_taken_over_address_forgets_only_the_agent_living_there(store_factory) -> None:
    history = store_factory()
    history.record(_run(1, A, name="Steady", signers=[K1]))
    history.record(_run(2, A, name="Drifting", signers=[K3]))  # another agent on the same port
    drifting = history.record(_run(3, A, name="Drifting", signers=[K3]))
    assert sorted((row.name, row.agent) for row in history.fleet()) == [("Drifting", A), ("Steady", A)]
    assert history.forget_agent(A) == 2
    [row] = history.fleet()
    assert (row.name, row.agent, row.runs) == ("Steady", A, 1)  # the agent that left keeps its run
    assert drifting not in {r.id for r in history.query(RunQuery())}
    assert history.forget_agent(A) == 1 and history.fleet() == []  # now it is the one living there


def test_an_address_no_agent_lives_at_names_every_agent_seen_there(store_factory) -> None:
    history = store_factory()
    history.record(_run(1, A, name="Steady", signers=[K1]))
    history.record(_run(2, A, name="Drifting", signers=[K3]))
    history.record(_run(3, B, name="Steady", signers=[K1]))  # both moved away from A
    history.record(_run(4, B, name="Drifting", signers=[K3]))
    assert history.forget_agent(A) == 4 and history.fleet() == []


def test_the_forget_command_names_the_agent_living_at_the_address(
    store_factory, store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from explorer.cli import main

    history = store_factory()
    history.record(_run(1, A, name="Steady", signers=[K1]))
    history.record(_run(2, A, name="Drifting", signers=[K3]))
    capsys.readouterr()
    assert main(["forget", A, "--history", store_url, "--home", str(tmp_path / "home")]) == 0
    assert capsys.readouterr().out.startswith(f"forgot 1 run of {A}")
    assert [row.name for row in _fleet(history).values()] == ["Steady"]


def test_forgetting_by_card_name_forgets_that_agent_where_another_answers_now(
    store_factory, store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from explorer.cli import main

    history = store_factory()
    history.record(_run(1, A, name="Drifting Ledger", signers=[K3]))
    history.record(_run(2, A, name="Unsigned Ledger"))  # another agent on that port since
    history.record(_run(3, A, name="Unsigned Ledger"))
    at = ["--history", store_url, "--home", str(tmp_path / "home")]
    assert main(["forget", "drifting ledger", *at]) == 0  # its name, in any case
    assert capsys.readouterr().out.startswith("forgot 1 run of")
    assert [(row.name, row.runs) for row in history.fleet()] == [("Unsigned Ledger", 2)]
