"""The `loopscan` profile: what OpenClaw 2026.6 lets through, stopped; what it stopped, still stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopscan.analysis.session import analyze_path
from loopscan.engine.config import ConfigRequest
from loopscan.engine.noise import mask_volatile
from transcript import Transcript, text_result, thrown

INCIDENT = Path(__file__).resolve().parent.parent / "fixtures" / "incident" / "deepseek-doom-loop.jsonl"


def _run(path, profile: str = "loopscan", **overrides):
    return analyze_path(str(path), ConfigRequest(profile=profile, overrides=overrides))


def test_the_incident_warns_but_runs_on_under_openclaw():
    result = _run(INCIDENT, "openclaw-2026.6")
    assert result.block is None
    assert [f["detector"] for f in result.firings] == ["generic_repeat"]


def test_the_incident_is_stopped_inside_its_first_run_saving_over_half_its_tokens():
    result = _run(INCIDENT)
    block = result.block
    assert block["detector"] == "session_no_progress"
    first_run_calls = 100  # run 1 holds calls 1-100 (the second user message comes after call 100)
    assert block["call_index"] <= first_run_calls
    assert block["tokens_after"] >= result.summary["total_tokens"] / 2
    assert block["cost_after_usd"] > result.summary["cost_usd"] / 2
    warnings = [f for f in result.firings if f["level"] == "warning"]
    assert warnings and warnings[0]["detector"] == "session_no_progress"
    assert warnings[0]["call_index"] < block["call_index"]


def test_rotation_is_caught_without_masking_when_outputs_are_identical(tmp_path):
    """ls -> find -> python3 -> tail, identical outputs: no per-tool streak ever reaches 20 (#79252)."""
    t = Transcript()
    t.user("publish the post")
    commands = ["ls -la /srv/blog", "find /srv/blog -type f", "python3 check.py", "tail -100 /srv/blog/publish.log"]
    for i in range(60):
        command = commands[i % 4]
        t.tool("exec", {"command": command},
               text_result(f"output of {command}", {"status": "completed", "exitCode": 0, "aggregated": f"output of {command}"}))
    path = t.write(tmp_path)
    assert _run(path, "openclaw-2026.6").block is None
    block = _run(path).block
    assert block["detector"] == "session_no_progress"
    # 4 new triples, then every call repeats one: 18 stale among the last 30 at call 4 + 18 + 1
    assert block["call_index"] == 23 and block["count"] == 18


def test_drifting_exec_output_builds_a_streak_once_masked(tmp_path):
    """The same `ls -la` whose log file grows: OpenClaw sees 25 different outcomes (#93917)."""
    t = Transcript()
    t.user("wait for the publish")
    for i in range(25):
        listing = (f"total {64 + i // 5 * 4}\n-rw-r--r-- 1 node node {40000 + 913 * i} Jun 14 01:{10 + i:02d} publish.log\n"
                   "-rw-r--r-- 1 node node 927 Jun 12 18:05 SKILL.md")
        t.tool("exec", {"command": "ls -la /srv/blog"},
               text_result(listing, {"status": "completed", "exitCode": 0, "durationMs": 3 + i % 4, "aggregated": listing}))
    path = t.write(tmp_path)
    assert _run(path, "openclaw-2026.6").block is None
    # masked, every listing is the same outcome: OpenClaw's own generic critical now fires ...
    block = _run(path, sessionWarning=99, sessionCritical=100).block
    assert block["detector"] == "generic_repeat" and block["call_index"] == 21 and block["count"] == 20
    # ... and the session-wide breaker, one call sooner (18 of the last outcomes repeated one seen before)
    block = _run(path).block
    assert block["detector"] == "session_no_progress" and block["call_index"] == 20 and block["count"] == 18


@pytest.mark.parametrize("kind", ["identical", "ping_pong", "unknown_tool", "browser"])
def test_what_openclaw_blocks_loopscan_blocks_no_later(tmp_path, kind):
    t = Transcript()
    t.user("go")
    for i in range(40):
        if kind == "identical":
            t.tool("read", {"path": "/etc/app.yaml"}, text_result("port: 1", {"ok": True}))
        elif kind == "ping_pong":
            if i % 2:
                t.tool("list", {"dir": "/w"}, text_result("a b", {"ok": True}))
            else:
                t.tool("read", {"path": "/a"}, text_result("same", {"ok": True}))
        elif kind == "unknown_tool":
            t.tool("search_web", {"q": f"query {i}"}, thrown("search_web", "Unknown tool: search_web"))
        else:
            t.tool("browser", {"action": "snapshot", "targetId": "tab-1"},
                   text_result("page: Login required", {"ok": True, "url": "https://blog.example.com/wp-admin"}))
    path = t.write(tmp_path)
    upstream = _run(path, "openclaw-2026.6").block
    ours = _run(path).block
    assert upstream is not None and ours is not None
    assert ours["call_index"] <= upstream["call_index"]


def test_token_budget(tmp_path):
    t = Transcript()
    t.user("go")
    for i in range(10):
        t.tool("read", {"path": f"/src/{i}.py"}, text_result(f"source {i}", {"ok": True}))
    path = t.write(tmp_path)
    full = _run(path, "openclaw-2026.6")
    budget = full.tokens[4]["cumulative_tokens"]  # spent by the 5th turn
    block = _run(path, "openclaw-2026.6", tokenBudget=budget).block
    assert block["detector"] == "token_budget" and block["call_index"] == 5 and block["count"] >= budget


def test_iteration_budget_counts_tool_rounds_per_run(tmp_path):
    t = Transcript()
    for run in range(2):
        t.user(f"task {run}")
        for i in range(6):
            t.tool("read", {"path": f"/r{run}/{i}"}, text_result("x", {"ok": True}))
        t.reply()
    path = t.write(tmp_path)
    assert _run(path, "openclaw-2026.6", maxIterations=6).block is None  # 6 rounds a run: within budget
    block = _run(path, "openclaw-2026.6", maxIterations=4).block
    assert block["detector"] == "iteration_budget" and block["call_index"] == 5 and block["count"] == 5


@pytest.mark.parametrize("text,masked", [
    ("-rw-r--r-- 1 node node 47655 Jun 14 01:24 publish.log", "-rw-r--r-- 1 node node <size> <mtime> publish.log"),
    ("total 76", "total <n>"),
    ("started 2026-06-14T01:12:00.123Z in 1.5s", "started <datetime> in <duration>"),
    ("Sun Jun 14 01:12:03 UTC 2026", "<date>"),
    ("worker pid 4242 exited", "worker pid <n> exited"),
    ("HEAD is now at 3f2a9c1d fix", "HEAD is now at <hex> fix"),
    ("wrote /tmp/tmp.Xy12ab", "wrote /tmp/<tmp>"),
])
def test_volatile_parts_are_masked(text, masked):
    assert mask_volatile(text) == masked


@pytest.mark.parametrize("text", [
    "5 passed, 3 failed", "Downloaded 45% (4500/10000)", "FAILED tests/test_api.py::test_login",
    "compiling 12 of 40 modules", "processed 1200 rows",
])
def test_counts_that_mean_progress_are_kept(text):
    assert mask_volatile(text) == text
