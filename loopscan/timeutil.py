"""Timestamps: ISO text <-> epoch seconds (UTC)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def parse_iso(value: Any) -> float | None:
    """Epoch seconds of an ISO 8601 date-time (naive means UTC); None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.timestamp()


def iso(ts: float | None) -> str | None:
    """ISO 8601 UTC with milliseconds and a `Z`."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
