"""Moving a whole history from one store to another (`history copy`), and proving it arrived.

Runs are copied oldest first in batches, each batch one transaction in the target, as stored
(`HistoryStore.stored_runs` / `put_stored`): documents by their bytes, volatile values and signed
envelopes byte for byte, and every run under its own id, so `show 4812` means the same run on
both sides. The target must be empty, or hold the beginning of this very copy: an interrupted
copy is run again and goes on after the last batch that committed, having checked first that
what is there is the source's. New runs recorded in the source meanwhile are copied by the next
run of the command. Ids stay unique after the copy: the target never gives a new run an id the
source has given (forgotten runs included).

The proof: the run count and, for every run id, the fingerprint of what it is (agent, time,
report, exchanges and keys digests, volatile values, envelope) are compared on both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from explorer.store.base import HistoryError, HistoryStore

BATCH = 200  # runs per transaction in the target
PROOF_BATCH = 2000  # fingerprints read per round trip while proving


@dataclass(frozen=True)
class CopyResult:
    runs: int  # runs the source holds up to the copy's high mark
    copied: int  # of which copied by this call (the rest were there from an earlier one)
    proved: bool
    difference: str | None = None  # the first difference found, when not proved


def _fingerprints(store: HistoryStore, upto: int) -> Iterator[tuple[int, str]]:
    after = 0
    while True:
        batch = store.fingerprints(after, upto, PROOF_BATCH)
        yield from batch
        if len(batch) < PROOF_BATCH:
            return
        after = batch[-1][0]


def compare(source: HistoryStore, target: HistoryStore, upto: int) -> tuple[int, str | None]:
    """(runs compared, the first difference or None) between the two stores, for ids up to `upto`."""
    count = 0
    theirs = _fingerprints(target, upto)
    for run_id, fingerprint in _fingerprints(source, upto):
        other = next(theirs, None)
        if other is None:
            return count, f"run {run_id} is missing from {target.location}"
        if other[0] != run_id:
            first = min(other[0], run_id)
            where = target.location if other[0] < run_id else source.location
            return count, f"run {first} is only in {where}"
        if other[1] != fingerprint:
            return count, f"run {run_id} differs between the two histories"
        count += 1
    extra = next(theirs, None)
    if extra is not None:
        return count, f"run {extra[0]} is only in {target.location}"
    return count, None


def copy_history(
    source: HistoryStore,
    target: HistoryStore,
    *,
    batch: int = BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> CopyResult:
    """Copy every run of `source` into `target`, then prove it; HistoryError when the target
    holds runs that are not this copy's beginning."""
    upto = source.last_run_id()
    have = target.last_run_id()
    if have:
        _, difference = compare(source, target, have)
        if difference is not None:
            raise HistoryError(
                f"{target.location} already holds runs that are not a copy of {source.location} "
                f"({difference}); copy into an empty history"
            )
    after = have
    copied = 0
    while after < upto:
        runs = source.stored_runs(after, upto, batch)
        if not runs:
            break
        target.put_stored(runs)
        copied += len(runs)
        after = runs[-1].id
        if progress is not None:
            progress(after, upto)
    target.keep_ids_above(source.id_high_water())
    count, difference = compare(source, target, upto)
    return CopyResult(runs=count, copied=copied, proved=difference is None, difference=difference)
