"""Instants as milliseconds since the epoch, read as JavaScript's ``Date.parse`` reads ISO 8601.

A licence file's ``issued_at`` and ``valid_until`` are judged by ``Date.parse`` in the reference
verifier. ``datetime.fromisoformat`` differs from it (before Python 3.11 it refuses ``Z``; it takes
forms ``Date.parse`` refuses and the other way round), so the forms V8 reads are written out here:
``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` (or a signed six-digit year), optionally followed by ``T`` (or
``t``, or a space after a whole date) and ``HH:mm``, ``HH:mm:ss`` or ``HH:mm:ss.fff…`` (digits past
the milliseconds dropped), and ``Z`` or ``±HH:mm`` / ``±HHmm``. A date alone is UTC; a date and time
without an offset is local time (taken as UTC for years ``datetime`` cannot hold). A day past the
month's end rolls over (``2026-04-31`` is 1 May), as in V8. Text in none of these forms is no date
here, although V8's fallback parser reads some of it by rules of its own (``Jun 1 2026``): the
licence service writes every date as ``2026-06-01T00:00:00.000Z``.
"""

from __future__ import annotations

import datetime as _dt
import re
import time
from typing import Optional, Union

_ISO = re.compile(
    r"(?P<year>[0-9]{4}|[+-][0-9]{6})"
    r"(?:-(?P<month>[0-9]{2})(?:-(?P<day>[0-9]{2}))?)?"
    r"(?:(?P<sep>[Tt ])(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})"
    r"(?::(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]+))?)?"
    r"(?P<offset>[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?"
)
#: ECMAScript's time values end 100,000,000 days either side of the epoch.
_MAX_MS = 8_640_000_000_000_000
_DAY_MS = 86_400_000
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

Instant = Union[None, _dt.datetime, int, float, str]


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to this proleptic Gregorian date (any year)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def parse_js_date(text: object) -> Optional[int]:
    """Milliseconds since the epoch, or None where ``Date.parse`` answers NaN (or for text in a form
    only V8's fallback parser reads). Anything but a string is no date."""
    if not isinstance(text, str):
        return None
    m = _ISO.fullmatch(text)
    if not m:
        return None
    if m.group("year") == "-000000":
        return None
    year = int(m.group("year"))
    if m.group("sep") == " " and (len(m.group("year")) != 4 or year < 100 or m.group("day") is None):
        # V8 reads a space-separated date with its fallback parser, which agrees with the ISO reading
        # only for a whole date with a four-digit year from 0100 on (it reads "0056" as 1956).
        return None
    month = int(m.group("month") or 1)
    day = int(m.group("day") or 1)
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    hour = int(m.group("hour") or 0)
    minute = int(m.group("minute") or 0)
    second = int(m.group("second") or 0)
    fraction = m.group("fraction") or ""
    millis = int((fraction + "000")[:3])
    if minute > 59 or second > 59 or hour > 24:
        return None
    if hour == 24 and (minute or second or fraction.strip("0")):
        return None
    ms = (_days_from_civil(year, month, 1) + day - 1) * _DAY_MS
    ms += ((hour * 60 + minute) * 60 + second) * 1000 + millis
    offset = m.group("offset")
    if offset and offset not in "Zz":
        digits = offset[1:].replace(":", "")
        oh, om = int(digits[:2]), int(digits[2:])
        if oh > 23 or om > 59:
            return None
        ms -= (1 if offset[0] == "+" else -1) * (oh * 60 + om) * 60_000
    elif not offset and m.group("hour") is not None:
        ms -= _local_offset_ms(ms)
    return ms if -_MAX_MS <= ms <= _MAX_MS else None


def _local_offset_ms(wall_ms: int) -> int:
    """This machine's UTC offset at a local wall-clock time (0 outside what ``datetime`` can hold)."""
    try:
        naive = _dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=wall_ms - wall_ms % 1000)
        return wall_ms - wall_ms % 1000 - round(naive.timestamp() * 1000)
    except (OverflowError, ValueError, OSError):
        return 0


def instant_ms(now: Instant) -> float:
    """``now`` as milliseconds since the epoch: None (the clock), a datetime (naive is local time),
    seconds since the epoch (int or float), or ISO 8601 text as ``Date.parse`` reads it."""
    if now is None:
        return time.time() * 1000
    if isinstance(now, _dt.datetime):
        if now.tzinfo is None or now.tzinfo.utcoffset(now) is None:
            return now.timestamp() * 1000
        return (now - _EPOCH) / _dt.timedelta(milliseconds=1)
    if isinstance(now, bool):
        raise TypeError("now must be a datetime, seconds since the epoch or ISO 8601 text, got a bool")
    if isinstance(now, (int, float)):
        if now != now:
            raise ValueError("now must not be NaN")
        return float(now) * 1000
    if isinstance(now, str):
        ms = parse_js_date(now)
        if ms is None:
            raise ValueError("now is not an ISO 8601 date: %r" % now[:40])
        return float(ms)
    raise TypeError(
        "now must be a datetime, seconds since the epoch or ISO 8601 text, got %s" % type(now).__name__
    )
