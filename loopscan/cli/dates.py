"""--since / --until values: dates or date-times, in a given or the local time zone."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:[T ]?(\d{2})(\d{2})(\d{2})?)?$")


def parse_bound(value: str | None, tz: str | None) -> float | None:
    """Epoch seconds for `2026-06-14`, `20260614`, `2026-06-14T01:30`, `20260614T0130`, ... or None."""
    if value is None:
        return None
    text = value.strip()
    compact = _COMPACT.match(text)
    if compact:
        y, mo, d, h, mi, sec = compact.groups()
        text = f"{y}-{mo}-{d}" + (f"T{h}:{mi}:{sec or '00'}" if h else "")
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"not a date or date-time: {value!r} (use YYYY-MM-DD, YYYYMMDD or an ISO date-time)") from None
    if stamp.tzinfo is None:
        if tz:
            try:
                stamp = stamp.replace(tzinfo=ZoneInfo(tz))
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {tz!r}") from None
        else:
            stamp = stamp.astimezone()  # local time
    return stamp.timestamp()
