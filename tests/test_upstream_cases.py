"""OpenClaw's own loop-detector tests (upstream-cases.md), replayed as transcripts.

Every sequence case is written as a realistic OpenClaw v3 JSONL session and run through the real
reader and replay (`analyze_path`, OpenClaw's `enabled` semantics, per-call trace). "D" (the
decision for the next call) is one more call appended without a result: its trace decision is the
upstream `detectToolCallLoop` answer. Replays also detect every earlier call, so where a case's
history would already have been blocked, the test says where the replay stops.

Hash-only and history-only cases (1-12, 36-42, 50-52 and the guard internals) are in
test_engine_internals.py.
"""

from __future__ import annotations

import json

import pytest

from transcript import Call, Transcript, analyze, decision, json_result, rejected, text_result, thrown

ENABLED = {"enabled": True}

# --- upstream fixtures -------------------------------------------------------------------------

READ_ARGS = {"path": "/same.txt"}


def read_same() -> tuple[str, dict, object]:
    return "read", dict(READ_ARGS), text_result("same output", {"ok": True})


def poll_args(session: str = "sess-1") -> dict:
    return {"action": "poll", "sessionId": session}


def poll_steady():
    return text_result("(no new output)\n\nProcess still running.", {"status": "running", "aggregated": "steady"})


def repeat(t: Transcript, tool: str, args, result, n: int) -> None:
    for _ in range(n):
        t.tool(tool, json.loads(json.dumps(args)), result)


def level(d) -> tuple | None:
    return None if d is None else (d["level"], d["detector"], d["count"])


def session(**kwargs) -> Transcript:
    t = Transcript(**kwargs)
    t.user("Check the workspace and keep me posted.")
    return t


# --- B. Decisions ------------------------------------------------------------------------------


def test_case_13_disabled_by_default_without_config(tmp_path):
    t = session()
    for _ in range(20):
        t.tool("read", {"path": "/same.txt"})
    t.tool("read", {"path": "/same.txt"})  # D
    r = analyze(t.write(tmp_path), None)
    assert decision(r) is None
    assert r.firings == [] and r.block is None
    assert r.config.detection_enabled is False


def test_case_13_disabled_when_config_omits_enabled(tmp_path):
    t = session()
    for _ in range(20):
        t.tool("read", {"path": "/same.txt"})
    t.tool("read", {"path": "/same.txt"})
    r = analyze(t.write(tmp_path), {"warningThreshold": 5})
    assert decision(r) is None and r.firings == []


def test_case_14_unique_calls_not_flagged(tmp_path):
    t = session()
    for i in range(15):
        t.tool("read", {"path": f"/file{i}.txt"})
    t.tool("read", {"path": "/new-file.txt"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert all(c["decision"] is None for c in r.calls)
    assert r.firings == []


def test_case_15_history_of_other_runs_ignored(tmp_path):
    t = Transcript()
    for _ in range(10):
        t.tool("read", {"path": "/same.txt"}, run_id="heartbeat-1")
    t.tool("read", {"path": "/same.txt"}, run_id="heartbeat-2")
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.calls[-1]["run"] == "heartbeat-2"
    assert decision(r) is None
    assert r.firings == []


def test_case_15_inferred_runs_from_user_messages(tmp_path):
    t = session()
    for _ in range(10):
        t.tool("read", {"path": "/same.txt"})
    t.reply("Nothing new yet.")
    t.user("HEARTBEAT")
    t.tool("read", {"path": "/same.txt"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.calls[0]["run"] != r.calls[-1]["run"]
    assert decision(r) is None


def test_case_15_session_wide_history_under_2026_2(tmp_path):
    t = Transcript()
    for _ in range(10):
        t.tool("read", {"path": "/same.txt"}, run_id="heartbeat-1")
    t.tool("read", {"path": "/same.txt"}, run_id="heartbeat-2")
    r = analyze(t.write(tmp_path), ENABLED, profile="openclaw-2026.2")
    assert level(decision(r)) == ("warning", "generic_repeat", 10)


def test_case_16_same_run_warns_generic_repeat(tmp_path):
    t = Transcript()
    for _ in range(10):
        t.tool("read", {"path": "/same.txt"}, run_id="run-a")
    t.tool("read", {"path": "/same.txt"}, run_id="run-a")
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("warning", "generic_repeat", 10)


def test_case_17_scoped_history_not_seen_by_unscoped_call(tmp_path):
    # The 10 calls carry an explicit runId; D carries none (its run is the inferred one).
    t = Transcript()
    for _ in range(10):
        t.tool("read", {"path": "/same.txt"}, run_id="scoped-run")
    t.tool("read", {"path": "/same.txt"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.calls[-1]["run"] != "scoped-run"
    assert decision(r) is None


def test_case_18_ten_calls_warn_generic_repeat(tmp_path):
    t = session()
    for _ in range(10):
        t.tool("read", {"path": "/same.txt"})
    t.tool("read", {"path": "/same.txt"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("warning", "generic_repeat", 10)
    assert [(f["level"], f["count"], f["call_index"]) for f in r.firings] == [("warning", 10, 11)]
    assert r.block is None


def test_case_19_identical_reads_block_generic_repeat(tmp_path):
    t = session()
    repeat(t, *read_same(), 20)
    t.tool("read", {"path": "/same.txt"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("critical", "generic_repeat", 20)
    assert r.block["detector"] == "generic_repeat"
    assert r.block["call_index"] == 21 and r.block["count"] == 20


def test_case_20_custom_thresholds_known_poll(tmp_path):
    config = {
        "enabled": True,
        "warningThreshold": 2,
        "criticalThreshold": 4,
        "detectors": {"genericRepeat": False, "knownPollNoProgress": True, "pingPong": False},
    }
    t = session()
    repeat(t, "process", poll_args(), poll_steady(), 4)
    t.tool("process", poll_args())
    r = analyze(t.write(tmp_path), config)
    assert level(decision(r, 2)) == ("warning", "known_poll_no_progress", 2)  # after 2
    assert level(decision(r)) == ("critical", "known_poll_no_progress", 4)  # after 4
    assert r.block["call_index"] == 5


def test_case_21_all_detectors_off_polls_not_stuck(tmp_path):
    config = {"enabled": True, "detectors": {"genericRepeat": False, "knownPollNoProgress": False, "pingPong": False}}
    t = session()
    repeat(t, "process", poll_args(), poll_steady(), 20)
    t.tool("process", poll_args())
    r = analyze(t.write(tmp_path), config)
    assert all(c["decision"] is None for c in r.calls)
    assert r.block is None


def test_case_22_ten_polls_warn_known_poll(tmp_path):
    t = session()
    repeat(t, "process", poll_args(), poll_steady(), 10)
    t.tool("process", poll_args())
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("warning", "known_poll_no_progress", 10)


def test_case_23_twenty_polls_block_known_poll(tmp_path):
    t = session()
    repeat(t, "process", poll_args(), poll_steady(), 20)
    t.tool("process", poll_args())
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("critical", "known_poll_no_progress", 20)
    assert r.block["detector"] == "known_poll_no_progress"


def test_case_24_progressing_polls_not_stuck(tmp_path):
    t = session()
    for i in range(25):
        t.tool("process", poll_args(), text_result(f"line {i}", {"status": "running", "aggregated": f"line {i}"}))
    t.tool("process", poll_args())
    r = analyze(t.write(tmp_path), ENABLED)
    assert all(c["decision"] is None for c in r.calls)
    assert r.block is None


def test_case_25_global_circuit_breaker_with_generic_off(tmp_path):
    t = session()
    repeat(t, *read_same(), 30)
    t.tool("read", {"path": "/same.txt"})
    r = analyze(t.write(tmp_path), {"enabled": True, "detectors": {"genericRepeat": False}})
    assert level(decision(r)) == ("critical", "global_circuit_breaker", 30)
    assert r.block["call_index"] == 31


def test_case_26_completed_exec_with_volatile_details_blocks(tmp_path):
    params = {"command": "grafana-api.sh datasources"}
    t = session()
    for i in range(20):
        t.tool("exec", dict(params), text_result("Loki\nPrometheus", {
            "status": "completed", "exitCode": 0, "durationMs": 100 + i, "cwd": f"/tmp/run-{i}",
            "aggregated": "Loki\nPrometheus"}))
    t.tool("exec", dict(params))
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("critical", "generic_repeat", 20)


def test_case_27_running_exec_with_volatile_session_blocks(tmp_path):
    params = {"command": "tail -f /var/log/app.log", "yieldMs": 1000}
    t = session()
    for i in range(20):
        t.tool("exec", dict(params), text_result(f"Command still running (session sess-{i}, pid {1000 + i})", {
            "status": "running", "sessionId": f"sess-{i}", "pid": 1000 + i, "startedAt": 1781254800000 + i,
            "cwd": f"/tmp/run-{i}", "tail": "(no new output)"}))
    t.tool("exec", dict(params))
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("critical", "generic_repeat", 20)


def test_case_27_bash_alias_is_exec(tmp_path):
    params = {"command": "tail -f /var/log/app.log"}
    t = session()
    for i in range(20):
        t.tool("Bash", dict(params), text_result(f"still running {i}", {"status": "running", "pid": i, "tail": ""}))
    t.tool("bash", dict(params))
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.calls[-1]["tool"] == "exec"
    assert level(decision(r)) == ("critical", "generic_repeat", 20)


def test_case_28_changing_exec_output_only_warns(tmp_path):
    t = session()
    for i in range(30):
        t.tool("exec", {"command": "date"}, text_result(f"tick {i}", {
            "status": "completed", "exitCode": 0, "durationMs": 100 + i, "aggregated": f"tick {i}"}))
    t.tool("exec", {"command": "date"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("warning", "generic_repeat", 30)
    assert r.block is None


def test_case_29_changing_exec_failures_only_warn(tmp_path):
    params = {"command": "openclaw flaky-helper"}
    t = session()
    for i in range(30):
        t.tool("exec", dict(params), text_result(f"Runtime failed before spawn: attempt {i}", {
            "status": "failed", "exitCode": None, "durationMs": 100 + i, "aggregated": ""}))
    t.tool("exec", dict(params))
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("warning", "generic_repeat", 30)
    assert r.block is None


def test_case_30_unknown_tool_below_threshold_not_stuck(tmp_path):
    t = session()
    for i in range(9):
        t.tool("exec", {"command": f"echo {i}"}, thrown("exec", "Tool exec not found"))
    t.tool("exec", {"command": "echo still allowed"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert all(c["decision"] is None for c in r.calls)
    assert all(c["result_hash"].startswith("error:") for c in r.calls[:-1])


UNKNOWN_TOOL_ATTEMPTS = [
    {"command": "ls"}, {"command": "pwd"}, {"input": "whoami"}, {"cmd": "env"}, {"shell": "bash -lc ls"},
    {"command": "printf ok"}, {"cwd": "/tmp", "command": "ls"}, {"args": ["ls", "/tmp"]},
    {"command": "find . -maxdepth 1"}, {"text": "run ls"}, {"command": "uname -a"}, {"command": "id"},
    {"command": "date"}, {"command": "ps"}, {"command": "df -h"}, {"command": "free -m"},
    {"command": "ls /tmp"}, {"command": "ls -la"}, {"command": "cat /etc/hostname"}, {"command": "echo done"},
]


def test_case_31_unknown_tool_repeat_blocks_despite_changing_args(tmp_path):
    t = session()
    for params in UNKNOWN_TOOL_ATTEMPTS:
        t.tool("exec", params, thrown("exec", "Tool exec not found"))
    t.tool("exec", {"command": "echo still looping"})
    r = analyze(t.write(tmp_path), ENABLED)
    # Upstream asks D after 20 (count 20*); the replay already blocks the 11th call, count 10.
    assert r.block["detector"] == "unknown_tool_repeat"
    assert (r.block["call_index"], r.block["count"]) == (11, 10)
    assert level(decision(r)) == ("critical", "unknown_tool_repeat", 10)


def test_case_31_agent_loop_rejections_never_reach_the_detector(tmp_path):
    # 5a: "Tool exec not found" written by the agent loop (isError, no details) is not evaluated.
    t = session()
    for params in UNKNOWN_TOOL_ATTEMPTS:
        t.tool("exec", params, rejected("Tool exec not found"))
    t.tool("exec", {"command": "echo still looping"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.block is None
    assert [c["evaluated"] for c in r.calls] == [False] * 20 + [True]


def alternate(t: Transcript, n: int, result=None) -> None:
    for i in range(n):
        if i % 2 == 0:
            t.tool("read", {"path": "/a.txt"}, result("read", i) if result else None)
        else:
            t.tool("list", {"dir": "/workspace"}, result("list", i) if result else None)


def test_case_32_ping_pong_warning(tmp_path):
    t = session()
    alternate(t, 9)
    t.tool("list", {"dir": "/workspace"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("warning", "ping_pong", 10)


def test_case_33_stable_ping_pong_blocks(tmp_path):
    t = session()
    alternate(t, 19, lambda tool, i: text_result(f"{tool} stable", {"ok": True}))
    t.tool("list", {"dir": "/workspace"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("critical", "ping_pong", 20)
    assert r.block["detector"] == "ping_pong" and r.block["call_index"] == 20


def test_case_34_progressing_ping_pong_only_warns(tmp_path):
    t = session()
    alternate(t, 19, lambda tool, i: text_result(f"{tool} {i}", {"ok": True}))
    t.tool("list", {"dir": "/workspace"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("warning", "ping_pong", 20)
    assert r.block is None


def test_case_35_broken_alternation_not_stuck(tmp_path):
    t = session()
    t.tool("read", {"path": "/a.txt"})
    t.tool("list", {"dir": "/workspace"})
    t.tool("read", {"path": "/a.txt"})
    t.tool("write", {"path": "/tmp/out.txt"})
    t.tool("list", {"dir": "/workspace"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert decision(r) is None


def test_case_36_large_process_log_result_gives_fixed_size_hash(tmp_path):
    t = session()
    t.tool("process", {"action": "log", "sessionId": "sess-big"},
           text_result("y" * 40_000, {"status": "running", "totalLines": 1, "totalChars": 40_000}))
    r = analyze(t.write(tmp_path), ENABLED)
    result_hash = r.calls[0]["result_hash"]
    assert isinstance(result_hash, str) and len(result_hash) == 64
    assert all(ch in "0123456789abcdef" for ch in result_hash)


def test_case_37_result_attaches_to_its_recorded_call(tmp_path):
    t = session()
    t.tool("gateway", {"action": "lookup", "path": "cron.enabled"}, text_result("same schema"))
    r = analyze(t.write(tmp_path), ENABLED)
    assert len(r.calls) == 1 and isinstance(r.calls[0]["result_hash"], str)


def test_case_40_empty_history_not_stuck(tmp_path):
    t = session()
    t.tool("tool", {"arg": 1})
    r = analyze(t.write(tmp_path), ENABLED)
    assert decision(r) is None


# --- C. Message sends with volatile ids (#89090) ---------------------------------------------


def send_payload(i: int) -> dict:
    return {"ok": True, "channel": "feishu", "chatId": "oc_chat", "runId": f"run_{i}", "messageId": f"om_{i}",
            "receipt": {"platformMessageId": f"p_{i}"}}


def sends(t: Transcript, tool: str, params: dict, payload, n: int = 20) -> None:
    for i in range(n):
        t.tool(tool, dict(params), json_result(payload(i)))


def after_sends(tmp_path, tool: str, params: dict, payload, profile: str = "openclaw-2026.6") -> tuple:
    """(level, detector, count) decided for the 21st identical send after 20 recorded ones."""
    t = session()
    sends(t, tool, params, payload)
    t.tool(tool, dict(params))
    return level(decision(analyze(t.write(tmp_path), ENABLED, profile=profile)))


SEND = {"action": "send", "target": "feishu:oc_chat", "text": "ping"}


def test_case_43_identical_sends_block(tmp_path):
    assert after_sends(tmp_path, "message", SEND, send_payload) == ("critical", "generic_repeat", 20)


def test_case_43_sends_never_block_under_2026_2(tmp_path):
    # Before the #89090 fix every send had a fresh hash: no streak, only the repeat warning.
    assert after_sends(tmp_path, "message", SEND, send_payload, profile="openclaw-2026.2") == ("warning", "generic_repeat", 20)


def test_case_44_sessions_send_with_fresh_run_id_blocks(tmp_path):
    params = {"sessionKey": "agent:main:peer", "text": "ping"}
    assert after_sends(tmp_path, "sessions_send", params, lambda i: {"ok": True, "runId": f"run_{i}"}) == ("critical", "generic_repeat", 20)


def test_case_45_provider_send_tool_blocks(tmp_path):
    # Upstream mocks `telegram` as a send tool; the real telegram plugin's send is
    # `{action: "sendMessage", to}` (extractToolSend), which is what a transcript holds.
    params = {"action": "sendMessage", "to": "telegram:123", "text": "ping"}
    assert after_sends(tmp_path, "telegram", params, send_payload) == ("critical", "generic_repeat", 20)


def test_case_46_reply_blocks(tmp_path):
    params = {"action": "reply", "target": "feishu:oc_chat", "text": "ping"}
    assert after_sends(tmp_path, "message", params, send_payload) == ("critical", "generic_repeat", 20)


def test_case_47_upload_file_with_fresh_file_id_blocks(tmp_path):
    params = {"action": "upload-file", "target": "feishu:oc_chat", "media": "img.png"}
    payload = lambda i: {"ok": True, "channel": "feishu", "fileId": f"f_{i}", "messageId": f"om_{i}"}  # noqa: E731
    assert after_sends(tmp_path, "message", params, payload) == ("critical", "generic_repeat", 20)


def test_case_48_message_poll_with_fresh_poll_id_blocks(tmp_path):
    params = {"action": "poll", "target": "tg:chat-1", "question": "?"}
    payload = lambda i: {"ok": True, "channel": "telegram", "messageId": f"om_{i}", "chatId": "c1", "pollId": f"pl_{i}"}  # noqa: E731
    assert after_sends(tmp_path, "message", params, payload) == ("critical", "generic_repeat", 20)


def test_case_49_distinct_messages_not_stuck(tmp_path):
    t = session()
    for i in range(20):
        t.tool("message", {"action": "send", "target": "feishu:oc_chat", "text": f"line {i}"}, json_result(send_payload(i)))
    t.tool("message", {"action": "send", "target": "feishu:oc_chat", "text": "line final"})
    r = analyze(t.write(tmp_path), ENABLED)
    assert all(c["decision"] is None for c in r.calls)


def test_case_53_loop_veto_in_recording_does_not_reset(tmp_path):
    # A recording where OpenClaw blocked the 21st send: its veto result, then the model sends again.
    t = session()
    sends(t, "message", SEND, send_payload)
    t.tool("message", dict(SEND), text_result(
        "CRITICAL: Called message with identical arguments and identical outcomes 20 times.",
        {"status": "blocked", "deniedReason": "tool-loop", "reason": "CRITICAL: ..."}))
    t.tool("message", dict(SEND))
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.block["detector"] == "generic_repeat"
    assert (r.block["call_index"], r.block["count"]) == (21, 20)


def test_case_54_repeated_plugin_vetoes_block(tmp_path):
    params = {"action": "read", "target": "feishu:oc_chat"}
    t = session()
    for _ in range(20):
        t.tool("message", dict(params), text_result(
            "blocked", {"status": "blocked", "deniedReason": "plugin-before-tool-call"}))
    t.tool("message", dict(params))
    r = analyze(t.write(tmp_path), ENABLED)
    assert level(decision(r)) == ("critical", "generic_repeat", 20)


def message_object(i: int, conversation: str = "loop-room") -> dict:
    return {"message": {"id": f"qa_{i}", "accountId": "default", "direction": "outbound",
                        "conversation": {"id": conversation, "chatType": "channel"}, "senderId": "openclaw",
                        "text": "hello", "timestamp": 1_800_000_000_000 + i}}


def test_case_55_message_object_bare_id_stripped_blocks(tmp_path):
    params = {"action": "send", "to": "feishu:chat-1", "content": "hello"}
    assert after_sends(tmp_path, "message", params, message_object) == ("critical", "generic_repeat", 20)


def test_case_55_changing_conversation_id_not_critical(tmp_path):
    params = {"action": "send", "to": "feishu:chat-1", "content": "hello"}
    t = session()
    sends(t, "message", params, lambda i: {"message": {"id": f"qa_{i}", "direction": "outbound",
                                                       "conversation": {"id": f"loop-room-{i}", "chatType": "channel"},
                                                       "text": "hello"}})
    t.tool("message", dict(params))
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.block is None
    assert level(decision(r)) == ("warning", "generic_repeat", 20)


# --- D. End to end through the caller ----------------------------------------------------------


def test_case_d_poll_loop_21st_call_blocked(tmp_path):
    t = session()
    repeat(t, "process", poll_args(), poll_steady(), 21)
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.block["call_index"] == 21 and r.block["detector"] == "known_poll_no_progress"
    assert r.block["count"] == 20 and r.block["calls_after"] == 1
    critical = [f for f in r.firings if f["level"] == "critical"]
    assert [(f["detector"], f["count"], f["tool"]) for f in critical] == [("known_poll_no_progress", 20, "process")]


def test_case_d_enabled_false_all_pass(tmp_path):
    t = session()
    repeat(t, "process", poll_args("sess-off"), poll_steady(), 21)
    r = analyze(t.write(tmp_path), {"enabled": False})
    assert r.block is None and r.firings == []
    assert all(c["decision"] is None and c["result_hash"] is not None for c in r.calls)


def test_case_d_progressing_polls_pass(tmp_path):
    t = session()
    for i in range(25):
        t.tool("process", poll_args("sess-2"), text_result(f"output poll-progress-{i}", {
            "status": "running", "aggregated": f"output poll-progress-{i}"}))
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.block is None and r.firings == []


def test_case_d_generic_reads_25_pass_under_2026_2(tmp_path):
    t = session()
    repeat(t, "read", {"path": "/tmp/file"}, text_result("same output", {"ok": True}), 25)
    r = analyze(t.write(tmp_path), ENABLED, profile="openclaw-2026.2")
    assert r.block is None
    assert {f["level"] for f in r.firings} == {"warning"}


def test_case_d_generic_reads_21st_blocked_under_2026_6(tmp_path):
    t = session()
    repeat(t, "read", {"path": "/tmp/file"}, text_result("same output", {"ok": True}), 25)
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.block["call_index"] == 21 and r.block["detector"] == "generic_repeat"


def test_case_d_31st_read_blocked_by_global_breaker_under_2026_2(tmp_path):
    t = session()
    repeat(t, "read", {"path": "/tmp/file"}, text_result("same output", {"ok": True}), 31)
    r = analyze(t.write(tmp_path), ENABLED, profile="openclaw-2026.2")
    assert r.block["detector"] == "global_circuit_breaker"
    assert (r.block["call_index"], r.block["count"]) == (31, 30)


def test_case_d_warning_events_once_per_decade(tmp_path):
    t = session()
    repeat(t, "read", {"path": "/tmp/file"}, text_result("same output", {"ok": True}), 21)
    r = analyze(t.write(tmp_path), ENABLED, profile="openclaw-2026.2")
    generic = [(f["level"], f["count"]) for f in r.firings if f["detector"] == "generic_repeat"]
    assert generic == [("warning", 10), ("warning", 20)]
    # Every call from the 11th on was a warning decision; only two were emitted.
    assert sum(1 for c in r.calls if c["decision"]) == 11


def test_case_d_warning_then_critical_events_under_2026_6(tmp_path):
    t = session()
    repeat(t, "read", {"path": "/tmp/file"}, text_result("same output", {"ok": True}), 21)
    r = analyze(t.write(tmp_path), ENABLED)
    generic = [(f["level"], f["count"]) for f in r.firings if f["detector"] == "generic_repeat"]
    assert generic == [("warning", 10), ("critical", 20)]


def pingpong_result(progress: bool):
    if progress:
        return lambda tool, i: text_result(f"{tool} {tool}-{i}", {"ok": True})
    return lambda tool, i: text_result(f"{tool} ok", {"ok": True})


def test_case_d_ping_pong_exactly_one_warning(tmp_path):
    t = session()
    alternate(t, 9, pingpong_result(False))
    t.tool("list", {"dir": "/workspace"}, text_result("list ok", {"ok": True}))
    t.tool("read", {"path": "/a.txt"}, text_result("read ok", {"ok": True}))
    t.tool("list", {"dir": "/workspace"}, text_result("list ok", {"ok": True}))
    r = analyze(t.write(tmp_path), ENABLED)
    warns = [f for f in r.firings if f["level"] == "warning" and f["detector"] == "ping_pong"]
    assert [(f["count"], f["tool"], f["call_index"]) for f in warns] == [(10, "list", 10)]
    assert r.block is None


def test_case_d_ping_pong_blocked_at_critical(tmp_path):
    t = session()
    alternate(t, 19, pingpong_result(False))
    t.tool("list", {"dir": "/workspace"}, text_result("list ok", {"ok": True}))
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.block["detector"] == "ping_pong"
    assert (r.block["call_index"], r.block["count"], r.block["tool"]) == (20, 20, "list")
    assert r.firings[-1]["level"] == "critical" and r.firings[-1]["detector"] == "ping_pong"


def test_case_d_ping_pong_with_progress_warns_only(tmp_path):
    t = session()
    alternate(t, 19, pingpong_result(True))
    t.tool("list", {"dir": "/workspace"}, text_result("list list-19", {"ok": True}))
    r = analyze(t.write(tmp_path), ENABLED)
    assert r.block is None
    assert not [f for f in r.firings if f["level"] == "critical"]
    assert [f for f in r.firings if f["level"] == "warning" and f["detector"] == "ping_pong"]


# --- E. Post-compaction guard ------------------------------------------------------------------

GATEWAY = {"action": "lookup", "path": "x"}


def test_case_e_not_armed_never_aborts(tmp_path):
    t = session()
    repeat(t, "gateway", GATEWAY, text_result("r1"), 5)
    r = analyze(t.write(tmp_path), None)
    assert r.block is None


def test_case_e_three_identical_triples_abort_on_third(tmp_path):
    t = session()
    t.compaction()
    repeat(t, "gateway", GATEWAY, text_result("r1"), 4)
    r = analyze(t.write(tmp_path), None)  # the guard runs even without config
    assert r.block["detector"] == "compaction_loop_persisted"
    assert (r.block["call_index"], r.block["count"]) == (3, 3)
    assert r.block["calls_after"] == 1  # the 3rd call ran; only the 4th is saved


def test_case_e_changing_result_no_abort(tmp_path):
    t = session()
    t.compaction()
    for i in range(3):
        t.tool("read", {"path": "/x"}, text_result(f"r{i}"))
    r = analyze(t.write(tmp_path), None)
    assert r.block is None


def test_case_e_changing_args_no_abort(tmp_path):
    t = session()
    t.compaction()
    for p in ("/a", "/b", "/c"):
        t.tool("read", {"path": p}, text_result("r1"))
    r = analyze(t.write(tmp_path), None)
    assert r.block is None


def test_case_e_identical_calls_after_window_closed_no_abort(tmp_path):
    t = session()
    t.compaction()
    t.tool("read", {"path": "/x"}, text_result("r1"))
    t.tool("write", {"path": "/y"}, text_result("r2"))
    repeat(t, "read", {"path": "/x"}, text_result("r1"), 3)
    r = analyze(t.write(tmp_path), {"postCompactionGuard": {"windowSize": 2}})
    assert r.config.windowSize == 2
    assert r.block is None


def test_case_e_rearming_restores_the_window(tmp_path):
    t = session()
    t.compaction()
    t.tool("read", {"path": "/x"}, text_result("r1"))
    t.tool("write", {"path": "/y"}, text_result("r2"))
    t.compaction()
    repeat(t, "read", {"path": "/x"}, text_result("r1"), 2)
    r = analyze(t.write(tmp_path), {"postCompactionGuard": {"windowSize": 2}})
    assert r.block["detector"] == "compaction_loop_persisted"
    assert (r.block["call_index"], r.block["count"]) == (4, 2)


def test_case_e_enabled_false_never_aborts(tmp_path):
    t = session()
    t.compaction()
    repeat(t, "gateway", {"x": 1}, text_result("r1"), 3)
    r = analyze(t.write(tmp_path), {"enabled": False})
    assert r.block is None


def test_case_e_window_disarms_after_window_size_calls(tmp_path):
    t = session()
    t.compaction()
    t.tool("read", {"path": "/a"}, text_result("r1"))
    t.tool("write", {"path": "/b"}, text_result("r2"))
    t.tool("exec", {"cmd": "ls"}, text_result("r3"))
    repeat(t, "read", {"path": "/a"}, text_result("r1"), 3)
    r = analyze(t.write(tmp_path), None)
    assert r.block is None


@pytest.mark.parametrize("profile", ["openclaw-2026.6", "openclaw-2026.2"])
def test_case_e_guard_aborts_with_detection_enabled_too(tmp_path, profile):
    t = session()
    t.compaction()
    repeat(t, "gateway", GATEWAY, text_result("r1"), 3)
    r = analyze(t.write(tmp_path), ENABLED, profile=profile)
    assert r.block["detector"] == "compaction_loop_persisted"


# --- Config, end to end: the resolved config a replay runs with ---------------------------------

AGENT_DOC = {
    "tools": {"loopDetection": {"enabled": True, "detectors": {"pingPong": False}}},
    "agents": {"list": [{"id": "ops", "tools": {"loopDetection": {"warningThreshold": 3, "criticalThreshold": 5}}}]},
}


def reads(n: int) -> Transcript:
    t = session()
    repeat(t, *read_same(), n)
    return t


def test_config_per_agent_override_from_session_folder(tmp_path):
    ops = reads(8).write(tmp_path / "agents" / "ops" / "sessions", "s1.jsonl")
    main = reads(8).write(tmp_path / "agents" / "main" / "sessions", "s1.jsonl")
    r_ops = analyze(ops, document=AGENT_DOC)
    assert (r_ops.config.warningThreshold, r_ops.config.criticalThreshold) == (3, 5)
    assert r_ops.config.detectors["pingPong"] is False  # global field kept under the agent override
    assert r_ops.block["call_index"] == 6 and r_ops.block["count"] == 5
    r_main = analyze(main, document=AGENT_DOC)
    assert r_main.config.warningThreshold == 10 and r_main.block is None


def test_config_agent_option_beats_session_folder(tmp_path):
    path = reads(8).write(tmp_path / "agents" / "main" / "sessions", "s1.jsonl")
    assert analyze(path, document=AGENT_DOC, agent="ops").block["call_index"] == 6


def test_config_overrides_apply_before_clamping(tmp_path):
    # File: critical 20. What-if warning 25: the resolved critical is 26, reported as clamped.
    path = reads(30).write(tmp_path)
    r = analyze(path, {"enabled": True, "criticalThreshold": 20}, overrides={"warningThreshold": 25})
    assert (r.config.warningThreshold, r.config.criticalThreshold, r.config.globalCircuitBreakerThreshold) == (25, 26, 30)
    assert r.config.to_json()["clamped"] == ["criticalThreshold"]
    assert r.block["call_index"] == 27 and r.block["count"] == 26


def test_config_json5_integer_rule_end_to_end(tmp_path):
    from loopscan.configfile import load

    config = tmp_path / "openclaw.json"
    config.write_text("{tools: {loopDetection: {enabled: true, warningThreshold: 2.0, criticalThreshold: 3.5,"
                      " historySize: 1e1,},},}  // JSON5\n", encoding="utf-8")
    r = analyze(reads(25).write(tmp_path), document=load(config))
    assert (r.config.warningThreshold, r.config.criticalThreshold, r.config.historySize) == (2, 20, 10)
    # historySize 10 caps every streak at 10: the generic critical (20) can never fire.
    assert r.block is None
    assert max(c["decision"]["count"] for c in r.calls if c["decision"]) == 10
