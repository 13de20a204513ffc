"""One session in depth: facts (tokens, failures, repeats) and the replay's findings, in one pass.

`analyze_events` consumes the event stream once, feeding the detector replay as it goes, and keeps
only small aggregates (memory stays flat whatever the file size). `analyze_path` opens a file.
"""

from __future__ import annotations

import heapq
import re
from array import array
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Iterable

from loopscan.engine.config import ConfigRequest, LoopConfig
from loopscan.engine.hashing import stable_json
from loopscan.engine.outcome import join_text
from loopscan.engine.replay import WARNING_BUCKET, Block, Firing, Replay
from loopscan.events import (
    Compaction,
    Event,
    ModelTurn,
    PromptError,
    SessionMeta,
    ToolResult,
    UserMessage,
)
from loopscan.readers import Diagnostics, open_events
from loopscan.timeutil import iso, parse_iso

MAX_REPEATS = 20
MAX_SERIES_POINTS = 2000  # a longer token series is reported bucketed (each bucket's peak turn)
RECENT_TURNS = 256
FINAL_STATE = {"stop": "completed", "length": "completed", "toolUse": "tool_pending", "error": "error",
               "aborted": "aborted"}  # by the stop reason of the last model turn
MAX_FAILURES = 200
KEY_CHARS = 160
MESSAGE_CHARS = 300
_AGENT_DIR = re.compile(r"(?:^|/)agents/([^/]+)/sessions(?:/|$)")


def agent_from_path(path: str) -> str | None:
    """The agent id of a file under `…/agents/<id>/sessions/`."""
    match = _AGENT_DIR.search(PurePath(path).parent.as_posix() + "/")
    return match.group(1) if match else None


def _command(tool: str, arguments: Any) -> str | None:
    """The command string of an exec call (exec repeats are grouped by command alone)."""
    if tool == "exec" and isinstance(arguments, dict) and isinstance(arguments.get("command"), str):
        return arguments["command"]
    return None


def repeat_key(tool: str, arguments: Any) -> str:
    """How a repeat is shown: the command for exec, else tool + short argument rendering."""
    command = _command(tool, arguments)
    if command is not None:
        return _clip(command)
    return _clip(f"{tool} {stable_json(arguments).decode('utf-8', 'replace')}")


def _clip(text: str, limit: int = KEY_CHARS) -> str:
    text = " ".join(text[: limit * 4].split())  # whitespace folded in the head only: outputs can be MBs
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Repeat:
    __slots__ = ("tool", "key", "count", "first_call", "last_call", "outcomes")

    def __init__(self, tool: str, key: str | None, index: int):
        self.tool, self.key, self.count, self.first_call, self.last_call = tool, key, 1, index, index
        self.outcomes: set[int] = set()  # distinct outcomes, kept as hash() of their identities


class _TokenSeries:
    """Context and output tokens per model turn, kept as compact arrays (8 bytes a number)."""

    def __init__(self) -> None:
        self.turn = array("q")
        self.ts = array("d")
        self.context = array("q")
        self.output = array("q")
        self.cumulative = array("q")

    def add(self, turn: int, ts: float | None, context: int, output: int, cumulative: int) -> None:
        self.turn.append(turn)
        self.ts.append(ts if ts is not None else float("nan"))
        self.context.append(context)
        self.output.append(output)
        self.cumulative.append(cumulative)

    def rows(self, limit: int = MAX_SERIES_POINTS) -> list[dict[str, Any]]:
        """All points, or for a longer series the peak-context turn of each of `limit` buckets."""
        n = len(self.turn)
        if n <= limit:
            picks: Iterable[int] = range(n)
        else:
            picks = [max(range(i * n // limit, (i + 1) * n // limit), key=self.context.__getitem__) for i in range(limit)]
        return [
            {
                "turn": self.turn[i],
                "timestamp": iso(self.ts[i]) if self.ts[i] == self.ts[i] else None,
                "context_tokens": self.context[i],
                "output_tokens": self.output[i],
                "cumulative_tokens": self.cumulative[i],
            }
            for i in picks
        ]


@dataclass
class SessionResult:
    """Everything loopscan reports about one session (the `loopscan.analyze/1` document)."""

    path: str
    config: LoopConfig
    session: dict[str, Any]
    summary: dict[str, Any]
    repeats: list[dict[str, Any]]
    tokens: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    firings: list[dict[str, Any]]
    block: dict[str, Any] | None
    diagnostics: Diagnostics
    calls: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        """The `loopscan.analyze/1` document, unredacted (reports redact it: loopscan.reports)."""
        doc = {
            "schema": "loopscan.analyze/1",
            "session": self.session,
            "config": self.config.to_json(),
            "summary": self.summary,
            "repeats": self.repeats,
            "tokens": self.tokens,
            "failures": self.failures,
            "firings": self.firings,
            "block": self.block,
            "notes": self.diagnostics.notes
            + ([f"… and {self.diagnostics.dropped_notes} more"] if self.diagnostics.dropped_notes else []),
        }
        if self.calls is not None:
            doc["calls"] = self.calls
        doc["verdict"] = verdict(doc)
        return doc


class SessionAnalyzer:
    """Accumulates one session's facts from its events while driving the replay."""

    def __init__(self, path: str, config: LoopConfig, trace: bool = False, observe: bool = False):
        self.path = path
        self.config = config
        self.replay = Replay(config, trace=trace, observe=observe)
        self.meta: SessionMeta | None = None
        self.first_ts: float | None = None
        self.last_ts: float | None = None
        self.models: dict[str, None] = {}
        self.tool_calls = 0
        self.tool_errors = 0
        self.turns = 0
        self.runs: set[str] = set()
        self.runs_inferred = False  # some run was inferred from a user message (no run id written)
        self.prompt = self.output = self.cache_read = self.cache_write = 0
        self.peak = 0
        self.cost: float | None = None
        self.turn_failures = self.aborted = self.prompt_errors = self.compactions = 0
        self.last_state = "empty"
        self.repeats: dict[tuple[str, str], _Repeat] = {}
        self.series = _TokenSeries()
        self.failures: list[dict[str, Any]] = []
        self.failures_dropped = 0
        # (turn no., tokens so far, cost so far) of recent turns with calls, by line: the replay decides
        # a batch when the next one arrives, so only the last few are ever looked up
        self._recent: OrderedDict[int, tuple[int, int, float]] = OrderedDict()
        self._call_keys: dict[int, tuple[str, str]] = {}  # calls awaiting a result -> repeat key
        self._firings: list[tuple[Firing, int, int]] = []  # firing, turn no., tokens so far
        self._block_at: tuple[int, int, float] | None = None  # (turn no., tokens, cost) when the block came
        # observe mode (what-if): per observed call, and for the first guard abort, the tokens and cost
        # spent up to its turn
        self.observed_spent: list[tuple[int, float]] = []
        self.guard_spent: tuple[int, float] | None = None

    # --- the one pass -----------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        ts = getattr(event, "timestamp", None)
        if isinstance(ts, float):
            if self.first_ts is None:
                self.first_ts = ts
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        if isinstance(event, ToolResult):
            self._result(event)  # feeds the replay itself: it needs the matched call back
            return
        if isinstance(event, ModelTurn):
            self.replay.feed(event)  # first: its call states carry the args hashes the repeats use
            self._turn(event)
            self._annotate()
            return
        if isinstance(event, UserMessage):
            self.runs.add(event.run)
            self.runs_inferred = self.runs_inferred or event.run_inferred
        elif isinstance(event, PromptError):
            self.prompt_errors += 1
            self.last_state = "error"
            self._failure("prompt_error", None, event.timestamp, event.error)
        elif isinstance(event, Compaction):
            self.compactions += 1
        elif isinstance(event, SessionMeta):
            self.meta = event
        self.replay.feed(event)
        self._annotate()

    def _annotate(self) -> None:
        """Stamp what the replay just decided with the tokens spent up to the deciding call's turn."""
        replay = self.replay
        if len(replay.firings) == len(self._firings) and len(replay.observed) == len(self.observed_spent) \
                and (replay.block is None or self._block_at is not None) \
                and (replay.first_guard_abort is None or self.guard_spent is not None):
            return  # nothing new (the common case)
        for firing in replay.firings[len(self._firings):]:
            turn, tokens, _ = self._recent.get(firing.turn_line, (None, 0, 0.0))
            self._firings.append((firing, turn, tokens))
        if replay.block is not None and self._block_at is None:
            self._block_at = self._recent.get(replay.block.turn_line, (None, 0, 0.0))
        for call, _, _ in replay.observed[len(self.observed_spent):]:
            self.observed_spent.append(self._spent(call.line))
        if replay.first_guard_abort is not None and self.guard_spent is None:
            self.guard_spent = self._spent(replay.first_guard_abort[0].line)

    def _spent(self, turn_line: int) -> tuple[int, float]:
        _, tokens, cost = self._recent.get(turn_line, (None, 0, 0.0))
        return tokens, cost

    def _turn(self, turn: ModelTurn) -> None:
        if turn.calls:
            self.runs.add(turn.run)
        for state in self.replay.batch if turn.calls else ():
            call = state.call
            self.tool_calls += 1
            group = (call.tool, _command(call.tool, call.arguments) or state.args_hash)
            self._call_keys[call.index] = group
            rep = self.repeats.get(group)
            if rep is None:
                self.repeats[group] = _Repeat(call.tool, None, call.index)
            else:
                if rep.key is None:  # rendered on the first repeat: most calls never repeat
                    rep.key = repeat_key(call.tool, call.arguments)
                rep.count += 1
                rep.last_call = call.index
        if not turn.is_model_output:
            return
        self.turns += 1
        if turn.model:
            self.models.setdefault(turn.model, None)
        prompt = turn.prompt_tokens
        self.prompt += prompt
        self.output += turn.output
        self.cache_read += turn.cache_read
        self.cache_write += turn.cache_write
        if turn.cost is not None:
            self.cost = (self.cost or 0.0) + turn.cost
        self.peak = max(self.peak, prompt)
        total = self.prompt + self.output
        if turn.calls:
            self._recent[turn.line] = (self.turns, total, self.cost or 0.0)
            if len(self._recent) > RECENT_TURNS:
                self._recent.popitem(last=False)
        if prompt or turn.output:
            self.series.add(self.turns, turn.timestamp, prompt, turn.output, total)
        reason = turn.stop_reason
        if reason == "error":
            self.turn_failures += 1
            self._failure("turn_error", self.turns, turn.timestamp, turn.error_message or "error")
        elif reason == "aborted":
            self.aborted += 1
            self._failure("aborted", self.turns, turn.timestamp, turn.error_message or "aborted")
        self.last_state = FINAL_STATE.get(reason, "completed")

    def _result(self, result: ToolResult) -> None:
        state = self.replay.feed(result)
        self._annotate()
        if state is None:
            return
        call = state.call
        rep = self.repeats.get(self._call_keys.pop(call.index, ("", "")))
        if rep is not None and state.outcome is not None:
            rep.outcomes.add(hash(state.outcome))
        message = _tool_error(result)
        if message is not None:
            self.tool_errors += 1
            self._failure("tool_error", call.index, result.timestamp, message)

    def _failure(self, kind: str, where: int | None, ts: float | None, message: str) -> None:
        if len(self.failures) >= MAX_FAILURES:
            self.failures_dropped += 1
            return
        self.failures.append(
            {"kind": kind, "call_or_turn": where, "timestamp": iso(ts), "message": _clip(message, MESSAGE_CHARS)}
        )

    # --- the result -------------------------------------------------------------------------------

    def result(self, diag: Diagnostics) -> SessionResult:
        replay = self.replay
        replay.finish()
        self._annotate()
        if self.failures_dropped:
            diag.note(None, f"{self.failures_dropped} more failures than the {MAX_FAILURES} listed")
        meta = self.meta or SessionMeta("openclaw", None, None, None)
        started = parse_iso(meta.timestamp) or self.first_ts
        total = self.prompt + self.output
        session = {
            "path": self.path,
            "format": meta.format,
            "format_version": meta.format_version,
            "session_id": meta.session_id or _stem(self.path),
            "agent_id": agent_from_path(self.path),
            "models": list(self.models),
            "started_at": iso(started),
            "ended_at": iso(self.last_ts),
            "duration_s": round(self.last_ts - started, 3) if started is not None and self.last_ts else None,
            "runs_inferred": self.runs_inferred,
        }
        summary = {
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "assistant_turns": self.turns,
            "runs": len(self.runs),
            "input_tokens": self.prompt - self.cache_read - self.cache_write,
            "prompt_tokens": self.prompt,
            "output_tokens": self.output,
            "cache_read_tokens": self.cache_read,
            "cache_write_tokens": self.cache_write,
            "total_tokens": total,
            "peak_context_tokens": self.peak,
            "cost_usd": round(self.cost, 6) if self.cost is not None else None,
            "turn_failures": self.turn_failures,
            "aborted_turns": self.aborted,
            "prompt_errors": self.prompt_errors,
            "compactions": self.compactions,
            "final_state": self.last_state,
            "bad_lines": diag.bad_lines,
            "skipped_entries": diag.skipped_entries,
            "calls_without_result": replay.calls_without_result,
            "results_without_call": replay.orphan_results,
        }
        repeats = heapq.nsmallest(MAX_REPEATS, self.repeats.values(), key=lambda r: (-r.count, r.first_call))
        firings = [
            {
                "detector": f.detector,
                "level": f.level,
                "call_index": f.call_index,
                "tool_call_id": f.tool_call_id,
                "tool": f.tool,
                "count": f.count,
                "timestamp": iso(f.timestamp),
                "tokens_so_far": tokens,
                "turn": turn,
                # OpenClaw itself emits a warning only from count 10 on (its buckets start at 0)
                "emitted_by_openclaw": f.level == "critical" or f.count >= WARNING_BUCKET,
            }
            for f, turn, tokens in self._firings
        ]
        return SessionResult(
            path=self.path,
            config=self.config,
            session=session,
            summary=summary,
            repeats=[
                {
                    "tool": r.tool,
                    "key": r.key,
                    "count": r.count,
                    "distinct_outcomes": len(r.outcomes),
                    "first_call": r.first_call,
                    "last_call": r.last_call,
                }
                for r in repeats
                if r.count > 1
            ],
            tokens=self.series.rows(),
            failures=self.failures,
            firings=firings,
            block=self._block(replay.block, total),
            diagnostics=diag,
            calls=_trace(replay) if replay.trace is not None else None,
        )

    def saved_after(self, call_index: int, timestamp: float | None, tokens_then: int, cost_then: float,
                    call_ran: bool) -> tuple[int, int, float | None, float | None]:
        """What stopping at this call would have saved: (calls, tokens, cost, seconds) after it. A
        blocked call never runs, so it counts among the calls saved; a guard abort comes after its call."""
        return (
            self.tool_calls - call_index + (0 if call_ran else 1),
            self.prompt + self.output - tokens_then,
            self.cost - cost_then if self.cost is not None else None,
            self.last_ts - timestamp if self.last_ts is not None and timestamp is not None else None,
        )

    def _block(self, block: Block | None, total: int) -> dict[str, Any] | None:
        if block is None:
            return None
        turn, tokens_then, cost_then = self._block_at or (None, 0, 0.0)
        calls_after, tokens_after, cost_after, seconds_after = self.saved_after(
            block.call_index, block.timestamp, tokens_then, cost_then, block.call_ran)
        return {
            "detector": block.detector,
            "call_index": block.call_index,
            "tool": block.tool,
            "count": block.count,
            "timestamp": iso(block.timestamp),
            "turn": turn,
            "calls_after": calls_after,
            "tokens_after": tokens_after,
            "tokens_after_pct": round(100.0 * tokens_after / total, 1) if total else 0.0,
            "cost_after_usd": round(cost_after, 6) if cost_after is not None else None,
            "seconds_after": round(seconds_after, 3) if seconds_after is not None else None,
        }


def _trace(replay: Replay) -> list[dict[str, Any]]:
    out = []
    for state in replay.trace or ():
        call = state.call
        d = state.decision
        out.append(
            {
                "index": call.index,
                "tool": call.tool,
                "tool_call_id": call.id,
                "run": call.run,
                "evaluated": state.evaluated,
                "args_hash": state.args_hash,
                "result_hash": state.result_hash,
                "decision": {"level": d.level, "detector": d.detector, "count": d.count} if d else None,
            }
        )
    return out


def _tool_error(result: ToolResult) -> str | None:
    """The error message of a failed tool result (by details status / exit code, not isError alone)."""
    details = result.details if isinstance(result.details, dict) else {}
    status = details.get("status")
    exit_code = details.get("exitCode")
    failed = (
        result.is_error
        or status in ("error", "failed")
        or (isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0)
    )
    if not failed:
        return None
    if isinstance(details.get("error"), str):
        return details["error"]
    text = join_text(result.texts)
    return text or f"status {status}, exit code {exit_code}"


def _stem(path: str) -> str | None:
    if path == "-":
        return None
    name = PurePath(path).name
    return name.split(".jsonl")[0] if ".jsonl" in name else name


def analyze_events(path: str, events: Iterable[Event], diag: Diagnostics, config: LoopConfig,
                   trace: bool = False) -> SessionResult:
    analyzer = SessionAnalyzer(path, config, trace)
    for event in events:
        analyzer.feed(event)
    return analyzer.result(diag)


def analyze_path(path: str, request: ConfigRequest | None = None, trace: bool = False) -> SessionResult:
    """Read and analyze one session file. Raises ReadError when nothing can be read."""
    request = request or ConfigRequest()
    config = request.resolve(agent_from_path(path))
    with open_events(path) as (events, diag):
        return analyze_events(path, events, diag, config, trace)


def verdict(doc: dict[str, Any]) -> str:
    """One line a person can act on, from an analyze document."""
    s = doc["summary"]
    block = doc["block"]
    config = doc["config"]
    warnings = [f for f in doc["firings"] if f["level"] == "warning"]
    if block:
        minutes = f", {block['seconds_after'] / 60:.0f} min" if block["seconds_after"] is not None else ""
        cost = f", ${block['cost_after_usd']:.2f}" if block["cost_after_usd"] else ""
        line = (
            f"LOOP: {block['detector']} would have stopped this session at call {block['call_index']} "
            f"(count {block['count']}), saving {block['calls_after']} calls and "
            f"{block['tokens_after']:,} tokens ({block['tokens_after_pct']}%){cost}{minutes}."
        )
    elif warnings:
        first = warnings[0]
        line = (
            f"WARNED, NOT STOPPED: {len(warnings)} warning(s) from call {first['call_index']} "
            f"({first['detector']}); no critical under these thresholds, the session ran on to call "
            f"{s['tool_calls']}."
        )
    else:
        line = f"No loop found under {config['profile']} ({s['tool_calls']} tool calls)."
    if config["enabled_in_config"] is False and config["simulated_enabled"]:
        line += " Note: the config has enabled:false, so as written it would have stopped nothing."
    return line
