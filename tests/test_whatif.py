"""`loopscan whatif`: one observe-replay per (profile, history), every config evaluated over it —
and each grid row equal to what `analyze` reports for that config."""

from __future__ import annotations

import io
import json
from pathlib import Path

import json5
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from loopscan.analysis import whatif as wi
from loopscan.analysis.session import analyze_path
from loopscan.engine.config import ConfigRequest
from transcript import Call, Transcript, json_result, text_result, thrown


# --- sessions with every kind of loop -----------------------------------------------------------

def reads(n: int, same: bool = True) -> Transcript:
    t = Transcript()
    t.user("check")
    for i in range(n):
        t.tool("read", {"path": "/etc/app.yaml"}, text_result("port: 1" if same else f"port: {i}", {"ok": True}))
    t.reply()
    return t


def polls(n: int) -> Transcript:
    t = Transcript()
    t.user("wait for the build")
    for _ in range(n):
        t.tool("process", {"action": "poll", "sessionId": "tidy-reef"},
               text_result("(no new output)\n\nProcess still running.", {"status": "running", "sessionId": "tidy-reef", "aggregated": "steady"}))
    return t


def ping_pong(n: int) -> Transcript:
    t = Transcript()
    t.user("fix it")
    for i in range(n):
        if i % 2:
            t.tool("list", {"dir": "/workspace"}, text_result("a b c", {"ok": True}))
        else:
            t.tool("read", {"path": "/a.txt"}, text_result("same", {"ok": True}))
    return t


def unknown_tool(n: int) -> Transcript:
    t = Transcript()
    t.user("search the web")
    for i in range(n):
        t.tool("browser", {"url": f"https://example.com/{i}"}, thrown("browser", "Unknown tool: browser"))
    return t


def guard_loop(before: int = 4) -> Transcript:
    t = reads(before)
    t.compaction()
    for _ in range(4):
        t.tool("read", {"path": "/etc/app.yaml"}, text_result("port: 1", {"ok": True}))
    return t


@pytest.fixture(scope="module")
def sessions(tmp_path_factory) -> list[str]:
    root = tmp_path_factory.mktemp("night")
    built = {"reads": reads(30), "drift": reads(14, same=False), "polls": polls(26), "pingpong": ping_pong(24),
             "unknown": unknown_tool(14), "guard": guard_loop(), "guard-warned": guard_loop(9), "short": reads(6)}
    return [str(t.write(root, f"{name}.jsonl")) for name, t in built.items()]


def _analyze_row(path: str, cfg: dict) -> tuple:
    overrides = {k: cfg[k] for k in ("warningThreshold", "criticalThreshold", "globalCircuitBreakerThreshold",
                                     "unknownToolThreshold", "historySize")}
    overrides["detectors"] = cfg["detectors"]
    ours = cfg["loopscan"]
    overrides.update(sessionWarning=ours["sessionNoProgress"]["warning"], sessionCritical=ours["sessionNoProgress"]["critical"],
                     sessionWindow=ours["sessionNoProgress"]["window"], tokenBudget=ours["tokenBudget"],
                     maxIterations=ours["maxIterations"])
    result = analyze_path(path, ConfigRequest(overrides=overrides, profile=cfg["profile"]))
    warnings = sum(1 for f in result.firings if f["level"] == "warning")
    block = result.block
    return (block and (block["call_index"], block["detector"], block["count"], block["tokens_after"])), warnings


def _grid_rows(sessions: list[str], axes: wi.GridAxes, baseline: set[str] = frozenset()) -> list[dict]:
    grid = wi.build_grid(axes, ConfigRequest())
    variants = sorted({g.variant() for g in grid})
    observed = wi.observe_all(sessions, ConfigRequest(), variants, jobs=1)
    return wi.evaluate(grid, observed, set(baseline))


def _assert_rows_equal_analyze(rows: list[dict], sessions: list[str]) -> None:
    for row in rows:
        blocked = {s["path"]: (s["block_call_index"], s["detector"], s["count"], s["tokens_saved"]) for s in row["sessions"]}
        warnings = 0
        for path in sessions:
            block, warned = _analyze_row(path, row["config"])
            assert blocked.get(path) == (block or None), (path, row["config"])
            warnings += warned
        assert row["warnings"] == warnings, row["config"]


def test_grid_rows_equal_analyze_on_every_kind_of_loop(sessions):
    axes = wi.GridAxes(warning=[3, 8, 10], critical=[6, 20], global_=[12, 30], unknown=[5, 10], history=[10, 30],
                       profiles=["openclaw-2026.6", "openclaw-2026.2"],
                       detector_sets=[{"genericRepeat": True, "knownPollNoProgress": True, "pingPong": True},
                                      {"genericRepeat": False, "knownPollNoProgress": True, "pingPong": False}])
    rows = _grid_rows(sessions, axes)
    detectors = {s["detector"] for r in rows for s in r["sessions"]}
    assert {"generic_repeat", "known_poll_no_progress", "ping_pong", "unknown_tool_repeat",
            "global_circuit_breaker", "compaction_loop_persisted"} <= detectors
    _assert_rows_equal_analyze(rows, sessions)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    w=st.integers(1, 25), c=st.integers(1, 30), g=st.integers(1, 40), u=st.integers(1, 15),
    h=st.sampled_from([5, 12, 30]), profile=st.sampled_from(["openclaw-2026.6", "openclaw-2026.2", "openclaw-2026.8", "loopscan"]),
    switches=st.fixed_dictionaries({k: st.booleans() for k in ("genericRepeat", "knownPollNoProgress", "pingPong")}),
    sw=st.integers(1, 20), sc=st.integers(1, 25), swin=st.sampled_from([10, 30]),
    tb=st.none() | st.integers(10_000, 400_000), mi=st.none() | st.integers(1, 30),
)
def test_any_random_config_equals_analyze(sessions, w, c, g, u, h, profile, switches, sw, sc, swin, tb, mi):
    rows = _grid_rows(sessions, wi.GridAxes(warning=[w], critical=[c], global_=[g], unknown=[u], history=[h],
                                            profiles=[profile], detector_sets=[switches], session_warning=[sw],
                                            session_critical=[sc], session_window=[swin],
                                            token_budget=[tb] if tb else None, max_iterations=[mi] if mi else None))
    assert len(rows) == 1
    _assert_rows_equal_analyze(rows, sessions)


@pytest.mark.parametrize("text,values", [
    ("5:15", list(range(5, 16))), ("10:40:5", [10, 15, 20, 25, 30, 35, 40]), ("20,30,40", [20, 30, 40]),
    ("25", [25]), ("5:7,20", [5, 6, 7, 20]),
])
def test_parse_values(text, values):
    assert wi.parse_values(text) == values


@pytest.mark.parametrize("bad", ["5:", "a", "10:20:0", ","])
def test_parse_values_rejects(bad):
    with pytest.raises(ValueError):
        wi.parse_values(bad)


def test_clamped_duplicates_are_merged_and_counted():
    grid = wi.build_grid(wi.GridAxes(warning=[10, 11, 12], critical=[5, 8]), ConfigRequest())
    # critical <= warning always clamps to warning + 1: 3 configs, each merged from 2 asked combinations
    assert [(g.config.warningThreshold, g.config.criticalThreshold, len(g.asked)) for g in grid] == [
        (10, 11, 2), (11, 12, 2), (12, 13, 2)]
    assert all(g.config.clamped == ("criticalThreshold",) for g in grid)


def test_recommend_blocks_no_baseline_and_prefers_the_gentler_config(sessions):
    baseline = {s for s in sessions if s.endswith("drift.jsonl")}  # 14 reads with changing output: healthy
    rows = wi.rank_rows(_grid_rows(sessions, wi.GridAxes(warning=[5, 10], critical=[12, 20, 25]), baseline))
    rec = wi.recommend(rows)
    assert rec is not None
    best = [r for r in rows if r["config"] == rec["config"]][0]
    assert best["baseline_blocked"] == 0
    assert best["tokens_saved"] == max(r["tokens_saved"] for r in rows if r["baseline_blocked"] == 0)
    equally_good = [r for r in rows if r["baseline_blocked"] == 0 and r["tokens_saved"] == best["tokens_saved"]]
    assert best["config"]["criticalThreshold"] == max(r["config"]["criticalThreshold"] for r in equally_good)
    snippet = json5.loads(rec["snippet"])
    assert snippet["tools"]["loopDetection"]["enabled"] is True
    assert snippet["tools"]["loopDetection"]["criticalThreshold"] == rec["config"]["criticalThreshold"]


# --- the command ----------------------------------------------------------------------------------



def test_whatif_json_contract(cli, sessions):
    healthy = next(s for s in sessions if s.endswith("drift.jsonl"))
    code, out, _ = cli("whatif", *sessions, "--baseline", healthy, "--warning", "5:10", "--critical", "10:20:5",
                       "--recommend", "-f", "json", "--jobs", "1")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "loopscan.whatif/1"
    assert len(doc["grid"]) == 6 * 3  # w10/c10 clamps to w10/c11, which no other combination gives
    for row in doc["grid"]:
        assert {"config", "sessions_blocked", "tokens_saved", "calls_saved", "warnings", "baseline_blocked",
                "sessions"} <= set(row)
    assert doc["recommended"]["snippet"].startswith("// openclaw.json")
    blocks_baseline = [r["baseline_blocked"] > 0 for r in doc["grid"]]
    assert blocks_baseline == sorted(blocks_baseline)  # rows that block a healthy session come last


def test_whatif_profiles_side_by_side_and_formats(cli, sessions, tmp_path):
    code, out, _ = cli("whatif", *sessions, "--profile", "openclaw-2026.6,openclaw-2026.2", "-f", "csv")
    frame = pl.read_csv(io.StringIO(out))
    assert set(frame["profile"]) == {"openclaw-2026.6", "openclaw-2026.2"}
    assert {"tokens_saved", "baseline_blocked", "criticalThreshold", "detector_pingPong"} <= set(frame.columns)
    page = tmp_path / "grid.html"
    code, _, _ = cli("whatif", *sessions, "--warning", "5:10", "--critical", "10:20:5", "--baseline", sessions[0],
                     "-f", "html", "-o", str(page))
    html = page.read_text()
    assert code == 0 and html.startswith("<!DOCTYPE html>") and "w 5" in html and "c 20" in html and "✕" in html


def test_whatif_usage_errors(cli, sessions):
    assert cli("whatif", *sessions, "--warning", "x:y")[0] == 2
    assert cli("whatif", *sessions, "--profile", "openclaw-1999")[0] == 2
    assert cli("whatif", *sessions, "-f", "parquet")[0] == 2


def test_whatif_markdown(cli, sessions):
    md = cli("whatif", *sessions, "--critical", "10,20", "--recommend", "-f", "markdown").out
    assert md.startswith("# loopscan whatif: 2 configs") and "```json5" in md and "enabled: true" in md


def test_a_baseline_named_another_way_is_the_same_session(cli, sessions):
    reads30 = Path(sessions[0])
    other_spelling = str(reads30.parent / "." / reads30.name)
    doc = cli("whatif", *sessions, "--baseline", other_spelling, "--critical", "20", "-f", "json").json
    assert doc["sessions"] == len(sessions) and doc["baseline_sessions"] == 1
    assert doc["grid"][0]["baseline_blocked"] == 1  # reads.jsonl (30 identical reads) is blocked at critical 20


def test_whatif_table(cli, sessions):
    out = cli("whatif", *sessions, "--critical", "10,20", "--recommend", "-f", "table").out
    assert "loopscan whatif: 2 configs" in out and "w10 c20 g30" in out and "recommended" in out
