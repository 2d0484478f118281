"""Draw the README's picture of the explorer in a browser: `screenshots/in-a-browser.png`.

It does what the README's "In a browser" section tells a newcomer to do: `interview-explorer demo
--browser` (the reference agents and the served explorer, in a temporary home so nothing touches
the user's files), opens the printed URL in headless Chromium (scripts/chromium.py), types the
name of the `drifting` agent and Enter, waits for the interview to be drawn, and saves the
window as a PNG. The agents' ports differ from run to run, so the picture does too, in its URLs.

    python scripts/browser_screenshot.py [--out screenshots/in-a-browser.png] [--size 1280x800]
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
WAIT = 90.0


def _wait_for(chromium: Any, driver: Any, needle: str, since: int = 0) -> None:
    deadline = time.monotonic() + WAIT
    while needle not in chromium.tapped_text(driver)[since:]:
        if time.monotonic() > deadline:
            raise SystemExit(f"{needle!r} was never drawn in the browser")
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots" / "in-a-browser.png")
    parser.add_argument("--size", default="1280x800", help="the browser window, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(n) for n in args.size.lower().split("x"))

    import chromium  # scripts/chromium.py: this script's folder is first on sys.path

    reason = chromium.missing()
    if reason is not None:
        raise SystemExit(f"browser_screenshot: {reason}")
    with tempfile.TemporaryDirectory(prefix="ie-browser-shot-") as tmp:
        folder = Path(tmp)
        env = {**os.environ, "INTERVIEW_EXPLORER_HOME": str(folder / "home"), "PYTHONPATH": str(REPO)}
        demo = subprocess.Popen(
            [sys.executable, "-m", "explorer", "demo", "--browser"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=folder,
        )
        try:
            assert demo.stdout is not None
            ready, _, _ = select.select([demo.stdout], [], [], WAIT)
            url = demo.stdout.readline().decode().strip() if ready else ""
            if not url.startswith("http://"):
                raise SystemExit("demo --browser printed no URL")
            (folder / "profile").mkdir()
            driver = chromium.start(folder / "profile", size=(width, height))
            try:
                chromium.tap_websockets(driver)
                driver.get(url)
                _wait_for(chromium, driver, "Reference agents")
                from selenium.webdriver.common.action_chains import ActionChains
                from selenium.webdriver.common.keys import Keys

                since = len(chromium.tapped_text(driver))
                driver.execute_script("document.querySelector('.xterm-helper-textarea').focus()")
                ActionChains(driver).send_keys("drifting").perform()
                ActionChains(driver).send_keys(Keys.ENTER).perform()
                _wait_for(chromium, driver, "✗ nonconformant", since)
                time.sleep(6.0)  # the toasts fade and the footer settles
                args.out.parent.mkdir(parents=True, exist_ok=True)
                if not driver.save_screenshot(str(args.out)):
                    raise SystemExit(f"could not save {args.out}")
            finally:
                driver.quit()
        finally:
            demo.send_signal(signal.SIGTERM)
            demo.wait(timeout=30)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
