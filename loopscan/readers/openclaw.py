"""OpenClaw / pi session JSONL (format versions 1-3, version 4 lines tolerated) -> events."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import msgspec

from loopscan.engine.identity import normalize_tool_name
from loopscan.events import (
    Compaction,
    Event,
    ModelChange,
    ModelTurn,
    PromptError,
    SessionMeta,
    ToolCall,
    ToolResult,
    UserMessage,
)
from loopscan.readers.decode import JSFloat, LineDecoder
from loopscan.readers.interface import Diagnostics
from loopscan.timeutil import parse_iso

# --- the partial schema: only what loopscan reads; everything else is skipped by the decoder ---


class _Block(msgspec.Struct):
    type: Any = None
    text: Any = None
    id: Any = None
    name: Any = None
    arguments: Any = None


class _Cost(msgspec.Struct):
    total: Any = None


class _Usage(msgspec.Struct):
    input: Any = None
    output: Any = None
    cacheRead: Any = None
    cacheWrite: Any = None
    cost: _Cost | None = None


class _RunTag(msgspec.Struct):
    runId: Any = None


class _Message(msgspec.Struct):
    role: Any = None
    content: str | list[_Block | None] | None = None
    toolCallId: Any = None
    toolName: Any = None
    details: Any = None
    isError: Any = None
    usage: _Usage | None = None
    stopReason: Any = None
    errorMessage: Any = None
    model: Any = None
    provider: Any = None
    timestamp: Any = None
    openclaw: _RunTag | None = msgspec.field(default=None, name="__openclaw")


class _Entry(msgspec.Struct):
    type: Any = None
    id: Any = None
    timestamp: Any = None
    version: Any = None
    cwd: Any = None
    parentSession: Any = None
    message: _Message | None = None
    customType: Any = None
    data: Any = None
    tokensBefore: Any = None
    fromHook: Any = None
    provider: Any = None
    modelId: Any = None


# Entry types that carry nothing loopscan uses, but are known (not "unknown, skipped").
_KNOWN_QUIET = frozenset(
    {"thinking_level_change", "branch_summary", "custom_message", "label", "session_info"}
)
_ENTRY_TYPES = _KNOWN_QUIET | {"session", "message", "model_change", "compaction", "custom"}
_NOT_MODEL_OUTPUT = frozenset({"delivery-mirror", "gateway-injected", "acp-runtime"})
_QUIET_ROLES = frozenset({"bashExecution", "custom", "hookMessage", "system"})
PROMPT_ERROR = "openclaw:prompt-error"
MAX_KNOWN_VERSION = 3


class OpenClawReader:
    name = "openclaw"

    def sniff(self, first: Any) -> bool:
        if not isinstance(first, dict):
            return False
        kind = first.get("type")
        if kind == "session":
            return "traceSchema" not in first
        return kind in _ENTRY_TYPES and ("parentId" in first or "message" in first)

    def events(self, records: Iterator[tuple[int, bytes | Any]], diag: Diagnostics) -> Iterator[Event]:
        return _OpenClawStream(diag).stream(records)


class _OpenClawStream:
    def __init__(self, diag: Diagnostics):
        self.diag = diag
        self.decoder = LineDecoder(_Entry)
        self.runs = 0
        self.run = "run-0"
        self.calls = 0
        self.call_ids: set[str] = set()
        self.header_seen = False

    def stream(self, records: Iterator[tuple[int, bytes | Any]]) -> Iterator[Event]:
        diag = self.diag
        decode = self.decoder.decode
        for lineno, record in records:
            entry = decode(lineno, record, diag)
            if entry is None:
                continue
            kind = entry.type
            if not self.header_seen:
                self.header_seen = True
                yield self._header(lineno, entry)
                if kind == "session":
                    continue
            if kind == "message":
                event = self._message(lineno, entry)
                if event is not None:
                    yield event
            elif kind == "custom":
                if entry.customType == PROMPT_ERROR:
                    yield self._prompt_error(lineno, entry)
            elif kind == "compaction":
                yield Compaction(
                    lineno, _when(entry, None), _int_or_none(entry.tokensBefore), entry.fromHook is True
                )
            elif kind == "model_change":
                yield ModelChange(lineno, _when(entry, None), _str(entry.provider), _str(entry.modelId))
            elif kind == "session":
                diag.note(lineno, "a second session header; ignored")
            elif kind not in _KNOWN_QUIET:
                diag.skipped(f"type:{kind}" if isinstance(kind, str) else "type:(none)")

    def _header(self, lineno: int, entry: _Entry) -> SessionMeta:
        if entry.type != "session":
            self.diag.note(lineno, "no session header on the first line; format version unknown")
            return SessionMeta("openclaw", None, None, None)
        version = entry.version if isinstance(entry.version, int) and not isinstance(entry.version, bool) else 1
        if version > MAX_KNOWN_VERSION:
            self.diag.note(lineno, f"session format version {version}: read as version 3")
        return SessionMeta(
            "openclaw", version, _str(entry.id), _str(entry.timestamp), _str(entry.cwd), _str(entry.parentSession)
        )

    def _message(self, lineno: int, entry: _Entry) -> Event | None:
        msg = entry.message
        if msg is None:
            self.diag.bad_line(lineno, "message entry without a `message` object")
            return None
        role = msg.role
        if role == "assistant":
            return self._assistant(lineno, entry, msg)
        if role == "toolResult":
            return self._tool_result(lineno, entry, msg)
        if role == "user":
            explicit = _run_tag(msg)
            if explicit is None:
                self.runs += 1
                self.run = f"run-{self.runs}"
            else:
                self.run = explicit
            return UserMessage(lineno, _when(entry, msg), self.run)
        if role not in _QUIET_ROLES:
            self.diag.skipped(f"role:{role}" if isinstance(role, str) else "role:(none)")
        return None

    def _assistant(self, lineno: int, entry: _Entry, msg: _Message) -> ModelTurn:
        run = _run_tag(msg) or self.run
        when = _when(entry, msg)
        calls: list[ToolCall] = []
        if isinstance(msg.content, list):
            for block in msg.content:
                if block is not None and block.type == "toolCall":
                    calls.append(self._call(lineno, block, run, when))
        elif msg.content is None:
            self.diag.note(lineno, "assistant message without content")
        usage = msg.usage
        if usage is None:
            tokens = (0, 0, 0, 0)
            cost = None
        else:
            tokens = (_int(usage.input), _int(usage.output), _int(usage.cacheRead), _int(usage.cacheWrite))
            total = usage.cost.total if usage.cost is not None else None
            cost = float(total) if _is_number(total) else None
        model = _str(msg.model)
        provider = _str(msg.provider)
        return ModelTurn(
            lineno,
            when,
            run,
            model,
            provider,
            *tokens,
            cost,
            _str(msg.stopReason),
            _str(msg.errorMessage),
            model not in _NOT_MODEL_OUTPUT,
            tuple(calls),
        )

    def _call(self, lineno: int, block: _Block, run: str, when: float | None) -> ToolCall:
        self.calls += 1
        raw_name = block.name if isinstance(block.name, str) else ""
        call_id = block.id if isinstance(block.id, str) else None
        if call_id is not None:
            if call_id in self.call_ids:
                self.diag.note(lineno, f"tool call id {call_id!r} used twice")
            self.call_ids.add(call_id)
        return ToolCall(
            self.calls, call_id, normalize_tool_name(raw_name), raw_name, self._arguments(lineno, block), run, when, lineno
        )

    def _arguments(self, lineno: int, block: _Block) -> Any:
        args = block.arguments
        if isinstance(args, dict):
            return args
        if args is None:
            self.diag.note(lineno, "tool call without arguments; read as {}")
            return {}
        if isinstance(args, str):
            try:
                parsed = json.loads(args, parse_float=JSFloat)
            except (ValueError, RecursionError):
                return args
            self.diag.note(lineno, "tool call arguments are a JSON string; parsed")
            return parsed
        return args

    def _tool_result(self, lineno: int, entry: _Entry, msg: _Message) -> ToolResult:
        content = msg.content
        texts: tuple[str, ...] = ()
        if isinstance(content, list):
            texts = tuple(
                b.text for b in content if b is not None and isinstance(b.type, str) and isinstance(b.text, str)
            )
        if msg.toolCallId is None:
            self.diag.note(lineno, "tool result without toolCallId")
        return ToolResult(
            lineno,
            _when(entry, msg),
            _str(msg.toolCallId),
            _str(msg.toolName),
            texts,
            msg.details,
            msg.isError is True,
            isinstance(content, list),
        )

    def _prompt_error(self, lineno: int, entry: _Entry) -> PromptError:
        data = entry.data if isinstance(entry.data, dict) else {}
        error = data.get("error")
        return PromptError(
            lineno,
            _when(entry, None),
            self.run,
            error if isinstance(error, str) else json.dumps(error, default=str),
            _str(data.get("provider")),
            _str(data.get("model")),
        )


def _run_tag(msg: _Message) -> str | None:
    tag = msg.openclaw
    if tag is not None and isinstance(tag.runId, str) and tag.runId.strip():
        return tag.runId.strip()
    return None


def _when(entry: _Entry, msg: _Message | None) -> float | None:
    """Epoch seconds: message.timestamp (epoch ms) when numeric, else the entry's ISO timestamp."""
    if msg is not None and _is_number(msg.timestamp):
        return float(msg.timestamp) / 1000.0
    return parse_iso(entry.timestamp)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _int(value: Any) -> int:
    if _is_number(value):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return 0


def _int_or_none(value: Any) -> int | None:
    return int(value) if _is_number(value) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
