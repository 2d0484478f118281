"""The TUI's main flows against the reference agents, driven the way a user drives them.

The first test is the README's promise: `interview-explorer demo` lists the reference agents
with their expected verdicts, the user picks drifting, the interview runs in a worker with
visible progress, and the interview screen opens on the conflicting member with both values and
both canonical strings, the differing span marked with brackets and carets (not only colour).
The others walk each tab, the findings jump, copy, the whole-value view, export (key and
palette), F1 help, the user keymap, and the launcher's usage errors.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from textual.content import Content
from textual.widgets import OptionList, Static, TabbedContent

from explorer.demo.variants import VARIANTS
from explorer.tui.app import ExplorerApp
from explorer.tui.demo_agents import demo_agents, demo_keys
from explorer.tui.launch import build_app, run_tui
from explorer.tui.screens.interview import InterviewScreen
from explorer.tui.screens.load import LoadScreen
from explorer.tui.screens.progress import ProgressScreen
from explorer.tui.widgets.question import QuestionPane
from tests.support.tui import Tui, plain, screen_text, wait_for, wait_for_interview

pytestmark = pytest.mark.slow  # drives the Textual app with Pilot against the reference agents

SIZE = (150, 50)


async def show(pilot: Any, run: Any, run_id: int | None = 1) -> InterviewScreen:
    pilot.app.show_run(run, run_id)
    await wait_for_interview(pilot)
    return pilot.app.screen


async def open_demo_agent(pilot: Any, name: str) -> ProgressScreen:
    """Pick a reference agent on the load screen with the keyboard, as a user would."""
    app = pilot.app
    names = [agent.name for agent in app.context.demo]
    demo = app.screen.query_one("#demo", OptionList)
    assert app.focused is demo
    await pilot.press("home", *["down"] * names.index(name), "enter")
    progress = app.last_progress
    assert isinstance(progress, ProgressScreen) and progress.target == app.context.demo[names.index(name)].url
    await wait_for_interview(pilot)
    return progress


def tab_labels(screen: InterviewScreen) -> dict[str, str]:
    tabs = screen.query_one(TabbedContent)
    return {pane.id.removeprefix("tab-"): tabs.get_tab(pane.id).label.plain for pane in tabs.query("TabPane")}


def detail_text(screen: InterviewScreen, question: str) -> dict[str, str]:
    detail = screen.query_one(f"#detail-{question}")
    info = plain(detail.query_one(".info", Static)) + "\n" + plain(detail.query_one(".where", Static))
    return {
        "where": info.split("\n")[0],
        "document": info,
        "terms": info,
        "canonical": plain(detail.query_one(".canonical")),
        "answer": plain(detail.query_one(".answer", Static)),
        "source": plain(detail.query_one(".source", Static)),
    }


async def test_demo_drifting_shows_the_mismatch_without_a_keystroke_more(tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        load = app.screen
        assert isinstance(load, LoadScreen)
        demo = load.query_one("#demo", OptionList)
        rows = [demo.get_option_at_index(i).prompt.plain for i in range(demo.option_count)]
        assert any(r.startswith("steady  expected: conformant") for r in rows)
        assert any(r.startswith("drifting  expected: nonconformant") for r in rows)
        assert any(r.startswith("silent  expected: not_offered") for r in rows)

        progress = await open_demo_agent(pilot, "drifting")
        assert progress.events > 3, "progress was reported while the interview ran"
        assert progress.asked == {"identity", "capabilities", "usage", "terms", "refusals"}

        screen = app.screen
        assert isinstance(screen, InterviewScreen)
        header = plain(screen.query_one("#header", Static))
        assert "Drifting" in header and "verdict ✗ nonconformant" in header
        assert "signature ✓ verified · form served · ES256 · kid drifting-card-1" in header
        assert "claim: run by tester, no independent role declared (--as independent declares one)" in header
        assert "run #1" in header

        labels = tab_labels(screen)
        assert labels["usage"] == "✗ usage (1 mismatch)"
        assert labels["terms"] == "✗ terms (1 mismatch)"
        assert labels["identity"] == "identity (all match)"
        assert labels["refusals"] == "refusals (all match)"

        # The screen opened on the conflict: usage tab, mismatching row highlighted and focused.
        assert screen.query_one(TabbedContent).active == "tab-usage"
        assert isinstance(app.focused, OptionList) and app.focused.id == "list-usage"
        shown = detail_text(screen, "usage")
        assert "pointer  /defaultOutputModes   ✗ MISMATCH" in shown["where"]
        assert "document card http://127.0.0.1:" in shown["document"]
        assert "signed   yes: covered by the card signature (served payload)" in shown["document"]
        assert '"text/html"' in shown["answer"] and '"text/html"' not in shown["source"]
        canonical = shown["canonical"].split("\n")
        answer_row = next(line for line in canonical if line.startswith("answer  "))
        source_row = next(line for line in canonical if line.startswith("source  "))
        assert answer_row == 'answer  ["application/json"«,"text/html"»]'
        assert source_row == 'source  ["application/json"«»]'
        caret = canonical[canonical.index(answer_row) + 1]
        assert caret.index("^") == answer_row.index(",") and caret.count("^") == len(',"text/html"')

        # One key on: the terms conflict, with the clause grade and the proposal's digest.
        await pilot.press("n")
        assert screen.query_one(TabbedContent).active == "tab-terms"
        shown = detail_text(screen, "terms")
        assert "pointer  /price" in shown["where"]
        assert "grade    enforced" in shown["terms"] and "proposal verified" in shown["terms"]
        assert "digest sha256:" in shown["document"]
        assert "per_task" in shown["canonical"] and "«" in shown["canonical"] and "^" in shown["canonical"]


async def test_in_80x24_the_canonical_bytes_of_the_mismatch_are_on_screen_without_scrolling(
    demo_runs: dict[str, Any], tui: Tui
) -> None:
    async with tui(size=(80, 24)) as pilot:
        app = pilot.app
        await show(pilot, demo_runs["drifting"])
        lines = screen_text(app).splitlines()
        answer_row = 'answer  ["application/json"«,"text/html"»]'
        source_row = 'source  ["application/json"«»]'
        answer = next(i for i, line in enumerate(lines) if answer_row in line)
        source = next(i for i, line in enumerate(lines) if source_row in line)
        assert "^^^^^^^^^^^^" in lines[answer + 1] and "^^" in lines[source + 1]
        assert any("pointer  /defaultOutputModes   ✗ MISMATCH" in line for line in lines)


async def test_each_tab_shows_its_answer(demo_runs: dict[str, Any], tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        await show(pilot, demo_runs["steady"])
        screen = app.screen
        assert screen.query_one(TabbedContent).active == "tab-identity"
        assert all(
            label.endswith("(all match)") for label in tab_labels(screen).values() if "findings" not in label
        )
        for key, name, first in (
            ("2", "capabilities", "/skills/0/id"),
            ("3", "usage", "/supportedInterfaces"),
            ("4", "terms", "/parties"),
            ("5", "refusals", "/skills/0/id"),
            ("1", "identity", "/name"),
        ):
            await pilot.press(key)
            assert screen.query_one(TabbedContent).active == f"tab-{name}"
            listing = screen.query_one(f"#list-{name}", OptionList)
            assert listing.get_option_at_index(0).prompt.plain.startswith(f"✓ {first}")
            assert f"pointer  {first}   ✓ match" in detail_text(screen, name)["where"]
            assert "canonical bytes (RFC 8785) identical" in detail_text(screen, name)["canonical"]
        # Values are highlighted as JSON (pygments tokens styled: object keys, strings, numbers).
        await pilot.press("3")
        await pilot.pause()
        answer = screen.query_one("#detail-usage .answer", Static).content
        assert isinstance(answer, Content) and '"protocolBinding"' in answer.plain
        styles = {str(span.style) for span in answer.spans}
        assert "bold $accent" in styles and "$text-success" in styles
        # Terms: each clause row names its proposal and grade; refusals: boundary and probes.
        terms = screen.query_one("#list-terms", OptionList)
        assert terms.get_option_at_index(2).prompt.plain == "✓ /price  reconcile-statement · enforced  match"
        summary = plain(screen.query_one("#pane-terms .summary", Static))
        assert "✓ proposal reconcile-statement: verified" in summary
        refusals = plain(screen.query_one("#pane-refusals .summary", Static))
        assert "boundary: reconcile-statement, flag-exceptions" in refusals
        assert "✓ undefined method: got the standard refusal" in refusals
        assert "✓ unmatched selector: got the standard refusal" in refusals
        assert "✓ unactivated call: got -32601 method not found" in refusals


async def test_findings_list_jumps_to_the_projection(demo_runs: dict[str, Any], tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        await show(pilot, demo_runs["drifting"])
        screen = app.screen
        await pilot.press("f")
        assert screen.query_one(TabbedContent).active == "tab-findings"
        findings = screen.query_one("#findings", OptionList)
        rows = [findings.get_option_at_index(i).prompt.plain for i in range(findings.option_count)]
        terms_row = next(i for i, row in enumerate(rows) if "projection_mismatch" in row and "terms" in row)
        assert rows[terms_row].startswith("✗ error")
        findings.highlighted = terms_row
        await pilot.press("enter")
        assert screen.query_one(TabbedContent).active == "tab-terms"
        pane = screen.query_one("#pane-terms", QuestionPane)
        assert pane.selected is not None and pane.selected.member == "/price"
        assert pane.selected.status == "mismatch"
        assert app.focused is pane.query_one(OptionList)


async def test_copy_pointer_and_value_toast_either_way(demo_runs: dict[str, Any], tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        await show(pilot, demo_runs["drifting"])
        await pilot.press("c")
        assert app.clipboard == "/defaultOutputModes"
        await pilot.press("y")
        assert app.clipboard == '["application/json","text/html"]'
        messages = [n.message for n in app._notifications]
        assert any(m.startswith("copied pointer (OSC 52; also ") for m in messages)
        assert any(m.startswith("copied value (OSC 52; also ") for m in messages)


async def test_huge_values_are_cut_and_shown_whole_on_request(demo_runs: dict[str, Any], tui: Tui) -> None:
    from textual.widgets import TextArea

    from explorer.tui.screens.value import ValueScreen

    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        await show(pilot, demo_runs["hostile"])
        screen = app.screen
        await pilot.press("2")
        listing = screen.query_one("#list-capabilities", OptionList)
        rows = [listing.get_option_at_index(i).prompt.plain for i in range(listing.option_count)]
        huge = max(i for i, row in enumerate(rows) if "/description" in row)
        listing.highlighted = huge
        await pilot.pause()
        answer = detail_text(screen, "capabilities")["answer"]
        assert "… truncated" in answer and "press v to view the whole value" in answer
        assert len(answer) < 30_000
        await pilot.press("v")
        assert isinstance(app.screen, ValueScreen)
        whole = app.screen.query_one(TextArea).text
        assert len(whole) > 1_000_000
        await pilot.press("escape")
        assert app.screen is screen


async def test_export_by_key_and_by_palette_writes_files_and_names_them(
    demo_runs: dict[str, Any], tmp_path: Path, tui: Tui
) -> None:
    from textual.widgets import Button

    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        await show(pilot, demo_runs["drifting"])
        await pilot.press("x")
        await pilot.pause()
        app.screen.query_one("#export-html", Button).press()
        await pilot.pause()
        html = tmp_path / "exports" / "stonework-books-drifting-run1.html"
        assert html.exists() and "<html" in html.read_text(encoding="utf-8").lower()
        assert any(str(html) in n.message for n in app._notifications)

        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"export: run as Markdown")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: (tmp_path / "exports" / "stonework-books-drifting-run1.md").exists())
        markdown = (tmp_path / "exports" / "stonework-books-drifting-run1.md").read_text(encoding="utf-8")
        assert "/defaultOutputModes" in markdown
        assert any(n.message.endswith("stonework-books-drifting-run1.md") for n in app._notifications)

        # The same export again never overwrites: the new file gets a number, and the toast says so.
        (tmp_path / "exports" / "stonework-books-drifting-run1.md").write_text("mine", encoding="utf-8")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"export: run as Markdown")
        await pilot.pause(0.5)
        await pilot.press("enter")
        second = tmp_path / "exports" / "stonework-books-drifting-run1-2.md"
        await wait_for(pilot, second.exists)
        first = tmp_path / "exports" / "stonework-books-drifting-run1.md"
        assert first.read_text(encoding="utf-8") == "mine"
        assert any(n.message.endswith("stonework-books-drifting-run1-2.md") for n in app._notifications)


async def test_f1_shows_help_for_the_focused_widget(demo_runs: dict[str, Any], tui: Tui) -> None:
    from textual.widgets import Markdown

    from explorer.tui.screens.help import HelpScreen

    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        screen = await show(pilot, demo_runs["steady"])
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        help_text = app.screen.query_one(Markdown).source
        assert "Projections" in help_text and "RFC 6901 pointer" in help_text
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen is screen


async def test_user_keymap_rebinds_by_binding_id(
    fleet: Any, demo_runs: dict[str, Any], tmp_path: Path, _isolated_home: Path
) -> None:
    (_isolated_home / "config.toml").write_text('[keymap]\n"interview.findings" = "g"\n"nope.id" = "z"\n')
    args = argparse.Namespace(
        target=None,
        home=None,
        keys=[],
        allow_jku=False,
        header=[],
        role=None,
        runner="tester",
        openclasp=None,
    )
    app = build_app(args, demo_agents(fleet), cursor_blink=False)
    app.context.trust(demo_keys(fleet))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any("unknown binding ids ignored: nope.id" in n.message for n in app._notifications)
        await show(pilot, demo_runs["drifting"])
        await pilot.press("f")
        assert app.screen.query_one(TabbedContent).active == "tab-usage"
        await pilot.press("g")
        assert app.screen.query_one(TabbedContent).active == "tab-findings"


async def test_a_newcomer_opens_drifting_by_name_and_lands_on_the_conflict(fleet: Any, tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        demo = app.screen.query_one("#demo", OptionList)
        assert app.focused is demo and demo.highlighted == 0  # enter alone would open steady
        await pilot.press("ctrl+l", *"Drifting", "enter")  # a reference agent's name, any case
        screen = await wait_for_interview(pilot)
        assert app.last_progress.target == "Drifting"
        assert screen.run.report["target"] == fleet.agents["drifting"].card_url
        assert screen.query_one(TabbedContent).active == "tab-usage"
        assert "pointer  /defaultOutputModes   ✗ MISMATCH" in detail_text(screen, "usage")["where"]


async def test_on_a_short_terminal_the_load_screen_gives_the_reference_agents_the_room(
    fleet: Any, demo_runs: dict[str, Any], tmp_path: Path, tui: Tui
) -> None:
    from explorer.store.sqlite import History

    with History.open() as history:  # a few recent agents competing for the room
        for name in ("steady", "drifting", "hostile"):
            history.record(demo_runs[name])
    async with tui(size=(80, 24)) as pilot:
        app = pilot.app
        await pilot.pause()
        shown = screen_text(app)
        assert app.screen.has_class("-short")
        for name in ("steady", "legacy", "sdk-built"):
            assert f"{name}  expected: conformant" in shown
        assert "Recent agents" in shown
    async with tui(size=(120, 40)) as pilot:
        await pilot.pause()
        assert pilot.app.screen.has_class("-tall") and "Ask an A2A agent" in screen_text(pilot.app)


async def test_a_plain_session_starts_the_reference_agents_from_the_load_screen_and_stops_them(
    tui: Tui,
) -> None:
    import socket
    from urllib.parse import urlsplit

    async with tui(agents=False) as pilot:
        app = pilot.app
        await pilot.pause()
        demo = app.screen.query_one("#demo", OptionList)
        assert [demo.get_option_at_index(i).prompt.plain for i in range(demo.option_count)][0].startswith(
            "▶ start the reference agents"
        )
        assert app.focused is app.screen.query_one("#target")
        demo.focus()
        demo.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.context.demo) and app.focused is demo)
        rows = [demo.get_option_at_index(i).prompt.plain for i in range(demo.option_count)]
        assert rows[0].startswith("steady  expected: conformant") and demo.highlighted == 0
        assert any(r.startswith("drifting  expected: nonconformant") for r in rows)
        started = f"{len(VARIANTS)} reference agents on 127.0.0.1"
        assert any(n.message.startswith(started) for n in app._notifications)
        await pilot.press("enter")  # steady, verified by the keys the session now trusts
        screen = await wait_for_interview(pilot)
        header = plain(screen.query_one("#header", Static))
        assert "verdict ✓ conformant" in header and "signature ✓ verified" in header
    address = urlsplit(app.context.demo[0].url)
    app.context.close()  # what run_tui does when the app ends
    with pytest.raises(OSError), socket.create_connection((address.hostname, address.port), timeout=2):
        pass


async def test_a_reference_agent_that_could_not_start_is_explained_not_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from explorer.demo import fleet as fleet_module
    from explorer.tui.launch import demo_app

    monkeypatch.setattr(fleet_module, "_sdk_available", lambda: False)  # as after `pip install -e .`
    args = argparse.Namespace(target=None, header=[], keys=[], home=None, runner="tester")
    with fleet_module.Fleet(["steady", "sdk-built"]) as partial:
        app = demo_app(partial, args)
        app.context.cursor_blink = False
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            note = plain(app.screen.query_one("#demo-note", Static))
            assert note == (
                "sdk-built not started: a2a-sdk is not installed (pip install -e '.[test]' to add it)"
            )
            await pilot.press("ctrl+l", *"sdk-built", "enter")
            error = app.screen.query_one("#load-error", Static)
            await wait_for(pilot, lambda: error.display)
            assert "the reference agent sdk-built is not running: a2a-sdk is not installed" in plain(error)


async def test_enter_on_the_load_screen_opens_the_first_reference_agent(tui: Tui) -> None:
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        await pilot.press("enter")
        screen = await wait_for_interview(pilot)
        assert screen.run.report["target"] == app.context.demo[0].url
        assert "verdict ✓ conformant" in plain(screen.query_one("#header", Static))


async def test_a_configured_agent_is_interviewed_by_name_with_its_headers(
    fleet: Any, _isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = fleet.agents["steady"].card_url
    (_isolated_home / "config.toml").write_text(
        f'[agents.books]\nurl = "{url}"\nheaders = {{ X-Token = "env:IE_TUI_TOKEN" }}\n'
    )
    monkeypatch.delenv("IE_TUI_TOKEN", raising=False)
    args = argparse.Namespace(
        target=None,
        home=None,
        keys=[],
        allow_jku=False,
        header=[],
        role=None,
        runner="tester",
        openclasp=None,
    )
    app = build_app(args, cursor_blink=False)
    app.context.trust(demo_keys(fleet))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        field = app.screen.query_one("#target")
        field.value = "books"
        await pilot.press("enter")
        error = app.screen.query_one("#load-error", Static)
        await wait_for(pilot, lambda: error.display)
        assert "environment variable IE_TUI_TOKEN is not set" in plain(error)
        monkeypatch.setenv("IE_TUI_TOKEN", "secret-value")
        await pilot.press("enter")
        await wait_for_interview(pilot)
        header = plain(app.screen.query_one("#header", Static))
        assert "Stonework Books (Steady)" in header and url in header
        sent = [dict(e.request_headers) for e in app.screen.run.exchanges if e.purpose.startswith("ask:")]
        assert sent and all(h.get("X-Token") == "<redacted>" for h in sent)


async def test_a_history_run_id_as_target_opens_that_run_offline(demo_runs: dict[str, Any]) -> None:
    from explorer.store.sqlite import History

    with History.open() as history:
        run_id = history.record(demo_runs["steady"])
    args = argparse.Namespace(
        target=str(run_id),
        home=None,
        keys=[],
        allow_jku=False,
        header=[],
        role=None,
        runner=None,
        openclasp=None,
    )
    app = build_app(args, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, InterviewScreen)
        assert f"run #{run_id} · from history (offline)" in plain(app.screen.query_one("#header", Static))
        await pilot.press("escape")
        assert isinstance(app.screen, LoadScreen)


def test_no_binding_uses_keys_terminals_cannot_tell_apart() -> None:
    from textual.binding import Binding

    from explorer.tui.screens import all_screens
    from explorer.tui.widgets import detail, findings, projections

    owners = [
        ExplorerApp,
        *all_screens(),
        projections.ProjectionList,
        findings.FindingsList,
        detail.ProjectionDetail,
    ]
    seen_ids: set[str] = set()
    for owner in owners:
        for binding in owner.__dict__.get("BINDINGS", []):
            if not isinstance(binding, Binding):
                continue
            for key in binding.key.split(","):
                assert key.strip() not in {"ctrl+m", "ctrl+i", "ctrl+h", "ctrl+j"}, (owner, key)
            if owner.__module__.startswith("explorer."):
                assert binding.id, (owner, binding.key)
                seen_ids.add(binding.id)
    assert {"app.help", "interview.findings", "interview.copy_pointer", "history.compare"} <= seen_ids


@pytest.mark.parametrize(
    ("argv", "message"),
    [(["--header", "nocolon"], "--header expects 'Name: value'")],
)
def test_launcher_usage_errors_exit_2_with_one_line(argv: list[str], message: str, capsys: Any) -> None:
    from explorer.cli import _tui_parser

    assert run_tui(_tui_parser().parse_args(argv)) == 2
    assert message in capsys.readouterr().err


def test_the_watch_interval_comes_from_the_flag_else_the_config_else_30s(_isolated_home: Path) -> None:
    from explorer.cli import _tui_parser
    from explorer.tui.launch import build_context

    assert build_context(_tui_parser().parse_args([])).watch_interval == 30.0
    (_isolated_home / "config.toml").write_text("watch_every = 120\n")
    assert build_context(_tui_parser().parse_args([])).watch_interval == 120.0
    assert build_context(_tui_parser().parse_args(["--watch-every", "2.5"])).watch_interval == 2.5
    with pytest.raises(SystemExit):
        _tui_parser().parse_args(["--watch-every", "0"])


def test_a_broken_config_is_a_usage_error_not_a_traceback(_isolated_home: Path, capsys: Any) -> None:
    from explorer.cli import _tui_parser

    (_isolated_home / "config.toml").write_text("role = 'boss'\n")
    assert run_tui(_tui_parser().parse_args([])) == 2
    assert "role must be self, independent or platform" in capsys.readouterr().err


async def test_the_huge_agent_is_interviewed_off_the_loop_and_its_lists_are_built_lazily(tui: Tui) -> None:
    """10,000 capabilities rows: the screen opens with only the rows on show built, and every row
    is still there to reach (the verification itself ran in the progress screen's worker thread)."""
    async with tui() as pilot:
        app = pilot.app
        await pilot.pause()
        app.screen.query_one("#demo", OptionList).focus()
        progress = await open_demo_agent(pilot, "huge")
        assert [w.is_threaded for w in progress.workers if w.group == "interview"] in ([], [True])
        screen = app.screen
        await pilot.press("2")
        await pilot.pause()
        listing = screen.query_one("#list-capabilities", OptionList)
        assert listing.option_count == 10_000
        built = [o for o in listing.options if getattr(o, "_build", None) is None]
        assert 0 < len(built) < 200, "only the rows on show (and the highlighted one) are built"
        assert listing.get_option_at_index(9_999).prompt.plain.startswith("✓ /skills/4999/description")
        await pilot.press("end")
        await pilot.pause()
        assert listing.highlighted == 9_999
        assert "/skills/4999/description" in detail_text(screen, "capabilities")["where"]
