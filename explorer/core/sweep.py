"""The arithmetic of a sweep (many agents in one run, CONTRACT.md): target lists, shards, tallies.

Pure and small on purpose, because each rule here is a promise to scripts that split one list
over many machines and read one exit status:

- a target list is one target per line; blank lines and `#` comments are skipped, and so is
  surrounding whitespace (a list written by hand or by `cut` must just work);
- `--shard I/N` keeps the targets whose 0-based position p has p mod N == I-1, positions counted
  in the whole list, so N machines given the same list split it without coordination;
- the exit status of a sweep: 1 if any agent is nonconformant, else 5 if any churned, else 3 if
  any was unreachable, else 0; `not_offered` is neutral.

`Tally` counts verdicts as runs finish (it never holds a report) and words the one-line summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from explorer.core.verdict import VERDICTS

T = TypeVar("T")

# The many-targets exit rule, most serious first (verdict, status).
SWEEP_EXIT: tuple[tuple[str, int], ...] = (("nonconformant", 1), ("churn", 5), ("unreachable", 3))


class ShardError(ValueError):
    """`--shard` is not `I/N` with 1 <= I <= N."""


def target_lines(text: str) -> list[str]:
    """The targets of a list: one per line, blank lines and `#` comments skipped. A byte order
    mark at the start (a list saved by a Windows editor) is not part of the first target."""
    out: list[str] = []
    for line in text.removeprefix("\ufeff").splitlines():
        item = line.strip()
        if item and not item.startswith("#"):
            out.append(item)
    return out


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` as (I, N); ShardError with a sentence a person can act on."""
    left, sep, right = text.strip().partition("/")
    if not sep or not left.strip().isdigit() or not right.strip().isdigit():
        raise ShardError(f"--shard is I/N (for example 2/8), not {text!r}")
    index, count = int(left), int(right)
    if count < 1 or not 1 <= index <= count:
        raise ShardError(f"--shard I/N needs 1 <= I <= N, not {index}/{count}")
    return index, count


def shard(items: Sequence[T], index: int, count: int) -> list[T]:
    """The items whose 0-based position p has p mod count == index - 1."""
    return [item for p, item in enumerate(items) if p % count == index - 1]


def sweep_exit(verdicts: Iterable[str]) -> int:
    """The exit status of a sweep over these verdicts (an unknown verdict counts as unreachable)."""
    seen = {v if v in VERDICTS else "unreachable" for v in verdicts}
    for verdict, status in SWEEP_EXIT:
        if verdict in seen:
            return status
    return 0


@dataclass
class Tally:
    """Verdict counts of a sweep in progress."""

    total: int
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def add(self, verdict: str) -> None:
        key = verdict if verdict in VERDICTS else "unreachable"
        self.counts[key] = self.counts.get(key, 0) + 1

    def exit_status(self) -> int:
        return sweep_exit(v for v, n in self.counts.items() if n)

    def words(self) -> str:
        """`3 conformant, 1 nonconformant` in the contract's verdict order; `none` for nothing."""
        parts = [f"{self.counts[v]} {v}" for v in VERDICTS if self.counts.get(v)]
        return ", ".join(parts) or "none"

    def summary(self, seconds: float) -> str:
        """The sweep's one-line summary: how many, how fast, and the verdict counts."""
        rate = self.done / seconds if seconds > 0 else 0.0
        agents = "agent" if self.total == 1 else "agents"
        head = f"swept {self.done}/{self.total} {agents} in {seconds:.1f} s ({rate:.1f}/s)"
        return f"{head}: {self.words()}"

    def progress(self, seconds: float) -> str:
        """The progress line: done/total, rate and verdict counts so far."""
        rate = self.done / seconds if seconds > 0 else 0.0
        return f"{self.done}/{self.total}  {rate:.1f}/s  {self.words()}"
