"""The store's query API: filters, keyset paging, streaming, the fleet rows and the change mark.

Every test runs against each backend the `store` fixture offers (tests/conftest.py): the SQLite
file always, and a PostgreSQL database when a server can be started here.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from explorer.core.when import WhenError, parse_when
from explorer.store.base import ChangeMark, HistoryError, RunQuery
from tests.support.runs import CARD_URL, make_run

OTHER = "http://127.0.0.1:10/.well-known/agent-card.json"
THIRD = "http://127.0.0.1:11/.well-known/agent-card.json"
START = datetime(2026, 1, 1, tzinfo=UTC)


class Clock:
    """A history clock that moves one hour per run recorded."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        moment = self.now
        self.now += timedelta(hours=1)
        return moment


def _tick(n: int) -> dict:
    return {"started_at": f"2025-01-01T00:00:{n % 60:02d}.000Z", "elapsed_ms": 1.0 + n}


@pytest.fixture
def recorded(store_factory):
    """Ten runs over three agents, one an hour from 2026-01-01T00:00Z, with known changes."""
    history = store_factory(clock=Clock())
    ids = {
        "a1": history.record(make_run(**_tick(1))),
        "b1": history.record(make_run(card_url=OTHER, name="Other", **_tick(2))),
        "a2": history.record(make_run(**_tick(3))),
        "a3": history.record(make_run(answered_name="Impostor", verdict="nonconformant", **_tick(4))),
        "b2": history.record(make_run(card_url=OTHER, name="Other", verdict="churn", **_tick(5))),
        "a4": history.record(make_run(answered_name="Impostor", verdict="nonconformant", **_tick(6))),
        "c1": history.record(make_run(card_url=THIRD, name="Third", verdict="unreachable", **_tick(7))),
        "a5": history.record(make_run(**_tick(8))),
        "b3": history.record(make_run(card_url=OTHER, name="Other", verdict="churn", **_tick(9))),
        "c2": history.record(make_run(card_url=THIRD, name="Third", verdict="unreachable", **_tick(10))),
    }
    return history, ids


def _ids(history, **query) -> list[int]:
    return [r.id for r in history.query(RunQuery(**query))]


def test_every_filter_narrows_and_the_order_is_newest_first(recorded) -> None:
    history, ids = recorded
    order = sorted(ids.values(), reverse=True)
    assert _ids(history) == order
    assert _ids(history, agents=(CARD_URL,)) == [ids[k] for k in ("a5", "a4", "a3", "a2", "a1")]
    assert _ids(history, agents=(OTHER, THIRD)) == [ids[k] for k in ("c2", "b3", "c1", "b2", "b1")]
    assert _ids(history, agents=("http://nobody/",)) == []
    assert _ids(history, agents=()) == []
    assert _ids(history, verdicts=("nonconformant",)) == [ids["a4"], ids["a3"]]
    assert _ids(history, verdicts=("churn", "unreachable")) == [ids[k] for k in ("c2", "b3", "c1", "b2")]
    # changed: the verdict alone (b2: conformant -> churn, same card and answers) counts too
    assert _ids(history, changed=True) == [ids["a5"], ids["b2"], ids["a3"]]
    assert _ids(history, changed=True, agents=(CARD_URL,)) == [ids["a5"], ids["a3"]]
    # since is inclusive, until exclusive; runs are one hour apart from START
    assert _ids(history, since=START + timedelta(hours=7)) == [ids["c2"], ids["b3"], ids["a5"]]
    assert _ids(history, until=START + timedelta(hours=2)) == [ids["b1"], ids["a1"]]
    assert _ids(history, since=START + timedelta(hours=2), until=START + timedelta(hours=4)) == [
        ids["a3"],
        ids["a2"],
    ]
    assert _ids(history, limit=3) == order[:3]
    assert _ids(history, before=ids["a4"], limit=2) == [ids["b2"], ids["a3"]]
    assert _ids(history, before=ids["a4"], agents=(CARD_URL,), verdicts=("nonconformant",)) == [ids["a3"]]


def test_summaries_carry_the_stored_change_and_line(recorded) -> None:
    history, ids = recorded
    rows = {r.id: r for r in history.query(RunQuery())}
    assert [rows[ids[k]].changed for k in ("a1", "a2", "a3", "a4", "a5")] == [False, False, True, False, True]
    assert rows[ids["b2"]].changed and not rows[ids["b3"]].changed and not rows[ids["c2"]].changed
    assert rows[ids["a3"]].recorded_at == "2026-01-01T03:00:00.000Z"
    assert history.summary(ids["b2"]) == rows[ids["b2"]]
    assert history.runs(OTHER, limit=2) == [rows[ids["b3"]], rows[ids["b2"]]]


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> int:
    """Pages of 7 rows, so a few dozen runs take many round trips."""
    import explorer.store.sql

    monkeypatch.setattr(explorer.store.sql, "PAGE", 7)
    return 7


def test_keyset_pages_walk_the_whole_history_once(store_factory, small_pages) -> None:
    history = store_factory()
    made = [history.record(make_run(card_url=(CARD_URL, OTHER)[n % 2], **_tick(n))) for n in range(61)]
    seen: list[int] = []
    before = None
    while True:
        page = _ids(history, before=before, limit=10)
        if not page:
            break
        seen += page
        before = page[-1]
    assert seen == made[::-1]
    everything = history.query(RunQuery())  # no limit: streamed a page at a time
    assert next(everything).id == made[-1]
    assert sum(1 for _ in everything) == len(made) - 1
    assert _ids(history, agents=(OTHER,), limit=100) == made[1::2][::-1]
    assert _ids(history, agents=(CARD_URL,), limit=9) == made[::2][::-1][:9]


def test_a_query_being_consumed_does_not_block_a_writer(store_factory, small_pages) -> None:
    history = store_factory()
    for n in range(20):
        history.record(make_run(**_tick(n)))
    stream = history.query(RunQuery())
    next(stream)
    done: list[int] = []
    writer = threading.Thread(target=lambda: done.append(history.record(make_run(**_tick(5000)))))
    writer.start()
    writer.join(timeout=20)
    assert done, "recording waited for a half-read query"
    assert sum(1 for _ in stream) >= 19


def test_fleet_rows_and_agents_come_from_the_kept_counters(recorded) -> None:
    history, ids = recorded
    fleet = {row.agent: row for row in history.fleet()}
    assert [row.agent for row in history.fleet()] == [THIRD, OTHER, CARD_URL]
    mine = fleet[CARD_URL]
    assert (mine.runs, mine.last_run_id, mine.verdict) == (5, ids["a5"], "conformant")
    assert (mine.churn, mine.changes, mine.kinds) == (0, 2, ("answers", "verdict"))  # a3 and a5 changed
    assert mine.last_change_at == "2026-01-01T07:00:00.000Z"
    assert mine.signature == "verified" and mine.name == "Steady Agent"
    # churn counts churn verdicts (b2, b3); changes the runs that changed (b2: conformant -> churn)
    assert (fleet[OTHER].runs, fleet[OTHER].churn, fleet[OTHER].changes) == (3, 2, 1)
    assert fleet[OTHER].verdict == "churn" and fleet[OTHER].kinds == ()
    assert fleet[OTHER].last_change_at == "2026-01-01T04:00:00.000Z"  # b2's hour
    assert fleet[THIRD].last_change_at is None and (fleet[THIRD].churn, fleet[THIRD].changes) == (0, 0)
    assert [(a.agent, a.runs, a.last_run_id) for a in history.agents()] == [
        (THIRD, 2, ids["c2"]),
        (OTHER, 3, ids["b3"]),
        (CARD_URL, 5, ids["a5"]),
    ]


def test_forgetting_repairs_the_successor_and_the_counters(recorded) -> None:
    history, ids = recorded
    history.forget_run(ids["a3"])  # a4 (nonconformant) now follows a2 (conformant): a change
    assert history.summary(ids["a4"]).changed
    assert _ids(history, changed=True, agents=(CARD_URL,)) == [ids["a5"], ids["a4"]]
    history.forget_run(ids["a5"])  # the latest: the fleet row falls back to a4
    row = next(r for r in history.fleet() if r.agent == CARD_URL)
    assert (row.runs, row.last_run_id, row.verdict, row.churn, row.changes) == (
        3,
        ids["a4"],
        "nonconformant",
        0,
        1,
    )
    assert row.last_change_at == "2026-01-01T05:00:00.000Z" and row.kinds == ("answers", "verdict")
    assert history.forget_agent(THIRD) == 2
    assert THIRD not in {r.agent for r in history.fleet()}
    history.forget_run(ids["b1"])
    history.forget_run(ids["b2"])
    history.forget_run(ids["b3"])
    assert OTHER not in {a.agent for a in history.agents()}
    with pytest.raises(HistoryError, match=f"no run {ids['b3']}"):
        history.summary(ids["b3"])


def test_each_run_is_told_its_agents_run_before_it(recorded) -> None:
    history, ids = recorded
    later = [ids[k] for k in ("a1", "a3", "b2", "b3", "c2", "a5")] + [10_000]
    before = history.previous(later)
    assert set(before) == {ids[k] for k in ("a3", "b2", "b3", "c2", "a5")}  # a1 is its agent's first
    assert before[ids["a3"]].id == ids["a2"] and before[ids["a5"]].id == ids["a4"]
    assert (before[ids["b2"]].id, before[ids["b2"]].verdict) == (ids["b1"], "conformant")
    assert before[ids["b3"]] == history.summary(ids["b2"])  # the whole line of the run before
    assert before[ids["c2"]].agent == THIRD
    many = history.previous(list(range(1, 12)) * 3)  # each asked three times, answered once
    assert set(many) == set(before) | {ids[k] for k in ("a2", "a4")}
    history.forget_run(ids["a4"])
    assert history.previous([ids["a5"]])[ids["a5"]].id == ids["a3"]


def test_the_change_mark_moves_with_every_record_and_forget(store_factory) -> None:
    writer = store_factory()
    reader = store_factory()  # another connection, as another runner's TUI would hold
    assert reader.mark() == ChangeMark(0, 0, 0)
    first = writer.record(make_run())
    seen = reader.mark()
    assert seen == ChangeMark(first, 1, 0)
    second = writer.record(make_run(**_tick(2)))
    assert reader.mark() == ChangeMark(second, 2, 0)
    writer.forget_run(first)
    assert reader.mark() == ChangeMark(second, 1, 1)


@pytest.mark.parametrize(
    ("text", "end", "expected"),
    [
        ("2026-01-31", False, datetime(2026, 1, 31, tzinfo=UTC)),
        ("2026-01-31", True, datetime(2026, 2, 1, tzinfo=UTC)),
        ("2026-01-31T12:30", False, datetime(2026, 1, 31, 12, 30, tzinfo=UTC)),
        ("2026-01-31T12:30:00Z", True, datetime(2026, 1, 31, 12, 30, tzinfo=UTC)),
        ("2026-01-31T14:30:00+02:00", False, datetime(2026, 1, 31, 12, 30, tzinfo=UTC)),
        ("30m", False, datetime(2026, 3, 1, 11, 30, tzinfo=UTC)),
        ("12h", False, datetime(2026, 3, 1, 0, 0, tzinfo=UTC)),
        ("7d", True, datetime(2026, 2, 22, 12, 0, tzinfo=UTC)),
        ("2w", False, datetime(2026, 2, 15, 12, 0, tzinfo=UTC)),
    ],
)
def test_moments_are_read_as_a_person_means_them(text, end, expected) -> None:
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert parse_when(text, now, end_of_day=end) == expected


@pytest.mark.parametrize("text", ["yesterday", "7x", "2026-02-30", "-3d", "", "99999999999d"])
def test_a_moment_that_is_not_one_is_refused_with_what_would_be(text) -> None:
    with pytest.raises(WhenError):
        parse_when(text, datetime(2026, 3, 1, tzinfo=UTC))


def test_documents_another_runner_forgot_are_stored_again(store_factory) -> None:
    writer = store_factory()
    other = store_factory()  # another runner, on the same history
    writer.record(make_run(**_tick(1)))
    assert other.forget_agent(CARD_URL) == 1  # every document of that run is deleted with it
    again = writer.record(make_run(**_tick(2)))  # the writer has seen them stored: they are not
    run, expected = writer.load(again), make_run(**_tick(2))
    assert run.report == expected.report
    assert [e.response_body for e in run.exchanges] == [e.response_body for e in expected.exchanges]


def test_an_agent_whose_only_run_churned_shows_churn_in_the_fleet(store_factory) -> None:
    history = store_factory(clock=Clock())
    history.record(make_run(card_url=OTHER, name="Other", verdict="churn", **_tick(1)))
    [row] = history.fleet()
    assert (row.churn, row.changes, row.verdict, row.last_change_at) == (1, 0, "churn", None)  # not a change
    run_id = history.record(make_run(card_url=OTHER, name="Other", verdict="churn", **_tick(2)))
    history.forget_run(run_id)  # the counters are counted again from the runs left
    [row] = history.fleet()
    assert (row.churn, row.changes, row.runs) == (1, 0, 1)
