"""One agent, one row (CONTRACT "Signatures are proofs"), on each backend.

Runs are grouped by the card's signing key thumbprint and name where the card is signed, by card
URL otherwise (`explorer.store.identity`): a signed agent served at another address is one agent
with both addresses listed, in the fleet, the agents, the history filters and the counters; an
unsigned one is one agent per URL; a key rotated at the address the agent lives at is that agent
(a `key` change); another agent that takes over an old port is another agent. SQLite decides it in
Python and PostgreSQL in the statement that records a run, and `record_once` takes the portable
path on both, so every rule is asked of each. A history recorded by address is migrated: the
same signed agent under two URLs becomes one, its counters counted again. The last tests serve
the steady reference agent on two ports in turn, and the unsigned one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from explorer.core.compare import is_change
from explorer.core.run import Run
from explorer.core.signatures import generate_key
from explorer.store import pg_schema, sqlite_schema
from explorer.store.base import RunQuery
from explorer.store.copy import copy_history
from explorer.store.location import open_store
from tests.store.test_history_kinds import _signed_run, _write_as_previous_version
from tests.support.runs import make_card, make_run

A = "http://127.0.0.1:41001/.well-known/agent-card.json"
B = "http://127.0.0.1:41002/.well-known/agent-card.json"
C = "http://127.0.0.1:41003/.well-known/agent-card.json"
D = "http://127.0.0.1:41004/.well-known/agent-card.json"
E = "http://127.0.0.1:41005/.well-known/agent-card.json"
K1, K2, K3 = "k1" * 22, "k2" * 22, "k3" * 22  # thumbprints, as a report states them


def _run(
    n: int,
    url: str,
    *,
    name: str = "Steady Agent",
    signers: list[str] | None = None,
    card: str = "c1",
    declared: str = "d1",
    verdict: str = "conformant",
) -> Run:
    """A run at `url` whose report states its card's name, digests and signers (none: unsigned)."""
    run = make_run(
        name=name,
        card_url=url,
        verdict=verdict,
        started_at=f"2025-01-01T00:00:{n:02d}.000Z",
        elapsed_ms=1.0 + n,
    )
    report = copy.deepcopy(dict(run.report))
    report["card"]["sha256"] = card
    report["card"]["declarations_sha256"] = declared
    report["card"]["signers"] = list(signers or [])
    return replace(run, report=report)


def _no_card(n: int, url: str) -> Run:
    """A run that got no card at `url` (nothing answered there)."""
    run = make_run(card_url=url, verdict="unreachable", started_at=f"2025-01-01T00:01:{n:02d}.000Z")
    report = copy.deepcopy(dict(run.report))
    report["card"] = {}
    report["questions"] = {}
    return replace(run, report=report)


@pytest.fixture(params=["record", "record_once"])
def recorder(request: pytest.FixtureRequest) -> Callable[[Any, Run], int]:
    """Each way a run is recorded (on PostgreSQL, one statement or the portable path)."""

    def record(history: Any, run: Run) -> int:
        return int(history.record(run) if request.param == "record" else history.record_once(run)[0])

    return record


def _fleet(history: Any) -> dict[str, Any]:
    return {row.agent: row for row in history.fleet()}


def test_a_signed_agent_moved_to_another_address_is_one_agent(store_factory, recorder) -> None:
    history = store_factory()
    first = recorder(history, _run(1, A, signers=[K1]))
    second = recorder(history, _run(2, A, signers=[K1]))
    moved = recorder(history, _run(3, B, signers=[K1], card="c2", declared="d2"))  # its card names B
    [row] = history.fleet()
    assert (row.agent, row.addresses, row.runs, row.last_run_id) == (B, (B, A), 3, moved)
    assert (row.changes, row.kinds) == (1, ("declarations",))  # the move, as its card says it
    [agent] = history.agents()
    assert (agent.agent, agent.addresses, agent.runs) == (B, (B, A), 3)
    listed = list(history.query(RunQuery()))
    assert [(r.id, r.agent, r.address) for r in listed] == [(moved, B, B), (second, B, A), (first, B, A)]
    assert listed[1].to_json()["address"] == A  # `history --json` says where each run was
    # either address names the whole agent: its latest, or one it was seen at
    for address in (A, B):
        assert [r.id for r in history.query(RunQuery(agents=(address,)))] == [moved, second, first]
        assert history.match_agents(address) == [B]
    assert history.match_agents("http://127.0.0.1:41001") == [B]  # a base URL it was seen under
    assert history.match_agents("steady agent") == [B]
    assert history.previous([moved])[moved].id == second


def test_unsigned_cards_at_two_addresses_are_two_agents(store_factory, recorder) -> None:
    history = store_factory()
    recorder(history, _run(1, A))
    recorder(history, _run(2, B))
    fleet = _fleet(history)
    assert set(fleet) == {A, B} and fleet[A].addresses == (A,) and fleet[B].addresses == (B,)
    assert history.match_agents("Steady Agent") == [A, B]


def test_a_key_rotated_where_the_agent_lives_is_a_key_change_of_that_agent(store_factory, recorder) -> None:
    history = store_factory()
    recorder(history, _run(1, A, signers=[K1]))
    rotated = recorder(history, _run(2, A, signers=[K2], card="c1-rotated"))
    [row] = history.fleet()
    assert row.runs == 2 and history.summary(rotated).kinds == ("key",)
    moved = recorder(history, _run(3, B, signers=[K2]))  # and moved after: its new key names it
    assert history.summary(moved).agent == B and len(history.fleet()) == 1
    back = recorder(history, _run(4, C, signers=[K1]))  # the old key, at a third address: still it
    assert [row.addresses for row in history.fleet()] == [(C, B, A)] and history.summary(back).agent == C


def test_a_rotation_and_a_move_at_once_or_another_name_are_other_agents(store_factory, recorder) -> None:
    history = store_factory()
    recorder(history, _run(1, A, signers=[K1]))
    recorder(history, _run(2, B, signers=[K2]))  # a new key at a new address: nothing ties them
    recorder(history, _run(3, C, name="Other Agent", signers=[K1]))  # one key, another name
    assert sorted(_fleet(history)) == [A, B, C]


def test_another_agent_taking_over_an_old_port_is_another_agent(store_factory, recorder) -> None:
    """As when the reference agents come back on each other's ports."""
    history = store_factory()
    recorder(history, _run(1, A, name="Steady", signers=[K1]))
    recorder(history, _run(2, B, name="Steady", signers=[K1]))  # steady moved to B
    recorder(history, _run(3, A, name="Drifting", signers=[K3]))  # drifting now answers at A
    recorder(history, _run(4, A, name="Unsigned"))  # and then an unsigned agent of another name
    recorder(history, _run(5, A, name="Unsigned"))
    fleet = _fleet(history)
    assert fleet[B].name == "Steady" and fleet[B].addresses == (B, A) and fleet[B].runs == 2
    at_a = sorted((row.name, row.runs, row.addresses) for row in history.fleet() if row.agent == A)
    assert at_a == [("Drifting", 1, (A,)), ("Unsigned", 2, (A,))]
    assert history.match_agents(A) == [A]  # the agents living there now (both, by that address)
    assert len(list(history.query(RunQuery(agents=(A,))))) == 3


def test_a_run_that_got_no_card_is_the_agent_living_at_its_address(store_factory, recorder) -> None:
    history = store_factory()
    recorder(history, _run(1, A, signers=[K1]))
    recorder(history, _run(2, B, signers=[K1]))
    down = recorder(history, _no_card(3, B))  # the agent at B stopped answering
    [row] = history.fleet()
    assert (row.agent, row.verdict, row.runs, row.last_run_id) == (B, "unreachable", 3, down)
    # Nothing at its old address either: no agent lives there now, so what did not answer there is
    # that address's own row, as a mistyped URL is.
    recorder(history, _no_card(4, A))
    fleet = _fleet(history)
    assert fleet[A].name is None and fleet[A].runs == 1 and fleet[B].runs == 3
    back = recorder(history, _run(5, A, signers=[K1]))  # it answers at A again: its key says which
    assert history.summary(back).agent == A
    assert sorted((row.name or "", row.runs) for row in history.fleet()) == [("", 1), ("Steady Agent", 4)]


def test_a_signature_that_did_not_verify_where_the_agent_lives_keeps_it_one_agent(
    store_factory, recorder
) -> None:
    history = store_factory()
    recorder(history, _run(1, A, signers=[K1]))
    unverified = recorder(history, _run(2, A, signers=[]))
    [row] = history.fleet()
    assert row.runs == 2 and history.summary(unverified).kinds == ("key",)


def test_churn_and_changes_count_the_agent_across_addresses(store_factory) -> None:
    history = store_factory()
    history.record(_run(1, A, signers=[K1], verdict="churn"))
    history.record(_run(2, B, signers=[K1], verdict="churn"))
    history.record(_run(3, B, signers=[K1], verdict="churn"))
    [row] = history.fleet()
    assert (row.runs, row.churn, row.changes) == (3, 3, 0)
    assert [r.changed for r in history.query(RunQuery())] == [False, False, False]


def test_forgetting_keeps_the_addresses_true(store_factory) -> None:
    history = store_factory()
    first = history.record(_run(1, A, signers=[K1]))
    history.record(_run(2, B, signers=[K1]))
    latest = history.record(_run(3, C, signers=[K1]))
    history.forget_run(latest)  # the agent is again where its latest run now was
    [row] = history.fleet()
    assert (row.agent, row.addresses) == (B, (B, A))
    history.forget_run(first)
    assert [row.addresses for row in history.fleet()] == [(B,)]
    assert history.runs(A) == []  # no run of it was at A any more, and no agent lives there
    assert history.forget_agent(B) == 1 and history.fleet() == []
    again = history.record(_run(4, A, signers=[K1]))  # forgotten whole: its key names no agent now
    assert [(row.agent, row.runs) for row in history.fleet()] == [(A, 1)] and again > latest


def test_forgetting_an_agent_by_an_old_address_forgets_it_at_every_address(store_factory) -> None:
    history = store_factory()
    history.record(_run(1, A, signers=[K1]))
    history.record(_run(2, B, signers=[K1]))
    history.record(_run(3, C))
    assert history.forget_agent(A) == 2
    assert [row.agent for row in history.fleet()] == [C]


def test_a_copy_keeps_every_agent_and_its_addresses(store_factory, fresh_store_url) -> None:
    source = store_factory()
    for run in (
        _run(1, A, signers=[K1]),
        _run(2, B, signers=[K1]),
        _run(3, C),
        _no_card(4, C),
        _run(5, A, name="Drifting", signers=[K3]),
    ):
        source.record(run)
    with open_store(fresh_store_url()) as target:
        assert copy_history(source, target).proved
        assert list(target.query(RunQuery())) == list(source.query(RunQuery()))
        assert target.fleet() == source.fleet() and target.agents() == source.agents()


# --- a history recorded by address ------------------------------------------------------------------


def test_a_history_holding_one_signed_agent_under_two_urls_is_migrated_to_one_agent(
    store_url: str,
) -> None:
    key = generate_key("ES256", kid="card-1")
    card, other = make_card(), make_card("Other")
    old = [
        _signed_run(1, card, key, stated=False, card_url=A),
        _signed_run(2, card, key, stated=False, card_url=A),
        _signed_run(3, card, key, stated=False, card_url=B, verdict="churn"),  # the same agent moved
        _signed_run(4, other, key, stated=False, card_url=C),  # one key, another name: another agent
        _signed_run(5, card, key, stated=False, card_url=B),
    ]
    unsigned = [make_run(card_url=url, started_at=f"2025-01-02T00:0{n}Z") for n, url in enumerate([D, E])]
    _write_as_previous_version(store_url, [*old, *unsigned])  # one name, unsigned, at two URLs
    with open_store(store_url) as history:
        fleet = _fleet(history)
        assert set(fleet) == {B, C, D, E} and fleet[D].addresses == (D,) and fleet[E].addresses == (E,)
        merged = fleet[B]
        assert (merged.name, merged.addresses, merged.runs) == (card["name"], (B, A), 4)
        assert merged.churn == 1  # counted again over the merged runs
        rows = {r.id: r for r in history.query(RunQuery(agents=(A,)))}
        assert sorted(rows) == [1, 2, 3, 5] and {r.agent for r in rows.values()} == {B}
        assert [rows[i].address for i in (1, 2, 3, 5)] == [A, A, B, B]
        kinds = [rows[i].kinds for i in (1, 2, 3, 5)]
        assert kinds[0] == () and merged.changes == sum(is_change(k) for k in kinds)
        assert fleet[C].name == "Other" and fleet[C].addresses == (C,)
        # the next run of the merged agent, at either address, is that agent
        run_id = history.record(_signed_run(6, card, key, stated=True, card_url=A))
        assert history.summary(run_id).agent == A and len(history.fleet()) == 4
        assert [row.addresses for row in history.fleet() if row.name == "Steady Agent" and row.runs == 5] == [
            (A, B)
        ]
    schema = sqlite_schema if store_url.startswith("sqlite") else pg_schema
    with open_store(store_url) as history, history._reading() as conn:  # the test reads the version itself
        if history.kind == "sqlite":
            assert int(conn.execute("PRAGMA user_version").fetchone()[0]) == schema.SCHEMA_VERSION
        else:
            version = conn.execute(f"SELECT version FROM {pg_schema.MARKER_TABLE}").fetchone()[0]
            assert int(version) == schema.SCHEMA_VERSION


# --- real servers ---------------------------------------------------------------------------------


@pytest.mark.slow  # the steady reference agent served twice, on both backends
@pytest.mark.timeout(240)
def test_the_steady_reference_agent_on_two_ports_in_turn_is_one_fleet_row(
    store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from explorer.cli import main
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync
    from tests.support.restarts import Restarts

    agent = Restarts(tmp_path / "agent")
    options = Options(keys=(agent.jwks,), runner="tester")
    urls = []
    with open_store(store_url) as history:
        for moved in (False, True, False):
            with agent.session(moved=moved) as url:
                urls.append(url)
                history.record(run_interview_sync(url, options))
        assert urls[0] != urls[1] and urls[0] == urls[2]
        [row] = history.fleet()
        assert (row.agent, row.addresses, row.runs) == (urls[2], (urls[2], urls[1]), 3)
        assert row.verdict == "conformant"
        assert [r.address for r in history.query(RunQuery(agents=(urls[1],)))] == urls[::-1]
    # `history AGENT` by the port it left, by its card name, by a reference agent's short name
    capsys.readouterr()
    at = ["--history", store_url, "--home", str(tmp_path / "home")]
    for named in (urls[1], row.name, "steady"):
        assert main(["history", named, "--json", *at]) == 0
        listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [(line["agent"], line["address"]) for line in listed] == [(urls[2], url) for url in urls[::-1]]


@pytest.mark.slow  # the unsigned reference agent served on two ports, on both backends
@pytest.mark.timeout(240)
def test_the_unsigned_reference_agent_on_two_ports_is_two_fleet_rows(store_url: str) -> None:
    from explorer.demo.fleet import Fleet
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync

    with open_store(store_url) as history, Fleet(["unsigned"]) as one, Fleet(["unsigned"]) as other:
        urls = [fleet.agents["unsigned"].card_url for fleet in (one, other)]
        for url in urls:
            run = run_interview_sync(url, Options(runner="tester"))
            assert run.report["card"]["signers"] == [] and run.report["card"]["name"]
            history.record(run)
        assert urls[0] != urls[1]
        assert sorted((row.agent, row.addresses) for row in history.fleet()) == sorted(
            (url, (url,)) for url in urls
        )
