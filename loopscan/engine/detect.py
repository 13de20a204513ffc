"""The rolling-history detectors: history window, per-call streak signals, and the decision.

`signals()` measures the history as it stands before a call (detector.md section 5). It does not
depend on any threshold, which is what lets a what-if evaluate many configs over one replay.
`decide()` applies thresholds and switches to those signals (section 6).
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any, NamedTuple

from loopscan.engine.config import LoopConfig
from loopscan.engine.outcome import is_known_poll
from loopscan.engine.profiles import Profile


class Record:
    """One slot of OpenClaw's toolCallHistory."""

    __slots__ = ("tool", "args_hash", "call_id", "run", "result_hash", "unknown_tool")

    def __init__(self, tool: str, args_hash: str, call_id: str | None, run: str | None,
                 result_hash: str | None = None, unknown_tool: str | None = None):
        self.tool = tool
        self.args_hash = args_hash
        self.call_id = call_id
        self.run = run
        self.result_hash = result_hash
        self.unknown_tool = unknown_tool

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Record({self.tool}, {self.args_hash[-8:]}, run={self.run}, result={str(self.result_hash)[-8:]})"


class History:
    """The session-wide sliding window of the last `size` records."""

    def __init__(self, size: int, run_scoping: bool):
        self.size = size
        self.run_scoping = run_scoping
        self.records: list[Record] = []

    def scoped(self, run: str | None) -> list[Record]:
        if not self.run_scoping:
            return self.records
        return [r for r in self.records if r.run == run]

    def record_call(self, tool: str, args_hash: str, call_id: str | None, run: str | None) -> None:
        self.records.append(Record(tool, args_hash, call_id, run if self.run_scoping else None))
        self._trim()

    def record_outcome(self, tool: str, args_hash: str, call_id: str | None, run: str | None,
                       result_hash: str, unknown_tool: str | None) -> None:
        run = run if self.run_scoping else None
        for record in reversed(self.records):
            if record.run != run or (call_id and record.call_id != call_id):
                continue
            if record.tool != tool or record.args_hash != args_hash or record.result_hash is not None:
                continue
            record.result_hash = result_hash
            record.unknown_tool = unknown_tool
            break
        else:
            self.records.append(Record(tool, args_hash, call_id, run, result_hash, unknown_tool))
        self._trim()

    def latest_result(self, tool: str, args_hash: str, run: str | None) -> str | None:
        """The newest outcome recorded for this call in the run's window (what a veto repeats)."""
        run = run if self.run_scoping else None
        for record in reversed(self.records):
            if record.run == run and record.tool == tool and record.args_hash == args_hash and record.result_hash:
                return record.result_hash
        return None

    def _trim(self) -> None:
        excess = len(self.records) - self.size
        if excess > 0:
            del self.records[:excess]


class Signals(NamedTuple):
    """What the detectors measure for one call, before it is recorded. Threshold-free."""

    unknown_count: int
    unknown_name: str | None
    no_progress: int
    latest_result: str | None
    ping_pong: int
    ping_pong_evidence: bool
    paired_args: str | None
    recent: int
    known_poll: bool
    # loopscan's own measures (0 where a profile does not keep them)
    session_stale: int = 0  # of the run's last sessionWindow outcomes, those that repeated an earlier triple
    tokens: int = 0  # tokens the session used up to and including the turn making this call
    rounds: int = 0  # tool rounds (assistant messages with calls) of this run so far, this one included


class SessionNoProgress:
    """Across all tools: how many of a run's last `window` outcomes brought no new information, i.e.
    repeated a (tool, arguments, outcome) triple already seen in that run. Rotating between commands
    does not evade it (upstream #79252, #97577). Scoped to the run like OpenClaw 2026.6's detectors:
    periodic runs (heartbeats) that repeat the same checks are routine, not a loop."""

    MEMORY = 4096  # distinct triples remembered per run (the oldest are forgotten first)
    RUNS = 4  # runs tracked at once (a late result can still belong to a recent earlier run)

    def __init__(self, window: int):
        self.size = window
        self.runs: OrderedDict[str | None, _RunStaleness] = OrderedDict()

    def stale(self, run: str | None) -> int:
        tracker = self.runs.get(run)
        return tracker.stale if tracker else 0

    def observe(self, run: str | None, tool: str, args_hash: str, result_hash: str) -> None:
        tracker = self.runs.get(run)
        if tracker is None:
            tracker = self.runs[run] = _RunStaleness(self.size, self.MEMORY)
            if len(self.runs) > self.RUNS:
                self.runs.popitem(last=False)
        tracker.observe((tool, args_hash, result_hash))


class _RunStaleness:
    def __init__(self, window: int, memory: int):
        self.window: deque[bool] = deque(maxlen=window)
        self.seen: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self.memory = memory
        self.stale = 0

    def observe(self, triple: tuple[str, str, str]) -> None:
        repeated = triple in self.seen
        if repeated:
            self.seen.move_to_end(triple)
        else:
            self.seen[triple] = None
            if len(self.seen) > self.memory:
                self.seen.popitem(last=False)
        if len(self.window) == self.window.maxlen and self.window[0]:
            self.stale -= 1
        self.window.append(repeated)
        self.stale += repeated


def signals(history: list[Record], tool: str, args_hash: str, params: Any, unknown_detector: bool = True) -> Signals:
    unknown_count, unknown_name = _unknown_streak(history, tool) if unknown_detector else (0, None)
    no_progress, latest = _no_progress(history, tool, args_hash)
    ping, evidence, paired = _ping_pong(history, args_hash)
    recent = sum(1 for r in history if r.args_hash == args_hash and r.tool == tool)
    return Signals(unknown_count, unknown_name, no_progress, latest, ping, evidence, paired, recent,
                   is_known_poll(tool, params))


def _unknown_streak(history: list[Record], tool: str) -> tuple[int, str | None]:
    count, name = 0, None
    for record in reversed(history):
        if record.tool != tool or not record.unknown_tool:
            break
        if name is None:
            name, count = record.unknown_tool, 1
        elif record.unknown_tool != name:
            break
        else:
            count += 1
    return count, name


def _no_progress(history: list[Record], tool: str, args_hash: str) -> tuple[int, str | None]:
    count, latest = 0, None
    for record in reversed(history):
        if record.tool != tool or record.args_hash != args_hash or not record.result_hash:
            continue
        if latest is None:
            latest, count = record.result_hash, 1
        elif record.result_hash != latest:
            break
        else:
            count += 1
    return count, latest


def _ping_pong(history: list[Record], current: str) -> tuple[int, bool, str | None]:
    if not history:
        return 0, False, None
    last = history[-1].args_hash
    other = None
    for record in reversed(history[:-1]):
        if record.args_hash != last:
            other = record.args_hash
            break
    if other is None:
        return 0, False, None
    tail = 0
    for record in reversed(history):
        if record.args_hash != (last if tail % 2 == 0 else other):
            break
        tail += 1
    if tail < 2 or current != other:
        return 0, False, None
    hash_a = hash_b = None
    evidence = True
    for record in history[len(history) - tail:]:
        if not record.result_hash:
            evidence = False
            break
        if record.args_hash == last:
            if hash_a is None:
                hash_a = record.result_hash
            elif hash_a != record.result_hash:
                evidence = False
                break
        elif hash_b is None:
            hash_b = record.result_hash
        elif hash_b != record.result_hash:
            evidence = False
            break
    return tail + 1, evidence and hash_a is not None and hash_b is not None, last


class Decision(NamedTuple):
    level: str  # "warning" | "critical"
    detector: str
    count: int
    warning_key: str


class WarningKeys(NamedTuple):
    """OpenClaw's warning keys for a call, one per detector that can warn (emission is per key)."""

    generic: str
    poll: str
    ping_pong: str
    outcome: str  # tool, args and latest outcome: what the no-progress keys are made of


def warning_keys(s: Signals, tool: str, args_hash: str) -> WarningKeys:
    outcome = f"{tool}:{args_hash}:{s.latest_result or 'none'}"
    pair = "|".join(sorted((args_hash, s.paired_args))) if s.paired_args else f"{tool}:{args_hash}"
    return WarningKeys(f"generic:{tool}:{args_hash}", f"poll:{outcome}", f"pingpong:{pair}", outcome)


def decide(s: Signals, tool: str, args_hash: str, cfg: LoopConfig, profile: Profile) -> Decision | None:
    """OpenClaw's decision (detector.md section 6), then loopscan's own detectors: a budget or the
    session-wide breaker blocks unless OpenClaw already did, and its warning comes after OpenClaw's."""
    decision = openclaw_decision(s, tool, args_hash, cfg, profile)
    if decision is not None and decision.level == "critical":
        return decision
    if cfg.tokenBudget is not None and s.tokens >= cfg.tokenBudget:
        return Decision("critical", "token_budget", s.tokens, "token-budget")
    if cfg.maxIterations is not None and s.rounds > cfg.maxIterations:
        return Decision("critical", "iteration_budget", s.rounds, "iteration-budget")
    if profile.session_no_progress and s.session_stale >= cfg.sessionCritical:
        return Decision("critical", "session_no_progress", s.session_stale, "session")
    if decision is None and profile.session_no_progress and s.session_stale >= cfg.sessionWarning:
        return Decision("warning", "session_no_progress", s.session_stale, "session")
    return decision


def openclaw_decision(s: Signals, tool: str, args_hash: str, cfg: LoopConfig, profile: Profile) -> Decision | None:
    """The first of OpenClaw's rules that matches (detector.md section 6), or None."""
    if s.unknown_count >= cfg.unknownToolThreshold:
        return Decision("critical", "unknown_tool_repeat", s.unknown_count,
                        f"unknown-tool:{tool}:{s.unknown_name or 'unknown'}")
    keys = warning_keys(s, tool, args_hash)
    if s.no_progress >= cfg.globalCircuitBreakerThreshold:
        return Decision("critical", "global_circuit_breaker", s.no_progress, f"global:{keys.outcome}")
    detectors = cfg.detectors
    if s.known_poll and detectors["knownPollNoProgress"]:
        if s.no_progress >= cfg.criticalThreshold:
            return Decision("critical", "known_poll_no_progress", s.no_progress, keys.poll)
        if s.no_progress >= cfg.warningThreshold:
            return Decision("warning", "known_poll_no_progress", s.no_progress, keys.poll)
    if detectors["pingPong"]:
        if s.ping_pong >= cfg.criticalThreshold and s.ping_pong_evidence:
            return Decision("critical", "ping_pong", s.ping_pong, keys.ping_pong)
        if s.ping_pong >= cfg.warningThreshold:
            return Decision("warning", "ping_pong", s.ping_pong, keys.ping_pong)
    if not s.known_poll and detectors["genericRepeat"]:
        if profile.generic_critical and s.no_progress >= cfg.criticalThreshold:
            return Decision("critical", "generic_repeat", s.no_progress, f"generic:{keys.outcome}")
        if s.recent >= cfg.warningThreshold:
            return Decision("warning", "generic_repeat", s.recent, keys.generic)
    return None
