"""The bundled incident transcript (fixtures/incident/deepseek-doom-loop.jsonl) and what loopscan reports.

Expectations come from the incident's facts (the generator's parameters) and from an independent
reading of the raw JSONL with the standard json module, never from loopscan's own output.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from loopscan.analysis.session import analyze_path
from loopscan.engine.config import ConfigRequest

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "fixtures" / "generate_incident.py"
INCIDENT = ROOT / "fixtures" / "incident" / "deepseek-doom-loop.jsonl"

SKILL = "/home/node/.openclaw/workspace/skills/blog-publisher-wordpress"
LS = f"ls -la {SKILL}/"
FIND = f"find {SKILL} -type f"
TAIL = f"tail -100 {SKILL}/publish.log"
NOT_MODEL_OUTPUT = {"delivery-mirror", "gateway-injected", "acp-runtime"}


import generate_incident as gen  # noqa: E402  (fixtures/ is on sys.path: tests/conftest.py)


# --- an independent reading of the raw file ------------------------------------------------------


class Raw:
    """Facts of the transcript, read with json alone (the oracle the loopscan results are checked against)."""

    def __init__(self, path: Path):
        self.entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        self.header = self.entries[0]
        self.calls: list[dict] = []  # {"id", "command", "run"} in file order
        self.results: dict[str, dict] = {}
        self.model_turns: list[dict] = []
        self.user_texts: list[str] = []
        run = 0
        for entry in self.entries[1:]:
            msg = entry.get("message") or {}
            role = msg.get("role")
            if role == "user":
                run += 1
                self.user_texts.append(msg["content"][0]["text"])
            elif role == "assistant":
                for block in msg["content"]:
                    if block["type"] == "toolCall":
                        self.calls.append({"id": block["id"], "command": block["arguments"]["command"], "run": run,
                                           "arguments": block["arguments"]})
                if msg.get("model") not in NOT_MODEL_OUTPUT:
                    self.model_turns.append(msg)
            elif role == "toolResult":
                self.results[msg["toolCallId"]] = msg
        self.custom = [e for e in self.entries if e["type"] == "custom"]

    def commands(self) -> Counter:
        return Counter(c["command"] for c in self.calls)

    def exec_outcomes(self, command: str) -> set:
        """Distinct exec outcomes of a command as OpenClaw 2026.6 hashes them: status, exit code, output."""
        out = set()
        for call in self.calls:
            if call["command"] == command:
                res = self.results[call["id"]]
                d = res["details"]
                out.add((d["status"], d["exitCode"], d.get("aggregated") or res["content"][0]["text"]))
        return out

    @staticmethod
    def prompt(msg: dict) -> int:
        u = msg["usage"]
        return u["input"] + u["cacheRead"] + u["cacheWrite"]


@pytest.fixture(scope="module")
def raw() -> Raw:
    return Raw(INCIDENT)


@pytest.fixture(scope="module")
def result():
    return analyze_path(str(INCIDENT))


@pytest.fixture(scope="module")
def result_2026_2():
    return analyze_path(str(INCIDENT), ConfigRequest(profile="openclaw-2026.2"))


def session_reader(raw: Raw) -> str:
    return gen.SESSION_READER_TEMPLATE.format(sid=raw.header["id"])


def matches(key: str, command: str) -> bool:
    """A repeat key is the command, whitespace-collapsed and possibly clipped with an ellipsis."""
    flat = " ".join(command.split())
    return key == flat or (key.endswith("…") and flat.startswith(key[:-1]))


# --- the fixture itself ---------------------------------------------------------------------------


def test_generator_is_deterministic_and_matches_the_committed_file(tmp_path):
    out = tmp_path / "incident.jsonl"
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(out)], check=True, capture_output=True)
    assert out.read_bytes() == INCIDENT.read_bytes()


def test_fixture_shape(raw):
    assert INCIDENT.stat().st_size < 1_000_000
    h = raw.header
    assert (h["type"], h["version"], h["cwd"]) == ("session", 3, "/home/node/.openclaw/workspace")
    ids = [e["id"] for e in raw.entries[1:]]
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids) and len(set(ids)) == len(ids)
    # one linear parentId chain
    assert raw.entries[1]["parentId"] is None
    assert all(b["parentId"] == a["id"] for a, b in zip(raw.entries[1:], raw.entries[2:]))
    types = Counter(e["type"] for e in raw.entries)
    assert types["compaction"] == 0 and types["model_change"] == 1 and types["thinking_level_change"] == 1
    custom = Counter(e["customType"] for e in raw.custom)
    assert custom["model-snapshot"] == 1 and custom["openclaw:bootstrap-context:full"] == 1
    assert custom["openclaw:prompt-error"] == gen.EXPECTED_PROMPT_ERRORS == 4
    assert any(e["type"] == "custom_message" and e["customType"] == "openclaw.runtime-context"
               and e["display"] is False for e in raw.entries)
    assert raw.user_texts[1] == "any progress?" and raw.user_texts[-1] == "/stop" and len(raw.user_texts) == 3
    # every call is exec with exactly {"command": ...} and has exactly one result
    assert all(c["arguments"] == {"command": c["command"]} for c in raw.calls)
    assert {c["id"] for c in raw.calls} == set(raw.results)
    assert {c["run"] for c in raw.calls} == {1, 2}
    last = raw.entries[-1]["message"]
    assert last["model"] == "gateway-injected" and last["openclawAbort"]["aborted"] is True


def test_fixture_counts(raw):
    counts = raw.commands()
    assert len(raw.calls) == gen.EXPECTED_TOOL_CALLS == 166
    assert counts[LS] == 33
    assert counts[session_reader(raw)] == 20
    assert counts[FIND] == 19
    assert counts[gen.CONFIG_READER] == 8
    assert counts[TAIL] == 5
    repeated = {LS, session_reader(raw), FIND, gen.CONFIG_READER, TAIL}
    others = {c: n for c, n in counts.items() if c not in repeated}
    assert sum(others.values()) == 81 and max(others.values()) <= 3
    assert session_reader(raw).startswith('python3 -c "') and "/agents/main/sessions/" in session_reader(raw)


def test_fixture_outputs_drift_as_described(raw):
    assert len(raw.exec_outcomes(LS)) == 33  # publish.log grows between listings
    assert len(raw.exec_outcomes(FIND)) == 1
    assert len(raw.exec_outcomes(TAIL)) == 3  # changes twice
    assert len(raw.exec_outcomes(session_reader(raw))) == 20  # prints the growing line count
    statuses = Counter((r["details"]["status"], r["details"]["exitCode"]) for r in raw.results.values())
    assert statuses[("failed", 127)] == 2
    assert statuses[("completed", 1)] + statuses[("completed", 2)] >= 5
    for res in raw.results.values():
        d = res["details"]
        if d["exitCode"]:
            assert res["content"][0]["text"].endswith(f"\n\n(Command exited with code {d['exitCode']})")
        else:
            assert d["aggregated"] == res["content"][0]["text"]


def test_fixture_rotation_windows(raw):
    """Rotation keeps every command under 20 per 30 calls, yet ls -la reaches the warning threshold."""
    warned = False
    for run in (1, 2):
        cmds = [c["command"] for c in raw.calls if c["run"] == run]
        for i in range(len(cmds)):
            assert max(Counter(cmds[max(0, i - 29): i + 1]).values()) < 20
            if cmds[i] == LS and Counter(cmds[max(0, i - 30): i])[LS] >= 10:
                warned = True
    assert warned


def test_fixture_tokens_and_time(raw):
    turns = [m for m in raw.model_turns if m["stopReason"] == "toolUse"]
    prompts = [Raw.prompt(m) for m in turns]
    assert prompts[0] == gen.FIRST_CONTEXT and max(prompts) == prompts[-1] == gen.PEAK_CONTEXT
    assert all(b > a for a, b in zip(prompts, prompts[1:]))
    assert all(20 <= m["usage"]["output"] <= 200 for m in turns)
    assert sum(m["usage"]["cacheRead"] for m in turns) > 0.9 * sum(prompts)
    failed = [m for m in raw.model_turns if m["stopReason"] in ("error", "aborted")]
    assert all(m["content"] == [] and m["usage"]["totalTokens"] == 0 for m in failed)
    start = raw.header["timestamp"]
    assert start.startswith("2026-06-14T01:12:00")
    ms = [e["message"]["timestamp"] for e in raw.entries[1:] if "message" in e]
    span_h = (max(ms) - min(ms)) / 3_600_000
    assert 2.25 <= span_h <= 2.75


# --- what loopscan reports --------------------------------------------------------------------------


def test_summary_counts(result, raw):
    s = result.summary
    assert s["tool_calls"] == 166
    assert s["turn_failures"] == 9
    assert s["prompt_errors"] == 4
    assert s["aborted_turns"] == 1
    assert s["final_state"] == "aborted"
    assert s["compactions"] == 0
    assert s["bad_lines"] == 0 and s["skipped_entries"] == 0
    assert s["calls_without_result"] == 0 and s["results_without_call"] == 0
    failures = sum(1 for r in raw.results.values() if r["details"]["exitCode"] != 0)
    assert s["tool_errors"] == failures == 16
    # model turns: every tool turn, the 9 failed attempts and the aborted one; not the gateway-injected row
    assert s["assistant_turns"] == len(raw.model_turns)


def test_runs(result, raw):
    # Runs are inferred per user message (no run ids in v3 JSONL). Three user messages: the request,
    # the "any progress?" nudge, and /stop. The /stop message starts a third run, which holds only the
    # aborted reply and no tool calls; the 166 calls themselves fall into the first two runs.
    assert len(raw.user_texts) == 3
    assert result.summary["runs"] == 3


def test_tokens_and_cost(result, raw):
    s = result.summary
    assert 640_000 <= s["peak_context_tokens"] <= 660_000
    assert s["peak_context_tokens"] == max(Raw.prompt(m) for m in raw.model_turns)
    first = result.tokens[0]["context_tokens"]
    assert 29_000 <= first <= 31_000 and first == Raw.prompt(raw.model_turns[0])
    assert s["output_tokens"] == sum(m["usage"]["output"] for m in raw.model_turns)
    assert 2_000 <= s["output_tokens"] <= 10_000
    assert s["cache_read_tokens"] == sum(m["usage"]["cacheRead"] for m in raw.model_turns)
    assert s["prompt_tokens"] == sum(Raw.prompt(m) for m in raw.model_turns)
    cost = sum(m["usage"]["cost"]["total"] for m in raw.model_turns)
    assert s["cost_usd"] > 0
    assert s["cost_usd"] == pytest.approx(cost, abs=1e-5)
    # priced at DeepSeek's rates: $0.27/M input, $0.07/M cache read, $1.10/M output
    priced = sum((m["usage"]["input"] * 0.27 + m["usage"]["cacheRead"] * 0.07 + m["usage"]["output"] * 1.10) / 1e6
                 for m in raw.model_turns)
    assert cost == pytest.approx(priced, rel=1e-9)


def test_repeats(result, raw):
    expected = [(LS, 33, 33), (session_reader(raw), 20, 20), (FIND, 19, 1), (gen.CONFIG_READER, 8, None),
                (TAIL, 5, 3)]
    top = result.repeats[:5]
    assert [r["count"] for r in top] == [33, 20, 19, 8, 5]
    for rep, (command, count, distinct) in zip(top, expected):
        assert rep["tool"] == "exec"
        assert matches(rep["key"], command), (rep["key"], command)
        assert rep["count"] == count
        if distinct is not None:
            assert rep["distinct_outcomes"] == distinct
    assert all(r["count"] <= 3 for r in result.repeats[5:])


@pytest.mark.parametrize("profile", ["openclaw-2026.6", "openclaw-2026.2"])
def test_detector_warns_but_never_blocks(profile, raw):
    r = analyze_path(str(INCIDENT), ConfigRequest(profile=profile))
    assert r.block is None
    assert all(f["level"] == "warning" for f in r.firings)
    generic = [f for f in r.firings if f["detector"] == "generic_repeat" and f["tool"] == "exec"]
    assert generic
    # the warning is the dense ls -la stretch of the first run (call indexes are 1-based, file order)
    assert any(raw.calls[f["call_index"] - 1]["command"] == LS and f["count"] >= 10 for f in generic)


def test_2026_2_profile_summary_matches(result, result_2026_2):
    assert result_2026_2.summary["tool_calls"] == result.summary["tool_calls"] == 166
    assert result_2026_2.summary["runs"] == 3
    assert result_2026_2.block is None
