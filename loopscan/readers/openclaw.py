"""OpenClaw / pi session JSONL (format versions 1-3, version 4 lines tolerated) -> events."""

from __future__ import annotations

import json
from collections import OrderedDict
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
from loopscan.readers.decode import JSFloat, LineDecoder, json_kind
from loopscan.readers.interface import Diagnostics
from loopscan.timeutil import parse_iso

# --- the partial schema: only what loopscan reads; everything else is skipped by the decoder ---


class _Block(msgspec.Struct):
    type: Any = None
    text: Any = None
    id: str | None = None
    name: str | None = None
    arguments: Any = None


class _Cost(msgspec.Struct):
    total: Any = None


class _Usage(msgspec.Struct):  # numbers stay untyped: a digit string is still read (see _numeric)
    input: Any = None
    output: Any = None
    cacheRead: Any = None
    cacheWrite: Any = None
    cost: _Cost | None = None


class _RunTag(msgspec.Struct):
    runId: str | None = None


class _Message(msgspec.Struct):
    role: str | None = None
    content: str | list[_Block | None] | None = None
    toolCallId: str | None = None
    toolName: str | None = None
    details: Any = None
    isError: bool | None = None
    usage: _Usage | None = None
    stopReason: str | None = None
    errorMessage: str | None = None
    model: str | None = None
    provider: str | None = None
    timestamp: Any = None  # epoch ms; an ISO string falls back to the entry's timestamp
    openclaw: _RunTag | None = msgspec.field(default=None, name="__openclaw")


class _Entry(msgspec.Struct):
    type: str | None = None
    id: str | None = None
    timestamp: Any = None
    version: Any = None
    cwd: str | None = None
    parentSession: str | None = None
    message: _Message | None = None
    customType: str | None = None
    data: Any = None
    tokensBefore: Any = None  # numbers stay untyped (version too): a digit string is still read, see _numeric
    fromHook: bool | None = None
    provider: str | None = None
    modelId: str | None = None


# Entry types that carry nothing loopscan uses, but are known (not "unknown, skipped").
_KNOWN_QUIET = frozenset(
    {"thinking_level_change", "branch_summary", "custom_message", "label", "session_info"}
)
_ENTRY_TYPES = _KNOWN_QUIET | {"session", "message", "model_change", "compaction", "custom"}
_NOT_MODEL_OUTPUT = frozenset({"delivery-mirror", "gateway-injected", "acp-runtime"})
_QUIET_ROLES = frozenset({"bashExecution", "custom", "hookMessage", "system"})
PROMPT_ERROR = "openclaw:prompt-error"
MAX_KNOWN_VERSION = 3
RECENT_CALL_IDS = 4096  # memory stays flat: a reused id is noticed within this many calls


class OpenClawReader:
    name = "openclaw"

    def sniff(self, first: Any) -> bool:
        if not isinstance(first, dict):
            return False
        kind = first.get("type")
        if kind == "session":
            return "traceSchema" not in first
        return isinstance(kind, str) and kind in _ENTRY_TYPES and ("parentId" in first or "message" in first)

    def events(self, records: Iterator[tuple[int, bytes | Any]], diag: Diagnostics) -> Iterator[Event]:
        return _OpenClawStream(diag).stream(records)


class _OpenClawStream:
    def __init__(self, diag: Diagnostics):
        self.diag = diag
        self.decoder = LineDecoder(_Entry)
        self.runs = 0
        self.run = "run-0"
        self.calls = 0
        self.call_ids: OrderedDict[str, None] = OrderedDict()  # recent call ids, to notice one used twice
        self.awaiting: dict[str | None, list[int]] = {}  # call id -> lines of its calls still without a result
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
                before = self._numeric(lineno, "tokensBefore", entry.tokensBefore)
                yield Compaction(
                    lineno, _when(entry, None), None if before is None else int(before), entry.fromHook is True
                )
            elif kind == "model_change":
                yield ModelChange(lineno, _when(entry, None), entry.provider, entry.modelId)
            elif kind == "session":
                diag.note(lineno, "a second session header; ignored")
            elif kind not in _KNOWN_QUIET:
                diag.skipped(lineno, "type:(none)" if kind is None else f"type:{kind}")
        for call_id, lines in self.awaiting.items():
            for line in lines:
                call = "a tool call without an id" if call_id is None else f"tool call {call_id!r}"
                diag.note(line, f"{call} has no result (the session was cut short, or the result was lost)")

    def _header(self, lineno: int, entry: _Entry) -> SessionMeta:
        if entry.type != "session":
            self.diag.note(lineno, "no session header on the first line; format version unknown")
            return SessionMeta("openclaw", None, None, None)
        version = self._numeric(lineno, "version", entry.version)
        version = 1 if version is None else int(version)  # v1 headers carry no version
        if version > MAX_KNOWN_VERSION:
            self.diag.note(lineno, f"session format version {version}: read as version 3")
        return SessionMeta("openclaw", version, entry.id, _str(entry.timestamp), entry.cwd, entry.parentSession)

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
            return UserMessage(lineno, _when(entry, msg), self.run, explicit is None)
        if role not in _QUIET_ROLES:
            self.diag.skipped(lineno, "role:(none)" if role is None else f"role:{role}")
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
            self.diag.note(lineno, "assistant message without usage; counted as 0 tokens")
            tokens = (0, 0, 0, 0)
            cost = None
        else:
            tokens = (usage.input, usage.output, usage.cacheRead, usage.cacheWrite)
            if not (type(tokens[0]) is int and type(tokens[1]) is int and type(tokens[2]) is int
                    and type(tokens[3]) is int):  # the common case needs no checks
                tokens = tuple(
                    _int(self._numeric(lineno, f"usage.{name}", value))
                    for name, value in zip(("input", "output", "cacheRead", "cacheWrite"), tokens)
                )
            total = self._numeric(lineno, "usage.cost.total", usage.cost.total) if usage.cost is not None else None
            cost = float(total) if total is not None else None
        model = msg.model
        provider = msg.provider
        return ModelTurn(
            lineno,
            when,
            run,
            model,
            provider,
            *tokens,
            cost,
            msg.stopReason,
            msg.errorMessage,
            model not in _NOT_MODEL_OUTPUT,
            tuple(calls),
        )

    def _call(self, lineno: int, block: _Block, run: str, when: float | None) -> ToolCall:
        self.calls += 1
        raw_name = block.name or ""
        call_id = block.id
        if call_id is None:
            self.diag.note(lineno, "tool call without an id")
        else:
            if call_id in self.call_ids:
                self.diag.note(lineno, f"tool call id {call_id!r} used twice")
            self.call_ids[call_id] = None
            if len(self.call_ids) > RECENT_CALL_IDS:
                self.call_ids.popitem(last=False)
        self.awaiting.setdefault(call_id, []).append(lineno)
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
                self.diag.note(lineno, "tool call arguments are a string that is not JSON; kept as text")
                return args
            self.diag.note(lineno, "tool call arguments are a JSON string; parsed")
            return parsed
        self.diag.note(lineno, f"tool call arguments are a JSON {json_kind(args)}, not an object; kept as they are")
        return args

    def _tool_result(self, lineno: int, entry: _Entry, msg: _Message) -> ToolResult:
        content = msg.content
        texts: tuple[str, ...] = ()
        if isinstance(content, list):
            texts = tuple(
                b.text for b in content if b is not None and isinstance(b.type, str) and isinstance(b.text, str)
            )
        elif content is None:
            self.diag.note(lineno, "tool result without content")
        call_id = msg.toolCallId
        if call_id is None:
            self.diag.note(lineno, "tool result without toolCallId")
        lines = self.awaiting.get(call_id)
        if lines:
            lines.pop(0)
            if not lines:
                del self.awaiting[call_id]
        elif call_id is not None:
            again = "a second result for" if call_id in self.call_ids else "no earlier tool call has"
            self.diag.note(lineno, f"tool result for call id {call_id!r}: {again} that id")
        return ToolResult(
            lineno,
            _when(entry, msg),
            call_id,
            msg.toolName,
            texts,
            msg.details,
            msg.isError is True,
            isinstance(content, list),
        )

    def _numeric(self, lineno: int, name: str, value: Any) -> Any:
        """A number field as written, or None when absent. A string of digits is read as its number,
        anything else as absent; both are noted."""
        if value is None or type(value) is int or _is_number(value):
            return value
        number = int(value) if isinstance(value, str) and value.strip().isdigit() else None
        self.diag.repaired_fields += 1
        read_as = "absent" if number is None else number
        self.diag.note(lineno, f"{name} is a {json_kind(value)}, not a number; read as {read_as}")
        return number

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
    if tag is not None and tag.runId is not None and tag.runId.strip():
        return tag.runId.strip()
    return None


def _when(entry: _Entry, msg: _Message | None) -> float | None:
    """Epoch seconds: message.timestamp (epoch ms) when numeric, else the entry's ISO timestamp."""
    if msg is not None and (type(msg.timestamp) is int or _is_number(msg.timestamp)):
        return msg.timestamp / 1000.0
    return parse_iso(entry.timestamp)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _int(value: Any) -> int:
    return int(value) if _is_number(value) else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
