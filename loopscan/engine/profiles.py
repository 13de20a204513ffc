"""Release profiles: which behaviours of OpenClaw's loop detector a replay follows.

A profile is data (switches), not a copy of the engine: the engine consults these flags.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    run_scoping: bool = True  # detection sees only the current run; outcomes attach within a run
    unknown_tool_detector: bool = True
    exec_outcome_hash: bool = True  # exec results hashed by {status, exitCode, timedOut, output}
    generic_critical: bool = True  # generic repeats block at the critical threshold
    strip_send_ids: bool = True  # send-like results hashed without volatile ids (#89090)
    loop_veto_unhashed: bool = True  # the detector's own veto result gets no outcome hash
    update_plan_shape: bool = True  # update_plan params/details reduced to their status shape
    warning_key_per_run: bool = True  # warning buckets are kept per run
    # OpenClaw 2026.8
    fixed_thresholds: bool = False  # the file's thresholds are ignored (only `enabled` is read)
    veto_extends_streak: bool = False  # the detector's own veto counts as the outcome it vetoed again
    exec_failure_identity: bool = False  # failed exec output hashed with times, attempts, pids masked
    # loopscan's own fixes for what upstream users asked for (detector.md section 7)
    noise_tolerant_exec: bool = False  # exec output hashed with volatile parts masked (#93917)
    session_no_progress: bool = False  # session-wide no-progress detector, any tool (#79252, #97577)


OPENCLAW_2026_6 = Profile(
    "openclaw-2026.6",
    "OpenClaw May-July 2026 (e.g. 2026.6.10): run-scoped history, exec outcome hash, unknown-tool detector",
)
OPENCLAW_2026_2 = replace(
    OPENCLAW_2026_6,
    name="openclaw-2026.2",
    description="OpenClaw Feb-Apr 2026: session-wide history, whole-result hashing, generic repeats only warn",
    run_scoping=False,
    unknown_tool_detector=False,
    exec_outcome_hash=False,
    generic_critical=False,
    strip_send_ids=False,
    loop_veto_unhashed=False,
    update_plan_shape=False,
    warning_key_per_run=False,
)

OPENCLAW_2026_8 = replace(
    OPENCLAW_2026_6,
    name="openclaw-2026.8",
    description="OpenClaw Aug 2026 on: fixed thresholds, vetoes extend streaks, exec failure identity "
    "(its argument-churn warning is not replayed)",
    fixed_thresholds=True,
    loop_veto_unhashed=False,
    veto_extends_streak=True,
    exec_failure_identity=True,
)
LOOPSCAN = replace(
    OPENCLAW_2026_6,
    name="loopscan",
    description="openclaw-2026.6 plus noise-tolerant exec outcomes and a session-wide no-progress breaker",
    noise_tolerant_exec=True,
    session_no_progress=True,
)

PROFILES = {p.name: p for p in (OPENCLAW_2026_6, OPENCLAW_2026_2, OPENCLAW_2026_8, LOOPSCAN)}
DEFAULT_PROFILE = OPENCLAW_2026_6.name


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(PROFILES)
        raise ValueError(f"unknown profile {name!r} (known: {known})") from None
