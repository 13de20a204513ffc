"""The command line: formats, exit statuses, stdout/stderr discipline, secrets, escaping."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loopscan.cli.app import app
from transcript import Transcript, text_result

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SECRETS = FIXTURES / "secrets" / "leaky-commands.jsonl"
PLANTED = json.loads((FIXTURES / "secrets" / "planted-secrets.json").read_text())






def _reads(n: int, same_output: bool = True) -> Transcript:
    t = Transcript()
    t.user("Read the config until it changes.")
    for i in range(n):
        text = "port: 8080" if same_output else f"port: {8000 + i}"
        t.tool("read", {"path": "/etc/app/config.yaml"}, text_result(text, {"ok": True}))
    t.reply("Gave up.")
    return t


@pytest.fixture
def clean(tmp_path) -> Path:
    t = Transcript()
    t.user("List the workspace.")
    t.tool("exec", {"command": "ls"}, text_result("a\nb", {"status": "completed", "exitCode": 0, "aggregated": "a\nb"}))
    t.reply()
    return t.write(tmp_path / "clean")


@pytest.fixture
def warned(tmp_path) -> Path:
    return _reads(12, same_output=False).write(tmp_path / "warned")


@pytest.fixture
def blocked(tmp_path) -> Path:
    return _reads(25).write(tmp_path / "blocked")


def test_clean_session_exits_0_with_the_contract_fields(cli, clean):
    r = cli("analyze", str(clean), "--format", "json")
    assert r.code == 0, r.err
    doc = r.json
    assert doc["schema"] == "loopscan.analyze/1"
    for part in ("session", "config", "summary", "repeats", "tokens", "failures", "firings", "block"):
        assert part in doc
    assert doc["summary"]["tool_calls"] == 1 and doc["block"] is None
    assert r.err == ""


def test_non_terminal_stdout_defaults_to_json(cli, clean):
    assert cli("analyze", str(clean)).json["schema"] == "loopscan.analyze/1"


def test_warned_session_exits_0_unless_fail_on_warning(cli, warned):
    r = cli("analyze", str(warned), "-f", "json")
    assert r.code == 0
    assert [f["level"] for f in r.json["firings"]] == ["warning"]
    assert cli("analyze", str(warned), "--fail-on", "warning").code == 1


def test_blocked_session_exits_1_and_reports_the_block(cli, blocked):
    r = cli("analyze", str(blocked), "-f", "json")
    assert r.code == 1
    block = r.json["block"]
    assert block["detector"] == "generic_repeat" and block["call_index"] == 21 and block["count"] == 20
    assert block["calls_after"] == 5  # calls 21..25 would not have run
    assert block["tokens_after"] > 0 and block["seconds_after"] > 0
    assert cli("analyze", str(blocked), "--fail-on", "never").code == 0


def test_thresholds_on_the_command_line_change_the_block(cli, blocked):
    r = cli("analyze", str(blocked), "-f", "json", "--warning", "3", "--critical", "5")
    assert r.json["block"]["call_index"] == 6
    assert r.json["config"]["warningThreshold"] == 3 and r.json["config"]["criticalThreshold"] == 5


def test_clamping_is_reported(cli, clean):
    cfg = cli("analyze", str(clean), "-f", "json", "--warning", "25").json["config"]
    assert cfg["criticalThreshold"] == 26 and cfg["globalCircuitBreakerThreshold"] == 30
    assert cfg["clamped"] == ["criticalThreshold"]


def test_missing_file_exits_2_naming_it(cli, tmp_path):
    missing = tmp_path / "nope.jsonl"
    r = cli("analyze", str(missing))
    assert r.code == 2
    assert str(missing) in r.err and r.out == ""


def test_binary_file_exits_2(cli, tmp_path):
    path = tmp_path / "core.jsonl"
    path.write_bytes(b"\x7fELF\x00\x00\x00" * 100)
    r = cli("analyze", str(path))
    assert r.code == 2 and "binary" in r.err


def test_one_unreadable_file_among_several_is_reported_and_skipped(cli, clean, tmp_path):
    r = cli("analyze", str(clean), str(tmp_path / "gone.jsonl"), "-f", "json")
    assert r.code == 0
    assert len(r.json) == 1 and "gone.jsonl" in r.err


def test_bad_config_exits_2_with_file_line_and_column(cli, clean, tmp_path):
    config = tmp_path / "openclaw.json"
    config.write_text('{\n  tools: {\n    loopDetection: { enabled: true,, }\n  }\n}\n')
    r = cli("analyze", str(clean), "--config", str(config))
    assert r.code == 2
    assert f"{config}:3:" in r.err


def test_enabled_false_is_simulated_but_said_plainly(cli, blocked, tmp_path):
    config = tmp_path / "openclaw.json"
    config.write_text("// as shipped\n{tools: {loopDetection: {enabled: false, criticalThreshold: 15,}}}\n")
    doc = cli("analyze", str(blocked), "-f", "json", "--config", str(config)).json
    assert doc["config"]["enabled_in_config"] is False and doc["config"]["source"] == str(config)
    assert doc["block"]["call_index"] == 16
    assert "enabled:false" in doc["verdict"]
    honoured = cli("analyze", str(blocked), "-f", "json", "--config", str(config), "--as-configured")
    assert honoured.code == 0 and honoured.json["firings"] == [] and honoured.json["block"] is None


def test_config_found_through_the_environment(cli, blocked, tmp_path):
    config = tmp_path / "oc.json"
    config.write_text('{"tools": {"loopDetection": {"warningThreshold": 4, "criticalThreshold": 8}}}')
    doc = cli("analyze", str(blocked), "-f", "json", environ={"OPENCLAW_CONFIG_PATH": str(config)}).json
    assert doc["block"]["call_index"] == 9


def test_stdin(cli, blocked):
    r = cli("analyze", "-", "-f", "json", stdin=blocked.read_text())
    assert r.json["session"]["path"] == "-" and r.json["block"]["call_index"] == 21


def test_detector_switches(cli, blocked):
    r = cli("analyze", str(blocked), "-f", "json", "--no-detector", "genericRepeat")
    assert r.json["config"]["detectors"]["genericRepeat"] is False
    assert r.json["block"] is None
    only = cli("analyze", str(blocked), "-f", "json", "--detectors", "pingPong").json["config"]["detectors"]
    assert only == {"genericRepeat": False, "knownPollNoProgress": False, "pingPong": True}
    assert cli("analyze", str(blocked), "--no-detector", "bogus").code == 2


def test_unknown_profile_is_a_usage_error(cli, clean):
    assert cli("analyze", str(clean), "--profile", "openclaw-1999").code == 2


def test_trace_lists_calls_up_to_the_block(cli, blocked):
    calls = cli("analyze", str(blocked), "-f", "json", "--trace").json["calls"]
    assert [c["index"] for c in calls] == list(range(1, 22))
    assert calls[-1]["decision"] == {"level": "critical", "detector": "generic_repeat", "count": 20}
    assert all(len(c["args_hash"]) == len("read:") + 64 for c in calls)


@pytest.mark.parametrize("fmt", ["json", "markdown", "html", "table"])
def test_no_planted_secret_survives_any_format(cli, fmt):
    r = cli("analyze", str(SECRETS), "-f", fmt, "--fail-on", "never")
    assert r.code == 0
    leaked = [name for name, value in PLANTED.items() if value in r.out or value in r.err]
    assert leaked == []
    assert "REDACTED" in r.out


def test_no_redact_shows_the_secrets(cli):
    r = cli("analyze", str(SECRETS), "-f", "json", "--no-redact", "--fail-on", "never")
    assert PLANTED["wp_password"] in r.out


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)


def test_html_never_turns_transcript_text_into_markup(cli, tmp_path):
    t = Transcript()
    t.user("go")
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)"> [click](http://evil.example) | cell'
    for _ in range(3):
        t.tool("exec", {"command": evil}, text_result("x", {"status": "completed", "exitCode": 1, "aggregated": evil}))
    path = t.write(tmp_path)
    page = cli("analyze", str(path), "-f", "html", "--fail-on", "never").out
    parser = _Collect()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags
    assert not any(name.startswith("on") for name, _ in parser.attrs)
    assert "&lt;script&gt;" in page
    md = cli("analyze", str(path), "-f", "markdown", "--fail-on", "never").out
    assert "<script>" not in md and not re.search(r"(?<!\\)\]\(http", md)
    for line in md.splitlines():
        if line.startswith("| 3 |"):  # the repeats row keeps its 5 cells
            assert line.count(" | ") == 4  # the escaped \\| inside the command is not a separator


def test_html_is_self_contained(cli, blocked):
    page = cli("analyze", str(blocked), "-f", "html", "--fail-on", "never").out
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<style>" in page
    assert "http://" not in page.replace("http://www.w3.org", "") and "<script" not in page
    assert "block" in page


def test_output_file(cli, blocked, tmp_path):
    target = tmp_path / "report.md"
    r = cli("analyze", str(blocked), "-f", "markdown", "-o", str(target))
    assert r.code == 1 and r.out == ""
    assert "generic\\_repeat" in target.read_text()


def test_version_names_the_parser_backends(cli):
    r = cli("--version")
    assert r.code == 0 and "loopscan" in r.out and "ijson backend yajl2_c" in r.out


def test_short_help(cli):
    r = CliRunner().invoke(app, ["analyze", "-h"])
    assert r.exit_code == 0 and "--fail-on" in r.output


def test_input_is_never_modified(cli, blocked):
    before = (blocked.read_bytes(), os.stat(blocked).st_mtime_ns)
    cli("analyze", str(blocked), "-f", "html")
    assert (blocked.read_bytes(), os.stat(blocked).st_mtime_ns) == before


def test_warnings_below_ten_are_marked_as_not_emitted_by_openclaw(cli, warned):
    firings = cli("analyze", str(warned), "-f", "json", "--warning", "3").json["firings"]
    assert [(f["count"], f["emitted_by_openclaw"]) for f in firings] == [(3, False), (10, True)]


def test_runs_inferred_only_without_written_run_ids(cli):
    assert cli("analyze", str(FIXTURES / "formats" / "v4-runid-lines.jsonl"), "-f", "json").json["session"]["runs_inferred"] is False
    assert cli("analyze", str(FIXTURES / "incident" / "deepseek-doom-loop.jsonl"), "-f", "json", "--fail-on", "never").json["session"]["runs_inferred"] is True


def test_python_dash_m_runs_the_cli(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "loopscan", "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("loopscan ")
