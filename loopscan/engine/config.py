"""`tools.loopDetection`: defaults, per-agent merge, what-if overrides, OpenClaw's integer rule and clamping."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loopscan.engine.profiles import get_profile

DETECTOR_SWITCHES = ("genericRepeat", "knownPollNoProgress", "pingPong")
DETECTOR_ALIASES = {
    "generic_repeat": "genericRepeat",
    "known_poll_no_progress": "knownPollNoProgress",
    "ping_pong": "pingPong",
}
DEFAULTS: dict[str, int] = {
    "historySize": 30,
    "warningThreshold": 10,
    "criticalThreshold": 20,
    "unknownToolThreshold": 10,
    "globalCircuitBreakerThreshold": 30,
}
DEFAULT_WINDOW = 3
# loopscan's own detectors (never read from openclaw.json: only loopscan options set them)
SESSION_DEFAULTS: dict[str, int] = {"sessionWarning": 12, "sessionCritical": 18, "sessionWindow": 30}
BUDGETS = ("tokenBudget", "maxIterations")


@dataclass(frozen=True)
class LoopConfig:
    """The resolved config a replay runs with (thresholds after the integer rule and clamping)."""

    profile: str = "openclaw-2026.6"
    source: str = "defaults"
    enabled_in_config: bool | None = None  # what the file said: True, False, or not set
    as_configured: bool = False  # honour `enabled` like OpenClaw (default: simulate as enabled)
    historySize: int = 30
    warningThreshold: int = 10
    criticalThreshold: int = 20
    globalCircuitBreakerThreshold: int = 30
    unknownToolThreshold: int = 10
    detectors: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(DETECTOR_SWITCHES, True))
    windowSize: int = DEFAULT_WINDOW
    clamped: tuple[str, ...] = ()
    # session_no_progress (the `loopscan` profile): of the last sessionWindow outcomes, how many
    # repeated an earlier (tool, arguments, outcome) triple
    sessionWarning: int = 12
    sessionCritical: int = 18
    sessionWindow: int = 30
    tokenBudget: int | None = None  # token_budget: block the first call once the session used this many tokens
    maxIterations: int | None = None  # iteration_budget: block the first call of tool round N+1 of a run

    @property
    def detection_enabled(self) -> bool:
        """Rolling detectors run: always when simulating, else only with `enabled: true`."""
        return self.enabled_in_config is True or not self.as_configured

    @property
    def guard_enabled(self) -> bool:
        """The post-compaction guard runs unless `enabled` is explicitly false (and honoured)."""
        return self.enabled_in_config is not False or not self.as_configured

    @property
    def records_history(self) -> bool:
        """OpenClaw records calls even when detection is off, except with `enabled: false`."""
        return self.guard_enabled

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "source": self.source,
            "enabled_in_config": self.enabled_in_config,
            "simulated_enabled": self.detection_enabled,
            "historySize": self.historySize,
            "warningThreshold": self.warningThreshold,
            "criticalThreshold": self.criticalThreshold,
            "globalCircuitBreakerThreshold": self.globalCircuitBreakerThreshold,
            "unknownToolThreshold": self.unknownToolThreshold,
            "detectors": dict(self.detectors),
            "postCompactionGuard": {"windowSize": self.windowSize},
            "clamped": list(self.clamped),
            "loopscan": {
                "sessionNoProgress": {"warning": self.sessionWarning, "critical": self.sessionCritical,
                                      "window": self.sessionWindow},
                "tokenBudget": self.tokenBudget,
                "maxIterations": self.maxIterations,
            },
        }


def positive_int(value: Any) -> int | None:
    """OpenClaw's rule: an integer > 0 counts (`3.0`, `1e1` are integers, as in JavaScript)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if value > 0 else None


def loop_detection_block(document: Any, agent: str | None) -> dict[str, Any]:
    """`tools.loopDetection`, with `agents.list[id == agent].tools.loopDetection` merged field by field."""
    if not isinstance(document, dict):
        return {}
    merged = _block(document.get("tools"))
    agents = document.get("agents")
    entries = agents.get("list") if isinstance(agents, dict) else None
    if agent and isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, dict) and entry.get("id") == agent:
                merged = _merge(merged, _block(entry.get("tools")))
    return merged


def _block(tools: Any) -> dict[str, Any]:
    block = tools.get("loopDetection") if isinstance(tools, dict) else None
    return block if isinstance(block, dict) else {}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def resolve(
    block: dict[str, Any] | None = None,
    *,
    overrides: dict[str, Any] | None = None,
    profile: str = "openclaw-2026.6",
    source: str = "defaults",
    as_configured: bool = False,
) -> LoopConfig:
    """Resolve a `tools.loopDetection` block plus what-if overrides into a LoopConfig.

    `overrides` keys are the config field names (`warningThreshold`, ..., `windowSize`,
    `detectors`: {name: bool}); they replace the file's values before the integer rule and clamping.
    """
    block = dict(block or {})
    overrides = overrides or {}
    enabled = block.get("enabled")
    if get_profile(profile).fixed_thresholds:
        block = {}  # that release reads only `enabled`; what-if overrides still apply
    values = {
        name: positive_int(overrides.get(name, block.get(name))) or default for name, default in DEFAULTS.items()
    }
    raw_detectors = block.get("detectors") if isinstance(block.get("detectors"), dict) else {}
    detectors = {
        name: raw_detectors.get(name) is not False for name in DETECTOR_SWITCHES
    }
    detectors.update(overrides.get("detectors") or {})
    guard = block.get("postCompactionGuard") if isinstance(block.get("postCompactionGuard"), dict) else {}
    window = positive_int(overrides.get("windowSize", guard.get("windowSize"))) or DEFAULT_WINDOW
    session = {name: positive_int(overrides.get(name)) or default for name, default in SESSION_DEFAULTS.items()}
    budgets = {name: positive_int(overrides.get(name)) for name in BUDGETS}
    clamped = []
    if session["sessionCritical"] <= session["sessionWarning"]:
        session["sessionCritical"] = session["sessionWarning"] + 1
        clamped.append("sessionCritical")
    if values["criticalThreshold"] <= values["warningThreshold"]:
        values["criticalThreshold"] = values["warningThreshold"] + 1
        clamped.append("criticalThreshold")
    if values["globalCircuitBreakerThreshold"] <= values["criticalThreshold"]:
        values["globalCircuitBreakerThreshold"] = values["criticalThreshold"] + 1
        clamped.append("globalCircuitBreakerThreshold")
    return LoopConfig(
        profile=profile,
        source=source,
        enabled_in_config=enabled if isinstance(enabled, bool) else None,
        as_configured=as_configured,
        detectors=detectors,
        windowSize=window,
        clamped=tuple(clamped),
        **values,
        **session,
        **budgets,
    )


@dataclass(frozen=True)
class ConfigRequest:
    """Everything a user said about the config; resolved per session (the agent selects an override)."""

    document: Any = None  # the parsed openclaw.json, or None
    source: str = "defaults"
    overrides: dict[str, Any] = field(default_factory=dict)
    profile: str = "openclaw-2026.6"
    as_configured: bool = False
    agent: str | None = None  # --agent; else the session's agent folder

    def resolve(self, session_agent: str | None = None) -> LoopConfig:
        return resolve(
            loop_detection_block(self.document, self.agent or session_agent),
            overrides=self.overrides,
            profile=self.profile,
            source=self.source,
            as_configured=self.as_configured,
        )
