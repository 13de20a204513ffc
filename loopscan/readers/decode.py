"""Tolerant line decoding: a fast typed msgspec decode, and a repair path for lines that do not fit.

The fast path decodes straight into partial structs, skipping every field nobody reads (thinking
text, compaction summaries, signatures). A line whose shape is off (a `message` that is a string, a
`usage` that is a list) does not cost the whole line: the offending field is set to null, the repair
is noted with file and line, and the rest of the line is kept.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, TypeVar

import msgspec

from loopscan.readers.interface import Diagnostics

T = TypeVar("T")


class JSFloat(float):
    """A float read from JSON. Kept distinct so hashing can print it the way JavaScript does."""

    __slots__ = ()


_PATH_TOKEN = re.compile(r"\.([A-Za-z_$][\w$]*)|\[(\d+)\]")
_AT_PATH = re.compile(r" - at `(\$[^`]*)`$")
MAX_REPAIRS = 32


class LineDecoder:
    """Decodes records into `schema`, repairing what does not fit. One per schema."""

    def __init__(self, schema: type[T]):
        self.schema = schema
        self._decoder = msgspec.json.Decoder(schema, float_hook=JSFloat)

    def decode(self, lineno: int, record: bytes | Any, diag: Diagnostics) -> T | None:
        """The typed record, or None (counted as a bad line, with the reason) when unusable."""
        if isinstance(record, bytes):
            try:
                return self._decoder.decode(record)
            except msgspec.ValidationError:
                pass
            except (msgspec.DecodeError, RecursionError):
                pass
            obj = _generic_loads(lineno, record, diag)
            if obj is _BAD:
                return None
        else:
            obj = record
        return self._repair(lineno, obj, diag)

    def _repair(self, lineno: int, obj: Any, diag: Diagnostics) -> T | None:
        if not isinstance(obj, dict):
            diag.bad_line(lineno, f"not a JSON object (a JSON {json_kind(obj)})")
            return None
        for _ in range(MAX_REPAIRS):
            try:
                return msgspec.convert(obj, self.schema, strict=True)
            except msgspec.ValidationError as exc:
                message = str(exc)
                path = _AT_PATH.search(message)
                if not path or not _null_at(obj, path.group(1)):
                    diag.bad_line(lineno, f"unusable entry ({message})")
                    return None
                diag.repaired_fields += 1
                reason = message[: path.start()]
                diag.note(lineno, f"{path.group(1)[2:] or 'entry'}: {reason}; ignored that field")
            except RecursionError:
                diag.bad_line(lineno, "entry nested too deeply to use")
                return None
        diag.bad_line(lineno, f"more than {MAX_REPAIRS} fields of the wrong type; entry not used")
        return None


_BAD = object()


def _generic_loads(lineno: int, raw: bytes, diag: Diagnostics) -> Any:
    """The slow, lenient decode behind a failed fast path: names the precise reason on failure."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Kept, the way Node (OpenClaw) reads it: each invalid byte becomes U+FFFD.
        text = raw.decode("utf-8", "replace")
        diag.repaired_fields += 1
        diag.note(lineno, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); read with U+FFFD")
    try:
        return json.loads(text, parse_float=JSFloat, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        if "\x00" in text:
            diag.bad_line(lineno, "NUL bytes instead of a line (was the file cut off by a crash?)")
        elif exc.pos >= len(text.rstrip()) and not raw.endswith(b"\n"):
            diag.bad_line(lineno, "truncated last line (was the session still being written?)")
        else:
            diag.bad_line(lineno, f"invalid JSON ({exc.msg} at column {exc.colno})")
        return _BAD
    except (RecursionError, ValueError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        diag.bad_line(lineno, f"invalid JSON ({reason})")
        return _BAD


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _null_at(obj: Any, path: str) -> bool:
    """Set the value at a msgspec error path (`$.message.usage`, `$.message.content[2]`) to None."""
    tokens = [(m.group(1), m.group(2)) for m in _PATH_TOKEN.finditer(path)]
    if not tokens:
        return False
    target = obj
    for name, index in tokens[:-1]:
        target = target.get(name) if name is not None and isinstance(target, dict) else (
            target[int(index)] if index is not None and isinstance(target, list) else None
        )
        if target is None:
            return False
    name, index = tokens[-1]
    if name is not None and isinstance(target, dict) and name in target:
        if target[name] is None:
            return False
        target[name] = None
        return True
    if index is not None and isinstance(target, list) and int(index) < len(target):
        if target[int(index)] is None:
            return False
        target[int(index)] = None
        return True
    return False


def json_kind(obj: Any) -> str:
    if isinstance(obj, list):
        return "array"
    if isinstance(obj, str):
        return "string"
    if isinstance(obj, bool):
        return "boolean"
    if isinstance(obj, (int, float, Decimal)):
        return "number"
    return "null" if obj is None else type(obj).__name__
