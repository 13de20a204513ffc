"""The OpenClaw / pi JSONL reader on hand-written fixtures: what each format version, entry type and
edge case reads as, and how every bad input of quality.md is handled (message naming file and line,
nothing lost, nothing modified, `ReadError` only when nothing can be read).

fixtures/formats/  one small realistic transcript per version / entry type / edge case
fixtures/bad/      one file per bad-input case; the ones that cannot be written by hand (10,000-level
                   nesting, a 200 MB line, truncated gzip) are generated here in tmp_path.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from loopscan.analysis.session import analyze_path
from loopscan.engine.config import ConfigRequest
from loopscan.engine.identity import normalize_tool_name
from loopscan.engine.replay import Replay
from loopscan.events import (
    Compaction,
    ModelChange,
    ModelTurn,
    PromptError,
    SessionMeta,
    ToolResult,
    UserMessage,
)
from loopscan.readers import ReadError, open_events

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "fixtures" / "formats"
BAD = ROOT / "fixtures" / "bad"
FORMAT_FILES = sorted(p for p in FORMATS.iterdir() if p.is_file())


# --- helpers ------------------------------------------------------------------------------------


def read(path: Path | str):
    """All events and the diagnostics of one file."""
    with open_events(str(path)) as (events, diag):
        evs = list(events)
    return evs, diag


def of(evs, cls):
    return [e for e in evs if isinstance(e, cls)]


def calls(evs):
    return [c for t in of(evs, ModelTurn) for c in t.calls]


def raw_lines(path: Path) -> list[dict]:
    """The file parsed independently (json module), by 1-based line number."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def note_at(diag, path: Path | str, line: int | None, text: str) -> str:
    """The note naming `path` and `line` that contains `text` (fails when there is none)."""
    where = f"{path}:{line}: " if line else f"{path}: "
    found = [n for n in diag.notes if n.startswith(where) and text in n]
    assert found, f"no note {where!r}…{text!r} in {diag.notes}"
    return found[0]


def analyze(path: Path | str, trace: bool = False):
    result = analyze_path(str(path), trace=trace)
    json.dumps(result.to_json())  # the report is plain JSON
    return result


def gzip_bytes(data: bytes) -> bytes:
    """Deterministic gzip (mtime=0, no file name), so no binary fixture needs committing."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    return buf.getvalue()


# --- every format fixture, checked against an independent parse of the file ---------------------


@pytest.mark.parametrize("path", FORMAT_FILES, ids=lambda p: p.name)
def test_format_fixture_matches_an_independent_parse(path):
    before = snapshot(path)
    evs, diag = read(path)
    raw = raw_lines(path)

    assert diag.bad_lines == 0 and diag.skipped_entries == 0
    assert isinstance(evs[0], SessionMeta) and evs[0].format == "openclaw"
    assert evs[0].session_id == raw[0]["id"] and evs[0].timestamp == raw[0]["timestamp"]
    lines = [getattr(e, "line", 1) for e in evs]
    assert lines == sorted(lines) and len(set(lines)) == len(lines), "events in file order, one per entry"

    messages = [(n, e["message"]) for n, e in enumerate(raw, 1) if e.get("type") == "message"]
    assistants = [(n, m) for n, m in messages if m["role"] == "assistant"]
    turns = of(evs, ModelTurn)
    assert [t.line for t in turns] == [n for n, _ in assistants]
    for turn, (_, m) in zip(turns, assistants):
        u = m["usage"]
        assert (turn.input, turn.output, turn.cache_read, turn.cache_write) == (
            u["input"], u["output"], u["cacheRead"], u["cacheWrite"])
        assert turn.timestamp == pytest.approx(m["timestamp"] / 1000)
        assert turn.model == m["model"] and turn.provider == m["provider"]
        assert turn.stop_reason == m["stopReason"] and turn.error_message == m.get("errorMessage")
        assert turn.is_model_output == (m["model"] not in ("delivery-mirror", "gateway-injected", "acp-runtime"))

    blocks = [(n, b) for n, m in assistants if isinstance(m["content"], list)
              for b in m["content"] if b["type"] == "toolCall"]
    got = calls(evs)
    assert [c.index for c in got] == list(range(1, len(blocks) + 1)), "1-based, file order"
    for call, (n, b) in zip(got, blocks):
        assert (call.line, call.id, call.raw_name, call.arguments) == (n, b["id"], b["name"], b["arguments"])
        assert call.tool == normalize_tool_name(b["name"])

    results = [(n, m) for n, m in messages if m["role"] == "toolResult"]
    assert [(r.line, r.call_id, r.tool_name) for r in of(evs, ToolResult)] == [
        (n, m["toolCallId"], m["toolName"]) for n, m in results]
    assert sorted(r.call_id for r in of(evs, ToolResult)) == sorted(c.id for c in got), "every call answered"

    users = [n for n, m in messages if m["role"] == "user"]
    assert [u.line for u in of(evs, UserMessage)] == users

    summary = analyze(path).summary
    model_turns = [t for t in turns if t.is_model_output]
    assert summary["assistant_turns"] == len(model_turns)
    assert summary["tool_calls"] == len(got)
    assert summary["prompt_tokens"] == sum(t.input + t.cache_read + t.cache_write for t in model_turns)
    assert summary["output_tokens"] == sum(t.output for t in model_turns)
    assert summary["calls_without_result"] == summary["results_without_call"] == 0
    assert summary["bad_lines"] == 0
    assert snapshot(path) == before, "the input is never modified"


@pytest.mark.parametrize("path", FORMAT_FILES, ids=lambda p: p.name)
def test_results_match_their_call_by_tool_call_id(path):
    """Fed through the replay, each result comes back with the call whose id it names."""
    evs, _ = read(path)
    replay = Replay(ConfigRequest().resolve())
    matched = 0
    for event in evs:
        state = replay.feed(event)
        if isinstance(event, ToolResult):
            assert state is not None and state.call.id == event.call_id
            assert state.call.tool == normalize_tool_name(event.tool_name)
            matched += 1
    replay.finish()
    assert matched == len(calls(evs)) and replay.calls_without_result == 0


# --- each format fixture's own facts ------------------------------------------------------------


def test_v1_pi_header_without_version_ids_or_total_tokens():
    path = FORMATS / "v1-pi-header-no-ids.jsonl"
    evs, diag = read(path)
    meta = evs[0]
    assert (meta.format_version, meta.session_id, meta.cwd) == (
        1, "6f1c2a9e-3b7d-4e21-8c55-0a9d7e4b1f30", "/home/dev/projects/notes-app")
    assert diag.notes == []
    assert [(c.index, c.tool, c.raw_name, c.arguments) for c in calls(evs)] == [
        (1, "exec", "bash", {"command": "ls src"}), (2, "exec", "bash", {"command": "wc -l src/store.ts"})]
    assert [(c.tokens_before, c.from_hook) for c in of(evs, Compaction)] == [(2492, False)]
    assert [u.run for u in of(evs, UserMessage)] == ["run-1", "run-2"]
    assert [c.run for c in calls(evs)] == ["run-1", "run-2"]
    s = analyze(path).summary
    assert (s["input_tokens"], s["output_tokens"], s["cache_read_tokens"], s["total_tokens"]) == (3773, 103, 0, 3876)
    assert (s["runs"], s["compactions"], s["peak_context_tokens"], s["final_state"]) == (2, 1, 1251, "completed")


def test_v2_tree_ids_model_change_and_hook_message():
    path = FORMATS / "v2-tree-ids.jsonl"
    evs, diag = read(path)
    assert evs[0].format_version == 2
    assert of(evs, ModelChange) == [ModelChange(2, evs[1].timestamp, "openai", "gpt-5.1-codex")]
    assert 4 not in [getattr(e, "line", None) for e in evs], "the v2 hookMessage role is read quietly"
    assert diag.notes == [] and diag.skipped_entries == 0
    assert [(c.tool, c.arguments) for c in calls(evs)] == [("read", {"path": "package.json"})]
    assert of(evs, ToolResult)[0].details is None
    assert of(evs, Compaction)[0].tokens_before == 5932
    s = analyze(path).summary
    assert (s["prompt_tokens"], s["cache_read_tokens"], s["output_tokens"]) == (6744, 4224, 80)
    assert analyze(path).session["models"] == ["gpt-5.1-codex"]


def test_v3_every_entry_type():
    path = FORMATS / "v3-all-entry-types.jsonl"
    evs, diag = read(path)
    assert [(type(e).__name__, getattr(e, "line", 1)) for e in evs] == [
        ("SessionMeta", 1), ("ModelChange", 2),
        # 3 thinking_level_change, 4 model-snapshot, 5 bootstrap-context, 6 custom_message: no events
        ("UserMessage", 7), ("ModelTurn", 8), ("ToolResult", 9),
        # 10 openclaw.cache-ttl
        ("ModelTurn", 11),
        # 12 label, 13 session_info
        ("Compaction", 14),
        # 15 branch_summary
        ("UserMessage", 16), ("PromptError", 17), ("UserMessage", 18), ("ModelTurn", 19),
    ]
    assert diag.notes == [] and diag.skipped_entries == 0 and diag.repaired_fields == 0
    assert evs[0].format_version == 3 and evs[0].cwd == "/home/node/.openclaw/workspace"
    assert of(evs, ModelChange)[0].model == "claude-opus-4-5"
    (comp,) = of(evs, Compaction)
    assert (comp.tokens_before, comp.from_hook) == (48211, True)
    (err,) = of(evs, PromptError)
    assert (err.error, err.provider, err.model) == ("request timed out", "anthropic", "claude-opus-4-5")
    assert err.run == "run-2"  # the inferred run; data.runId "c0ffee00-run3" is not used (see the report)
    first = of(evs, ModelTurn)[0]
    assert first.cost == pytest.approx(0.0209925)
    assert [(c.tool, c.arguments["command"]) for c in first.calls] == [("exec", "git status --short")]
    result = of(evs, ToolResult)[0]
    assert result.texts == (" M README.md\n",) and result.details["exitCode"] == 0 and result.has_content

    r = analyze(path)
    s = r.summary
    assert (s["prompt_errors"], s["compactions"], s["runs"], s["assistant_turns"]) == (1, 1, 3, 3)
    assert (s["prompt_tokens"], s["output_tokens"], s["peak_context_tokens"]) == (41752, 138, 16180)
    assert s["cost_usd"] == pytest.approx(0.0300125, abs=1e-6)
    assert r.failures == [{"kind": "prompt_error", "call_or_turn": None,
                           "timestamp": "2026-03-10T09:11:41.630Z", "message": "request timed out"}]
    assert r.session["started_at"] == "2026-03-10T09:00:00.000Z"


def test_v3_gzip_copy_reads_the_same(tmp_path):
    plain = FORMATS / "v3-all-entry-types.jsonl"
    data = gzip_bytes(plain.read_bytes())
    assert data == gzip_bytes(plain.read_bytes()), "deterministic"
    gz = tmp_path / "v3-all-entry-types.jsonl.gz"
    gz.write_bytes(data)
    assert read(gz)[0] == read(plain)[0]
    assert analyze(gz).summary == analyze(plain).summary
    assert read(gz)[1].notes == []


def test_format_is_detected_from_content_not_name(tmp_path):
    odd = tmp_path / "notes.txt"
    shutil.copy(FORMATS / "v3-all-entry-types.jsonl", odd)
    assert read(odd)[0] == read(FORMATS / "v3-all-entry-types.jsonl")[0]
    hidden_gz = tmp_path / "plain-name.jsonl"
    hidden_gz.write_bytes(gzip_bytes((FORMATS / "v2-tree-ids.jsonl").read_bytes()))
    assert read(hidden_gz)[0] == read(FORMATS / "v2-tree-ids.jsonl")[0]


def test_stdin_is_read_when_path_is_dash(monkeypatch):
    data = gzip_bytes((FORMATS / "parallel-tool-calls.jsonl").read_bytes())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    evs, diag = read("-")
    assert [c.id for c in calls(evs)] == ["toolu_01Par1", "toolu_01Par2", "toolu_01Par3", "toolu_01Par4"]
    assert diag.notes == []


def test_v4_header_and_run_ids_are_used():
    path = FORMATS / "v4-runid-lines.jsonl"
    evs, diag = read(path)
    assert evs[0].format_version == 4
    note_at(diag, path, 1, "session format version 4: read as version 3")
    assert diag.bad_lines == 0 and len(diag.notes) == 1
    r1, r2 = "run_01JZ8Q4T7M2X9K", "run_01JZ8QB0V3N6PD"
    assert [u.run for u in of(evs, UserMessage)] == [r1, r2]
    assert [t.run for t in of(evs, ModelTurn)] == [r1, r1, r2, r2]
    assert [c.run for c in calls(evs)] == [r1, r2]
    s = analyze(path).summary
    assert (s["runs"], s["tool_calls"], s["assistant_turns"]) == (2, 2, 4)


def test_content_as_a_plain_string():
    path = FORMATS / "content-as-string.jsonl"
    evs, diag = read(path)
    assert diag.notes == []
    assert [u.line for u in of(evs, UserMessage)] == [2]
    (result,) = of(evs, ToolResult)
    assert (result.call_id, result.texts, result.has_content) == ("call_Pg01", (), False)
    assert result.details["aggregated"] == "200"
    last = of(evs, ModelTurn)[-1]
    assert last.calls == () and (last.input, last.output, last.cache_read) == (30, 12, 2400)
    s = analyze(path).summary
    assert (s["tool_calls"], s["tool_errors"], s["assistant_turns"], s["final_state"]) == (1, 0, 2, "completed")


def test_parallel_tool_calls_keep_block_order_and_match_by_id():
    path = FORMATS / "parallel-tool-calls.jsonl"
    evs, diag = read(path)
    batch = of(evs, ModelTurn)[0]
    assert [(c.index, c.id, c.tool, c.raw_name) for c in batch.calls] == [
        (1, "toolu_01Par1", "read", "read"),
        (2, "toolu_01Par2", "exec", "Bash"),  # `Bash` normalised to `exec`
        (3, "toolu_01Par3", "web_fetch", "web_fetch"),
    ]
    assert {c.line for c in batch.calls} == {3}
    assert [r.call_id for r in of(evs, ToolResult)] == ["toolu_01Par3", "toolu_01Par1", "toolu_01Par2", "toolu_01Par4"]
    assert [c.index for c in calls(evs)] == [1, 2, 3, 4], "indices carry on across turns"
    r = analyze(path, trace=True)
    assert [(c["index"], c["tool_call_id"], c["tool"]) for c in r.calls] == [
        (1, "toolu_01Par1", "read"), (2, "toolu_01Par2", "exec"), (3, "toolu_01Par3", "web_fetch"),
        (4, "toolu_01Par4", "exec")]
    assert all(c["result_hash"] for c in r.calls)
    assert (r.summary["calls_without_result"], r.summary["results_without_call"]) == (0, 0)
    assert diag.notes == []


def test_delivery_mirror_gateway_injected_and_acp_runtime_are_not_model_output():
    path = FORMATS / "delivery-mirror-and-gateway-injected.jsonl"
    evs, _ = read(path)
    assert [(t.model, t.is_model_output) for t in of(evs, ModelTurn)] == [
        ("claude-sonnet-4-5", True), ("delivery-mirror", False), ("claude-sonnet-4-5", True),
        ("delivery-mirror", False), ("claude-sonnet-4-5", True), ("gateway-injected", False),
        ("acp-runtime", False)]
    r = analyze(path)
    s = r.summary
    assert s["assistant_turns"] == 3
    assert r.session["models"] == ["claude-sonnet-4-5"]
    assert (s["prompt_tokens"], s["output_tokens"], s["peak_context_tokens"]) == (12800, 300, 6500)
    assert s["cost_usd"] == pytest.approx(0.016125)
    assert [t["turn"] for t in r.tokens] == [1, 2]
    # the run ended aborted: the gateway-injected "Stopped." and acp-runtime lines after it do not
    # turn it into "completed"
    assert (s["final_state"], s["aborted_turns"], s["turn_failures"]) == ("aborted", 1, 0)


def test_error_retries_count_as_failures_and_do_not_pull_the_context_to_zero():
    path = FORMATS / "error-retries.jsonl"
    evs, _ = read(path)
    assert [t.stop_reason for t in of(evs, ModelTurn)] == ["error", "error", "error", "stop", "error"]
    assert all(t.prompt_tokens == 0 for t in of(evs, ModelTurn) if t.stop_reason == "error")
    r = analyze(path)
    s = r.summary
    assert (s["turn_failures"], s["assistant_turns"], s["final_state"], s["runs"]) == (4, 5, "error", 2)
    assert s["peak_context_tokens"] == s["prompt_tokens"] == 16480
    assert [t["context_tokens"] for t in r.tokens] == [16480]
    assert [(f["kind"], f["call_or_turn"], f["message"]) for f in r.failures] == [
        ("turn_error", 1, "Connection error."),
        ("turn_error", 2, "429 rate_limit_error: This request would exceed your organization's rate limit."),
        ("turn_error", 3, "terminated"),
        ("turn_error", 5, "Provider finish_reason: model_context_window_exceeded"),
    ]


def test_exec_details_across_versions():
    path = FORMATS / "exec-versions.jsonl"
    evs, _ = read(path)
    results = of(evs, ToolResult)
    assert [r.details["status"] for r in results] == [
        "error", "completed", "failed", "running", "approval-pending", "completed"]
    assert [r.details.get("exitCode") for r in results] == [None, 1, 127, None, None, 0]
    assert not any(r.is_error for r in results), "isError was false in every one of them"
    assert json.loads(results[0].texts[0])["error"].endswith("Command exited with code 1")
    r = analyze(path)
    assert r.summary["tool_errors"] == 3
    assert [(f["kind"], f["call_or_turn"]) for f in r.failures] == [("tool_error", 1), ("tool_error", 2),
                                                                    ("tool_error", 3)]
    assert "Command exited with code 1" in r.failures[0]["message"]
    assert "pnpm: not found" in r.failures[2]["message"]


def test_off_branch_entries_of_concurrent_writers_are_all_kept():
    path = FORMATS / "off-branch-concurrent-writers.jsonl"
    evs, diag = read(path)
    raw = raw_lines(path)
    # lines 4 (delivery-mirror) and 7-9 (the abandoned restart) are off the active branch
    parents = {e["id"]: e["parentId"] for e in raw[1:]}
    active, node = set(), raw[-1]["id"]
    while node:
        active.add(node)
        node = parents[node]
    off = [n for n, e in enumerate(raw[1:], 2) if e["id"] not in active]
    assert off == [4, 7, 8, 9]
    assert [getattr(e, "line", 1) for e in evs] == list(range(1, len(raw) + 1)), "nothing dropped"
    assert [(c.id, c.line) for c in calls(evs)] == [("call_Ob1", 3), ("call_Ob2", 8), ("call_Ob3", 11)]
    assert [u.run for u in of(evs, UserMessage)] == ["run-1", "run-2", "run-3"]
    assert diag.notes == []
    s = analyze(path).summary
    assert (s["tool_calls"], s["assistant_turns"], s["runs"]) == (3, 5, 3)
    assert (s["calls_without_result"], s["results_without_call"]) == (0, 0)


def test_archived_reset_file_is_a_session():
    path = FORMATS / "archived.jsonl.reset.2026-06-01T10-00-00.000Z"
    r = analyze(path)
    assert r.session["session_id"] == "7a9c1e3b-5d7f-4a1c-9e3b-6f8a0c2e4d57"
    assert r.session["format"] == "openclaw" and r.session["path"] == str(path)
    assert (r.summary["assistant_turns"], r.summary["final_state"]) == (1, "completed")


# --- bad input: the file names in fixtures/bad/ and what each must read as -----------------------


def test_every_bad_fixture_is_covered():
    covered = set(BAD_CASES) | set(READ_ERRORS)
    assert {p.name for p in BAD.iterdir()} == covered


READ_ERRORS = {
    "nul-filled.jsonl": "binary data (NUL bytes)",
    "binary.jsonl": "binary data (NUL bytes)",
}

# name -> (bad_lines, [(line, text of the note naming it)], summary facts)
BAD_CASES = {
    "empty.jsonl": (0, [(None, "empty file")], {"final_state": "empty", "tool_calls": 0}),
    "header-only.jsonl": (0, [], {"final_state": "empty", "assistant_turns": 0}),
    "truncated-last-line.jsonl": (
        1, [(5, "truncated last line")], {"tool_calls": 1, "assistant_turns": 1, "final_state": "tool_pending"}),
    "invalid-json-middle.jsonl": (
        1, [(4, "invalid JSON (Expecting property name")], {"tool_calls": 1, "assistant_turns": 2}),
    "not-an-object.jsonl": (
        5,
        [(3, "not a JSON object (a JSON array)"), (4, "(a JSON string)"), (5, "(a JSON number)"),
         (6, "(a JSON null)"), (7, "(a JSON boolean)")],
        {"tool_calls": 1, "assistant_turns": 2, "calls_without_result": 0},
    ),
    "non-utf8.jsonl": (
        # kept (each invalid byte read as U+FFFD, as Node reads it), so the call still gets its result
        0, [(4, "not valid UTF-8 (byte 0xe9 at column 205)")], {"tool_calls": 1, "calls_without_result": 0}),
    "nul-tail-after-crash.jsonl": (
        1, [(4, "NUL bytes instead of a line"), (3, "tool call 'call_Z1' has no result")],
        {"tool_calls": 1, "assistant_turns": 1, "final_state": "tool_pending"}),
    "unknown-type-and-role.jsonl": (
        0, [(3, "unknown type checkpoint_marker"), (5, "unknown role narrator")],
        {"skipped_entries": 3, "tool_calls": 1, "assistant_turns": 2}),
    "missing-message.jsonl": (1, [(3, "message entry without a `message` object")], {"assistant_turns": 1}),
    "missing-content.jsonl": (
        0, [(4, "tool result without content"), (5, "assistant message without content")],
        {"assistant_turns": 2, "tool_calls": 1, "calls_without_result": 0, "output_tokens": 28}),
    "missing-usage.jsonl": (
        0, [(3, "assistant message without usage; counted as 0 tokens")],
        {"assistant_turns": 2, "prompt_tokens": 3160, "output_tokens": 8}),
    "missing-arguments.jsonl": (
        0, [(3, "tool call without arguments; read as {}")], {"tool_calls": 2, "calls_without_result": 0}),
    "arguments-as-json-string.jsonl": (
        0, [(3, "arguments are a JSON string; parsed"), (5, "arguments are a string that is not JSON; kept")],
        {"tool_calls": 2, "calls_without_result": 0}),
    "result-without-call.jsonl": (
        0, [(3, "tool result for call id 'call_Gone': no earlier tool call has that id")],
        {"results_without_call": 1, "calls_without_result": 0, "tool_calls": 1}),
    "call-without-result.jsonl": (
        0, [(3, "tool call 'call_L1' has no result")],
        {"calls_without_result": 1, "results_without_call": 0, "tool_calls": 2, "runs": 2}),
    "duplicated-ids.jsonl": (
        0, [(5, "tool call id 'call_D1' used twice")],
        {"tool_calls": 2, "tool_errors": 2, "calls_without_result": 0, "results_without_call": 0}),
    "numbers-for-strings.jsonl": (
        0,
        [(1, "id: Expected `str | null`, got `int`"), (1, "cwd: Expected"),
         (3, "message.model: Expected `str | null`, got `int`; ignored that field"),
         (3, "message.content[0].name: Expected"), (3, "message.stopReason: Expected"),
         (4, "message.toolCallId: Expected"), (5, "message.content: Expected `str | array | null`, got `int`")],
        {"assistant_turns": 2, "tool_calls": 1}),
    "strings-for-numbers.jsonl": (
        0,
        [(1, "version is a string, not a number; read as 3"),
         (3, "usage.input is a string, not a number; read as 28"), (3, "usage.cacheWrite is a string"),
         (3, "usage.cost.total is a string, not a number; read as absent"),
         (5, "message.usage: Expected `object | null`, got `array`"), (6, "tokensBefore is a string")],
        {"input_tokens": 28, "output_tokens": 167, "cache_read_tokens": 5869, "compactions": 1}),
}


@pytest.mark.parametrize("name", sorted(BAD_CASES))
def test_bad_input_is_read_with_a_note_naming_file_and_line(name):
    path = BAD / name
    before = snapshot(path)
    bad_lines, notes, facts = BAD_CASES[name]
    evs, diag = read(path)
    assert diag.bad_lines == bad_lines
    for line, text in notes:
        note_at(diag, path, line, text)
    assert all(n.startswith(f"{path}:") for n in diag.notes)
    r = analyze(path)
    assert r.summary["bad_lines"] == bad_lines
    for key, value in facts.items():
        assert r.summary[key] == value, key
    assert r.to_json()["notes"] == diag.notes
    assert snapshot(path) == before, "the input is never modified"


@pytest.mark.parametrize("name", sorted(READ_ERRORS))
def test_binary_files_raise_read_error_naming_the_file(name):
    path = BAD / name
    before = snapshot(path)
    with pytest.raises(ReadError) as err:
        read(path)
    assert str(err.value).startswith(f"{path}: ") and READ_ERRORS[name] in str(err.value)
    with pytest.raises(ReadError):
        analyze_path(str(path))
    assert snapshot(path) == before


def test_bad_case_details():
    evs, _ = read(BAD / "strings-for-numbers.jsonl")
    assert evs[0].format_version == 3
    assert of(evs, Compaction)[0].tokens_before == 6288
    assert of(evs, ModelTurn)[0].cost is None
    evs, _ = read(BAD / "numbers-for-strings.jsonl")
    assert evs[0].session_id is None and evs[0].cwd is None
    assert [(t.model, t.provider, t.stop_reason) for t in of(evs, ModelTurn)] == [
        (None, None, None), ("claude-sonnet-4-5", "anthropic", "stop")]
    assert [(c.id, c.tool, c.raw_name) for c in calls(evs)] == [(None, "tool", "")]
    assert analyze(BAD / "numbers-for-strings.jsonl").session["session_id"] == "numbers-for-strings"
    evs, _ = read(BAD / "arguments-as-json-string.jsonl")
    assert [c.arguments for c in calls(evs)] == [{"command": "npm test", "timeout": 120}, "npm test -- --watch=false"]
    evs, _ = read(BAD / "non-utf8.jsonl")
    assert of(evs, ToolResult)[0].texts == ("caf\ufffd cr\ufffdme",)
    evs, diag = read(BAD / "unknown-type-and-role.jsonl")
    assert dict(diag.skipped_kinds) == {"type:checkpoint_marker": 2, "role:narrator": 1}
    assert len(diag.notes) == 2, "the second checkpoint_marker is only counted"
    evs, _ = read(BAD / "duplicated-ids.jsonl")
    assert [e.line for e in evs[1:]] == [2, 3, 4, 5, 6, 7], "both entries with id a0000003 are read"


# --- nothing can be read: ReadError, naming the path ------------------------------------------------


def test_missing_file(tmp_path):
    path = tmp_path / "gone.jsonl"
    with pytest.raises(ReadError, match=f"^{path}: no such file"):
        read(path)


def test_directory(tmp_path):
    with pytest.raises(ReadError, match=f"^{tmp_path}: is a directory"):
        read(tmp_path)


def test_symlink_loop(tmp_path):
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    with pytest.raises(ReadError, match=f"^{loop}: cannot read"):
        read(loop)


@pytest.mark.parametrize(
    "first,why",
    [
        ({"type": "user", "sessionId": "s", "uuid": "u", "message": {}}, "Claude Code"),
        ({"timestamp": "t", "type": "session_meta", "payload": {}}, "Codex"),
        ({"traceSchema": "openclaw-trajectory", "schemaVersion": 1, "type": "session.started"}, "trajectory"),
        ({"agent:main:main": {"sessionId": "x"}}, "first record has keys"),
    ],
)
def test_not_a_transcript(tmp_path, first, why):
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(first) + "\n", encoding="utf-8")
    with pytest.raises(ReadError) as err:
        read(path)
    assert str(err.value).startswith(f"{path}: not a recognised session transcript") and why in str(err.value)


def test_nothing_but_invalid_json_is_not_a_transcript(tmp_path):
    path = tmp_path / "junk.jsonl"
    path.write_text("hello\nworld\n", encoding="utf-8")
    with pytest.raises(ReadError, match="no line of it is valid JSON"):
        read(path)


# --- generated bad inputs -------------------------------------------------------------------------


V3 = FORMATS / "v3-all-entry-types.jsonl"


def with_line(tmp_path: Path, line: bytes, at: int, replace: bool = False, name: str = "x.jsonl") -> Path:
    """v3-all-entry-types with `line` inserted as (or replacing) line `at`."""
    lines = V3.read_bytes().splitlines(keepends=True)
    lines[at - 1:at - 1 + replace] = [line.rstrip(b"\n") + b"\n"]
    path = tmp_path / name
    path.write_bytes(b"".join(lines))
    return path


DEEP = 10_000


DEEP_LINES = {
    "array": "[" * DEEP + "]" * DEEP,
    "unterminated": "{\"a\":" * DEEP,
    "in-details": json.dumps(
        {"type": "message", "id": "deadbeef", "parentId": "708192a3", "timestamp": "2026-03-10T09:00:05Z",
         "message": {"role": "toolResult", "toolCallId": "toolu_x", "toolName": "exec", "content": [],
                     "details": "@"}}).replace('"@"', "{\"a\":" * DEEP + "1" + "}" * DEEP),
    "in-arguments": json.dumps(
        {"type": "message", "id": "deadbeef", "parentId": "708192a3", "timestamp": "2026-03-10T09:00:05Z",
         "message": {"role": "assistant", "content": [
             {"type": "toolCall", "id": "c9", "name": "exec", "arguments": "@"}]}}).replace(
        '"@"', "[" * DEEP + "]" * DEEP),
}


# On line 1 a bare array would make the file an exported JSON array (see the next test).
@pytest.mark.parametrize(
    "kind,at",
    [("array", 10), ("unterminated", 1), ("unterminated", 10), ("in-details", 1), ("in-details", 10),
     ("in-arguments", 1), ("in-arguments", 10)],
)
def test_extreme_nesting_is_one_bad_line(tmp_path, kind, at):
    path = with_line(tmp_path, DEEP_LINES[kind].encode(), at)
    before = snapshot(path)
    evs, diag = read(path)
    assert diag.bad_lines == 1
    note_at(diag, path, at, "nested too deeply")
    plain = read(V3)[0]
    assert [type(e) for e in evs] == [type(e) for e in plain]
    assert [(c.index, c.id, c.arguments) for c in calls(evs)] == [(c.index, c.id, c.arguments) for c in calls(plain)]
    assert analyze(path).summary["tool_calls"] == 1
    assert snapshot(path) == before


def test_a_first_line_that_is_an_array_makes_the_file_an_exported_array(tmp_path):
    """Documented limitation: `[`-first files are exported arrays; a deep array there is not a session."""
    path = with_line(tmp_path, DEEP_LINES["array"].encode(), 1)
    with pytest.raises(ReadError, match="not a recognised session transcript"):
        read(path)


def test_exported_json_array_transcript(tmp_path):
    entries = raw_lines(V3)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(entries, indent=1), encoding="utf-8")
    evs, diag = read(path)
    assert [type(e) for e in evs] == [type(e) for e in read(V3)[0]]
    assert [c.arguments for c in calls(evs)] == [c.arguments for c in calls(read(V3)[0])]
    assert analyze(path).summary["prompt_tokens"] == analyze(V3).summary["prompt_tokens"]
    assert diag.bad_lines == 0
    path.write_text(json.dumps(entries)[:-300], encoding="utf-8")  # cut short
    evs, diag = read(path)
    assert diag.bad_lines == 1 and "invalid JSON in exported array" in diag.notes[-1]
    assert len(evs) == len(read(V3)[0]) - 1


def test_truncated_gzip_at_every_cut_reports_what_was_read(tmp_path):
    full_events = read(V3)[0]
    data = gzip_bytes(V3.read_bytes())
    path = tmp_path / "cut.jsonl.gz"
    read_errors = reported = 0
    for cut in range(2, len(data), 7):
        path.write_bytes(data[:cut])
        try:
            evs, diag = read(path)
        except ReadError as err:
            assert str(err).startswith(f"{path}: ")
            read_errors += 1
            continue
        reported += 1
        assert evs == full_events[: len(evs)], "a prefix of the session, nothing invented"
        assert diag.bad_lines == 1
        assert any(n.startswith(f"{path}:") and "truncated gzip" in n for n in diag.notes)
        analyze(path)
    assert reported > read_errors > 0  # only a cut inside the gzip header leaves nothing to read


def test_truncated_gzip_of_a_larger_session(tmp_path):
    header, *body = V3.read_bytes().splitlines(keepends=True)
    copies = [b"".join(body).replace(b"toolu_01VbN3xQz8", b"toolu_%03d" % i) for i in range(50)]
    data = gzip_bytes(header + b"".join(copies))
    path = tmp_path / "big.jsonl.gz"
    path.write_bytes(data[:-200])  # the copies after the first compress to a few bytes each
    evs, diag = read(path)
    (note,) = [n for n in diag.notes if "truncated gzip" in n]
    line = int(note.split(":")[1])
    assert len(evs) > 100 and max(getattr(e, "line", 1) for e in evs) < line
    assert analyze(path).summary["bad_lines"] == 1


BIG_SCRIPT = textwrap.dedent(
    """
    import json, resource, sys
    from loopscan.analysis.session import analyze_path
    r = analyze_path(sys.argv[1])
    print(json.dumps({"summary": r.summary, "notes": r.diagnostics.notes,
                      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("valid", [True, False], ids=["valid", "unterminated"])
def test_single_200mb_line_SLOW(tmp_path, valid):
    """SLOW (a few seconds each; writes a 200 MB file). A 200 MB tool result on one line, streamed
    with ijson past MAX_LINE_BYTES. Run in a subprocess so its peak RSS is its own."""
    lines = V3.read_bytes().splitlines(keepends=True)
    path = tmp_path / "huge.jsonl"
    mib = b"0123456789abcdef" * 65536
    with open(path, "wb") as f:
        f.writelines(lines[:8])
        f.write(b'{"type":"message","id":"8192a3b4","parentId":"708192a3","timestamp":"2026-03-10T09:00:05.020Z",'
                b'"message":{"role":"toolResult","toolCallId":"toolu_01VbN3xQz8","toolName":"exec",'
                b'"content":[{"type":"text","text":"')
        for _ in range(200):
            f.write(mib)
        f.write(b'"}],"details":{"status":"completed","exitCode":0},"isError":false,"timestamp":1773133205020}}\n'
                if valid else b"\n")
        f.writelines(lines[9:])
    size, mtime = path.stat().st_size, path.stat().st_mtime_ns
    assert size > 200 * 2**20
    out = subprocess.run([sys.executable, "-c", BIG_SCRIPT, str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    s = doc["summary"]
    assert (s["tool_calls"], s["assistant_turns"], s["prompt_errors"], s["compactions"]) == (1, 3, 1, 1)
    if valid:
        assert s["bad_lines"] == 0 and s["calls_without_result"] == 0 and s["tool_errors"] == 0
    else:
        assert s["bad_lines"] == 1 and s["calls_without_result"] == 1
        assert any(n.startswith(f"{path}:9: invalid JSON in an oversize line") and "\n" not in n for n in doc["notes"])
    # The oversize line is decoded whole (the 200 MB string plus yajl's token buffer): memory grows
    # with the longest line, not with the file. Loose bound; see the report in the test docstring.
    assert doc["rss_mb"] < 1024
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (size, mtime)
    os.remove(path)
