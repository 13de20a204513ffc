"""Masking the volatile parts of command output (the `loopscan` profile's exec outcome).

OpenClaw hashes an exec result's full output, so `ls -la` of a folder whose log file grows, or a
command that prints the time, never repeats and never builds a no-progress streak (upstream #93917).
`mask_volatile` replaces what changes between identical runs without meaning progress: date-times,
dates, clock times, durations, the size and time columns of `ls -l` style listings and their `total`
line, process ids, long hex ids (commit shas, uuids, object ids) and temporary file names. Counts
that carry meaning (tests passed, lines processed, percentages) are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _has_month(text: str) -> bool:
    return any(month in text for month in _MONTHS)


def _always(text: str) -> bool:
    return True


# (guard, pattern, replacement), applied in order. A guard is a cheap substring test that every
# match needs: without it the (slow, literal-free) pattern is not run at all.
_MASKS: list[tuple[Callable[[str], bool], re.Pattern[str], str]] = [
    # ISO 8601 date-times, with optional fraction and zone
    (lambda t: ":" in t and "-" in t,
     re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"), "<datetime>"),
    # ls -l: "<size> <Mon> <day> <hh:mm|year>" -> the size and the time column
    (_has_month, re.compile(r"\b\d+(?:[.,]\d+)?[KMGTP]?\s+" + _MONTH + r"\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})\b"),
     "<size> <mtime>"),
    # "Sun Jun 14 01:12:03 UTC 2026", "Jun 14 01:12:03" (date(1), syslog)
    (lambda t: ":" in t and _has_month(t),
     re.compile(r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+)?" + _MONTH
                + r"\s+\d{1,2}\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s+[A-Z]{2,5})?(?:\s+\d{4})?"), "<date>"),
    (lambda t: "-" in t or "/" in t, re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"), "<date>"),
    (lambda t: ":" in t, re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    # durations: 12ms, 1.5s, 3 seconds, 2m30s (00:01:23 is a time above)
    (_always, re.compile(r"\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?)\b"),
     "<duration>"),
    # epoch timestamps (10 or 13 digits)
    (_always, re.compile(r"\b1\d{9}(?:\d{3})?\b"), "<epoch>"),
    # the "total N" line of ls -l
    (lambda t: "total " in t, re.compile(r"^total \d+$", re.M), "total <n>"),
    # process ids
    (lambda t: "pid" in t or "PID" in t or "process" in t,
     re.compile(r"\b(?:pid|PID|process)\s*[:=#]?\s*\d+\b"), "pid <n>"),
    # long hex ids (shas, uuids, object ids)
    (lambda t: "-" in t,
     re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (_always, re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,}\b"), "<hex>"),
    (lambda t: "0x" in t, re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "<hex>"),
    # temporary names
    (lambda t: "tmp" in t or "/var/folders" in t, re.compile(r"(/tmp|/var/tmp|/var/folders)/[\w.-]+"), r"\1/<tmp>"),
    (lambda t: "tmp" in t, re.compile(r"\btmp[\w-]{5,}\b"), "<tmp>"),
]
_last: tuple[str, str] = ("", "")  # the last input and its masking: replays of one file share results


def mask_volatile(text: str) -> str:
    global _last
    if text is _last[0]:
        return _last[1]
    original = text
    for guard, pattern, replacement in _MASKS:
        if guard(text):
            text = pattern.sub(replacement, text)
    _last = (original, text)
    return text
