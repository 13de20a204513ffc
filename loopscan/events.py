"""The normalised event stream every reader yields and everything downstream consumes.

Readers turn one transcript format into these events, in file order. The engine, the analyses and
the reports only ever see these types, never raw JSON.
"""

from __future__ import annotations

from typing import Any

import msgspec


class SessionMeta(msgspec.Struct, frozen=True):
    """The session header (first line), or what could be inferred without one."""

    format: str  # "openclaw" (OpenClaw / pi session JSONL)
    format_version: int | None
    session_id: str | None
    timestamp: str | None  # ISO text as written
    cwd: str | None = None
    parent_session: str | None = None


class UserMessage(msgspec.Struct, frozen=True):
    """A user message: it starts a run (inferred, unless the transcript names its run id)."""

    line: int
    timestamp: float | None  # epoch seconds
    run: str
    run_inferred: bool = True


class ToolCall(msgspec.Struct, frozen=True):
    """One `toolCall` block of an assistant message."""

    index: int  # 1-based among all tool calls of the session, in file order
    id: str | None
    tool: str  # normalised name (trimmed, lower-cased, aliases applied)
    raw_name: str
    arguments: Any  # the params object, verbatim (a JSON-string argument is parsed)
    run: str
    timestamp: float | None
    line: int


class ModelTurn(msgspec.Struct, frozen=True):
    """One assistant message, with the tool calls it made (a batch: executed concurrently)."""

    line: int
    timestamp: float | None  # request start (message.timestamp), else entry timestamp
    run: str
    model: str | None
    provider: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None  # usage.cost.total when the provider reports it
    stop_reason: str | None
    error_message: str | None
    is_model_output: bool  # False for delivery-mirror / gateway-injected / acp-runtime
    calls: tuple[ToolCall, ...] = ()

    @property
    def prompt_tokens(self) -> int:
        return self.input + self.cache_read + self.cache_write


class ToolResult(msgspec.Struct, frozen=True):
    """A `toolResult` message: the outcome of one call, matched by `call_id`."""

    line: int
    timestamp: float | None
    call_id: str | None
    tool_name: str | None
    texts: tuple[str, ...]  # `text` of every content block that has a string type and text
    details: Any  # None when absent
    is_error: bool
    has_content: bool  # content was an array (OpenClaw hashes the result object either way)


class Compaction(msgspec.Struct, frozen=True):
    line: int
    timestamp: float | None
    tokens_before: int | None
    from_hook: bool = False


class PromptError(msgspec.Struct, frozen=True):
    """`openclaw:prompt-error`: a request that failed before any reply. Ends the run."""

    line: int
    timestamp: float | None
    run: str
    error: str
    provider: str | None = None
    model: str | None = None


class ModelChange(msgspec.Struct, frozen=True):
    line: int
    timestamp: float | None
    provider: str | None
    model: str | None


Event = SessionMeta | UserMessage | ModelTurn | ToolResult | Compaction | PromptError | ModelChange
