"""Finding and parsing `openclaw.json` (JSON5). The only place loopscan reads a config file."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Mapping

import json5


class ConfigError(Exception):
    """The config file exists but cannot be used. The message names file, line and column."""


_POSITION = re.compile(r"<string>:(\d+) (.*?)(?: at column (\d+))?$")


def locate(explicit: str | None, environ: Mapping[str, str], home: Path) -> Path | None:
    """--config, else $OPENCLAW_CONFIG_PATH, else ~/.openclaw/openclaw.json when present."""
    if explicit:
        return Path(explicit)
    env_path = environ.get("OPENCLAW_CONFIG_PATH")
    if env_path:
        return Path(env_path)
    default = home / ".openclaw" / "openclaw.json"
    return default if default.is_file() else None


def load(path: Path) -> Any:
    """The parsed document. Raises ConfigError (file, line, column) when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc})") from None
    try:
        document = json5.loads(text)
    except (ValueError, RecursionError) as exc:
        match = _POSITION.match(str(exc))
        if match:
            line, reason, column = match.groups()
            where = f"{path}:{line}" + (f":{column}" if column else "")
            raise ConfigError(f"{where}: invalid JSON5 ({reason})") from None
        raise ConfigError(f"{path}: invalid JSON5 ({exc})") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: the config must be a JSON5 object")
    return document
