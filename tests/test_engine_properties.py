"""Property tests of the engine, through the real reader and replay.

Random sessions are drawn from small pools of tools, arguments and outputs (so that repeats, streaks,
ping-pong and guard aborts actually happen), written as OpenClaw transcripts and replayed.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings, strategies as st

import loopscan.engine.replay as replay_mod
from transcript import Call, Transcript, analyze, json_result, rejected, text_result, thrown

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- random sessions ---------------------------------------------------------------------------

TOOLS = ["read", "list", "exec", "Bash", "process", "command_status", "message", "sessions_send", "update_plan",
         "gateway", "telegram"]
ARGS = {
    "read": [{"path": "/a.txt"}, {"path": "/b.txt"}],
    "list": [{"dir": "/workspace"}],
    "exec": [{"command": "date"}, {"command": "ls -la", "cwd": "/tmp"}],
    "Bash": [{"command": "date"}],
    "process": [{"action": "poll", "sessionId": "s1"}, {"action": "log", "sessionId": "s1"}],
    "command_status": [{"id": "c1"}],
    "message": [{"action": "send", "target": "feishu:oc", "text": "ping"}, {"action": "read", "target": "feishu:oc"}],
    "sessions_send": [{"sessionKey": "agent:main:peer", "text": "ping"}],
    "update_plan": [{"plan": [{"step": "a", "status": "in_progress"}], "explanation": "x"}],
    "gateway": [{"action": "lookup", "path": "cron.enabled"}],
    "telegram": [{"action": "sendMessage", "to": "telegram:1", "text": "hi"}],
}
scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.5, 3.0, 1e21]) | st.text(max_size=4)
json_values = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                           max_leaves=8)
arguments = st.one_of(
    st.sampled_from(TOOLS).flatmap(lambda tool: st.sampled_from(ARGS[tool])),
    st.dictionaries(st.sampled_from(["path", "command", "action", "x", "nested"]), json_values, max_size=3),
)
outputs = st.sampled_from(["same output", "(no new output)\n\nProcess still running.", "Loki\nPrometheus", ""]) | st.text(max_size=6)
details = st.one_of(
    st.just(None),
    st.fixed_dictionaries({"ok": st.booleans()}),
    st.fixed_dictionaries({"status": st.sampled_from(["running", "completed", "failed", "approval-pending"]),
                           "exitCode": st.sampled_from([0, 1, None]), "aggregated": outputs,
                           "tail": outputs, "durationMs": st.integers(0, 50)}),
    st.fixed_dictionaries({"ok": st.just(True), "messageId": st.text(max_size=3), "runId": st.text(max_size=3)}),
    st.fixed_dictionaries({"status": st.just("blocked"),
                           "deniedReason": st.sampled_from(["tool-loop", "plugin-before-tool-call"])}),
    json_values,
)


@st.composite
def results(draw, tool):
    kind = draw(st.sampled_from(["normal", "normal", "normal", "none", "thrown", "rejected", "rejected", "json"]))
    if kind == "none":
        return None
    if kind == "thrown":
        return thrown(tool, draw(st.sampled_from(["Tool exec not found", "Unknown tool: foo", "ENOENT", "boom"])))
    if kind == "rejected":
        return rejected(draw(st.sampled_from(["Tool x not found", "Validation failed"])))
    if kind == "json":
        return json_result(draw(st.dictionaries(st.sampled_from(["ok", "messageId", "id", "text"]), scalars, max_size=3)))
    d = draw(details)
    return text_result(draw(outputs), d) if d is not None else text_result(draw(outputs))


@st.composite
def calls(draw):
    tool = draw(st.sampled_from(TOOLS))
    args = draw(st.sampled_from(ARGS[tool])) if draw(st.booleans()) else draw(arguments)
    return Call(tool, copy.deepcopy(args), draw(results(tool)))


steps = st.one_of(
    st.tuples(st.just("turn"), st.lists(calls(), min_size=1, max_size=3)),
    st.tuples(st.just("turn"), st.lists(calls(), min_size=1, max_size=1)),
    st.tuples(st.just("repeat"), calls(), st.integers(2, 25)),
    st.tuples(st.sampled_from(["user", "compaction", "reply", "prompt_error"])),
)
sessions = st.lists(steps, min_size=1, max_size=12)

thresholds = st.one_of(st.integers(-1, 40), st.sampled_from([2.5, 3.0, 1e1, "5", None]))
loop_configs = st.fixed_dictionaries(
    {},
    optional={
        "enabled": st.sampled_from([True, False, None]),
        "historySize": thresholds,
        "warningThreshold": thresholds,
        "criticalThreshold": thresholds,
        "globalCircuitBreakerThreshold": thresholds,
        "unknownToolThreshold": thresholds,
        "detectors": st.fixed_dictionaries({}, optional={k: st.booleans() for k in
                                                         ("genericRepeat", "knownPollNoProgress", "pingPong")}),
        "postCompactionGuard": st.fixed_dictionaries({}, optional={"windowSize": thresholds}),
    },
)
profiles = st.sampled_from(["openclaw-2026.6", "openclaw-2026.2"])


def build(session_steps) -> Transcript:
    t = Transcript()
    t.user("Start.")
    for step in session_steps:
        kind = step[0]
        if kind == "turn":
            t.assistant([copy.deepcopy(c) for c in step[1]])
        elif kind == "repeat":
            for _ in range(step[2]):
                t.assistant([copy.deepcopy(step[1])])
        elif kind == "user":
            t.user("Go on.")
        elif kind == "compaction":
            t.compaction()
        elif kind == "reply":
            t.reply()
        else:
            t.prompt_error()
    return t


def replay(t: Transcript, loop_detection, **kwargs):
    with tempfile.TemporaryDirectory() as tmp:
        return analyze(t.write(Path(tmp)), loop_detection, **kwargs)


def outline(r) -> tuple:
    """What a replay decided: per-call trace, firings and block (without times and tokens)."""
    calls_ = tuple((c["index"], c["tool"], c["evaluated"], c["args_hash"], c["result_hash"],
                    json.dumps(c["decision"])) for c in r.calls)
    firings = tuple((f["detector"], f["level"], f["call_index"], f["count"]) for f in r.firings)
    block = r.block and (r.block["detector"], r.block["call_index"], r.block["count"])
    return calls_, firings, block


# --- properties ----------------------------------------------------------------------------------


@SETTINGS
@given(sessions, loop_configs, profiles, st.booleans())
def test_random_sessions_and_configs_never_raise(session_steps, config, profile, as_configured):
    r = replay(build(session_steps), config, profile=profile, as_configured=as_configured)
    criticals = [f for f in r.firings if f["level"] == "critical"]
    assert len(criticals) <= 1
    if r.block is not None:
        assert criticals and criticals[0]["call_index"] == r.block["call_index"]
        assert all(f["call_index"] <= r.block["call_index"] for f in r.firings)
        assert r.calls[-1]["index"] == r.block["call_index"]
    else:
        assert not criticals
    assert r.summary["tool_calls"] >= len(r.calls)
    json.dumps(r.to_json())


def recorded_signals(t: Transcript, config: dict, profile: str) -> list:
    seen = []
    original = replay_mod.signals

    def spy(history, tool, args_hash, *rest):
        s = original(history, tool, args_hash, *rest)
        seen.append((tool, args_hash, s))
        return s

    with mock.patch.object(replay_mod, "signals", spy):
        replay(t, config, profile=profile)
    return seen


threshold_sets = st.fixed_dictionaries({
    "warningThreshold": st.integers(1, 25),
    "criticalThreshold": st.integers(1, 35),
    "globalCircuitBreakerThreshold": st.integers(1, 45),
    "unknownToolThreshold": st.integers(1, 15),
    "detectors": st.fixed_dictionaries({k: st.booleans() for k in ("genericRepeat", "knownPollNoProgress", "pingPong")}),
})


@SETTINGS
@given(sessions, threshold_sets, threshold_sets, st.integers(1, 40), profiles)
def test_thresholds_never_change_signals(session_steps, a, b, history_size, profile):
    t = build(session_steps)
    common = {"enabled": True, "historySize": history_size}
    seen_a = recorded_signals(t, {**common, **a}, profile)
    seen_b = recorded_signals(t, {**common, **b}, profile)
    n = min(len(seen_a), len(seen_b))  # a replay stops at its first block; before it, all calls are shared
    assert seen_a[:n] == seen_b[:n]
    seen_default = recorded_signals(t, common, profile)
    m = min(n, len(seen_default))
    assert seen_default[:m] == seen_a[:m]


def reorder(value):
    """The same JSON value with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reorder(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reorder(v) for v in value]
    return value


def reordered(t: Transcript) -> Transcript:
    other = copy.deepcopy(t)
    for entry in other.entries:
        message = entry.get("message")
        if not message:
            continue
        if message.get("role") == "assistant":
            for block in message["content"]:
                if block.get("type") == "toolCall":
                    block["arguments"] = reorder(block["arguments"])
        elif message.get("role") == "toolResult" and "details" in message:
            message["details"] = reorder(message["details"])
    return other


@SETTINGS
@given(sessions, loop_configs, profiles)
def test_decisions_invariant_to_key_order(session_steps, config, profile):
    t = build(session_steps)
    plain = replay(t, config, profile=profile, as_configured=False)
    assert outline(plain) == outline(replay(reordered(t), config, profile=profile, as_configured=False))


def with_unrelated_entries(t: Transcript, positions: list[int], kinds: list[str]) -> Transcript:
    other = copy.deepcopy(t)
    for pos, kind in sorted(zip(positions, kinds), reverse=True):
        where = pos % (len(other.entries) + 1)
        if kind == "model_change":
            extra = {"type": "model_change", "provider": "openai", "modelId": "gpt-5.2"}
        elif kind == "thinking":
            extra = {"type": "thinking_level_change", "thinkingLevel": "high"}
        elif kind == "label":
            extra = {"type": "label", "targetId": "00000001", "label": "checkpoint"}
        elif kind == "delivery-mirror":
            extra = {"type": "message", "message": {
                "role": "assistant", "content": [{"type": "text", "text": "(mirrored reply)"}], "provider": "openclaw",
                "model": "delivery-mirror", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                                      "totalTokens": 0}, "stopReason": "stop", "timestamp": 1781254800000}}
        else:
            extra = {"type": "custom", "customType": kind, "data": {"timestamp": 1781254800000, "runId": "r"}}
        stamp = other.entries[where - 1]["timestamp"] if where else other.header["timestamp"]
        other.entries.insert(where, {"type": extra.pop("type"), "id": f"x{where:07x}", "parentId": None,
                                     "timestamp": stamp, **extra})
    for prev, entry in zip([None, *other.entries], other.entries):  # keep the parent chain
        entry["parentId"] = prev["id"] if prev else None
    return other


unrelated = st.sampled_from(["model_change", "thinking", "label", "delivery-mirror", "model-snapshot",
                             "openclaw:bootstrap-context:full", "openclaw.cache-ttl"])


def after_each_call_message(t: Transcript) -> list[int]:
    """Positions right after every assistant message with tool calls (before its results)."""
    return [i + 1 for i, e in enumerate(t.entries)
            if e["type"] == "message" and any(b.get("type") == "toolCall" for b in e["message"].get("content", []))]


@SETTINGS
@given(sessions, loop_configs, profiles, st.lists(st.tuples(st.integers(0, 400), unrelated), min_size=1, max_size=6),
       st.booleans(), unrelated)
def test_decisions_invariant_to_unrelated_entries(session_steps, config, profile, extras, between, kind):
    t = build(session_steps)
    positions, kinds = [p for p, _ in extras], [k for _, k in extras]
    if between:  # also one between every call message and its results
        calls_at = after_each_call_message(t)
        positions, kinds = positions + calls_at, kinds + [kind] * len(calls_at)
    plain = replay(t, config, profile=profile, as_configured=False)  # detection on whatever `enabled` says
    noisy = replay(with_unrelated_entries(t, positions, kinds), config, profile=profile, as_configured=False)
    assert outline(plain) == outline(noisy)


def test_model_change_between_call_and_rejected_result_changes_nothing():
    # Regression: an entry between a call and its result used to close the batch before the result
    # was seen, so calls the agent loop rejected (never seen by the detector) were recorded.
    t = Transcript()
    t.user("Read it.")
    for _ in range(10):
        t.tool("read", {"path": "/a"}, rejected("Tool read not found"))
    t.tool("read", {"path": "/a"})
    noisy = with_unrelated_entries(t, after_each_call_message(t), ["model_change"] * 11)
    plain_r, noisy_r = replay(t, {"enabled": True}), replay(noisy, {"enabled": True})
    assert outline(plain_r) == outline(noisy_r)
    assert noisy_r.firings == [] and [c["evaluated"] for c in noisy_r.calls] == [False] * 10 + [True]
