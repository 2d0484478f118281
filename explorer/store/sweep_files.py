"""The files a sweep leaves behind: per-run JSON transcripts (`--transcripts DIR`) and JUnit XML.

Both are written as runs finish and neither holds the reports, so a sweep of thousands of agents
stays in constant memory:

- a transcript is the same JSON `export` writes (`explorer.store.export.transcript`: every byte,
  the keys, no secret), written atomically (temporary file in DIR, then rename), so a job runner
  collecting DIR never sees half a file, and a sweep killed half way leaves complete transcripts
  of every run that finished. The name says which agent and which run:
  `<host>_<port>[_<path>]--<UTC time>--<digest>.json`, the digest (of the transcript's own bytes)
  keeping two runs in the same millisecond apart. `history import DIR` merges them.
- the JUnit writer appends each suite to a temporary file next to FILE; `close()` writes FILE
  (totals on the `testsuites` root need every suite counted) and renames it into place, so the
  file a CI job reads is always whole, also after Ctrl+C (close is called in a `finally`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from explorer.core import junit
from explorer.core.run import Run
from explorer.store.sqlite import agent_of

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SLUG_CAP = 120


class SweepFileError(Exception):
    """A sweep output file cannot be written; str() names the file and the reason."""


def agent_slug(agent: str) -> str:
    """A file-name-safe name for an agent: host_port plus the path, or the target's text."""
    try:
        parts = urlsplit(agent)
    except ValueError:
        parts = None
    if parts is not None and parts.scheme in ("http", "https") and parts.hostname:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        path = parts.path.strip("/").removesuffix("agent-card.json").removesuffix(".well-known/").strip("/")
        text = f"{parts.hostname}_{port}" + (f"_{path}" if path else "")
    else:
        text = Path(agent).name or agent
    slug = _UNSAFE.sub("_", text).strip("._") or "agent"
    return slug[:_SLUG_CAP]


def _stamp(report_time: object) -> str:
    text = report_time if isinstance(report_time, str) else ""
    digits = re.sub(r"[^0-9TZ]", "", text)
    return digits or "unknown-time"


def write_transcript(directory: Path, run: Run) -> Path:
    """Write the run's JSON transcript into `directory` atomically; returns its path."""
    from explorer.store.export import transcript

    data = (json.dumps(transcript(run), ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()[:12]
    name = f"{agent_slug(agent_of(run.report))}--{_stamp(run.report.get('started_at'))}--{digest}.json"
    target = directory / name
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise SweepFileError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


class JUnitWriter:
    """Streams one `testsuite` per finished run; `close()` puts the whole file in place."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.tests = self.failures = self.skipped = 0
        self.seconds = 0.0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._body: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8", dir=self.path.parent)
        except OSError as exc:
            raise SweepFileError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def add(self, run: Run, *, name: str | None = None, seconds: float = 0.0) -> None:
        self.add_report(run.report, name=name, seconds=seconds)

    def add_report(self, report: Mapping[str, Any], *, name: str | None = None, seconds: float = 0.0) -> None:
        """A suite for a report that has no run behind it (an interview that raised)."""
        suite = junit.suite(report, name=name, seconds=seconds)
        self.tests += suite.tests
        self.failures += suite.failures
        self.skipped += suite.skipped
        self.seconds += seconds
        self._body.write(suite.xml + "\n")

    def close(self) -> Path:
        """Write FILE (head with totals, every suite, tail) atomically; the temporary body goes."""
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(junit.document_head(self.tests, self.failures, self.skipped, self.seconds))
                    self._body.seek(0)
                    shutil.copyfileobj(self._body, out)
                    out.write(junit.DOCUMENT_TAIL)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise SweepFileError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        finally:
            self._body.close()
        return self.path
