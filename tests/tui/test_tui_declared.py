"""On screen: each question read from the declared documents when the agent does not answer, and
everything a card declares, for any agent (issue 30, items 3 and 4).

Driven under Pilot at 80x24 and 160x45 on live runs of the reference agents: silent (does not
offer the interview), down (its card read, every call 503), guarded-bearer without its credential
(refused the calls) and steady (answers, so nothing changes). The card screen is opened with the
key its footer shows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from explorer.core.run import Run
from explorer.tui.screens.card import CardScreen, card_sections
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.widgets.detail import ProjectionDetail, ValuePanel
from explorer.tui.widgets.projections import NOT_ANSWERED, ProjectionList
from explorer.tui.widgets.question import QuestionPane
from tests.support.tui import make_app, plain, screen_text, wait_for, wait_for_interview

SIZES = {"80x24": (80, 24), "160x45": (160, 45)}
sizes = pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
UNANSWERED = ("silent", "down", "guarded-bearer")


def words(text: str) -> str:
    return " ".join(text.replace("▎", " ").replace("▊", " ").replace("▏", " ").split())


@pytest.fixture(scope="module")
def runs(fleet: Any) -> dict[str, Run]:
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview
    from explorer.tui.demo_agents import demo_keys

    async def interview(name: str) -> Run:
        return await run_interview(
            fleet.agents[name].card_url, Options(keys=demo_keys(fleet), runner="tester")
        )

    return {name: asyncio.run(interview(name)) for name in (*UNANSWERED, "steady", "forged")}


async def opened(pilot: Any, run: Run) -> InterviewScreen:
    pilot.app.show_run(run, 1)
    screen = await wait_for_interview(pilot)
    await pilot.pause(0.1)
    return screen


async def tab(pilot: Any, screen: InterviewScreen, key: str) -> str:
    """The question tab `key` opens, as drawn: its summary and list (whose lines wrap and sit
    beside the detail on a small terminal, so they are read from the widgets), then the screen."""
    await pilot.press(key)
    await wait_for(pilot, lambda: screen.query(f"#pane-{screen.active_question}"))
    await pilot.pause(0.2)
    pane = screen.query_one(f"#pane-{screen.active_question}", QuestionPane)
    summary = plain(pane.query_one(".summary", Static).render())
    listing = pane.query_one(ProjectionList)
    rows = [plain(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
    return words(" ".join([summary, *rows, screen_text(pilot.app)]))


@sizes
@pytest.mark.parametrize("agent", UNANSWERED)
async def test_each_question_an_agent_did_not_answer_shows_its_declared_members(
    runs: dict[str, Run], tmp_path: Path, agent: str, size: tuple[int, int]
) -> None:
    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        screen = await opened(pilot, runs[agent])
        drawn = await tab(pilot, screen, "1")
        assert f"{NOT_ANSWERED}: 5 members" in drawn
        for member in ("/name", "/provider", "/version"):
            assert f"◇ {member}" in drawn, (member, drawn)
        assert "card signature ✓ verified" in drawn  # the check the members rest on, beside them
        detail_head = plain(screen.query_one("#detail-identity .info", Static).render())
        assert words(detail_head) == f"pointer /name ◇ {NOT_ANSWERED}"  # the detail of the first member
        detail = screen.query_one("#detail-identity", ProjectionDetail)
        assert not detail.query_one(".answer", ValuePanel).display  # no answer to set beside it
        assert detail.query_one(".source", ValuePanel).border_title == "declared · signed"
        drawn = await tab(pilot, screen, "4")
        assert f"{NOT_ANSWERED}: 16 members" in drawn and "◇ /parties" in drawn
        assert "proposal reconcile-statement: verified" in drawn  # the terms checks beside them
        drawn = await tab(pilot, screen, "5")
        assert "◇ /skills/0/id" in drawn and "◇ /skills/1/id" in drawn
        await pilot.press("down", "v")  # the whole declared value, with nothing called an answer
        await pilot.pause(0.2)
        whole = words(screen_text(pilot.app))
        assert "declared value /skills/1/id" in whole and "flag-exceptions" in whole
        assert "answer value" not in whole


@sizes
async def test_an_answered_question_is_shown_as_before(
    runs: dict[str, Run], tmp_path: Path, size: tuple[int, int]
) -> None:
    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        screen = await opened(pilot, runs["steady"])
        drawn = await tab(pilot, screen, "1")
        assert NOT_ANSWERED not in drawn and "◇" not in drawn
        assert "✓ /name" in drawn and "answer value" in drawn
        detail = screen.query_one("#detail-identity", ProjectionDetail)
        assert detail.query_one(".source", ValuePanel).border_title == "signed source"
        assert "signed source m…" not in drawn


@sizes
async def test_the_source_box_never_says_signed_over_a_forged_card(
    runs: dict[str, Run], tmp_path: Path, size: tuple[int, int]
) -> None:
    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        screen = await opened(pilot, runs["forged"])
        await tab(pilot, screen, "1")
        title = screen.query_one("#detail-identity", ProjectionDetail).query_one(".source", ValuePanel)
        assert title.border_title == "source member"
        title.scroll_visible(animate=False)  # at 80x24 the header's lines leave it below the fold
        await pilot.pause(0.1)
        assert "╭─ source member" in screen_text(pilot.app)  # drawn whole, not cut


@sizes
@pytest.mark.parametrize("agent", ["silent", "steady"])
async def test_the_card_screen_shows_every_kind_of_declaration_from_the_footers_key(
    runs: dict[str, Run], tmp_path: Path, agent: str, size: tuple[int, int]
) -> None:
    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        await opened(pilot, runs[agent])
        footer = words(screen_text(pilot.app).splitlines()[-1])
        assert "d Card" in footer  # the key is in the footer, even at 80 columns
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, CardScreen))
        await pilot.pause(0.2)
        card = pilot.app.screen
        assert isinstance(card, CardScreen)
        assert "n Next section" in words(screen_text(pilot.app).splitlines()[-1])
        seen: list[str] = []
        for _ in range(len(card.sections) + 2):
            seen.append(words(screen_text(pilot.app)))
            await pilot.press("n")
            await pilot.pause(0.1)
        drawn = " ".join(seen)
        for title in (
            "Card",
            "Interfaces (1)",
            "Security schemes (1)",
            "Skills (2)",
            "Extensions",
            "Terms proposals (2)",
            "Reputation",
            "Signature",
            "Card problems",
            "Other members",
        ):
            assert title in drawn, title
        assert "scheme apiKey:" in drawn and "examples (1):" in drawn
        assert "✓ fetched" in drawn and "✓ digest" in drawn  # each proposal under its own procedure
        assert "https://agentsow.com/extensions/a2a-terms/v1 (the terms extension)" in drawn
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, InterviewScreen))


def test_the_card_screen_draws_agent_text_as_text_and_a_record_without_the_card() -> None:
    from explorer.core.view import ReportView

    hostile = {
        "name": "[bold red]boss[/] \x1b[2J",
        "skills": [{"id": "[link=x]s[/link]", "examples": ["\u202eevil"]}],
        "capabilities": {"extensions": [{"uri": "urn:x", "params": {"k": "[b]v"}}]},
        "x-extra": 1,
    }
    sections = {s.key: s for s in card_sections(ReportView.of({}), hostile)}
    text = "\n".join(line.text for s in sections.values() for line in s.lines)
    assert "\x1b" not in text and "\u202e" not in text and "[bold red]boss[/]" in text
    assert [line.text for line in sections["other"].lines] == ["x-extra: 1"]
    without = card_sections(ReportView.of({"card": {"signature": {"status": "invalid"}}}), None)
    assert without[0].lines[0].text.startswith("the card's bytes are not in this record")
    assert any("✗ invalid" in line.text for s in without for line in s.lines)


def test_declared_members_are_no_problems_to_walk_to(runs: dict[str, Run]) -> None:
    from explorer.core.view import ReportView
    from explorer.tui import model

    view = ReportView.of(runs["silent"].report)
    assert model.first_problem(view) is None  # declared members are no problems to walk to
    assert model.question_state(view, "identity").summary == "not asked"


@sizes
async def test_keys_typed_right_after_a_tab_key_reach_that_tab(
    runs: dict[str, Run], tmp_path: Path, size: tuple[int, int]
) -> None:
    """`3`, Down, Down, then `4`, Down, all queued at once (typed ahead, as a fast hand or a paste
    does): each Down moves the list of the tab its key opened, never the list left behind."""
    from textual import events

    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        screen = await opened(pilot, runs["steady"])
        for key in ("3", "down", "down", "4", "down"):
            pilot.app.post_message(events.Key(key, key if len(key) == 1 else None))
        await wait_for(pilot, lambda: screen.active_question == "terms" and screen.query("#pane-terms"))
        await pilot.pause(0.2)

        assert (
            highlighted(screen, "identity"),
            highlighted(screen, "usage"),
            highlighted(screen, "terms"),
        ) == (0, 2, 1)
        assert pilot.app.focused is screen.query_one("#pane-terms", QuestionPane).query_one(ProjectionList)


@sizes
async def test_keys_typed_before_the_opened_pane_is_built_wait_for_it(
    runs: dict[str, Run], tmp_path: Path, size: tuple[int, int]
) -> None:
    """The pane the screen opens on is built right after its first frame: Down, Down typed as the
    screen appears (at launch, before anything is drawn) move that pane's list, in order."""
    from textual import events

    async with make_app(None, tmp_path).run_test(size=size) as pilot:
        pilot.app.show_run(runs["steady"], 1)
        for _ in range(2):
            pilot.app.post_message(events.Key("down", None))
        screen = await wait_for_interview(pilot)
        await wait_for(pilot, lambda: highlighted(screen, "identity") == 2)
        assert pilot.app.focused is screen.query_one("#pane-identity", QuestionPane).query_one(ProjectionList)


def highlighted(screen: InterviewScreen, name: str) -> int | None:
    return screen.query_one(f"#pane-{name}", QuestionPane).query_one(ProjectionList).highlighted
