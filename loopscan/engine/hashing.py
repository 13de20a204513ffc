"""OpenClaw's `stableStringify` and SHA-256 digests, byte for byte.

`stable_json` serialises a decoded JSON value the way OpenClaw's JavaScript does: object keys
sorted, no spaces, strings escaped as `JSON.stringify` does, numbers printed as JavaScript prints
them (`1.0` -> `1`, `1e21` -> `1e+21`, `-0` -> `0`), lone surrogates removed. The fast path is
`orjson.dumps(OPT_SORT_KEYS)`; floats read from JSON are `JSFloat`s (or `Decimal`s from ijson),
which orjson hands to `_js_default` so they are printed JavaScript's way. Integers read from a JSON
file written by JavaScript already print identically. A value orjson refuses (a lone surrogate)
goes through the exact recursive path.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from decimal import Decimal
from typing import Any

import orjson

_SORT = orjson.OPT_SORT_KEYS


class _Undefined:
    """JavaScript's `undefined` as a value inside a hashed object: stableStringify prints `undefined`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()
_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(value: float | int | Decimal) -> str:
    """`Number.prototype.toString()` of a finite double."""
    x = float(value)
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = k + int(exponent)  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def _js_default(value: Any) -> Any:
    if value is UNDEFINED:
        return orjson.Fragment(b"undefined")
    if isinstance(value, (float, Decimal)):
        if isinstance(value, Decimal) and not value.is_finite() or isinstance(value, float) and not math.isfinite(value):
            return _non_finite(value)
        return orjson.Fragment(js_number(value))
    if isinstance(value, (tuple, frozenset, set)):
        return list(value)
    raise TypeError(type(value).__name__)


def _non_finite(value: Any) -> str:
    x = float(value)
    return "NaN" if x != x else ("Infinity" if x > 0 else "-Infinity")


_ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def stable_json(value: Any) -> bytes:
    """OpenClaw's `stableStringify(value)`, UTF-8 encoded."""
    try:
        out = orjson.dumps(value, default=_js_default, option=_SORT)
    except (orjson.JSONEncodeError, TypeError):
        return _exact(value).encode("utf-8", "surrogatepass")
    # orjson sorts keys by code point, JavaScript by UTF-16 unit: the two differ only between a
    # character above U+FFFF and one in U+E000-U+FFFF (UTF-8 lead bytes F0-F4 and EE-EF)
    if (b"\xee" in out or b"\xef" in out) and any(lead in out for lead in _ASTRAL_LEADS):
        return _exact(value).encode("utf-8", "surrogatepass")
    return out


def _exact(value: Any) -> str:
    """The recursive form (slow): for what orjson refuses, such as strings with lone surrogates."""
    if value is None:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (int, float, Decimal)):
        if isinstance(value, int):
            return str(value) if abs(value) < 2**53 else js_number(value)
        if not math.isfinite(float(value)):
            return _js_string(_non_finite(value))
        return js_number(value)
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(f"{_js_string(str(k))}:{_exact(value[k])}" for k in keys) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_exact(v) for v in value) + "]"
    return _js_string(str(value))


def _js_string(text: str) -> str:
    return json.dumps(_SURROGATE.sub("", text), ensure_ascii=False)


def digest(value: Any) -> str:
    """sha256 hex of `stable_json(value)` (OpenClaw's `digestStable`)."""
    return hashlib.sha256(stable_json(value)).hexdigest()
