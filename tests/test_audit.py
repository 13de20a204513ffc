"""`loopscan audit`: discovery, ranking, equality with analyze, formats, exit statuses."""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path

import polars as pl
import pytest

from loopscan.analysis.audit import run_audit
from loopscan.analysis.session import analyze_path
from loopscan.engine.config import ConfigRequest
from transcript import Transcript, text_result


def _reads(n: int, same: bool = True, *, start_day: int = 12, session: str = "s") -> Transcript:
    t = Transcript(session_id=f"{session}-0000-4000-8000-000000000000")
    shift = (start_day - 12) * 86400
    t._clock = t._clock.fromtimestamp(t._clock.timestamp() + shift, t._clock.tzinfo)
    t.header["timestamp"] = t._clock.isoformat().replace("+00:00", "Z")
    t.user("Check the config.")
    for i in range(n):
        t.tool("read", {"path": "/etc/app.yaml"}, text_result("port: 1" if same else f"port: {i}", {"ok": True}))
    t.reply()
    return t


@pytest.fixture
def state(tmp_path) -> Path:
    """An OpenClaw state dir: two agents, a night of sessions, and files that are not sessions."""
    main = tmp_path / "state" / "agents" / "main" / "sessions"
    ops = tmp_path / "state" / "agents" / "ops" / "sessions"
    _reads(25, session="blocked").write(main, "blocked.jsonl")
    _reads(12, same=False, session="warned").write(main, "warned.jsonl")
    _reads(3, session="clean", start_day=14).write(ops, "clean.jsonl")
    _reads(25, session="archived").write(main, "old.jsonl.reset.2026-06-01T00-00-00.000Z")
    _reads(25, session="ckpt").write(main, "blocked.checkpoint.1f2e.jsonl")
    (main / "sessions.json").write_text("{}")
    (main / "blocked.jsonl.lock").write_text("")
    (ops / "garbage.jsonl").write_text("this is not json\n")
    return tmp_path / "state"




def test_default_discovery_ranking_and_exit_status(cli, state):
    code, out, err = cli("audit", "-f", "json", "--jobs", "1", environ={"OPENCLAW_STATE_DIR": str(state)})
    assert code == 1  # a session would have been blocked
    doc = json.loads(out)
    assert doc["schema"] == "loopscan.audit/1"
    names = [Path(r["path"]).name for r in doc["sessions"]]
    assert names == ["blocked.jsonl", "warned.jsonl", "clean.jsonl", "garbage.jsonl"]  # checkpoint, lock, store, archive: never
    blocked, warned, clean, garbage = doc["sessions"]
    assert blocked["block"]["detector"] == "generic_repeat" and blocked["block"]["call_index"] == 21
    assert blocked["agent_id"] == "main" and clean["agent_id"] == "ops"
    assert warned["first_warning"] == {"detector": "generic_repeat", "call_index": 11} and warned["block"] is None
    assert garbage["error"] and "garbage.jsonl" in garbage["error"] and "garbage.jsonl" in err
    assert doc["totals"] == {
        "sessions": 4, "sessions_warned": 2, "sessions_blocked": 1,
        "tokens": blocked["total_tokens"] + warned["total_tokens"] + clean["total_tokens"],
        "tokens_after_block": blocked["block"]["tokens_after"],
        "cost_usd": doc["totals"]["cost_usd"], "cost_after_block_usd": doc["totals"]["cost_after_block_usd"],
        "errors": 1,
    }


def test_an_audit_row_equals_analyze_of_the_same_file(state):
    request = ConfigRequest()
    rows = {Path(r["path"]).name: r for r in run_audit([str(p) for p in sorted(state.rglob("*.jsonl"))], request, jobs=1)}
    path = state / "agents" / "main" / "sessions" / "blocked.jsonl"
    single = analyze_path(str(path), request)
    row = rows["blocked.jsonl"]
    assert row["tool_calls"] == single.summary["tool_calls"]
    assert row["total_tokens"] == single.summary["total_tokens"]
    assert row["block"]["tokens_after"] == single.block["tokens_after"]
    assert row["block"]["call_index"] == single.block["call_index"]


def test_parallel_equals_serial(state):
    paths = [str(p) for p in sorted(state.rglob("*.jsonl"))]
    serial = sorted(run_audit(paths, ConfigRequest(), jobs=1), key=lambda r: r["path"])
    parallel = sorted(run_audit(paths, ConfigRequest(), jobs=2), key=lambda r: r["path"])
    assert serial == parallel


def test_include_archived(cli, state):
    _, out, _ = cli("audit", str(state), "-f", "json", "--include-archived")
    names = {Path(r["path"]).name for r in json.loads(out)["sessions"]}
    assert "old.jsonl.reset.2026-06-01T00-00-00.000Z" in names
    assert not any("checkpoint" in n for n in names)


def test_per_agent_override_selects_thresholds(cli, state, tmp_path):
    config = tmp_path / "openclaw.json"
    config.write_text("{tools:{loopDetection:{enabled:true}}, agents:{list:[{id:'main', tools:{loopDetection:{criticalThreshold:15}}}]}}")
    _, out, _ = cli("audit", str(state), "-f", "json", "--config", str(config))
    rows = {Path(r["path"]).name: r for r in json.loads(out)["sessions"]}
    assert rows["blocked.jsonl"]["block"]["call_index"] == 16


@pytest.mark.parametrize("since,until,expected", [
    ("2026-06-13", None, {"clean.jsonl"}),
    ("20260612", "20260613", {"blocked.jsonl", "warned.jsonl"}),
    (None, "2026-06-12T08:00:00Z", set()),
])
def test_since_until(cli, state, since, until, expected):
    args = ["audit", str(state), "-f", "json", "--timezone", "UTC"]
    args += ["--since", since] if since else []
    args += ["--until", until] if until else []
    _, out, _ = cli(*args)
    names = {Path(r["path"]).name for r in json.loads(out)["sessions"] if not r["error"]}
    assert names == expected


def test_bad_date_is_a_usage_error(cli, state):
    assert cli("audit", str(state), "--since", "last tuesday")[0] == 2


def test_strict_and_fail_on(cli, state):
    assert cli("audit", str(state), "--fail-on", "never")[0] == 0
    assert cli("audit", str(state), "--fail-on", "never", "--strict")[0] == 1
    ops = state / "agents" / "ops" / "sessions"
    assert cli("audit", str(ops / "clean.jsonl"))[0] == 0
    assert cli("audit", str(ops / "clean.jsonl"), str(state / "agents" / "main" / "sessions" / "warned.jsonl"),
               "--fail-on", "warning")[0] == 1


def test_nothing_readable_exits_2(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    assert cli("audit", str(tmp_path / "empty"))[0] == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00" * 64)
    assert cli("audit", str(bad))[0] == 2


def test_csv_and_parquet_are_flat(cli, state, tmp_path):
    _, out, _ = cli("audit", str(state), "-f", "csv")
    frame = pl.read_csv(io.StringIO(out))
    assert {"block_detector", "block_call_index", "block_tokens_after", "worst_repeat_key", "error"} <= set(frame.columns)
    assert frame.height == 4
    target = tmp_path / "night.parquet"
    code, out, _ = cli("audit", str(state), "-f", "parquet", "-o", str(target))
    assert out == "" and pl.read_parquet(target).filter(pl.col("block_detector") == "generic_repeat").height == 1
    assert cli("audit", str(state), "-f", "parquet")[0] == 2  # parquet needs --output


def test_robust_to_symlink_loops_vanished_and_truncated_gzip(cli, state, tmp_path):
    sessions = state / "agents" / "main" / "sessions"
    os.symlink(sessions, sessions / "loop")
    raw = (sessions / "blocked.jsonl").read_bytes()
    with gzip.open(sessions / "cut.jsonl.gz", "wb") as fh:
        fh.write(raw)
    data = (sessions / "cut.jsonl.gz").read_bytes()
    (sessions / "cut.jsonl.gz").write_bytes(data[: len(data) // 2])
    code, out, err = cli("audit", str(state), "-f", "json")
    rows = {Path(r["path"]).name: r for r in json.loads(out)["sessions"]}
    assert rows["cut.jsonl.gz"]["error"] is None and 0 < rows["cut.jsonl.gz"]["tool_calls"] < 25
    assert sum(1 for r in json.loads(out)["sessions"] if r["path"].endswith("blocked.jsonl")) == 1
    vanished = list(run_audit([str(tmp_path / "vanished.jsonl")], ConfigRequest(), jobs=1))
    assert vanished[0]["error"].endswith("no such file")


def test_table_has_a_totals_line(cli, state):
    _, out, _ = cli("audit", str(state), "-f", "table")
    assert "would have been blocked" in out and "generic_repeat @21" in out


def test_symlinked_folders_are_not_followed_out_of_the_tree(cli, state, tmp_path):
    outside = tmp_path / "elsewhere"
    _reads(25, session="outside").write(outside, "foreign.jsonl")
    os.symlink(outside, state / "agents" / "main" / "sessions" / "link-out")
    names = {Path(r["path"]).name for r in cli("audit", str(state), "-f", "json").json["sessions"]}
    assert "foreign.jsonl" not in names and "blocked.jsonl" in names


def test_markdown(cli, state):
    md = cli("audit", str(state), "-f", "markdown").out
    assert md.startswith("# loopscan audit") and "generic\\_repeat @21" in md and "unreadable:" in md


def test_a_session_named_twice_is_audited_once(cli, state):
    main = state / "agents" / "main" / "sessions"
    rows = cli("audit", str(state), str(main / "." / "blocked.jsonl"), "-f", "json").json["sessions"]
    assert sum(1 for r in rows if r["path"].endswith("blocked.jsonl")) == 1


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal(monkeypatch, state, tmp_path):
    from typer.testing import CliRunner

    from loopscan.cli import env
    from loopscan.cli.app import app
    from loopscan.cli.env import Environment

    out, err = io.StringIO(), _Terminal()
    monkeypatch.setattr(env, "ENV", Environment(stdout=out, stderr=err, environ={}, home=tmp_path))
    result = CliRunner().invoke(app, ["audit", str(state), "-f", "json", "--jobs", "1"])
    assert result.exit_code == 1 and json.loads(out.getvalue())["schema"] == "loopscan.audit/1"
    assert "files" in err.getvalue()  # the bar drew on the terminal stderr
