"""`openclaw-2026.8`: thresholds fixed at the defaults, vetoes extend streaks, exec failure identity."""

from __future__ import annotations

from loopscan.analysis.session import analyze_path
from loopscan.engine.config import ConfigRequest
from transcript import Transcript, json_result, text_result


def _block(path, profile: str, **kwargs):
    return analyze_path(str(path), ConfigRequest(profile=profile, **kwargs)).block


def test_thresholds_in_the_file_are_ignored_but_what_if_overrides_apply():
    document = {"tools": {"loopDetection": {"enabled": True, "warningThreshold": 3, "criticalThreshold": 5}}}
    cfg = ConfigRequest(document=document, profile="openclaw-2026.8").resolve()
    assert (cfg.warningThreshold, cfg.criticalThreshold, cfg.enabled_in_config) == (10, 20, True)
    assert ConfigRequest(document=document, profile="openclaw-2026.6").resolve().criticalThreshold == 5
    cfg = ConfigRequest(document=document, profile="openclaw-2026.8", overrides={"criticalThreshold": 15}).resolve()
    assert cfg.criticalThreshold == 15


def test_failed_exec_retries_are_one_failure_identity(tmp_path):
    """Upstream case 29 (2026.6: only a warning) blocks under 2026.8: 'attempt i' is masked."""
    t = Transcript()
    t.user("deploy")
    for i in range(30):
        text = f"Runtime failed before spawn: attempt {i + 1}"
        t.tool("exec", {"command": "./deploy.sh"},
               text_result(text, {"status": "failed", "exitCode": None, "aggregated": "", "timedOut": False}))
    path = t.write(tmp_path)
    assert _block(path, "openclaw-2026.6") is None
    block = _block(path, "openclaw-2026.8")
    assert block["detector"] == "generic_repeat" and block["call_index"] == 21 and block["count"] == 20


def test_a_completed_exec_is_not_masked_by_the_failure_identity(tmp_path):
    t = Transcript()
    t.user("count")
    for i in range(25):
        t.tool("exec", {"command": "date"}, text_result(f"attempt {i}", {"status": "completed", "exitCode": 0,
                                                                        "aggregated": f"attempt {i}"}))
    assert _block(t.write(tmp_path), "openclaw-2026.8") is None


def test_the_detectors_own_veto_extends_the_streak(tmp_path):
    """Recorded vetoes (a loop blocked live) count as the outcome they vetoed under 2026.8; under
    2026.6 they carry no hash and the streak waits for real outcomes."""
    t = Transcript()
    t.user("read it again")
    same = text_result("port: 1", {"ok": True})
    veto = json_result({"status": "blocked", "deniedReason": "tool-loop", "reason": "CRITICAL: loop"})
    for _ in range(5):
        t.tool("read", {"path": "/etc/app.yaml"}, same)
    for _ in range(3):
        t.tool("read", {"path": "/etc/app.yaml"}, veto)
    for _ in range(6):
        t.tool("read", {"path": "/etc/app.yaml"}, same)
    path = t.write(tmp_path)
    overrides = {"warningThreshold": 5, "criticalThreshold": 10}
    b8 = _block(path, "openclaw-2026.8", overrides=overrides)
    b6 = _block(path, "openclaw-2026.6", overrides=overrides)
    assert (b8["call_index"], b8["count"]) == (11, 10)  # 5 reads + 3 vetoes + 2 reads before call 11
    assert (b6["call_index"], b6["count"]) == (14, 10)  # the 3 vetoes do not count
