"""`interview-explorer serve` against real clients: each protection holds on the running server.

Every test starts the real command (`python -m explorer serve --port 0`) and talks to it over
127.0.0.1 with a plain HTTP client (any Host header it likes) and an aiohttp WebSocket client (any
Origin it likes), as a hostile page or a rebinding domain would. Whether a session process was
started is read from /proc (the server's children), not from the server's own word. Each test
proves the refusal and, in the same run, that the right request does get through, so the check
cannot pass because nothing works at all.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.web import SESSION_WAIT, Served, environ, has_proc, wait_until

pytestmark = [
    pytest.mark.slow,  # a server process, and a Python process per session
    pytest.mark.timeout(240),
    pytest.mark.skipif(not has_proc(), reason="reads child processes from /proc (Linux)"),
]

Serve = Callable[..., Served]
DELIVERY_WAIT = 20.0  # seconds from a key to the download it starts: the app is running by then


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    started: list[Served] = []

    def start(*argv: str, env: dict[str, str] | None = None, command: str = "serve") -> Served:
        served = Served.start(argv, env=env, cwd=tmp_path, command=command)
        started.append(served)
        return served

    yield start
    for served in started:
        assert served.stop() == 0, served.stderr()


def _files_under(*folders: Path) -> set[Path]:
    return {p for folder in folders for p in folder.rglob("*") if p.is_file()}


# --- the URL, the token and the cookie ------------------------------------------------------------


def test_serve_prints_one_url_with_a_fresh_token_on_loopback(serve: Serve) -> None:
    first, second = serve(), serve()
    assert first.url.startswith("http://127.0.0.1:") and "/?token=" in first.url
    assert len(first.token) >= 43 and first.token != second.token
    assert first.process.stdout is not None
    os.set_blocking(first.process.stdout.fileno(), False)
    assert first.process.stdout.read() in (None, b"")  # the URL is stdout's only line
    wait_until(lambda: "Ctrl+C" in first.stderr(), what="the notes on stderr")


def test_no_token_or_a_wrong_token_is_403_and_starts_no_process(serve: Serve) -> None:
    served = serve()
    wrong = served.token[:-1] + ("A" if served.token[-1] != "A" else "B")
    for path in (
        "/",
        f"/?token={wrong}",
        "/?token=",
        f"/?token={served.token}&token={served.token}",
        "/ws",
        "/static/js/textual.js",
        "/static/page.js",
        "/download/0123abcd",
    ):
        answer = served.request(path)
        assert answer.status == 403, (path, answer.status)
        assert answer.cookie() is None, path
    assert "printed" in served.request("/").body  # the page says what to open
    assert served.request("/", cookie="not-the-cookie").status == 403
    assert served.children() == []
    cookie = served.login()
    assert served.request("/", cookie=cookie).status == 200  # the right token does open it


def test_the_token_becomes_a_strict_httponly_cookie_and_leaves_the_address_bar(serve: Serve) -> None:
    served = serve()
    answer = served.request(f"/?token={served.token}&fontsize=20")
    assert answer.status == 303 and answer.headers["Location"] == "/?fontsize=20"
    attributes = [part.strip().lower() for part in (answer.cookie() or "").split(";")]
    assert "httponly" in attributes and "samesite=strict" in attributes and "path=/" in attributes
    value = (answer.cookie() or "").split(";")[0].split("=", 1)[1]
    assert served.token.lower() not in (answer.cookie() or "").lower()  # the cookie is not the token
    page = served.request("/", cookie=value)
    assert page.status == 200 and 'id="terminal"' in page.body
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY"
    assert served.request("/?ping=http://attacker.example/", cookie=value).status == 303  # no stray query
    assert served.request(f"/?token={served.token}").status == 303  # valid while the server runs


def test_the_page_and_its_files_name_no_other_host(serve: Serve) -> None:
    served = serve()
    cookie = served.login()
    page = served.request("/", cookie=cookie)
    assert "googleapis" not in page.body and "https://" not in page.body and "http://" not in page.body
    for name in ("page.js", "page.css", "css/xterm.css", "fonts/RobotoMono-VariableFont_wght.ttf"):
        answer = served.request(f"/static/{name}", cookie=cookie)
        assert answer.status == 200, name
    assert "@font-face" in served.request("/static/page.css", cookie=cookie).body
    assert served.request("/static/", cookie=cookie).status == 404  # no listing
    assert served.request("/static/../server.py", cookie=cookie).status == 404
    assert served.request("/static/images/background.png", cookie=cookie).status == 404


# --- Host (DNS rebinding) and Origin --------------------------------------------------------------


def test_a_host_header_that_is_not_the_bound_one_is_refused(serve: Serve) -> None:
    served = serve()
    cookie = served.login()
    for host in (f"attacker.example:{served.port}", f"localhost:{served.port}", "127.0.0.1", ""):
        assert served.request("/", host=host, cookie=cookie).status == 403, host
        with_token = served.request(f"/?token={served.token}", host=host)
        assert with_token.status == 403 and with_token.cookie() is None, host
        assert served.request("/static/page.js", host=host, cookie=cookie).status == 403, host
    assert served.request("/", cookie=cookie).status == 200

    async def rebinding_page() -> None:
        host = f"attacker.example:{served.port}"
        with pytest.raises(Exception) as refused:  # noqa: PT011 - aiohttp's handshake error
            async with served.session(host=host, origin=f"http://{host}"):
                pass
        assert "403" in str(refused.value)

    asyncio.run(rebinding_page())
    assert served.children() == []


@pytest.mark.parametrize("origin", ["another-port", "localhost", "null", None, "https-same-host"])
def test_a_websocket_from_another_origin_is_refused_before_a_process_starts(
    serve: Serve, origin: str | None
) -> None:
    served = serve()
    other = {
        "another-port": f"http://127.0.0.1:{served.port + 1}",  # a page on another loopback port
        "localhost": f"http://localhost:{served.port}",
        "null": "null",  # a sandboxed iframe or a file:// page
        None: None,  # no Origin at all
        "https-same-host": f"https://127.0.0.1:{served.port}",
    }[origin]

    async def attempt() -> None:
        with pytest.raises(Exception) as refused:  # noqa: PT011 - aiohttp's handshake error
            async with served.session(origin=other):
                pass
        assert "403" in str(refused.value)
        await asyncio.sleep(0.5)
        assert served.children() == []
        async with served.session() as terminal:  # the explorer's own page is let in
            wait_until(served.children, what="a session process")
            await terminal.wait_for("Interview Explorer")

    asyncio.run(attempt())


def test_a_websocket_without_the_cookie_is_refused_even_from_the_right_origin(serve: Serve) -> None:
    served = serve()

    async def attempt() -> None:
        for cookie in (None, "forged"):
            with pytest.raises(Exception) as refused:  # noqa: PT011 - aiohttp's handshake error
                async with served.session(cookie=cookie):
                    pass
            assert "403" in str(refused.value)
        assert served.children() == []

    asyncio.run(attempt())


# --- the session limit --------------------------------------------------------------------------


def test_sessions_beyond_the_limit_are_refused_with_a_page_saying_so(serve: Serve) -> None:
    served = serve("--max-sessions", "2")
    cookie = served.login()

    async def fill() -> None:
        async with served.session() as first, served.session() as second:
            await first.wait_for("Interview Explorer")
            await second.wait_for("Interview Explorer")
            assert len(served.children()) == 2
            page = served.request("/", cookie=cookie)
            assert page.status == 503
            assert "too many sessions" in page.body and "--max-sessions 2" in page.body
            async with served.session() as third:
                await third.wait_for("2 sessions are open already")
                assert not await _stays_open(third)
                assert third.ws.close_code == 1013
            assert len(served.children()) == 2
        wait_until(lambda: served.children() == [], what="both sessions to end")
        assert served.request("/", cookie=cookie).status == 200

    asyncio.run(fill())


def test_a_tab_reloaded_at_the_limit_gets_its_page_back(serve: Serve) -> None:
    """A reload closes the tab's WebSocket and asks for the page at once, while the old session's
    process is still quitting: the page waits for that place instead of saying the limit is reached."""
    served = serve("--max-sessions", "1")
    cookie = served.login()

    async def reload() -> int:
        async with served.session() as terminal:
            await terminal.wait_for("Interview Explorer")
        return served.request("/", cookie=cookie).status

    assert asyncio.run(reload()) == 200


async def _stays_open(terminal: object) -> bool:
    read = terminal.read  # type: ignore[attr-defined]
    for _ in range(20):
        if not await read(0.5):
            return False
    return True


# --- each session's environment -------------------------------------------------------------------


def test_a_session_gets_the_referenced_variables_and_nothing_secret_besides(serve: Serve) -> None:
    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    (home / "config.toml").write_text(
        '[agents.stonework]\nurl = "http://127.0.0.1:9/"\n'
        'headers = { Authorization = "env:STONEWORK_TOKEN" }\n'
    )
    server_env = {
        "STONEWORK_TOKEN": "referenced-by-the-config",
        "CLI_BEARER": "referenced-by-an-option",
        "HEADER_VAR": "referenced-by-a-header-option",
        "AWS_SECRET_ACCESS_KEY": "must-not-reach-a-session",
        "GITHUB_TOKEN": "must-not-reach-a-session-either",
        "DATABASE_URL": "postgres://user:pw@db/explorer",
        "LANG": "C.UTF-8",
        "LC_CTYPE": "C.UTF-8",
    }
    served = serve("--bearer", "env:CLI_BEARER", "--header", "X-Extra: env:HEADER_VAR", env=server_env)

    async def look() -> None:
        async with served.session() as terminal:
            await terminal.wait_for("Interview Explorer")
            (pid,) = served.children()
            seen = environ(pid)
            assert seen["STONEWORK_TOKEN"] == "referenced-by-the-config"
            assert seen["CLI_BEARER"] == "referenced-by-an-option"
            assert seen["HEADER_VAR"] == "referenced-by-a-header-option"
            assert seen["LANG"] == "C.UTF-8" and seen["LC_CTYPE"] == "C.UTF-8"
            assert seen["INTERVIEW_EXPLORER_HOME"] == str(home)
            for secret in ("AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DATABASE_URL"):
                assert secret not in seen
            assert not any("must-not-reach" in value for value in seen.values())

    asyncio.run(look())


# --- exports and copies ---------------------------------------------------------------------------


def _record_drifting(home: Path) -> int:
    """One live interview of the drifting reference agent, recorded in `home`; its run id."""
    from explorer.demo.fleet import Fleet
    from explorer.interview.options import Options
    from explorer.interview.procedure import run_interview_sync
    from explorer.store.sqlite import History

    with Fleet(names=["drifting"]) as fleet:
        run = run_interview_sync(fleet.agents["drifting"].card_url, Options(allow_jku=True, runner="tester"))
    with History.open(home) as history:
        return history.record(run)


def test_exports_and_copies_reach_the_browser_as_downloads_and_nothing_is_written(
    serve: Serve, tmp_path: Path
) -> None:
    home = Path(os.environ["INTERVIEW_EXPLORER_HOME"])
    served = serve(str(_record_drifting(home)))
    cookie = served.login()
    before = _files_under(home, tmp_path)

    async def export_and_copy() -> None:
        async with served.session(size=(150, 45)) as terminal:
            await terminal.wait_for("identity")
            mark = terminal.mark()
            await terminal.type("x")
            await terminal.wait_for("downloads in your browser", since=mark)
            await terminal.type("\r")  # the first format, JSON, has focus
            _, key = await terminal.wait_for_message("deliver_file_start", timeout=DELIVERY_WAIT)
            answer = served.request(f"/download/{key}", cookie=cookie)
            assert answer.status == 200
            assert answer.headers["Content-Disposition"].startswith('attachment; filename="')
            assert answer.headers["Content-Security-Policy"] == "default-src 'none'; sandbox"
            transcript = json.loads(answer.body)
            assert transcript["summary"]["verdict"] == "nonconformant"
            assert served.request(f"/download/{key}", cookie=cookie).status == 404  # used once
            await asyncio.sleep(0.5)
            await terminal.type("c")  # copy the selected projection's pointer
            _, key = await terminal.wait_for_message("deliver_file_start", timeout=DELIVERY_WAIT)
            assert served.request(f"/download/{key}").status == 403  # the cookie is needed
            copied = served.request(f"/download/{key}", cookie=cookie)
            assert copied.status == 200 and copied.body.startswith("/")
            assert "copied-pointer.txt" in copied.headers["Content-Disposition"]

    asyncio.run(export_and_copy())
    wait_until(lambda: served.children() == [], what="the session to end")
    written = {p.name for p in _files_under(home, tmp_path) - before}
    written = {name for name in written if not name.endswith("-stderr.txt")}
    assert written == set(), (written, served.stderr())  # no export, no clipboard.txt, no screenshot


# --- start-up -----------------------------------------------------------------------------------


def test_a_target_the_explorer_cannot_open_is_reported_before_any_url(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "explorer", "serve", str(tmp_path / "missing-card.json")],
        capture_output=True,
        text=True,
        timeout=SESSION_WAIT,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "missing-card.json" in done.stderr


def test_an_address_other_machines_reach_needs_the_acknowledgement(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "explorer", "serve", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=SESSION_WAIT,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "--expose" in done.stderr and "reverse proxy" in done.stderr


def test_sigterm_ends_every_session_and_the_server(serve: Serve) -> None:
    served = serve()

    async def open_one() -> list[int]:
        async with served.session() as terminal:
            await terminal.wait_for("Interview Explorer")
            pids = served.children()
            assert served.stop() == 0
            return pids

    pids = asyncio.run(open_one())
    assert pids and all(not Path(f"/proc/{pid}").exists() or _zombie(pid) for pid in pids)
    assert "a session ended" in served.stderr()


def _zombie(pid: int) -> bool:
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
