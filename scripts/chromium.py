"""Headless Chromium under Selenium, for the repository's scripts, benchmarks and browser tests.

One way to start a browser that reaches nothing but the pages it is sent to: the system's
Chromium and chromedriver (Debian's `chromium` and `chromium-driver`, or whatever is on PATH;
`CHROMIUM` and `CHROMEDRIVER` name others), a fresh profile directory for every start, and the
flags that stop Chromium's own traffic (component updates, sync, safe-browsing lists, field
trials, QUIC probes). Selenium is given the driver's path through its `Service`, so Selenium
Manager never runs and never downloads a driver or sends statistics. Host names other than
`localhost` resolve to nothing (`--host-resolver-rules`), so a page that links a third-party
host cannot reach it: the request is still made, and seen in the performance log, but fails.

Nothing here is imported by the explorer; load it by path:

    spec = importlib.util.spec_from_file_location("chromium", REPO / "scripts" / "chromium.py")

- `missing()`: why a browser cannot be started here (one line), or None.
- `start(profile, size=(1280, 800), performance_log=False)`: a Selenium `WebDriver`; the caller
  quits it. With `performance_log`, `driver.get_log("performance")` returns the DevTools
  Network events (see `requested_urls`).
- `tap_websockets(driver, marker)`: from the next page on, what the page's WebSockets receive is
  kept as text (`tapped_text(driver)`), and the moment `marker` first arrives and the moment two
  animation frames later (the terminal has drawn it) are kept too (`tapped_times(driver)`). For
  pages that draw into a canvas, where Selenium cannot read the text.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Each flag keeps the browser quiet or makes it run in a container without a display.
FLAGS = (
    "--headless=new",
    "--no-sandbox",  # containers run as root, where the sandbox refuses to start
    "--disable-gpu",
    "--disable-dev-shm-usage",  # /dev/shm is small in containers
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-breakpad",
    "--metrics-recording-only",
    "--no-pings",
    "--no-proxy-server",  # loopback pages are never sent through a proxy from the environment
    "--password-store=basic",
    "--disable-features=OptimizationHints,Translate,MediaRouter,AutofillServerCommunication,"
    "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.*, EXCLUDE [::1]",
)


def browser_path() -> str | None:
    chosen = os.environ.get("CHROMIUM")
    if chosen:
        return chosen if Path(chosen).is_file() else None
    return next((found for name in BROWSER_NAMES if (found := shutil.which(name))), None)


def driver_path() -> str | None:
    chosen = os.environ.get("CHROMEDRIVER")
    if chosen:
        return chosen if Path(chosen).is_file() else None
    return shutil.which("chromedriver")


def missing() -> str | None:
    """Why a headless Chromium cannot be started here, or None when it can."""
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install -e '.[test]')"
    if browser_path() is None:
        return "no Chromium found (apt-get install chromium, or set CHROMIUM)"
    if driver_path() is None:
        return "no chromedriver found (apt-get install chromium-driver, or set CHROMEDRIVER)"
    return None


def start(profile: Path, *, size: tuple[int, int] = (1280, 800), performance_log: bool = False) -> Any:
    """A headless Chromium with a fresh profile in `profile` (an empty directory the caller owns)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    reason = missing()
    if reason is not None:
        raise RuntimeError(reason)
    options = webdriver.ChromeOptions()
    options.binary_location = str(browser_path())
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={size[0]},{size[1]}")
    if performance_log:
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    service = Service(executable_path=str(driver_path()))
    return webdriver.Chrome(service=service, options=options)


_TAP = """
(() => {
  const marker = %s;
  const decoder = new TextDecoder();
  const escapes = /\\x1b\\[[0-9;?<>=]*[ -\\/]*[@-~]|\\x1b\\][^\\x07]*\\x07/g;
  const tap = { text: "", seen: null, painted: null };
  window.__tap = tap;
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (typeof event.data === "string") return;
        const text = decoder.decode(event.data, { stream: true }).replace(escapes, "");
        tap.text = (tap.text + text).slice(-500000);
        if (marker && tap.seen === null && tap.text.includes(marker)) {
          tap.seen = performance.now();
          requestAnimationFrame(() => requestAnimationFrame(() => { tap.painted = performance.now(); }));
        }
      });
    }
  };
})();
"""


def tap_websockets(driver: Any, marker: str | None = None) -> None:
    """Keep what the next pages' WebSockets receive (see the module's docstring)."""
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _TAP % json.dumps(marker)})


def tapped_text(driver: Any) -> str:
    return str(driver.execute_script("return window.__tap ? window.__tap.text : ''"))


def tapped_times(driver: Any) -> tuple[float | None, float | None]:
    """When the marker arrived and when it was drawn, in seconds since the Unix epoch (or None)."""
    found = driver.execute_script(
        "const t = window.__tap; if (!t) return null;"
        "const o = performance.timeOrigin;"
        "return [t.seen === null ? null : o + t.seen, t.painted === null ? null : o + t.painted];"
    )
    if not found:
        return None, None
    seen, painted = found
    return (seen / 1000 if seen is not None else None, painted / 1000 if painted is not None else None)


def requested_urls(entries: Iterable[dict[str, Any]]) -> list[str]:
    """Every URL the page asked for, from `driver.get_log("performance")` entries: requests,
    redirects and WebSocket handshakes alike."""
    urls: list[str] = []
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            urls.append(params["request"]["url"])
            redirect = params.get("redirectResponse")
            if redirect:
                urls.append(redirect["url"])
        elif method == "Network.webSocketCreated":
            urls.append(params["url"])
    return urls
