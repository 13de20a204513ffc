"""The post-compaction guard: after a compaction, the same (tool, args, result) `windowSize` times aborts."""

from __future__ import annotations


class CompactionGuard:
    def __init__(self, window_size: int):
        self.window_size = window_size
        self.remaining = 0
        self.window: list[tuple[str, str, str]] = []

    def arm(self) -> None:
        self.remaining = self.window_size
        self.window = []

    def observe(self, tool: str, args_hash: str, result_hash: str) -> int | None:
        """Record one hashed outcome; the repeat count when it aborts the run, else None."""
        if self.remaining <= 0:
            return None
        self.remaining -= 1
        triple = (tool, args_hash, result_hash)
        self.window.append(triple)
        count = self.window.count(triple)
        return count if count >= self.window_size else None
