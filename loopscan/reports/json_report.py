"""Machine-readable output (`--format json`)."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(document: Any) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE, default=str)
