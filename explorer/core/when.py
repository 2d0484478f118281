"""Moments a person types: `history --since 7d`, `--until 2026-01-31`, the TUI's jump to a date.

Also the explorer's one clock: `utc_now()` and `stamp()`, the RFC 3339 text every recorded time is
written in (milliseconds for a run's own times, seconds where a person reads it). Parsing is pure
(the caller passes `now`), so the command line and the screens read a moment the same way:

- an ISO 8601 date-time (`2026-01-31T12:00`, with seconds, a fraction, `Z` or an offset); one
  without a zone is UTC, the zone every recorded time is in;
- an ISO date (`2026-01-31`): the whole day, so as a lower bound its first moment and as an
  upper bound the first moment of the next day (`--until 2026-01-31` keeps that day's runs);
- a relative age: a whole number and a unit, `s`, `m`, `h`, `d` or `w` (`30m`, `12h`, `7d`),
  meaning that long before `now`.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Literal

_AGE = re.compile(r"(\d{1,9})\s*([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

WHEN_HELP = "an ISO 8601 date or date-time (UTC unless it says otherwise), or an age such as 30m, 12h, 7d"


def utc_now() -> datetime:
    """The current moment, aware, in UTC: the only place the explorer reads the clock."""
    return datetime.now(UTC)


def stamp(
    moment: datetime | None = None, *, precision: Literal["milliseconds", "seconds"] = "milliseconds"
) -> str:
    """`moment` (now when None) as RFC 3339 UTC text ending in `Z`: `2026-01-31T12:00:00.000Z`,
    or without the fraction for `precision="seconds"`. A moment without a zone is UTC.

    The stored `recorded_at` is this text at milliseconds: one fixed form, so that ordering and
    comparing the text is ordering and comparing the moments, on every history backend."""
    if moment is None:
        moment = utc_now()
    elif moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec=precision).replace("+00:00", "Z")


class WhenError(ValueError):
    """Not a moment this module reads; str() says what is."""


def parse_when(text: str, now: datetime, *, end_of_day: bool = False) -> datetime:
    """The moment `text` names, in UTC. `end_of_day`: a date alone is read as the end of that
    day (an upper bound) rather than its start. Raises WhenError."""
    given = text.strip()
    age = _AGE.fullmatch(given.lower())
    if age is not None:
        try:
            span = timedelta(**{_UNITS[age.group(2)]: int(age.group(1))})
            return (now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)) - span
        except OverflowError:
            raise WhenError(f"{given!r} reaches before the year 1") from None
    if _DATE.fullmatch(given):
        try:
            day = date.fromisoformat(given)
        except ValueError as exc:
            raise WhenError(f"{given!r} is not a date ({exc})") from None
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        return start + timedelta(days=1) if end_of_day else start
    try:
        moment = datetime.fromisoformat(given.replace("z", "Z"))
    except ValueError:
        raise WhenError(f"{given!r} is not a moment: give {WHEN_HELP}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
