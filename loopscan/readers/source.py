"""Bytes in: open a path (plain, gzip, stdin), stream its records, never read a whole file.

A record is one JSONL line as bytes, or an already decoded object for the two cases where holding
the raw bytes would be wrong: an item of an exported JSON array (a transcript that is one big JSON
document) and a line too long to hold (streamed out of the file with ijson).
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import ijson

from loopscan.readers.interface import Diagnostics, ReadError

GZIP_MAGIC = b"\x1f\x8b"
MAX_LINE_BYTES = 32 << 20  # longer lines are streamed with ijson instead of held as bytes
SNIFF_BYTES = 4096
OVERSIZE_CHUNK = 8 << 20  # ijson's read size for an oversize line: yajl re-scans a long token per chunk
_TRUNCATED = (EOFError, gzip.BadGzipFile, zlib.error)


def ijson_backend() -> str:
    """The ijson backend in use ("yajl2_c" is the fast C one)."""
    return ijson.backend


@contextmanager
def open_input(path: str) -> Iterator[BinaryIO]:
    """Open `path` (or `-` for stdin) for binary reading, transparently gunzipping.

    Raises ReadError, naming the path, when nothing can be read from it.
    """
    if path == "-":
        raw: BinaryIO = sys.stdin.buffer
        owned = False
    else:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise ReadError(f"{path}: no such file") from None
        except OSError as exc:
            raise ReadError(f"{path}: cannot read ({exc.strerror or exc})") from None
        if stat.S_ISDIR(st.st_mode):
            raise ReadError(f"{path}: is a directory, not a session file")
        try:
            raw = open(path, "rb")  # noqa: SIM115 - closed below; inputs are never opened for writing
        except OSError as exc:
            raise ReadError(f"{path}: cannot read ({exc.strerror or exc})") from None
        owned = True
    try:
        buffered = raw if hasattr(raw, "peek") else io.BufferedReader(raw)  # type: ignore[arg-type]
        head = buffered.peek(SNIFF_BYTES)[:SNIFF_BYTES]
        stream: BinaryIO = buffered
        if head[:2] == GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[assignment]
            try:
                head = stream.peek(SNIFF_BYTES)[:SNIFF_BYTES]  # type: ignore[attr-defined]
            except _TRUNCATED as exc:
                raise ReadError(f"{path}: damaged gzip file ({exc})") from None
        # NULs after JSON text (a crash leaves a NUL-filled tail) are bad lines, not a binary file.
        if b"\x00" in head and head.lstrip()[:1] not in (b"{", b"["):
            raise ReadError(f"{path}: binary data (NUL bytes), not a JSONL transcript")
        yield stream
    finally:
        if owned:
            raw.close()


def iter_records(stream: BinaryIO, diag: Diagnostics) -> Iterator[tuple[int, bytes | Any]]:
    """(line number, record) pairs. Blank lines are skipped. A truncated gzip ends the stream
    with a note instead of an exception (what was read is still reported)."""
    lineno = 0
    try:
        head = stream.peek(64)  # type: ignore[attr-defined]
        if head.lstrip()[:1] == b"[":
            yield from _array_items(stream, diag)
            return
        readline = stream.readline
        while True:
            line = readline(MAX_LINE_BYTES)
            if not line:
                return
            lineno += 1
            if len(line) == MAX_LINE_BYTES and not line.endswith(b"\n"):
                obj = _oversize_line(line, stream, lineno, diag)
                if obj is not None:
                    yield lineno, obj
                continue
            if line.isspace():
                continue
            yield lineno, line
    except _TRUNCATED as exc:
        diag.bad_line(lineno + 1, f"file ends abruptly (truncated gzip: {exc}); reported what was read")


def _array_items(stream: BinaryIO, diag: Diagnostics) -> Iterator[tuple[int, Any]]:
    """Items of a transcript exported as one JSON array, streamed."""
    n = 0
    try:
        for n, item in enumerate(ijson.items(stream, "item", use_float=False), 1):
            yield n, item
    except ijson.JSONError as exc:
        diag.bad_line(n + 1, f"invalid JSON in exported array after item {n} ({exc})")


class _RestOfLine(io.RawIOBase):
    """A file-like view of the current line only: starts with `first`, stops after its newline."""

    def __init__(self, first: bytes, stream: BinaryIO):
        self._pending = memoryview(first)
        self._stream = stream
        self._done = first.endswith(b"\n")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        """The next bytes of the line (ijson's C backend reads through readinto, not read)."""
        size = len(buffer)
        if not self._pending and not self._done and size:
            chunk = self._stream.readline(size)
            if not chunk or chunk.endswith(b"\n"):
                self._done = True
            self._pending = memoryview(chunk)
        out, self._pending = self._pending[:size], self._pending[size:]
        buffer[: len(out)] = out
        return len(out)

    def drain(self) -> None:
        while self.read(1 << 20):
            pass


def _oversize_line(first: bytes, stream: BinaryIO, lineno: int, diag: Diagnostics) -> Any:
    """Decode a line longer than MAX_LINE_BYTES by streaming it through ijson."""
    rest = _RestOfLine(first, stream)
    try:
        return next(ijson.items(rest, "", use_float=False, buf_size=OVERSIZE_CHUNK))
    except (ijson.JSONError, StopIteration, UnicodeDecodeError, RecursionError) as exc:
        reason = " ".join(str(exc).split()) or "no value"  # yajl's message spans lines and quotes the input
        diag.bad_line(lineno, f"invalid JSON in an oversize line ({reason})")
        return None
    finally:
        rest.drain()
