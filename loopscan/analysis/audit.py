"""A night's sessions at once: discover, replay each (the same path as `analyze`), rank by waste.

Each session becomes one small flat row, produced in a worker process; memory stays flat in the
number and size of sessions. A session that cannot be read becomes a row with `error` set.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from loopscan.analysis.batch import Failed, map_sessions
from loopscan.analysis.session import agent_from_path, analyze_path
from loopscan.engine.config import ConfigRequest
from loopscan.events import SessionMeta
from loopscan.readers import ReadError, open_events
from loopscan.timeutil import iso, parse_iso


@dataclass(frozen=True)
class Window:
    """--since / --until, as epoch seconds (inclusive since, exclusive until)."""

    since: float | None = None
    until: float | None = None

    def admits(self, started: float | None) -> bool:
        if started is None:
            return True
        return (self.since is None or started >= self.since) and (self.until is None or started < self.until)


def session_start(path: str) -> float | None:
    """When a session started: header timestamp, else its first timestamped entry, else file mtime."""
    with open_events(path) as (events, _):
        for event in events:
            stamp = parse_iso(event.timestamp) if isinstance(event, SessionMeta) else event.timestamp
            if stamp is not None:
                return stamp
    return _mtime(path)


def audit_row(path: str, request: ConfigRequest, window: Window = Window()) -> dict[str, Any] | None:
    """One session's audit row (None when --since/--until excludes it). Never raises for bad input.

    Strings in the row are not redacted: the report does that (loopscan.reports)."""
    try:
        if window != Window() and not window.admits(session_start(path)):
            return None
        result = analyze_path(path, request)
    except ReadError as exc:
        return error_row(path, str(exc))
    except OSError as exc:  # vanished or unreadable mid-read
        return error_row(path, f"{path}: {exc.strerror or exc}")
    started = result.session["started_at"]
    if started is None:
        started = iso(_mtime(path))
    s = result.summary
    worst = result.repeats[0] if result.repeats else None
    warning = next((f for f in result.firings if f["level"] == "warning"), None)
    block = result.block
    return {
        "path": path,
        "session_id": result.session["session_id"],
        "agent_id": result.session["agent_id"],
        "started_at": started,
        "tool_calls": s["tool_calls"],
        "total_tokens": s["total_tokens"],
        "cost_usd": s["cost_usd"],
        "turn_failures": s["turn_failures"],
        "prompt_errors": s["prompt_errors"],
        "compactions": s["compactions"],
        "bad_lines": s["bad_lines"],
        "final_state": s["final_state"],
        "worst_repeat": {"key": worst["key"], "count": worst["count"]} if worst else None,
        "first_warning": {"detector": warning["detector"], "call_index": warning["call_index"]} if warning else None,
        "warnings": sum(1 for f in result.firings if f["level"] == "warning"),
        "block": {
            "detector": block["detector"],
            "call_index": block["call_index"],
            "tokens_after": block["tokens_after"],
            "cost_after_usd": block["cost_after_usd"],
            "seconds_after": block["seconds_after"],
        } if block else None,
        "error": None,
    }


def error_row(path: str, message: str) -> dict[str, Any]:
    return {
        "path": path, "session_id": None, "agent_id": agent_from_path(path), "started_at": None,
        "tool_calls": 0, "total_tokens": 0, "cost_usd": None, "turn_failures": 0, "prompt_errors": 0,
        "compactions": 0, "bad_lines": 0, "final_state": None, "worst_repeat": None, "first_warning": None,
        "warnings": 0, "block": None, "error": message,
    }


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def run_audit(
    paths: list[str],
    request: ConfigRequest,
    jobs: int,
    window: Window = Window(),
    progress: Callable[[str], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Rows as sessions finish (any order). `progress(path)` is called for each finished one."""
    for path, row in map_sessions(audit_row, paths, (request, window), jobs, progress):
        if isinstance(row, Failed):
            yield error_row(path, row)
        elif row is not None:
            yield row


def rank(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Most wasteful first: tokens after the block, then total tokens; errors last."""
    return sorted(rows, key=lambda r: (r["error"] is not None, -((r["block"] or {}).get("tokens_after") or 0),
                                       -r["total_tokens"], r["path"]))


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r["error"] is None]
    return {
        "sessions": len(rows),
        "sessions_warned": sum(1 for r in ok if r["first_warning"]),
        "sessions_blocked": sum(1 for r in ok if r["block"]),
        "tokens": sum(r["total_tokens"] for r in ok),
        "tokens_after_block": sum(r["block"]["tokens_after"] for r in ok if r["block"]),
        "cost_usd": round(sum(r["cost_usd"] or 0.0 for r in ok), 6),
        "cost_after_block_usd": round(sum((r["block"]["cost_after_usd"] or 0.0) for r in ok if r["block"]), 6),
        "errors": len(rows) - len(ok),
    }


def flatten(row: dict[str, Any]) -> dict[str, Any]:
    """One flat record per session for CSV / Parquet (`block_detector`, `block_call_index`, ...)."""
    flat: dict[str, Any] = {}
    for key, value in row.items():
        if key in ("worst_repeat", "first_warning", "block"):
            fields = {"worst_repeat": ("key", "count"), "first_warning": ("detector", "call_index"),
                      "block": ("detector", "call_index", "tokens_after", "cost_after_usd", "seconds_after")}[key]
            for field in fields:
                flat[f"{key}_{field}"] = value.get(field) if value else None
        else:
            flat[key] = value
    return flat
