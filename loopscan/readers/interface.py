"""What every transcript reader provides, and the one error a reader may raise."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from loopscan.events import Event

MAX_NOTES = 50  # diagnostics kept verbatim per session; the rest are only counted


class ReadError(Exception):
    """Nothing usable could be read from an input (missing, a directory of nothing, binary, ...).

    The only exception a reader lets escape. The message names the path (and line, where one applies).
    """


@dataclass
class Diagnostics:
    """What a reader had to skip or repair, with file and line, for the report and for stderr."""

    path: str
    bad_lines: int = 0
    skipped_entries: int = 0
    skipped_kinds: Counter = field(default_factory=Counter)
    repaired_fields: int = 0
    notes: list[str] = field(default_factory=list)
    dropped_notes: int = 0

    def note(self, line: int | None, message: str) -> None:
        if len(self.notes) < MAX_NOTES:
            where = f"{self.path}:{line}" if line else self.path
            self.notes.append(f"{where}: {message}")
        else:
            self.dropped_notes += 1

    def bad_line(self, line: int, message: str) -> None:
        self.bad_lines += 1
        self.note(line, message)

    def skipped(self, line: int, kind: str) -> None:
        """An entry of a kind loopscan does not read: counted; the first of each kind is noted."""
        self.skipped_entries += 1
        self.skipped_kinds[kind] += 1
        if self.skipped_kinds[kind] == 1:
            self.note(line, f"skipped an entry of unknown {kind.replace(':', ' ', 1)} (further ones only counted)")


class Reader(Protocol):
    """A transcript format: recognises its first record and turns records into events."""

    name: str

    def sniff(self, first: Any) -> bool:
        """True when the first decoded record belongs to this format."""

    def events(self, records: Iterator[tuple[int, bytes | Any]], diag: Diagnostics) -> Iterator[Event]:
        """Normalised events, in file order, from (line number, record) pairs.

        A record is the raw bytes of one JSONL line, or an already decoded object (an item of an
        exported JSON array, or a line too large to hold as bytes)."""
