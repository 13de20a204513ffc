"""Hashing, history and guard cases of upstream-cases.md, and config resolution, by direct engine calls."""

from __future__ import annotations

import json
import re

import pytest

from loopscan.configfile import load
from loopscan.engine.config import ConfigRequest, loop_detection_block, positive_int, resolve
from loopscan.engine.detect import History, decide, signals
from loopscan.engine.guard import CompactionGuard
from loopscan.engine.hashing import digest
from loopscan.engine.outcome import args_hash, outcome_hash
from loopscan.engine.profiles import get_profile

P6 = get_profile("openclaw-2026.6")
P2 = get_profile("openclaw-2026.2")
ENABLED = resolve({"enabled": True}, as_configured=True)
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def ah(tool, params, profile=P6):
    return args_hash(tool, params, profile)


def result_of(tool, params, result: dict, profile=P6):
    """outcome_hash of an OpenClaw result object `{content, details}` (details absent -> None)."""
    texts = tuple(b["text"] for b in result.get("content", []) if isinstance(b.get("type"), str) and isinstance(b.get("text"), str))
    return outcome_hash(tool, params, result.get("details"), texts, False, profile).result_hash


def detect(history: History, tool, params, run=None, cfg=ENABLED, profile=P6):
    h = ah(tool, params, profile)
    s = signals(history.scoped(run), tool, h, params, profile.unknown_tool_detector)
    return decide(s, tool, h, cfg, profile)


def record(history: History, tool, params, call_id, run=None, result: dict | None = None, profile=P6):
    h = ah(tool, params, profile)
    history.record_call(tool, h, call_id, run)
    if result is not None:
        outcome = outcome_hash(tool, params, result.get("details"),
                               tuple(b["text"] for b in result.get("content", [])), False, profile)
        if outcome.result_hash is not None:
            history.record_outcome(tool, h, call_id, run, outcome.result_hash, outcome.unknown_tool)


# --- A. Hashing and history --------------------------------------------------------------------


def test_case_01_same_tool_and_params_same_hash():
    assert ah("read", {"path": "/file.txt"}) == ah("read", {"path": "/file.txt"})


def test_case_02_different_params_different_hash():
    assert ah("read", {"path": "/file1.txt"}) != ah("read", {"path": "/file2.txt"})


def test_case_03_different_tool_different_hash():
    assert ah("read", {"path": "/file.txt"}) != ah("write", {"path": "/file.txt"})


@pytest.mark.parametrize("params", ["string-param", 123, None])
def test_case_04_non_object_params_hash_shape(params):
    h = ah("tool", params)
    assert h.startswith("tool:") and HEX64.match(h[len("tool:"):])


def test_case_04_non_object_params_hash_distinct():
    assert len({ah("tool", p) for p in ("string-param", 123, None)}) == 3


def test_case_05_key_order_does_not_matter():
    assert ah("tool", {"a": 1, "b": 2}) == ah("tool", {"b": 2, "a": 1})
    assert ah("tool", {"o": {"y": [1, {"q": 1, "p": 2}], "x": None}}) == ah("tool", {"o": {"x": None, "y": [1, {"p": 2, "q": 1}]}})


def test_case_05_hash_is_sha256_of_stable_stringify():
    # The argsHash OpenClaw logs: tool + ":" + sha256('{"a":1,"b":2}').
    import hashlib

    assert ah("tool", {"b": 2, "a": 1}) == "tool:" + hashlib.sha256(b'{"a":1,"b":2}').hexdigest()


def test_case_06_large_params_fixed_size_hash():
    h = ah("read", {"data": "x" * 20_000})
    assert h.startswith("read:") and len(h) == len("read:") + 64


# Case 7 (circular params) cannot occur in a JSON transcript.


def test_case_08_one_call_one_record():
    history = History(30, True)
    record(history, "read", {"path": "/file.txt"}, "call-1")
    assert len(history.records) == 1
    assert (history.records[0].tool, history.records[0].call_id) == ("read", "call-1")


def test_case_09_sliding_window_of_30():
    history = History(30, True)
    for i in range(40):
        record(history, "tool", {"iteration": i}, f"call-{i}")
    assert len(history.records) == 30
    assert history.records[0].args_hash == ah("tool", {"iteration": 10})


def test_case_11_run_id_is_stored():
    history = History(30, True)
    record(history, "tool", {"arg": 1}, "call-run", run="run-1")
    assert history.records[0].run == "run-1"


def test_case_11_no_run_scoping_under_2026_2():
    history = History(30, P2.run_scoping)
    record(history, "tool", {"arg": 1}, "call-run", run="run-1", profile=P2)
    assert history.records[0].run is None


def test_case_12_history_size_4():
    cfg = resolve({"enabled": True, "historySize": 4}, as_configured=True)
    history = History(cfg.historySize, True)
    for i in range(10):
        record(history, "tool", {"iteration": i}, f"call-{i}")
    assert len(history.records) == 4
    assert history.records[0].args_hash == ah("tool", {"iteration": 6})


# --- B. Decisions that need the history as upstream builds it ----------------------------------


def test_case_13_disabled_by_default():
    cfg = resolve(None, as_configured=True)
    assert cfg.detection_enabled is False and cfg.records_history is True


def test_case_15_other_run_history_ignored():
    history = History(30, True)
    for i in range(10):
        record(history, "read", {"path": "/same.txt"}, f"old-run-{i}", run="heartbeat-1")
    assert detect(history, "read", {"path": "/same.txt"}, run="heartbeat-2") is None


def test_case_16_same_run_warns():
    history = History(30, True)
    for i in range(10):
        record(history, "read", {"path": "/same.txt"}, f"same-run-{i}", run="run-1")
    d = detect(history, "read", {"path": "/same.txt"}, run="run-1")
    assert (d.level, d.detector, d.count) == ("warning", "generic_repeat", 10)


def test_case_17_scoped_and_unscoped_history_isolated():
    history = History(30, True)
    for i in range(10):
        record(history, "read", {"path": "/same.txt"}, f"scoped-{i}", run="run-1")
    assert detect(history, "read", {"path": "/same.txt"}, run=None) is None


def test_case_31_unknown_tool_count_after_twenty():
    # Upstream's D after 20 thrown "Tool exec not found" errors (the replay blocks earlier, at 10).
    history = History(30, True)
    for i in range(20):
        params = {"command": f"cmd {i}"}
        h = ah("exec", params)
        history.record_call("exec", h, f"exec-error-{i}", None)
        outcome = outcome_hash("exec", params, {"status": "error", "tool": "exec", "error": "Tool exec not found"},
                               (), False, P6)
        assert outcome.unknown_tool == "exec"
        history.record_outcome("exec", h, f"exec-error-{i}", None, outcome.result_hash, outcome.unknown_tool)
    d = detect(history, "exec", {"command": "echo still looping"})
    assert (d.level, d.detector, d.count) == ("critical", "unknown_tool_repeat", 20)


def test_case_31_unknown_tool_name_patterns():
    def name(message):
        return outcome_hash("x", {}, {"status": "error", "tool": "x", "error": message}, (), False, P6).unknown_tool

    assert name("Tool exec not found") == "exec"
    assert name("Unknown tool: Browser.Open") == "browser.open"
    assert name("tool 'web_fetch' is not available") == "web_fetch"
    assert name("ENOENT: no such file") is None
    assert outcome_hash("x", {}, {"status": "error", "tool": "x", "error": "Tool exec not found"}, (), False,
                        P2).unknown_tool is None  # no unknown-tool detector in 2026.2


def test_case_36_large_process_log_result_hash():
    params = {"action": "log", "sessionId": "sess-big"}
    h = result_of("process", params, {"content": [{"type": "text", "text": "y" * 40_000}],
                                      "details": {"status": "running", "totalLines": 1, "totalChars": 40_000}})
    assert HEX64.match(h)


def test_case_37_result_attaches_to_pre_recorded_call():
    history = History(30, True)
    params = {"action": "lookup", "path": "cron.enabled"}
    record(history, "gateway", params, "call-1", result={"content": [{"type": "text", "text": "same schema"}]})
    assert len(history.records) == 1
    assert history.records[0].call_id == "call-1" and isinstance(history.records[0].result_hash, str)


def test_case_38_trimming_call_outcome_pairs():
    history = History(30, True)
    for i in range(33):
        record(history, "gateway", {"action": "lookup", "path": f"config.{i}"}, f"call-{i}",
               result={"content": [{"type": "text", "text": f"schema-{i}"}]})
    assert len(history.records) == 30
    assert history.records[-1].call_id == "call-32" and history.records[-1].result_hash
    assert history.records[0].call_id == "call-3"


def test_case_39_outcome_of_another_run_does_not_attach():
    history = History(30, True)
    params = {"path": "/same.txt"}
    h = ah("read", params)
    history.record_call("read", h, "call-1", "run-1")
    result_hash = result_of("read", params, {"content": [{"type": "text", "text": "same output"}]})
    history.record_outcome("read", h, "call-1", "run-2", result_hash, None)
    assert len(history.records) == 2
    assert history.records[0].result_hash is None
    assert history.records[1].run == "run-2" and history.records[1].result_hash == result_hash


def test_case_40_empty_history_not_stuck():
    assert detect(History(30, True), "tool", {"arg": 1}) is None


# --- C. Message sends with volatile ids (#89090) ---------------------------------------------


def send_result(payload):
    return {"content": [{"type": "text", "text": json.dumps(payload, indent=2)}], "details": payload}


def send_payload(i):
    return {"ok": True, "channel": "feishu", "chatId": "oc_chat", "runId": f"run_{i}", "messageId": f"om_{i}",
            "receipt": {"platformMessageId": f"p_{i}"}}


SEND = {"action": "send", "target": "feishu:oc_chat", "text": "ping"}


def test_case_41_duplicate_sends_hash_the_same():
    a = result_of("message", SEND, send_result(send_payload(0)))
    b = result_of("message", SEND, send_result(send_payload(1)))
    assert isinstance(a, str) and a == b
    # Before the fix (2026.2) the ids made every send distinct.
    assert result_of("message", SEND, send_result(send_payload(0)), P2) != result_of(
        "message", SEND, send_result(send_payload(1)), P2)


def test_case_42_broadcast_nested_ids_stripped():
    params = {"action": "broadcast", "text": "ping"}

    def broadcast(i):
        return {"results": [{"channel": "feishu", "ok": True, "result": {"messageId": f"om_{i}", "receipt": i}}]}

    assert result_of("message", params, send_result(broadcast(0))) == result_of("message", params, send_result(broadcast(1)))


def test_case_50_non_send_action_keeps_full_hash():
    params = {"action": "read", "target": "feishu:oc_chat"}
    a = result_of("message", params, send_result({"ok": True, "messageId": "m_0", "ts": 1000}))
    b = result_of("message", params, send_result({"ok": True, "messageId": "m_1", "ts": 2000}))
    assert isinstance(a, str) and a != b


def test_case_51_administrative_action_keeps_full_hash():
    params = {"action": "channel-create", "name": "support"}
    a = result_of("message", params, send_result({"ok": True, "messageId": "m_0", "timestamp": 1000}))
    b = result_of("message", params, send_result({"ok": True, "messageId": "m_1", "timestamp": 2000}))
    assert a != b


def test_case_52_nested_route_id_preserved():
    a = result_of("message", SEND, send_result({"ok": True, "messageId": "om_0", "route": {"id": "conv-A"}}))
    b = result_of("message", SEND, send_result({"ok": True, "messageId": "om_1", "route": {"id": "conv-B"}}))
    assert a != b


def test_case_53_loop_veto_keeps_block_sticky():
    history = History(30, True)
    for i in range(20):
        record(history, "message", SEND, f"message-{i}", result=send_result(send_payload(i)))
    assert detect(history, "message", SEND).level == "critical"
    veto = {"content": [{"type": "text", "text": "blocked"}], "details": {"status": "blocked", "deniedReason": "tool-loop"}}
    assert result_of("message", SEND, veto) is None  # the detector's own veto gets no hash
    record(history, "message", SEND, "message-veto", result=veto)
    d = detect(history, "message", SEND)
    assert (d.level, d.count) == ("critical", 20)


def test_case_54_plugin_veto_keeps_a_hash():
    params = {"action": "read", "target": "feishu:oc_chat"}
    veto = {"content": [{"type": "text", "text": "blocked"}],
            "details": {"status": "blocked", "deniedReason": "plugin-before-tool-call"}}
    history = History(30, True)
    for i in range(20):
        record(history, "message", params, f"veto-{i}", result=veto)
    assert isinstance(result_of("message", params, veto), str)
    assert detect(history, "message", params).level == "critical"


def test_case_55_message_object_id_stripped_but_conversation_id_kept():
    params = {"action": "send", "to": "feishu:chat-1", "content": "hello"}

    def obj(i, conv="loop-room"):
        return {"message": {"id": f"qa_{i}", "accountId": "default", "direction": "outbound",
                            "conversation": {"id": conv, "chatType": "channel"}, "senderId": "openclaw",
                            "text": "hello", "timestamp": 1_800_000_000_000 + i}}

    assert result_of("message", params, send_result(obj(0))) == result_of("message", params, send_result(obj(1)))
    assert result_of("message", params, send_result(obj(0, "a"))) != result_of("message", params, send_result(obj(0, "b")))


# --- E. Post-compaction guard ------------------------------------------------------------------


def test_case_e_dormant_when_never_armed():
    guard = CompactionGuard(3)
    assert guard.observe("read", "a", "r1") is None
    assert guard.remaining == 0


def test_case_e_armed_for_window_and_decrements():
    guard = CompactionGuard(3)
    guard.arm()
    assert guard.remaining == 3
    for expected, path in ((2, "/x"), (1, "/y"), (0, "/z")):
        assert guard.observe("read", path, "r") is None
        assert guard.remaining == expected


def test_case_e_aborts_on_window_size_th_identical_triple():
    guard = CompactionGuard(3)
    guard.arm()
    assert guard.observe("gateway", "g", "r1") is None
    assert guard.observe("gateway", "g", "r1") is None
    assert guard.observe("gateway", "g", "r1") == 3


def test_case_e_changing_result_or_args_no_abort():
    guard = CompactionGuard(3)
    guard.arm()
    assert [guard.observe("read", "/x", r) for r in ("r1", "r2", "r3")] == [None] * 3
    guard.arm()
    assert [guard.observe("read", a, "r1") for a in ("/a", "/b", "/c")] == [None] * 3


def test_case_e_no_abort_outside_window():
    guard = CompactionGuard(2)
    guard.arm()
    guard.observe("read", "/x", "r1")
    guard.observe("read", "/x", "r1")
    assert guard.remaining == 0
    assert guard.observe("read", "/x", "r1") is None


def test_case_e_rearm_restores_remaining():
    guard = CompactionGuard(2)
    guard.arm()
    guard.observe("read", "/x", "r1")
    guard.observe("read", "/x", "r1")
    guard.arm()
    assert guard.remaining == 2 and guard.window == []


def test_case_e_enabled_false_disables_guard():
    cfg = resolve({"enabled": False}, as_configured=True)
    assert cfg.guard_enabled is False
    assert resolve(None, as_configured=True).guard_enabled is True


def test_case_e_disarms_after_window_whatever_the_calls():
    guard = CompactionGuard(3)
    guard.arm()
    guard.observe("read", "/a", "r1")
    guard.observe("write", "/b", "r2")
    guard.observe("exec", "ls", "r3")
    assert guard.remaining == 0


# --- Config resolution ---------------------------------------------------------------------------


@pytest.mark.parametrize("value,expected", [
    (3, 3), (3.0, 3), (1e1, 10), (2.5, None), (0, None), (-1, None), ("5", None), (None, None),
    (True, None), (float("inf"), None), (float("nan"), None),
])
def test_config_integer_rule(value, expected):
    assert positive_int(value) == expected


def write_config(tmp_path, text):
    path = tmp_path / "openclaw.json"
    path.write_text(text, encoding="utf-8")
    return load(path)


def test_config_json5_document_integer_rule(tmp_path):
    doc = write_config(tmp_path, """{
      // JSON5: comments, unquoted keys, trailing commas
      tools: {
        loopDetection: {
          enabled: true,
          historySize: 3.0,
          warningThreshold: 1e1,
          criticalThreshold: 2.5,
          unknownToolThreshold: 0,
          globalCircuitBreakerThreshold: -1,
          postCompactionGuard: { windowSize: "5", },
        },
      },
    }""")
    cfg = resolve(loop_detection_block(doc, None), as_configured=True)
    assert cfg.enabled_in_config is True
    assert cfg.historySize == 3 and cfg.warningThreshold == 10
    assert cfg.criticalThreshold == 20 and cfg.unknownToolThreshold == 10
    assert cfg.globalCircuitBreakerThreshold == 30 and cfg.windowSize == 3
    assert cfg.clamped == ()


def test_config_null_falls_back(tmp_path):
    doc = write_config(tmp_path, "{tools: {loopDetection: {warningThreshold: null, historySize: null}}}")
    cfg = resolve(loop_detection_block(doc, None))
    assert (cfg.warningThreshold, cfg.historySize) == (10, 30)
    assert cfg.enabled_in_config is None


@pytest.mark.parametrize("block,expected,clamped", [
    ({"warningThreshold": 25}, (25, 26, 30), ("criticalThreshold",)),
    ({"warningThreshold": 30}, (30, 31, 32), ("criticalThreshold", "globalCircuitBreakerThreshold")),
    ({"criticalThreshold": 40}, (10, 40, 41), ("globalCircuitBreakerThreshold",)),
    ({"warningThreshold": 5, "criticalThreshold": 5, "globalCircuitBreakerThreshold": 3}, (5, 6, 7),
     ("criticalThreshold", "globalCircuitBreakerThreshold")),
    ({"warningThreshold": 2, "criticalThreshold": 4, "globalCircuitBreakerThreshold": 6}, (2, 4, 6), ()),
])
def test_config_clamping_order(block, expected, clamped):
    cfg = resolve(block)
    assert (cfg.warningThreshold, cfg.criticalThreshold, cfg.globalCircuitBreakerThreshold) == expected
    assert cfg.clamped == clamped
    assert cfg.to_json()["clamped"] == list(clamped)


def test_config_never_clamps_warning_history_unknown():
    cfg = resolve({"warningThreshold": 1, "historySize": 1, "unknownToolThreshold": 99})
    assert (cfg.warningThreshold, cfg.historySize, cfg.unknownToolThreshold) == (1, 1, 99)
    assert cfg.clamped == ()


AGENT_DOC = {
    "tools": {"loopDetection": {
        "enabled": True, "warningThreshold": 5, "historySize": 12,
        "detectors": {"pingPong": False}, "postCompactionGuard": {"windowSize": 4},
    }},
    "agents": {"list": [
        {"id": "main"},
        {"id": "ops", "tools": {"loopDetection": {
            "criticalThreshold": 8, "detectors": {"genericRepeat": False}, "postCompactionGuard": {}}}},
        {"id": "quiet", "tools": {"loopDetection": {"enabled": False}}},
    ]},
}


def test_config_per_agent_override_merges_field_by_field():
    cfg = ConfigRequest(document=AGENT_DOC, as_configured=True).resolve("ops")
    assert cfg.enabled_in_config is True
    assert (cfg.warningThreshold, cfg.criticalThreshold, cfg.historySize) == (5, 8, 12)
    assert cfg.detectors == {"genericRepeat": False, "knownPollNoProgress": True, "pingPong": False}
    assert cfg.windowSize == 4  # nested postCompactionGuard merged, not replaced


def test_config_agent_can_switch_enabled_off():
    cfg = ConfigRequest(document=AGENT_DOC, as_configured=True).resolve("quiet")
    assert cfg.enabled_in_config is False and cfg.detection_enabled is False and cfg.guard_enabled is False
    assert cfg.warningThreshold == 5


@pytest.mark.parametrize("agent", [None, "main", "nobody"])
def test_config_no_agent_block_uses_global(agent):
    cfg = ConfigRequest(document=AGENT_DOC).resolve(agent)
    assert (cfg.warningThreshold, cfg.criticalThreshold) == (5, 20)
    assert cfg.detectors["genericRepeat"] is True and cfg.detectors["pingPong"] is False


def test_config_no_global_block_uses_agent_block():
    doc = {"agents": {"list": [{"id": "ops", "tools": {"loopDetection": {"enabled": True, "warningThreshold": 3}}}]}}
    cfg = ConfigRequest(document=doc, as_configured=True).resolve("ops")
    assert cfg.enabled_in_config is True and cfg.warningThreshold == 3
    assert ConfigRequest(document=doc).resolve(None).warningThreshold == 10


def test_config_agent_flag_beats_session_agent():
    cfg = ConfigRequest(document=AGENT_DOC, agent="ops").resolve("main")
    assert cfg.criticalThreshold == 8


def test_config_overrides_before_clamping():
    # The file says critical 20; --warning-threshold 25 makes the resolved critical 26.
    cfg = resolve({"criticalThreshold": 20}, overrides={"warningThreshold": 25})
    assert (cfg.warningThreshold, cfg.criticalThreshold) == (25, 26)
    assert cfg.clamped == ("criticalThreshold",)
    cfg = resolve({"warningThreshold": 10}, overrides={"criticalThreshold": 5, "globalCircuitBreakerThreshold": 8})
    assert (cfg.criticalThreshold, cfg.globalCircuitBreakerThreshold) == (11, 12)
    assert cfg.clamped == ("criticalThreshold", "globalCircuitBreakerThreshold")


def test_config_overrides_detectors_and_window():
    cfg = resolve({"detectors": {"pingPong": False}, "postCompactionGuard": {"windowSize": 4}},
                  overrides={"detectors": {"pingPong": True, "genericRepeat": False}, "windowSize": 6})
    assert cfg.detectors == {"genericRepeat": False, "knownPollNoProgress": True, "pingPong": True}
    assert cfg.windowSize == 6


def test_config_request_overrides_apply_per_agent():
    cfg = ConfigRequest(document=AGENT_DOC, overrides={"warningThreshold": 9}).resolve("ops")
    assert (cfg.warningThreshold, cfg.criticalThreshold) == (9, 10)
    assert cfg.clamped == ("criticalThreshold",)


def test_config_enabled_semantics():
    assert resolve({"enabled": True}, as_configured=True).detection_enabled is True
    assert resolve({}, as_configured=True).detection_enabled is False
    assert resolve({}, as_configured=False).detection_enabled is True  # simulate as enabled
    assert resolve({"enabled": False}, as_configured=False).detection_enabled is True


def test_config_digest_helper_matches_argshash_suffix():
    assert ah("read", {"path": "/x"}) == "read:" + digest({"path": "/x"})
