"""Machine-readable output (`--format json`)."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(document: Any) -> str:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2, default=str).decode("utf-8") + "\n"
