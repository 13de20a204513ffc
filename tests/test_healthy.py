"""The healthy fixtures (fixtures/healthy/*.jsonl): realistic sessions that no loop detector may stop.

A detector is only useful if it never blocks healthy work. Every fixture is replayed under every profile in
`loopscan.engine.profiles.PROFILES` (whatever it holds when the tests run) with default thresholds and
detection simulated as enabled, and must not be blocked. Warnings are allowed — OpenClaw warns on plenty of
healthy repetition — and their number is part of each test id (`...-warnings=N`).

Observed when the fixtures were written (openclaw-2026.6 / openclaw-2026.2 / loopscan):
  varied-feature-work        0 / 0 / 0
  tests-failing-to-passing   0 / 0 / 0
  long-build-polling         0 / 0 / 0
  same-file-many-edits       1 / 1 / 1   generic_repeat warning at call 24 (count 10): the check command
                                         `python3 -m py_compile ... && ruff check ...` for the 10th time in the window
  log-tail-debugging         0 / 0 / 0
  multi-run-chat             0 / 0 / 0
  heartbeat-idle-evening     0 / 0 / 0   (14 heartbeat runs repeating the same checks: when loopscan's
                                         session_no_progress counted across runs, it blocked call 25 here;
                                         it is now scoped to the run, like OpenClaw's own detectors)

The other tests prove each fixture is what its name says, from the raw JSONL (read with `json` alone) and
from loopscan's repeat table, and that the generator reproduces the committed files byte for byte.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from loopscan.analysis.session import SessionResult, analyze_path
from loopscan.engine.config import ConfigRequest
from loopscan.engine.profiles import PROFILES

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "fixtures" / "generate_healthy.py"
HEALTHY = ROOT / "fixtures" / "healthy"
FIXTURES = sorted(HEALTHY.glob("*.jsonl"))
REQUIRED = {"varied-feature-work.jsonl", "tests-failing-to-passing.jsonl", "long-build-polling.jsonl",
            "same-file-many-edits.jsonl", "log-tail-debugging.jsonl"}

# Healthy sessions a profile DOES block today: false positives of that profile, kept visible rather than
# hidden by weakening the fixture. strict=True: once the profile stops blocking, the XPASS fails and the
# entry must go. Delete an entry to turn it into a plain failure.
KNOWN_FALSE_POSITIVES: dict[tuple[str, str], str] = {}


@functools.lru_cache(maxsize=None)
def analyzed(path: Path, profile: str) -> SessionResult:
    return analyze_path(str(path), ConfigRequest(profile=profile))


def warnings_of(result: SessionResult) -> list[dict]:
    return [f for f in result.firings if f["level"] == "warning"]


def repeat(result: SessionResult, key: str) -> dict:
    found = [r for r in result.repeats if r["key"] == key]
    assert found, f"no repeat entry for {key!r}: {[r['key'] for r in result.repeats]}"
    return found[0]


# --- an independent reading of the raw file ---------------------------------------------------------


class Raw:
    """The transcript read with json alone: calls in file order with their results."""

    def __init__(self, path: Path):
        self.path = path
        self.entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        self.header = self.entries[0]
        self.calls: list[dict] = []  # {"id", "tool", "args", "batch", "run", "result"}
        self.assistants: list[dict] = []
        self.users: list[str] = []
        by_id: dict[str, dict] = {}
        for entry in self.entries[1:]:
            msg = entry.get("message") or {}
            if msg.get("role") == "user":
                self.users.append(msg["content"][0]["text"])
            elif msg.get("role") == "assistant":
                self.assistants.append(msg)
                for block in msg["content"]:
                    if block["type"] == "toolCall":
                        call = {"id": block["id"], "tool": block["name"], "args": block["arguments"],
                                "batch": len(self.assistants), "run": len(self.users), "result": None}
                        self.calls.append(call)
                        by_id[block["id"]] = call
            elif msg.get("role") == "toolResult":
                by_id[msg["toolCallId"]]["result"] = msg

    def execs(self, command: str) -> list[dict]:
        return [c for c in self.calls if c["tool"] == "exec" and c["args"].get("command") == command]

    @staticmethod
    def text(call: dict) -> str:
        return "\n".join(b["text"] for b in call["result"]["content"] if b.get("type") == "text")

    @staticmethod
    def details(call: dict) -> dict:
        return call["result"].get("details") or {}


@functools.lru_cache(maxsize=None)
def raw(name: str) -> Raw:
    return Raw(HEALTHY / name)


# --- no block, under every profile --------------------------------------------------------------------


def _case_id(path: Path, profile: str) -> str:
    try:
        n: object = len(warnings_of(analyzed(path, profile)))
    except Exception:  # the test itself reports the error
        n = "?"
    return f"{path.stem}-{profile}-warnings={n}"


CASES = [
    pytest.param(path, profile, id=_case_id(path, profile),
                 marks=[pytest.mark.xfail(reason=KNOWN_FALSE_POSITIVES[(path.name, profile)], strict=True)]
                 if (path.name, profile) in KNOWN_FALSE_POSITIVES else [])
    for path in FIXTURES for profile in PROFILES
]


@pytest.mark.parametrize(("path", "profile"), CASES)
def test_healthy_session_is_never_blocked(path: Path, profile: str) -> None:
    result = analyzed(path, profile)
    assert result.config.profile == profile and result.config.detection_enabled
    assert result.summary["tool_calls"] == len(raw(path.name).calls)
    assert result.block is None, f"{path.name} would be stopped under {profile}: {result.block}"
    assert not [f for f in result.firings if f["level"] == "critical"], result.firings


def test_fixture_set_matches_the_generator() -> None:
    names = {p.name for p in FIXTURES}
    assert REQUIRED <= names and len(names) >= 5
    import generate_healthy  # fixtures/ is on sys.path (tests/conftest.py)

    assert names == set(generate_healthy.SCENARIOS)


# --- every fixture looks like a real OpenClaw v3 session ------------------------------------------------


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_realistic_session_shape(path: Path) -> None:
    r = raw(path.name)
    assert path.stat().st_size < 400_000
    assert r.header["type"] == "session" and r.header["version"] == 3
    assert 40 <= len(r.calls) <= 150
    assert all(c["result"] is not None for c in r.calls), "every call has its result"
    stamps = [e["timestamp"] for e in r.entries[1:]]
    assert stamps == sorted(stamps)
    parents = [e["parentId"] for e in r.entries[1:]]
    assert parents[1:] == [e["id"] for e in r.entries[1:-1]] and parents[0] is None
    prompts = [m["usage"]["input"] + m["usage"]["cacheRead"] + m["usage"]["cacheWrite"] for m in r.assistants]
    assert prompts[-1] > prompts[0] * 1.3, "the context grows"
    assert sum(m["usage"]["cost"]["total"] for m in r.assistants) > 0
    assert r.assistants[-1]["stopReason"] == "stop"
    for call in r.calls:
        details = Raw.details(call)
        if call["tool"] == "exec" and details.get("status") in ("completed", "failed"):
            assert {"exitCode", "durationMs", "aggregated", "cwd"} <= details.keys()
            if details["exitCode"]:
                assert Raw.text(call).endswith(f"(Command exited with code {details['exitCode']})")
        elif call["tool"] == "exec":
            assert details["status"] == "running" and details["sessionId"] and "tail" in details
        elif call["tool"] == "process":
            assert {"status", "sessionId", "aggregated"} <= details.keys()
        elif call["tool"] == "edit":
            assert details["diff"] and Raw.text(call).startswith("Successfully replaced text in ")
        elif call["tool"] == "write":
            assert Raw.text(call) == f"Successfully wrote {len(call['args']['content'])} bytes to {call['args']['path']}"
    result = analyzed(path, "openclaw-2026.6")
    s = result.summary
    assert (s["bad_lines"], s["calls_without_result"], s["results_without_call"]) == (0, 0, 0)
    assert s["final_state"] == "completed" and s["turn_failures"] == 0


# --- each fixture is what its name says ------------------------------------------------------------------


def test_varied_feature_work_touches_many_files_with_few_repeats() -> None:
    r = raw("varied-feature-work.jsonl")
    assert {"exec", "read", "write", "edit"} <= {c["tool"] for c in r.calls}
    changed = {c["args"]["path"] for c in r.calls if c["tool"] in ("edit", "write")}
    assert len(changed) >= 6
    assert max(Counter(c["args"]["command"] for c in r.calls if c["tool"] == "exec").values()) <= 3
    assert any(re.search(r"^(grep|find) ", c["args"]["command"]) for c in r.calls if c["tool"] == "exec")
    commit = [c for c in r.calls if c["tool"] == "exec" and "git commit" in c["args"]["command"]]
    assert len(commit) == 1 and "create mode 100644 src/ledgerlite/export.py" in Raw.text(commit[0])
    for profile in PROFILES:
        assert max(rep["count"] for rep in analyzed(r.path, profile).repeats) <= 3


def test_tests_failing_to_passing_reruns_pytest_with_changing_outcomes() -> None:
    r = raw("tests-failing-to-passing.jsonl")
    runs = r.execs("pytest -x tests/")
    assert 12 <= len(runs) <= 20
    failed = [re.search(r"^FAILED (\S+) - (.*)$", Raw.text(c), re.M) for c in runs[:-1]]
    assert all(failed) and len({m.group(1) for m in failed}) >= 10, "a different failing test most of the time"
    assert len({(m.group(1), m.group(2)) for m in failed}) == len(failed), "never the same failure twice"
    passed = [int(re.search(r"(\d+) passed", Raw.text(c)).group(1)) for c in runs]
    assert passed == sorted(passed) and passed[0] < passed[-1] == 42
    assert [Raw.details(c)["exitCode"] for c in runs] == [1] * (len(runs) - 1) + [0]
    index = {c["id"]: i for i, c in enumerate(r.calls)}
    for before, after in zip(runs, runs[1:]):
        between = r.calls[index[before["id"]] + 1:index[after["id"]]]
        assert any(c["tool"] == "edit" for c in between), "an edit between every two runs"
    for command in ("ls -la src/confparse/", "git status", "git diff --stat"):
        outputs = [Raw.details(c)["aggregated"] for c in r.execs(command)]
        assert len(outputs) >= 3 and len(set(outputs)) == len(outputs), command
    for profile in PROFILES:
        rep = repeat(analyzed(r.path, profile), "pytest -x tests/")
        assert rep["count"] == len(runs) and rep["distinct_outcomes"] >= 10, (profile, rep)


def test_long_build_polling_output_advances() -> None:
    r = raw("long-build-polling.jsonl")
    start = [c for c in r.calls if c["tool"] == "exec" and c["args"].get("background")]
    assert len(start) == 1 and Raw.details(start[0])["status"] == "running"
    session_id = Raw.details(start[0])["sessionId"]
    polls = [c for c in r.calls if c["tool"] == "process" and c["args"] == {"action": "poll", "sessionId": session_id}]
    assert 25 <= len(polls) <= 40
    quiet_streak = longest = 0
    previous = ""
    percents = []
    for call in polls:
        details, text = Raw.details(call), Raw.text(call)
        aggregated = details["aggregated"]
        assert aggregated.startswith(previous), "the aggregated output only grows"
        no_new = aggregated == previous
        assert text.startswith("(no new output)") == no_new, "'(no new output)' exactly when nothing was added"
        if details["status"] == "running":
            assert text.endswith("\n\nProcess still running.")
        quiet_streak = quiet_streak + 1 if no_new else 0
        longest = max(longest, quiet_streak)
        percents += [int(p) for p in re.findall(r"^\[\s*(\d+)%\]", text, re.M)]
        previous = aggregated
    assert longest <= 3 and sum(Raw.text(c).startswith("(no new output)") for c in polls) >= 3
    assert percents == sorted(percents) and percents[-1] == 100 and len(set(percents)) >= 30
    final = Raw.details(polls[-1])
    assert final["status"] == "completed" and final["exitCode"] == 0
    assert all(Raw.details(c)["status"] == "running" for c in polls[:-1])
    for profile in PROFILES:
        rep = repeat(analyzed(r.path, profile), f'process {{"action":"poll","sessionId":"{session_id}"}}')
        assert rep["count"] == len(polls) and rep["distinct_outcomes"] >= 20, (profile, rep)


def test_same_file_many_edits_each_checked() -> None:
    r = raw("same-file-many-edits.jsonl")
    changes = [c for c in r.calls if c["tool"] in ("edit", "write")]
    per_path = Counter(c["args"]["path"] for c in changes)
    path, n = per_path.most_common(1)[0]
    assert path.endswith("reportgen/monthly.py") and 20 <= n <= 30
    bodies = [json.dumps(c["args"], sort_keys=True) for c in changes if c["args"]["path"] == path]
    assert len(set(bodies)) == len(bodies), "different content every time"
    check = "python3 -m py_compile reportgen/monthly.py && ruff check reportgen/monthly.py"
    for i, call in enumerate(r.calls):
        if call in changes and call["args"]["path"] == path and call["tool"] == "edit":
            following = next(c for c in r.calls[i + 1:] if c["tool"] == "exec")
            assert following["args"]["command"] == check, "each edit is followed by the check"
    outputs = [Raw.text(c) for c in r.execs(check)]
    counts = [int(m.group(1)) for o in outputs if (m := re.search(r"Found (\d+) errors?\.", o))]
    assert len(outputs) >= 20 and counts[0] > 30 and outputs[-1] == "All checks passed!"
    assert any("IndentationError" in o for o in outputs), "an edit that broke the module, fixed by the next"
    assert len(set(counts)) >= 15, "the warnings change as the edits go"
    for profile in PROFILES:
        rep = repeat(analyzed(r.path, profile), check)
        assert rep["count"] == len(outputs) and rep["distinct_outcomes"] >= len(outputs) - 2, (profile, rep)


def test_log_tail_debugging_outputs_change_while_service_recovers() -> None:
    r = raw("log-tail-debugging.jsonl")
    tails = r.execs("tail -50 logs/app.log")
    curls = r.execs("curl -s localhost:8080/health")
    assert 8 <= len(tails) <= 12 and 8 <= len(curls) <= 12
    index = {c["id"]: i for i, c in enumerate(r.calls)}
    for group in (tails, curls):
        for before, after in zip(group, group[1:]):
            between = r.calls[index[before["id"]] + 1:index[after["id"]]]
            assert any(c["args"].get("command") != before["args"]["command"] for c in between), "spread out"
    health = [json.loads(Raw.text(c)) for c in curls if Raw.details(c)["exitCode"] == 0]
    assert health[0]["status"] == "error" and health[-1]["status"] == "ok"
    assert any(Raw.details(c)["exitCode"] == 7 for c in curls), "connection refused while restarting"
    backlog = [h["checks"]["queue_backlog"] for h in health if h["status"] != "error"]
    assert backlog[-1] == 0 and len(set(backlog)) >= 4
    errors = [len(re.findall(r" (?:ERROR|WARN) ", Raw.text(c))) for c in tails]
    assert errors[0] >= 40 and errors[-1] == 0, errors
    for profile in PROFILES:
        result = analyzed(r.path, profile)
        for command, group in (("tail -50 logs/app.log", tails), ("curl -s localhost:8080/health", curls)):
            rep = repeat(result, command)
            assert rep["count"] == len(group) and rep["distinct_outcomes"] >= len(group) - 1, (profile, rep)


def test_multi_run_chat_has_many_short_runs_and_parallel_calls() -> None:
    r = raw("multi-run-chat.jsonl")
    assert len(r.users) >= 5 and analyzed(r.path, "openclaw-2026.6").summary["runs"] == len(r.users)
    per_run = Counter(c["run"] for c in r.calls)
    assert len(per_run) == len(r.users) and max(per_run.values()) <= 10
    batches = Counter(c["batch"] for c in r.calls)
    assert sum(1 for n in batches.values() if n >= 2) >= 3, "several messages with parallel tool calls"
    replies = [b["text"] for m in r.assistants if m["stopReason"] == "stop" for b in m["content"] if b["type"] == "text"]
    assert sum(text == "HEARTBEAT_OK" for text in replies) >= 3


def test_heartbeat_idle_evening_repeats_the_same_checks_in_separate_runs() -> None:
    r = raw("heartbeat-idle-evening.jsonl")
    heartbeats = [i for i, text in enumerate(r.users, 1) if text.startswith("Read HEARTBEAT.md if it exists")]
    assert len(heartbeats) >= 12 and len(r.users) == len(heartbeats) + 1
    assert analyzed(r.path, "openclaw-2026.6").summary["runs"] == len(r.users)
    per_run = Counter(c["run"] for c in r.calls)
    assert set(per_run) == set(heartbeats) and max(per_run.values()) <= 5, "each heartbeat is a short run"
    for command in ("ls -la ~/inbox", "tail -5 /var/log/restic-backup.log"):
        calls = r.execs(command)
        assert len(calls) == len(heartbeats) and len({Raw.text(c) for c in calls}) <= 3, "nothing changes all evening"
    assert sum(1 for c in r.calls if c["tool"] == "exec" and c["args"]["command"].startswith("mv ")) == 1
    replies = [b["text"] for m in r.assistants if m["stopReason"] == "stop" for b in m["content"] if b["type"] == "text"]
    assert replies.count("HEARTBEAT_OK") == len(heartbeats)


# --- the generator ----------------------------------------------------------------------------------------


def test_generator_is_deterministic(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(GENERATOR), "--out-dir", str(tmp_path)], check=True, capture_output=True)
    written = sorted(p.name for p in tmp_path.glob("*.jsonl"))
    assert written == [p.name for p in FIXTURES]
    for path in FIXTURES:
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_generator_uses_the_standard_library_only() -> None:
    """The generator, and the JSON helper it shares with the incident generator (fixtures/jsjson.py)."""
    for script in (GENERATOR, GENERATOR.with_name("jsjson.py")):
        tree = ast.parse(script.read_text(encoding="utf-8"))
        modules = {(node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
                   for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                   for alias in node.names}
        assert modules <= set(sys.stdlib_module_names) | {"__future__", "jsjson"}, (script.name, modules)
