"""Browser benchmark: opening the served URL to the first frame drawn, against the TUI in a terminal.

One `interview-explorer serve` runs for the whole benchmark, in a temporary home, on 127.0.0.1.
Two ways to the same first frame (the load screen, its title "Interview Explorer" drawn) are timed
alternately in one go, so both see the same machine load:

- browser: headless Chromium (scripts/chromium.py) opens the printed URL, token and all: the
  redirect that sets the cookie, the page and its files, the WebSocket, the session's explorer
  process starting, and its first frame arriving and being drawn (two animation frames after the
  bytes arrive; `chromium.tap_websockets`). Timed from just before the navigation is asked for.
  Between runs the tab goes to about:blank and the benchmark waits for the session to end.
- terminal: `python -m explorer` in a pseudo-terminal of the size the browser's terminal had,
  timed from spawning it to the same title appearing in what it wrote.

The ratio of the medians is printed; the target is at most 2.0. Then memory per browser session:
two tabs are opened, and for each session process its resident set (RSS) and proportional set
(PSS: shared pages divided among the processes sharing them) are read from /proc, plus the
server's growth with the two sessions open, divided between them.

    python bench/web_first_paint.py [--runs 5] [--target 2.0] [--json]

Linux only (a pty, /proc). Needs Chromium, chromedriver and selenium, as the browser tests do.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MARKER = "Interview Explorer"
WINDOW = (1280, 800)
WAIT = 60.0
CSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]")


def _chromium() -> Any:
    spec = importlib.util.spec_from_file_location("chromium", REPO / "scripts" / "chromium.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            status = (entry / "status").read_text()
            if re.search(rf"^PPid:\s+{pid}$", status, re.M) and not re.search(r"^State:\s+Z", status, re.M):
                out.append(int(entry.name))
    return out


def _memory_kib(pid: int) -> tuple[int, int | None]:
    """(RSS, PSS) of a process in KiB; PSS is None where smaps_rollup cannot be read."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"^VmRSS:\s+(\d+)", status, re.M)[1])  # type: ignore[index]
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        pss: int | None = int(re.search(r"^Pss:\s+(\d+)", rollup, re.M)[1])  # type: ignore[index]
    except (OSError, TypeError):
        pss = None
    return rss, pss


def _wait(predicate: Any, what: str, timeout: float = WAIT) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.02)
    return value


def start_server(env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[bytes], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "explorer", "serve", "--port", "0", "--max-sessions", "4"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], WAIT)
    url = process.stdout.readline().decode().strip() if ready else ""
    if not url.startswith("http://"):
        process.kill()
        raise SystemExit("serve printed no URL")
    return process, url


def browser_first_frame(chromium: Any, driver: Any, url: str, server_pid: int) -> tuple[float, int, int]:
    """Seconds from asking for the URL to the first frame drawn; and the terminal's size."""
    start = time.time()
    driver.get(url)
    painted = _drawn(chromium, driver)
    columns, rows = _terminal_size(driver)
    driver.get("about:blank")  # closes the WebSocket: the session ends
    _wait(lambda: _children(server_pid) == [], "the session to end")
    return painted - start, columns, rows


def _drawn(chromium: Any, driver: Any) -> float:
    """When the page's terminal drew the marker (seconds since the epoch), once it has."""
    return float(_wait(lambda: chromium.tapped_times(driver)[1], "the first frame"))


def _terminal_size(driver: Any) -> tuple[int, int]:
    """The columns and rows the page asked its session for (from the WebSocket URL it opened)."""
    entries = driver.get_log("performance")
    for entry in reversed(entries):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.webSocketCreated":
            query = dict(part.split("=", 1) for part in message["params"]["url"].split("?", 1)[1].split("&"))
            return int(query["width"]), int(query["height"])
    return 120, 40


def terminal_first_frame(env: dict[str, str], cwd: Path, size: tuple[int, int]) -> float:
    """Seconds from spawning the explorer in a pty to its first frame (the title written)."""
    import fcntl
    import pty
    import struct
    import termios

    start = time.time()
    pid, fd = pty.fork()
    if pid == 0:
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "explorer"], env)
        finally:
            os._exit(127)
    output = bytearray()
    try:
        while MARKER.encode() not in CSI.sub(b"", bytes(output)):
            ready, _, _ = select.select([fd], [], [], WAIT)
            if not ready:
                raise SystemExit("the explorer drew nothing in the terminal")
            output.extend(os.read(fd, 65536))
        elapsed = time.time() - start
        os.write(fd, b"\x11")  # ctrl+q
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if select.select([fd], [], [], 0.1)[0]:
                    os.read(fd, 65536)
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        return elapsed
    finally:
        os.close(fd)


def session_memory(chromium: Any, driver: Any, url: str, server_pid: int, tabs: int = 2) -> dict[str, float]:
    """Memory of `tabs` sessions open at once: per session process, and the server's growth."""
    server_idle, _ = _memory_kib(server_pid)
    handles = []
    for _ in range(tabs):
        driver.switch_to.new_window("tab")
        chromium.tap_websockets(driver, MARKER)  # the tap is per tab
        driver.get(url)
        _drawn(chromium, driver)
        handles.append(driver.current_window_handle)

    def all_open() -> list[int] | None:
        found = _children(server_pid)
        return found if len(found) == tabs else None

    pids = _wait(all_open, "the sessions")
    time.sleep(2.0)  # the sessions settle after their first frame
    figures = [_memory_kib(pid) for pid in pids]
    server_busy, _ = _memory_kib(server_pid)
    for handle in handles:
        driver.switch_to.window(handle)
        driver.close()
    rss = statistics.mean(r for r, _ in figures) / 1024
    pss_values = [p for _, p in figures if p is not None]
    server_share = max(server_busy - server_idle, 0) / tabs / 1024
    return {
        "session_rss_mib": rss,
        "session_pss_mib": statistics.mean(pss_values) / 1024 if pss_values else float("nan"),
        "server_share_mib": server_share,
        "per_session_mib": rss + server_share,
        "server_idle_rss_mib": server_idle / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed first frames of each (default 5)")
    parser.add_argument("--target", type=float, default=2.0, help="the ratio to stay under (default 2.0)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    chromium = _chromium()
    reason = chromium.missing()
    if reason is not None:
        raise SystemExit(f"bench/web_first_paint.py: {reason}")
    with tempfile.TemporaryDirectory(prefix="ie-bench-web-") as tmp:
        folder = Path(tmp)
        env = {
            **os.environ,
            "INTERVIEW_EXPLORER_HOME": str(folder / "home"),
            "PYTHONPATH": str(REPO),
            "TERM": "xterm-256color",
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        (folder / "profile").mkdir()
        server, url = start_server(env, folder)
        driver = chromium.start(folder / "profile", size=WINDOW, performance_log=True)
        try:
            chromium.tap_websockets(driver, MARKER)
            _, columns, rows = browser_first_frame(chromium, driver, url, server.pid)  # warm-up, both
            terminal_first_frame(env, folder, (columns, rows))
            browser, terminal = [], []
            for _ in range(args.runs):
                browser.append(browser_first_frame(chromium, driver, url, server.pid)[0])
                terminal.append(terminal_first_frame(env, folder, (columns, rows)))
            memory = session_memory(chromium, driver, url, server.pid)
        finally:
            driver.quit()
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)

    b, t = statistics.median(browser), statistics.median(terminal)
    ratio = b / t
    ok = ratio <= args.target
    figures = {
        "browser_s": b,
        "terminal_s": t,
        "ratio": ratio,
        "target": args.target,
        "runs": args.runs,
        "size": [columns, rows],
        "ok": ok,
        **memory,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"terminal: the TUI's first frame, {columns}x{rows} pty  median {t:.3f} s  ({args.runs} runs)")
        print(f"browser:  URL opened to the first frame drawn   median {b:.3f} s")
        print(f"ratio {ratio:.2f} (target <= {args.target}): {'OK' if ok else 'OVER'}")
        print(
            f"memory per browser session: {memory['per_session_mib']:.1f} MiB: the session process "
            f"{memory['session_rss_mib']:.1f} MiB RSS ({memory['session_pss_mib']:.1f} MiB PSS), "
            f"the server's share {memory['server_share_mib']:.1f} MiB "
            f"(idle {memory['server_idle_rss_mib']:.1f} MiB)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
