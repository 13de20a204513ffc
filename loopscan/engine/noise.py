"""Masking the volatile parts of command output before it is hashed.

OpenClaw 2026.6 hashes an exec result's full output, so `ls -la` of a folder whose log file grows, or
a command that prints the time, never repeats and never builds a no-progress streak (upstream
#93917). Two maskings are built from the same named masks:

- `mask_volatile` (the `loopscan` profile, every exec output): date-times, dates, clock times,
  durations, epoch stamps, the size and time columns of `ls -l` listings and their `total` line,
  process ids, long hex ids (commit shas, uuids, object ids) and temporary file names.
- `mask_failure` (OpenClaw 2026.8's "failure identity", failed exec results): date-times, clock
  times, "attempt/retry N", durations and process ids.

Counts that carry meaning (tests passed, lines processed, percentages) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _has_month(text: str) -> bool:
    return any(month in text for month in _MONTHS)


def _always(text: str) -> bool:
    return True


class Mask(NamedTuple):
    """A guard (a cheap substring test every match needs: without it the slow, literal-free pattern
    is not run at all), the pattern, and what a match becomes."""

    guard: Callable[[str], bool]
    pattern: re.Pattern[str]
    replacement: str


DATETIME = Mask(lambda t: ":" in t and "-" in t,
                re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"),
                "<datetime>")
# ls -l: "<size> <Mon> <day> <hh:mm|year>" -> the size and the time column
LISTING = Mask(_has_month,
               re.compile(r"\b\d+(?:[.,]\d+)?[KMGTP]?\s+" + _MONTH + r"\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})\b"),
               "<size> <mtime>")
# "Sun Jun 14 01:12:03 UTC 2026", "Jun 14 01:12:03" (date(1), syslog)
CLOCK_DATE = Mask(lambda t: ":" in t and _has_month(t),
                  re.compile(r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+)?" + _MONTH
                             + r"\s+\d{1,2}\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s+[A-Z]{2,5})?(?:\s+\d{4})?"), "<date>")
DATE = Mask(lambda t: "-" in t or "/" in t, re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"), "<date>")
TIME = Mask(lambda t: ":" in t, re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>")
DURATION = Mask(_always, re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?)\b"),
                "<duration>")
EPOCH = Mask(_always, re.compile(r"\b1\d{9}(?:\d{3})?\b"), "<epoch>")
TOTAL = Mask(lambda t: "total " in t, re.compile(r"^total \d+$", re.M), "total <n>")
PID = Mask(lambda t: "pid" in t or "PID" in t or "process" in t,
           re.compile(r"\b(?:pid|PID|process)\s*[:=#]?\s*\d+\b"), "pid <n>")
UUID = Mask(lambda t: "-" in t, re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I),
            "<uuid>")
HEX = Mask(_always, re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,}\b"), "<hex>")
HEX_0X = Mask(lambda t: "0x" in t, re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "<hex>")
TMP_PATH = Mask(lambda t: "tmp" in t or "/var/folders" in t, re.compile(r"(/tmp|/var/tmp|/var/folders)/[\w.-]+"),
                r"\1/<tmp>")
TMP_NAME = Mask(lambda t: "tmp" in t, re.compile(r"\btmp[\w-]{5,}\b"), "<tmp>")
ATTEMPT = Mask(lambda t: "ttempt" in t or "etry" in t or "ETRY" in t or "TTEMPT" in t,
               re.compile(r"\b(attempt|retry|retries|retrying)(\s*(?:#|no\.?|number)?\s*)\d+(?:\s*(?:/|of)\s*\d+)?", re.I),
               r"\1\2<n>")

VOLATILE = (DATETIME, LISTING, CLOCK_DATE, DATE, TIME, DURATION, EPOCH, TOTAL, PID, UUID, HEX, HEX_0X, TMP_PATH, TMP_NAME)
FAILURE = (DATETIME, CLOCK_DATE, TIME, ATTEMPT, DURATION, PID)


class _Masking:
    """Applies masks in order; remembers the last input, since the replays of one file (a what-if
    compares several) hand it the very same string one after another."""

    def __init__(self, masks: tuple[Mask, ...]):
        self.masks = masks
        self.last: tuple[str, str] = ("", "")

    def __call__(self, text: str) -> str:
        if text is self.last[0]:
            return self.last[1]
        original = text
        for guard, pattern, replacement in self.masks:
            if guard(text):
                text = pattern.sub(replacement, text)
        self.last = (original, text)
        return text


mask_volatile = _Masking(VOLATILE)
mask_failure = _Masking(FAILURE)
