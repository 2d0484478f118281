"""One browser session's explorer process, on textual-serve's protocol, started the careful way.

textual-serve's `AppService` speaks the protocol between the server and a Textual app running
under Textual's web driver (stdin and stdout packets, downloads in chunks), and that part is used
as it is. What it does around the process is replaced:

- the process is started with `exec`, from an argument list (textual-serve runs a shell command
  line), and with the environment `explorer.web.environment` built, not a copy of the server's;
- its interpreter is isolated (`session_command`: `python -I`), so neither the folder `serve` was
  started in nor a `PYTHON*` variable adds to its import path (`python -m` alone puts the working
  folder first: a `textual/` planted there would run in every session, beside its credentials),
  and it runs in a folder `serve` chose (`cwd`), never the one it was started in;
- `open_url` requests are dropped: the explorer never opens a URL, and a browser told to open one
  by the app would open whatever a hostile agent's text managed to put there;
- a delivered file's name is reduced to safe characters before the browser sees it;
- `close` asks the app to quit, and kills the process if it has not gone within a few seconds,
  so a stuck session never outlives its WebSocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import site
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

log = logging.getLogger("explorer.web")

QUIT_GRACE = 5.0  # seconds a session's app has to quit before its process is killed
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 120


def safe_file_name(name: str) -> str:
    """A delivered file's name as the browser is given it: letters, digits, `.`, `_` and `-`."""
    cleaned = _UNSAFE_NAME.sub("-", name).strip(".-") or "download"
    return cleaned[-MAX_NAME:]


def session_command(module: str) -> tuple[str, ...]:
    """The argument list that runs `module` as a session: this interpreter in isolated mode (`-I`:
    no working folder, no `PYTHON*` variable and no user site-packages on the import path).

    When the explorer runs from the user's own site-packages (`pip install --user`), which `-I`
    leaves out, the session adds that folder itself, the one this process uses, named here and
    not found from the session's environment."""
    user_site = _user_site_in_use()
    if user_site is None:
        return (sys.executable, "-I", "-m", module)
    start = (
        f"import runpy, site; site.addsitedir({user_site!r}); "
        f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
    )
    return (sys.executable, "-I", "-c", start)


def _user_site_in_use() -> str | None:
    """The user site-packages folder when this interpreter imports from it, else None."""
    if not site.ENABLE_USER_SITE:
        return None
    folder = site.getusersitepackages()
    return folder if folder in sys.path else None


class SessionProcess(AppService):
    """The explorer's process for one WebSocket."""

    def __init__(
        self,
        argv: Sequence[str],
        environment: Mapping[str, str],
        *,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[Any]],
        download_manager: DownloadManager,
        cwd: str | None = None,
    ) -> None:
        super().__init__(
            " ".join(argv),  # only for textual-serve's messages; never run by a shell
            write_bytes=write_bytes,
            write_str=write_str,
            close=close,
            download_manager=download_manager,
        )
        self.argv = tuple(argv)
        self.environment = dict(environment)
        self.cwd = cwd

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def finished(self) -> asyncio.Task[None] | None:
        """The task that reads the app's output; it ends when the process does."""
        return self._task

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        from importlib.metadata import version

        return {
            **self.environment,
            "TEXTUAL_DRIVER": "textual.drivers.web_driver:WebDriver",
            "TEXTUAL_FPS": "60",
            "TEXTUAL_COLOR_SYSTEM": "truecolor",
            "TERM_PROGRAM": "textual",
            "TERM_PROGRAM_VERSION": version("textual-serve"),
            "COLUMNS": str(width),
            "ROWS": str(height),
        }

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width, height),
            cwd=self.cwd,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def on_meta(self, data: bytes) -> None:
        try:
            meta = json.loads(data)
        except ValueError:
            log.warning("a session sent a meta packet that is not JSON; ignored")
            return
        kind = meta.get("type") if isinstance(meta, dict) else None
        if kind == "open_url":
            log.warning("a session asked the browser to open a URL; refused")
            return
        if kind == "deliver_file_start" and isinstance(meta.get("path"), str):
            meta["path"] = safe_file_name(meta["path"].replace("\\", "/").rsplit("/", 1)[-1])
            data = json.dumps(meta).encode("utf-8")
        await super().on_meta(data)

    async def _quit(self) -> None:
        """Ask the app to quit, then wait for the process itself to end: it closes its output
        before it has finished (the history is closed after the app stops drawing)."""
        await self.stop()
        if self._process is not None:
            await self._process.wait()

    async def close(self) -> None:
        """Ask the app to quit; kill its process if it is still there after `QUIT_GRACE` seconds."""
        process = self._process
        try:
            await asyncio.wait_for(self._quit(), QUIT_GRACE)
        except TimeoutError:
            log.warning("a session did not quit within %s s; killed", QUIT_GRACE)
        finally:
            if process is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), QUIT_GRACE)
            task, self._task = self._task, None
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
