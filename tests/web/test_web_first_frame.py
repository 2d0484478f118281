"""The explorer's first frame in a real browser, before the page is clicked or typed in (issue 31).

A browser tab starts without focus, and the footer waited for focus to draw its keys: the first
frame of `demo --browser` showed the reference agents with no footer at all, and the agents'
list looked focused while whatever was typed went to the target field. This opens the page in
headless Chromium, touches nothing, and reads what the page drew (from the bytes its WebSocket
received, `chromium.tap_websockets`): the footer's keys are there; then the name typed is the
agent interviewed. (Here the footer came without focus even before the fix, so this guards the
behaviour rather than reproducing the report; `ExplorerFooter.bindings_changed` is the fix,
and tests/tui/test_tui_newcomer.py checks the field has focus in a browser's first frame.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.web import SESSION_WAIT, Served, chromium, wait_until

pytestmark = [
    pytest.mark.slow,  # a browser, the reference agents and a server with its session process
    pytest.mark.timeout(300),
    pytest.mark.skipif(chromium.missing() is not None, reason=str(chromium.missing())),
]


def test_the_first_frame_in_a_browser_has_the_footer_before_any_click_or_key(tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    from explorer.store.sqlite import History

    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    served = Served.start(["--only", "steady", "drifting"], cwd=tmp_path, command="demo --browser")
    profile = tmp_path / "profile"
    profile.mkdir()
    driver = chromium.start(profile, size=(1280, 900))
    try:
        chromium.tap_websockets(driver)
        driver.get(served.url)
        wait_until(
            lambda: "Reference agents" in chromium.tapped_text(driver), timeout=SESSION_WAIT, what="the page"
        )
        # The frame is sent in pieces; the footer follows the agents within it, with nothing
        # clicked or typed (Textual's own footer waited for the page to have focus).
        wait_until(
            lambda: "Quit" in chromium.tapped_text(driver) and "Help" in chromium.tapped_text(driver),
            timeout=3,
            what="the footer, with nothing clicked or typed",
        )
        driver.execute_script("document.querySelector('.xterm-helper-textarea').focus()")
        ActionChains(driver).send_keys("drifting\n").perform()

        def recorded() -> list[object]:
            with History.open(home) as history:
                return list(history.runs())

        (run,) = wait_until(recorded, timeout=SESSION_WAIT, what="the typed agent to be interviewed")
        assert "Drift" in (getattr(run, "name", "") or "")
    finally:
        driver.quit()
        assert served.stop() == 0, served.stderr()
