"""Every screen at 80x24 as well as at a large size: nothing a newcomer needs falls off the edge.

At 80x24 the interview footer used to drop `^q Quit` and `f1 Help` off its right end, the tab
strip was cut at both ends, the F1 panel cut its text mid-sentence and squeezed the header until
it broke a URL mid-word, and compare printed `served → ` with nothing after the arrow. These
tests walk each screen the way a user does (Pilot, keys) at both sizes and read what is drawn.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from textual.widgets import Markdown, TabbedContent, Tabs
from textual.widgets._footer import FooterKey

from explorer.core.run import Run
from explorer.demo.fleet import Fleet
from explorer.tui.screens.compare import CompareScreen
from explorer.tui.screens.help import HelpScreen
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.value import ValueScreen
from explorer.tui.screens.watch import WatchScreen
from explorer.tui.widgets.first_attempt import FirstAttempt
from tests.support.tui import TUI_SIZE, Tui, interview_ready, screen_text, wait_for, wait_for_interview

pytestmark = pytest.mark.slow  # the TUI under Pilot

SIZES = {"80x24": (80, 24), "150x50": TUI_SIZE}
sizes = pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())


BOX = str.maketrans("", "", "█▀▄▌▐▊▎▏▕▇▆▅▃▂▁▔")


def words(text: str) -> str:
    """The words drawn, one space apart, frames and scrollbars left out: a sentence wrapped over
    several lines of a box reads as it was written."""
    return " ".join(text.translate(BOX).split())


def footer_keys(screen: Any) -> list[str]:
    return [f"{key.key_display} {key.description}" for key in screen.query(FooterKey)]


def footer_line(app: Any) -> str:
    return screen_text(app).rstrip("\n").split("\n")[-1]


async def assert_footer_whole(pilot: Any) -> None:
    """The screen's footer shows quit and help, and every key it shows is drawn in full (once
    drawn: a footer fills in just after its screen)."""
    app = pilot.app
    await wait_for(pilot, lambda: "Quit" in footer_line(app), 10)
    keys = footer_keys(app.screen)
    assert "^q Quit" in keys and "f1 Help" in keys, keys
    line = footer_line(app)
    for key in keys:
        assert key in line, f"{key!r} is cut from the footer: {line!r}"


@pytest.fixture(scope="module")
def churn_run() -> Iterator[Run]:
    """One live run of a churning agent of its own (it flips once between the two attempts)."""
    import asyncio

    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview
    from explorer.tui.demo_agents import demo_keys

    with Fleet(["churning"]) as fleet:
        run = asyncio.run(run_interview(fleet.agents["churning"].card_url, Options(keys=demo_keys(fleet))))
    assert run.report["verdict"] == "churn"
    yield run


# --- the footer ---------------------------------------------------------------------------------


@sizes
async def test_every_footer_shows_quit_and_help_whole(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    async with tui(size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        await assert_footer_whole(pilot)  # the load screen
        app.show_run(demo_runs["drifting"], 1)
        screen = await wait_for_interview(pilot)
        await assert_footer_whole(pilot)
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ValueScreen))
        await pilot.pause()
        await assert_footer_whole(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        await assert_footer_whole(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        app.push_screen(CompareScreen(demo_runs["steady"], 1, demo_runs["drifting"], 2))
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        await pilot.pause()
        await assert_footer_whole(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        app.push_screen(WatchScreen("http://127.0.0.1:9/never", first=demo_runs["drifting"], interval=3600))
        await wait_for(pilot, lambda: isinstance(app.screen, WatchScreen))
        await pilot.pause()
        await assert_footer_whole(pilot)


async def test_a_narrow_footer_keeps_the_first_keys_and_f1_lists_the_rest(
    tui: Tui, demo_runs: dict[str, Any]
) -> None:
    async with tui(size=(80, 24)) as pilot:
        app = pilot.app
        await pilot.pause()
        app.show_run(demo_runs["drifting"], 1)
        screen = await wait_for_interview(pilot)
        keys = footer_keys(screen)
        assert keys[:4] == ["esc Back", "d Card", "n Next problem", "f Findings"], keys
        assert "v Whole value" not in keys  # no room at 80 columns...
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        listed = app.screen.query_one("#help-keys").render()
        assert "Whole value" in str(listed) and "Export" in str(listed)  # ...F1 lists it
        await pilot.press("escape")
        await pilot.resize_terminal(160, 45)  # wider: the footer takes the keys back
        await wait_for(pilot, lambda: "v Whole value" in footer_keys(screen))
        await assert_footer_whole(pilot)


# --- the tab strip ------------------------------------------------------------------------------


def assert_tabs_whole(app: Any) -> None:
    screen = app.screen
    width = app.size.width
    strip = screen.query_one(Tabs)
    rows = screen_text(app).split("\n")[strip.region.y : strip.region.y + 2]
    line = next(row for row in rows if row.strip())
    for tab in strip.query("Tab"):
        region = tab.region
        assert region.x >= 0 and region.right <= width, (tab.label_text, region, width)
        assert tab.label_text in line, (tab.label_text, line)


@sizes
async def test_the_tab_strip_is_never_cut(
    tui: Tui, demo_runs: dict[str, Any], churn_run: Run, size: tuple[int, int]
) -> None:
    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        for run in (demo_runs["drifting"], churn_run):
            app.show_run(run, 1)
            await wait_for_interview(pilot)
            await pilot.pause()
            assert_tabs_whole(app)
            labels = [tab.label_text for tab in app.screen.query_one(Tabs).query("Tab")]
            if size == (80, 24):
                assert "✗ usage" in labels or "churned 3" in labels, labels  # the short labels
            else:
                assert "✗ usage (1 mismatch)" in labels or "churned (3)" in labels, labels
            for key in ("5", "f"):  # the last question and the findings, active in turn
                await pilot.press(key)
                await pilot.pause()
                assert_tabs_whole(app)
            await pilot.press("escape")
            await pilot.pause()


# --- the header and F1 --------------------------------------------------------------------------


@sizes
async def test_the_header_says_what_would_make_an_unverifiable_signature_checkable(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    run = demo_runs["drifting"]
    report = copy.deepcopy(run.report)
    report["card"]["signature"].update(status="unverifiable", form=None, key_source=None)
    async with tui(agents=False, size=size) as pilot:
        pilot.app.show_run(Run(report=report, exchanges=run.exchanges, keys=run.keys), 1)
        screen = await wait_for_interview(pilot)
        header = screen.query_one("#header")
        said = words("\n".join(screen_text(pilot.app).split("\n")[header.region.y : header.region.bottom]))
        assert "signature ? unverifiable" in said, said
        assert (
            "to check it: --keys JWKS_FILE_OR_URL with the signer's public key (kid drifting-card-1), "
            "or keys in the config, or --allow-jku to trust the key set the card names"
        ) in said, said
        assert "verdict" in said and "standing claim" in said, said  # the hint pushed no fact out


@sizes
async def test_the_header_keeps_every_fact_whole(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    run = demo_runs["drifting"]
    url = run.report["card"]["url"]
    async with tui(agents=False, size=size) as pilot:
        pilot.app.show_run(run, 1)
        screen = await wait_for_interview(pilot)
        header = screen.query_one("#header")
        lines = screen_text(pilot.app).split("\n")[header.region.y : header.region.bottom]
        text = "\n".join(lines)
        assert url in text, text  # the URL on one line, never broken
        assert "kid drifting-card-1" in text and "verdict ✗ nonconformant" in text, text
        # Who ran it, in words that are true of anyone's agent, and how to make it evidence.
        said = words(text)
        assert "standing claim: run by tester, no independent role declared" in said
        if size[0] >= 100:  # how to make it evidence, where it fits (F1 says it at any size)
            assert "(--as independent declares one)" in said
        assert said.count("claim") == 1 and "operator" not in said, said
        assert not any(line.rstrip().endswith(("kid", "card", "verdict", "standing")) for line in lines), text


@sizes
async def test_the_answer_and_its_source_are_each_given_a_readable_width(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    """At 80x24 the two value boxes used to stand side by side 19 columns wide, a short card name
    wrapped over two lines in each; a narrow detail stacks them, a wide one keeps them side by side."""
    async with tui(agents=False, size=size) as pilot:
        pilot.app.show_run(demo_runs["drifting"], 1)
        screen = await wait_for_interview(pilot)
        await pilot.pause()
        detail = screen.query_one("ProjectionDetail")
        answer, source = detail.query_one(".answer").region, detail.query_one(".source").region
        assert min(answer.width, source.width) >= 36, (answer, source)
        if size[0] < 100:
            assert answer.x == source.x and source.y >= answer.bottom, (answer, source)
        else:
            assert answer.y == source.y and source.x >= answer.right, (answer, source)


@sizes
async def test_f1_shows_the_whole_help_and_leaves_the_screen_as_it_was(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        app.show_run(demo_runs["drifting"], 1)
        screen = await wait_for_interview(pilot)
        before = screen_text(app)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        help_screen = app.screen
        source = help_screen.query_one(Markdown).source
        assert "RFC 6901 pointer" in source  # the focused list's help
        last = "shows the whole value."  # the end of its last sentence
        assert last in source
        frames = []
        for _ in range(60):  # scrolled a line at a time, as far as it goes
            frames.append(words(screen_text(app)))
            await pilot.press("down")
        # Every sentence can be read whole on some frame: nothing is cut mid-sentence.
        for sentence in (
            "n jumps to the next problem, c copies the pointer, y copies the value, v shows the whole value.",
            "v Whole value",
            "ctrl+p lists every command by name",
        ):
            assert any(sentence in frame for frame in frames), sentence
        await pilot.press("f1")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.pause()
        assert screen_text(app) == before  # the screen beneath was never squeezed


# --- compare ------------------------------------------------------------------------------------


@sizes
async def test_compare_says_none_when_a_fact_has_no_value(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    before = demo_runs["steady"]
    report = copy.deepcopy(before.report)
    report["card"]["signature"]["status"] = "unverifiable"
    report["card"]["signature"]["form"] = None
    after = Run(report=report)
    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        app.push_screen(CompareScreen(before, 1, after, 2))
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        await pilot.pause()
        text = screen_text(app)
        assert "card.signature.form: served → (none)" in text, text
        standing = next(line for line in text.split("\n") if "A standing" in line)
        assert standing.count("claim") == 1 and "no independent role declared" in words(text), standing
        assert not any(line.rstrip().endswith("→") for line in text.split("\n")), text


# --- churn ----------------------------------------------------------------------------------------


@sizes
async def test_n_walks_what_churned_and_u_opens_it(tui: Tui, churn_run: Run, size: tuple[int, int]) -> None:
    async with tui(agents=False, size=size) as pilot:
        app = pilot.app
        app.show_run(churn_run, 1)
        screen = await wait_for_interview(pilot)
        assert "u Churned" in footer_keys(screen)
        tabs = screen.query_one(TabbedContent)
        seen = []
        for _ in range(4):  # three conflicts, then round again to the first
            await pilot.press("n")
            await pilot.pause()
            assert tabs.active == "tab-first-attempt"
            listing = screen.query_one(FirstAttempt)
            seen.append(listing.selected)
            chosen = listing.query_one(f"#churned-{listing.selected}")
            assert chosen.has_class("-selected")
            assert f"✗ {listing.selected + 1}/3" in screen_text(app)  # scrolled into view
        assert seen == [0, 1, 2, 0]
        assert not any(n.message.startswith("every projection matches") for n in app._notifications)
        await pilot.press("1")
        await pilot.pause()
        assert tabs.active == "tab-identity"
        await pilot.press("u")
        await pilot.pause()
        assert tabs.active == "tab-first-attempt" and app.focused is screen.query_one(FirstAttempt)


async def test_the_palette_opens_the_churned_tab(tui: Tui, churn_run: Run) -> None:
    async with tui(agents=False) as pilot:
        app = pilot.app
        app.show_run(churn_run, 1)
        screen = await wait_for_interview(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"show: churned")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: interview_ready(app) and app.screen is screen)
        await wait_for(pilot, lambda: screen.query_one(TabbedContent).active == "tab-first-attempt")


async def test_a_run_that_did_not_churn_has_no_churned_key(tui: Tui, demo_runs: dict[str, Any]) -> None:
    async with tui(agents=False) as pilot:
        pilot.app.show_run(demo_runs["steady"], 1)
        screen = await wait_for_interview(pilot)
        assert isinstance(screen, InterviewScreen)
        assert screen.check_action("churned", ()) is False and "u Churned" not in footer_keys(screen)
        await pilot.press("n")
        await pilot.pause()
        assert any(n.message.startswith("every projection matches") for n in pilot.app._notifications)


# --- wording ----------------------------------------------------------------------------------------


@sizes
async def test_counts_and_the_layout_read_as_english(
    tui: Tui, fleet: Any, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    from explorer.store.sqlite import History

    with History.open() as history:
        history.record(demo_runs["steady"])
    async with tui(size=size) as pilot:
        app = pilot.app
        await pilot.pause()
        app.show_run(demo_runs["steady"], 1)
        screen = await wait_for_interview(pilot)
        header = words(screen_text(app))
        assert "layout v1.0 · A2A 1.0 over JSON-RPC" in header and "(JSON-RPC 1.0)" not in header
        await pilot.press("f2")  # the history: one run
        await wait_for(pilot, lambda: "every run · 1 run · marked" in words(screen_text(app)))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        steady = fleet.agents["steady"].card_url
        app.push_screen(WatchScreen(steady, first=demo_runs["steady"], interval=3600))
        await wait_for(pilot, lambda: isinstance(app.screen, WatchScreen) and app.screen.ticks == 1)
        await wait_for(pilot, lambda: "1 replay · 0 with changes" in words(screen_text(app)))
        assert "1 replays" not in words(screen_text(app))


@sizes
async def test_p_shows_every_closure_probe_whole_at_any_size(
    tui: Tui, demo_runs: dict[str, Any], size: tuple[int, int]
) -> None:
    from explorer.tui.screens.value import ValueScreen

    async with tui(agents=False, size=size) as pilot:
        pilot.app.show_run(demo_runs["drifting"], 1)
        screen = await wait_for_interview(pilot)
        assert "p Probes" in words(screen_text(pilot.app)) or size[0] < 100  # the footer drops keys to fit
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ValueScreen))
        await pilot.pause()
        text = pilot.app.screen.text
        assert text.count("\n    sent ") == len(demo_runs["drifting"].report["probes"])
        assert "✗ valid selector: was answered, but projection_mismatch (see findings)" in text
        assert "✓ undefined method: got the standard refusal" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen)
        assert screen.query_one("TabbedContent").active == "tab-refusals"
