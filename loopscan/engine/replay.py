"""Replay a session's events through the detector, the way OpenClaw's caller drives it.

Detection runs before each call and records it after; a call's outcome is recorded when its result
arrives. The calls of one assistant message form a batch (executed concurrently by OpenClaw): all are
detected and recorded, in block order, before any of their results (detector.md section 5b). Since a
result can only be classified once it is seen (a call the agent loop rejected never reached the
detector), a batch is processed when the next batch or a compaction arrives (or at the end). Entries
in between that the detector never sees (a model change, a delivery-mirror message written between a
call and its result, a user message) do not end the wait.

The first critical decision, or a post-compaction guard abort, ends the replay: what follows in the
recording would not have happened. Outcome hashes are still computed after that point, so analyses
(distinct outcomes of repeated commands) see the whole session.
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

from loopscan.engine.config import LoopConfig
from loopscan.engine.detect import Decision, History, SessionNoProgress, Signals, decide, signals
from loopscan.engine.guard import CompactionGuard
from loopscan.engine.hashing import digest
from loopscan.engine.outcome import NOT_EVALUATED, VETO, args_hash, classify, join_text, outcome_hash
from loopscan.engine.profiles import Profile, get_profile
from loopscan.events import Compaction, Event, ModelTurn, ToolCall, ToolResult

WARNING_BUCKET = 10
COMPACTION_LOOP = "compaction_loop_persisted"


class CallState:
    """What the replay knows of one call."""

    __slots__ = ("call", "args_hash", "tokens", "rounds", "evaluated", "result_hash",
                 "unknown_tool", "outcome", "decision", "detected")

    def __init__(self, call: ToolCall, args_hash: str, tokens: int = 0, rounds: int = 0):
        self.call = call
        self.args_hash = args_hash
        self.tokens = tokens  # session tokens up to the turn that made the call
        self.rounds = rounds  # tool rounds of its run up to that turn
        self.evaluated = True
        self.result_hash: str | None = None  # the hash recorded in history (None: no record)
        self.unknown_tool: str | None = None
        self.outcome: str | None = None  # an outcome identity for every result, for analyses
        self.decision: Decision | None = None
        self.detected = False


class Firing(NamedTuple):
    detector: str
    level: str
    call_index: int
    tool_call_id: str | None
    tool: str
    count: int
    timestamp: float | None
    turn_line: int


class Block(NamedTuple):
    detector: str
    call_index: int
    tool: str
    count: int
    timestamp: float | None
    turn_line: int
    call_ran: bool  # False for a blocked call (critical); True for a guard abort after its outcome


class Replay:
    def __init__(self, config: LoopConfig, profile: Profile | None = None, trace: bool = False,
                 observe: bool = False):
        """`observe`: decide nothing and never block; keep every evaluated call's threshold-free
        signals (`observed`) and the first post-compaction guard abort, for a what-if over thresholds."""
        self.config = config
        self.observe = observe
        self.observed: list[tuple[ToolCall, str, Signals]] = []
        self.first_guard_abort: tuple[ToolCall, int] | None = None
        self.profile = profile or get_profile(config.profile)
        self.history = History(config.historySize, self.profile.run_scoping)
        self.session = SessionNoProgress(config.sessionWindow) if self.profile.session_no_progress else None
        self.tokens = 0  # tokens the session used so far (prompt + output of model turns)
        self.rounds: dict[str, int] = {}  # tool rounds per run
        self.guard = CompactionGuard(config.windowSize)
        self.firings: list[Firing] = []
        self.block: Block | None = None
        self.trace: list[CallState] | None = [] if trace else None
        self.orphan_results = 0
        self._batch: list[CallState] = []
        self._outcomes: list[CallState] = []
        self._pending: dict[str | None, deque[CallState]] = {}
        self._warned: dict[str, int] = {}

    # --- feeding -------------------------------------------------------------------------------

    def feed(self, event: Event) -> CallState | None:
        """Consume one event. For a tool result, returns the call it answers (None if unmatched)."""
        if isinstance(event, ToolResult):
            return self._on_result(event)
        if isinstance(event, ModelTurn) and event.is_model_output:
            self.tokens += event.prompt_tokens + event.output
        if isinstance(event, ModelTurn) and event.calls:
            self.flush()
            self.rounds[event.run] = self.rounds.get(event.run, 0) + 1
            for call in event.calls:
                state = CallState(call, args_hash(call.tool, call.arguments, self.profile), self.tokens,
                                  self.rounds[event.run])
                self._batch.append(state)
                self._pending.setdefault(call.id, deque()).append(state)
        elif isinstance(event, Compaction):
            self.flush()
            if self.block is None and self.config.guard_enabled:
                self.guard.arm()
        return None

    def finish(self) -> None:
        self.flush()

    @property
    def batch(self) -> list[CallState]:
        """The calls of the last assistant message, not decided yet (they wait for their results)."""
        return self._batch

    @property
    def calls_without_result(self) -> int:
        return sum(len(q) for q in self._pending.values())

    # --- results ---------------------------------------------------------------------------------

    def _on_result(self, result: ToolResult) -> CallState | None:
        queue = self._pending.get(result.call_id)
        if not queue:
            self.orphan_results += 1
            return None
        state = queue.popleft()
        if not queue:
            del self._pending[result.call_id]
        call = state.call
        if classify(result.details, result.is_error) == NOT_EVALUATED:
            state.evaluated = False
            state.outcome = "rejected:" + digest(join_text(result.texts))
            return state
        outcome = outcome_hash(call.tool, call.arguments, result.details, result.texts, result.is_error, self.profile)
        state.result_hash, state.unknown_tool = outcome
        state.outcome = outcome.result_hash or "unhashed"
        self._outcomes.append(state)
        return state

    # --- the caller's order: detect + record each call of a batch, then record outcomes ---------

    def flush(self) -> None:
        if self._batch:
            batch, self._batch = self._batch, []
            for state in batch:
                if self.block is not None:
                    break
                if self.trace is not None:
                    self.trace.append(state)
                if state.evaluated:
                    self._detect_and_record(state)
        if self._outcomes:
            outcomes, self._outcomes = self._outcomes, []
            for state in outcomes:
                if self.block is None and state.detected and state.result_hash is not None:
                    self._record_outcome(state)

    def _detect_and_record(self, state: CallState) -> None:
        cfg = self.config
        call = state.call
        if not cfg.records_history:
            return
        state.detected = True
        if self.observe:
            self.observed.append((call, state.args_hash, self._signals(state)))
        elif cfg.detection_enabled:
            sig = self._signals(state)
            decision = decide(sig, call.tool, state.args_hash, cfg, self.profile)
            state.decision = decision
            if decision is not None:
                if decision.level == "critical":
                    self._fire(decision, call)
                    self.block = Block(decision.detector, call.index, call.tool, decision.count,
                                       call.timestamp, call.line, call_ran=False)
                    return  # blocked: the call never runs and is not recorded
                if self._should_emit(decision, call):
                    self._fire(decision, call)
        self.history.record_call(call.tool, state.args_hash, call.id, call.run)

    def _signals(self, state: CallState) -> Signals:
        call = state.call
        sig = signals(self.history.scoped(call.run), call.tool, state.args_hash, call.arguments,
                      self.profile.unknown_tool_detector)
        return sig._replace(session_stale=self.session.stale(call.run) if self.session else 0, tokens=state.tokens,
                            rounds=state.rounds)

    def _record_outcome(self, state: CallState) -> None:
        call = state.call
        assert state.result_hash is not None
        if state.result_hash == VETO:  # 2026.8: a veto repeats the outcome it vetoed: the streak goes on
            state.result_hash = self.history.latest_result(call.tool, state.args_hash, call.run)
            if state.result_hash is None:
                return
        self.history.record_outcome(call.tool, state.args_hash, call.id, call.run, state.result_hash,
                                    state.unknown_tool)
        if self.session is not None:
            self.session.observe(call.run, call.tool, state.args_hash, state.result_hash)
        count = self.guard.observe(call.tool, state.args_hash, state.result_hash)
        if count is not None and self.observe:
            if self.first_guard_abort is None:
                self.first_guard_abort = (call, count)
        elif count is not None:
            decision = Decision("critical", COMPACTION_LOOP, count, "")
            state.decision = decision
            self._fire(decision, call)
            self.block = Block(COMPACTION_LOOP, call.index, call.tool, count, call.timestamp, call.line,
                               call_ran=True)

    def _should_emit(self, decision: Decision, call: ToolCall) -> bool:
        """Once per warning key per decade of its count (10, 20, ...; or at a lower threshold)."""
        key = emission_key(decision.warning_key, call.run, self.profile)
        bucket = decision.count // WARNING_BUCKET
        if bucket <= self._warned.get(key, -1):
            return False
        self._warned[key] = bucket
        return True

    def _fire(self, decision: Decision, call: ToolCall) -> None:
        self.firings.append(
            Firing(decision.detector, decision.level, call.index, call.id, call.tool, decision.count,
                   call.timestamp, call.line)
        )


def emission_key(warning_key: str, run: str | None, profile: Profile) -> str:
    """The key warning emission is counted under (per run where the profile keeps it per run)."""
    return f"{run}:{warning_key}" if profile.warning_key_per_run and run else warning_key
