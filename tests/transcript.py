"""A small builder of realistic OpenClaw v3 session transcripts (JSONL), for tests.

Sequence cases run through the real reader and replay: build a transcript, write it to a tmp path,
analyse it with `analyze` below.

    t = Transcript()
    t.user("poll the build")
    for i in range(20):
        t.tool("process", {"action": "poll", "sessionId": "s"}, text_result("(no new output)", {...}))
    t.tool("process", {"action": "poll", "sessionId": "s"})      # call-only: "D", no result
    r = analyze(t.write(tmp_path), {"enabled": True})
    r.calls[-1]["decision"]                                      # the decision for D

Each entry carries the v3 envelope (`type`, 8-hex `id`, `parentId`, ISO `timestamp`); messages carry
an epoch-ms `timestamp`; assistant messages carry `usage` (with `cost`) and a `stopReason`;
tool results carry `toolCallId`, `toolName`, `content`, optional `details` and `isError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from loopscan.analysis.session import SessionResult, analyze_path
from loopscan.engine.config import ConfigRequest

START = datetime(2026, 6, 12, 9, 0, 0, tzinfo=timezone.utc)


class _Absent:
    """No such key (survives copies, unlike a bare object())."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __copy__(self) -> "_Absent":
        return self

    def __deepcopy__(self, memo: dict) -> "_Absent":
        return self


_ABSENT = _Absent()


@dataclass
class Result:
    """A tool result as OpenClaw's wrapper returns it: `{content, details}` (+ isError in the transcript)."""

    content: list[dict[str, Any]] = field(default_factory=list)
    details: Any = _ABSENT  # _ABSENT: no `details` key at all
    is_error: bool = False


def text_result(text: str, details: Any = _ABSENT, *, is_error: bool = False) -> Result:
    """A result with one text block (OpenClaw's `jsonResult`/text results)."""
    return Result([{"type": "text", "text": text}], details, is_error)


def json_result(payload: dict[str, Any]) -> Result:
    """OpenClaw's `jsonResult(payload)`: text is the pretty-printed payload, details the payload."""
    return Result([{"type": "text", "text": json.dumps(payload, indent=2)}], payload)


def thrown(tool: str, message: str) -> Result:
    """What OpenClaw's adapter writes after a tool threw (detector.md 5b)."""
    payload = {"status": "error", "tool": tool, "error": message}
    return Result([{"type": "text", "text": json.dumps(payload, indent=2)}], payload)


def rejected(message: str) -> Result:
    """A call the agent loop rejected before OpenClaw's wrapper ran (5a): isError, no details."""
    return Result([{"type": "text", "text": message}], _ABSENT, is_error=True)


@dataclass
class Call:
    tool: str
    args: Any
    result: Result | None = None  # None: call-only (its result never arrived)
    id: str | None = None


class Transcript:
    """Entries of one OpenClaw session file, in order."""

    def __init__(self, session_id: str = "5f0c1d2e-0000-4000-8000-00000000cafe", cwd: str = "/home/node/.openclaw/workspace"):
        self.entries: list[dict[str, Any]] = []
        self._clock = START
        self._seq = 0
        self._calls = 0
        self._last_id: str | None = None
        self.header = {"type": "session", "version": 3, "id": session_id, "timestamp": _iso(START), "cwd": cwd}

    # --- envelope ------------------------------------------------------------------------------

    def _tick(self, seconds: float = 1.0) -> datetime:
        self._clock += timedelta(seconds=seconds)
        return self._clock

    def _entry(self, kind: str, **body: Any) -> dict[str, Any]:
        self._seq += 1
        entry_id = f"{self._seq:08x}"
        when = self._tick()
        entry = {"type": kind, "id": entry_id, "parentId": self._last_id, "timestamp": _iso(when), **body}
        self._last_id = entry_id
        self.entries.append(entry)
        return entry

    def _message(self, message: dict[str, Any]) -> dict[str, Any]:
        message.setdefault("timestamp", int((self._clock + timedelta(seconds=1)).timestamp() * 1000))
        return self._entry("message", message=message)

    # --- messages ------------------------------------------------------------------------------

    def user(self, text: str = "Please continue.", *, run_id: str | None = None) -> Transcript:
        """A user message: starts a run (an explicit `__openclaw.runId` when given)."""
        message: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": text}]}
        if run_id is not None:
            message["__openclaw"] = {"runId": run_id}
        self._message(message)
        return self

    def assistant(
        self,
        calls: list[Call] | tuple[Call, ...] = (),
        *,
        text: str | None = None,
        run_id: str | None = None,
        stop_reason: str | None = None,
        usage: dict[str, Any] | None = None,
        model: str = "claude-sonnet-4-5",
        provider: str = "anthropic",
    ) -> list[str]:
        """One assistant message with `calls` as toolCall blocks (a batch), then their results.

        Returns the tool call ids. Calls without a result stay call-only.
        """
        content: list[dict[str, Any]] = [{"type": "thinking", "thinking": "…", "thinkingSignature": "sig"}]
        if text:
            content.append({"type": "text", "text": text})
        ids = []
        for call in calls:
            self._calls += 1
            call_id = call.id or f"call_{self._calls:04d}_{call.tool}"
            call.id = call_id
            ids.append(call_id)
            content.append({"type": "toolCall", "id": call_id, "name": call.tool, "arguments": call.args})
        tokens = usage or {"input": 40, "output": 120, "cacheRead": 5000 + 100 * self._calls, "cacheWrite": 300}
        total = sum(tokens.get(k, 0) for k in ("input", "output", "cacheRead", "cacheWrite"))
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": provider,
            "model": model,
            "usage": {**tokens, "totalTokens": total,
                      "cost": {"input": 0.0001, "output": 0.0018, "cacheRead": 0.0015, "cacheWrite": 0.0011,
                               "total": 0.0045}},
            "stopReason": stop_reason or ("toolUse" if calls else "stop"),
            "responseId": f"msg_{self._seq + 1:06d}",
        }
        if run_id is not None:
            message["__openclaw"] = {"runId": run_id}
        self._message(message)
        for call in calls:
            if call.result is not None:
                self.result(call.id, call.tool, call.result)
        return ids

    def tool(self, tool: str, args: Any, result: Result | None = None, *, run_id: str | None = None,
             call_id: str | None = None) -> str:
        """One assistant message with a single call, followed by its result (if any). Returns the id."""
        return self.assistant([Call(tool, args, result, call_id)], run_id=run_id)[0]

    def result(self, call_id: str | None, tool: str, result: Result) -> Transcript:
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": tool,
            "content": result.content,
            "isError": result.is_error,
        }
        if result.details is not _ABSENT:
            message["details"] = result.details
        self._message(message)
        return self

    def reply(self, text: str = "Done.") -> Transcript:
        """A final assistant message (stopReason stop): the run ends."""
        self.assistant(text=text)
        return self

    # --- other entries -------------------------------------------------------------------------

    def compaction(self, tokens_before: int = 180_000, *, from_hook: bool = False) -> Transcript:
        body: dict[str, Any] = {"summary": "Summary of the conversation so far.", "firstKeptEntryId": self._last_id,
                                "tokensBefore": tokens_before}
        if from_hook:
            body["fromHook"] = True
        self._entry("compaction", **body)
        return self

    def prompt_error(self, error: str = "request timed out", *, run_id: str = "run-err") -> Transcript:
        self._entry("custom", customType="openclaw:prompt-error",
                    data={"timestamp": int(self._clock.timestamp() * 1000), "runId": run_id, "sessionId": self.header["id"],
                          "provider": "anthropic", "model": "claude-sonnet-4-5", "api": "anthropic-messages",
                          "error": error})
        return self

    def model_change(self, provider: str = "openai", model_id: str = "gpt-5.2") -> Transcript:
        self._entry("model_change", provider=provider, modelId=model_id)
        return self

    def custom(self, custom_type: str = "model-snapshot", data: Any = None) -> Transcript:
        self._entry("custom", customType=custom_type,
                    data=data if data is not None else {"timestamp": int(self._clock.timestamp() * 1000),
                                                         "provider": "anthropic", "modelApi": "anthropic-messages",
                                                         "modelId": "claude-sonnet-4-5"})
        return self

    # --- output --------------------------------------------------------------------------------

    def lines(self) -> list[str]:
        return [json.dumps(e, ensure_ascii=False) for e in [self.header, *self.entries]]

    def write(self, directory: Path, name: str = "session.jsonl") -> Path:
        path = Path(directory) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        return path


def analyze(path: Path | str, loop_detection: dict[str, Any] | None = None, *, document: Any = _ABSENT,
            profile: str = "openclaw-2026.6", overrides: dict[str, Any] | None = None,
            as_configured: bool = True, agent: str | None = None) -> SessionResult:
    """analyze_path with OpenClaw's own `enabled` semantics and the per-call trace.

    `loop_detection` is the `tools.loopDetection` block (None: no config at all).
    """
    if document is _ABSENT:
        document = None if loop_detection is None else {"tools": {"loopDetection": loop_detection}}
    request = ConfigRequest(document=document, as_configured=as_configured, profile=profile,
                            overrides=overrides or {}, agent=agent)
    return analyze_path(str(path), request, trace=True)


def decision(result: SessionResult, index: int = -1) -> dict[str, Any] | None:
    """The trace decision of one call (default: the last call replayed)."""
    return result.calls[index]["decision"]


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
