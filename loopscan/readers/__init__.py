"""Readers: one per transcript format, each turning records into the normalised event stream.

`open_events(path)` opens any supported input, detects the format from its content (never from
its name) and yields events. `ReadError` is the only exception that escapes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from loopscan.events import Event
from loopscan.readers.interface import Diagnostics, ReadError, Reader
from loopscan.readers.openclaw import OpenClawReader
from loopscan.readers.source import iter_records, open_input

READERS: tuple[Reader, ...] = (OpenClawReader(),)
SNIFF_RECORDS = 20

__all__ = ["READERS", "Diagnostics", "ReadError", "open_events"]


@contextmanager
def open_events(path: str) -> Iterator[tuple[Iterator[Event], Diagnostics]]:
    """(events, diagnostics) for one transcript. Diagnostics fill in as events are consumed."""
    diag = Diagnostics(path)
    with open_input(path) as stream:
        records = iter_records(stream, diag)
        head = list(itertools.islice(records, SNIFF_RECORDS))
        if not head and not diag.notes:
            diag.note(None, "empty file: no entries")
        reader = _detect(path, head)
        yield reader.events(itertools.chain(head, records), diag), diag


def _detect(path: str, head: list[tuple[int, bytes | Any]]) -> Reader:
    if not head:
        return READERS[0]  # empty: reported as an empty session, not an error
    first = None
    for _, record in head:
        try:
            first = orjson.loads(record) if isinstance(record, bytes) else record
        except orjson.JSONDecodeError:
            continue
        for reader in READERS:
            if reader.sniff(first):
                return reader
        break
    raise ReadError(f"{path}: not a recognised session transcript ({_describe(first)})")


def _describe(first: Any) -> str:
    if first is None:
        return "no line of it is valid JSON"
    if isinstance(first, dict):
        if "sessionId" in first and first.get("type") in ("user", "assistant", "summary", "system"):
            return "looks like a Claude Code transcript, which this version does not read"
        if first.get("type") in ("session_meta", "turn_context", "response_item", "event_msg"):
            return "looks like an OpenAI Codex rollout, which this version does not read"
        if "traceSchema" in first:
            return "an OpenClaw trajectory sidecar, not a session"
        keys = ", ".join(sorted(map(str, first))[:6])
        return f"first record has keys {keys}"
    return f"first record is a JSON {type(first).__name__}, not an object"
