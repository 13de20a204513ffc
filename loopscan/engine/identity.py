"""How OpenClaw names a tool call: the normalised tool name."""

from __future__ import annotations

TOOL_NAME_ALIASES = {"bash": "exec", "apply-patch": "apply_patch"}


def normalize_tool_name(name: str) -> str:
    """Trimmed and lower-cased, with OpenClaw's aliases applied (`bash` -> `exec`); empty -> `tool`."""
    key = name.strip().lower()
    return TOOL_NAME_ALIASES.get(key, key) or "tool"
