"""The detector options shared by analyze and audit, declared once and turned into a ConfigRequest."""

from __future__ import annotations

import functools
import inspect
import typing
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from loopscan.cli import env
from loopscan.cli.status import ExitStatus
from loopscan.configfile import ConfigError, load, locate
from loopscan.engine.config import DETECTOR_ALIASES, DETECTOR_SWITCHES, ConfigRequest
from loopscan.engine.profiles import DEFAULT_PROFILE, PROFILES

_KW = inspect.Parameter.KEYWORD_ONLY
_PANEL = "Detector config"


def _opt(name: str, annotation: Any, default: Any, *flags: str, help: str) -> inspect.Parameter:
    return inspect.Parameter(
        name, _KW, default=default,
        annotation=Annotated[annotation, typer.Option(*flags, help=help, rich_help_panel=_PANEL)],
    )


THRESHOLD_FLAGS = {  # option -> config field
    "warning": "warningThreshold",
    "critical": "criticalThreshold",
    "global_": "globalCircuitBreakerThreshold",
    "unknown": "unknownToolThreshold",
    "history": "historySize",
    "window": "windowSize",
    "session_warning": "sessionWarning",
    "session_critical": "sessionCritical",
    "session_window": "sessionWindow",
    "token_budget": "tokenBudget",
    "max_iterations": "maxIterations",
}

DETECTOR_PARAMS = [
    _opt("config", Optional[Path], None, "--config",
         help="openclaw.json (JSON5). Default: $OPENCLAW_CONFIG_PATH, else ~/.openclaw/openclaw.json."),
    _opt("agent", Optional[str], None, "--agent", help="Agent id whose per-agent override applies (default: the session's agent folder)."),
    _opt("profile", str, DEFAULT_PROFILE, "--profile", help=f"Detector release profile: {', '.join(PROFILES)}."),
    _opt("as_configured", bool, False, "--as-configured", help="Honour enabled:false like OpenClaw (default: simulate as enabled)."),
    _opt("warning", Optional[int], None, "--warning", help="warningThreshold override."),
    _opt("critical", Optional[int], None, "--critical", help="criticalThreshold override."),
    _opt("global_", Optional[int], None, "--global", help="globalCircuitBreakerThreshold override."),
    _opt("unknown", Optional[int], None, "--unknown", help="unknownToolThreshold override."),
    _opt("history", Optional[int], None, "--history", help="historySize override."),
    _opt("window", Optional[int], None, "--window", help="postCompactionGuard.windowSize override."),
    _opt("session_warning", Optional[int], None, "--session-warning",
         help="session_no_progress warning level (loopscan profile): stale calls among the last --session-window (default 12)."),
    _opt("session_critical", Optional[int], None, "--session-critical", help="session_no_progress critical level (default 18)."),
    _opt("session_window", Optional[int], None, "--session-window", help="session_no_progress window of recent outcomes (default 30)."),
    _opt("token_budget", Optional[int], None, "--token-budget", help="token_budget: block the first call once the session used N tokens."),
    _opt("max_iterations", Optional[int], None, "--max-iterations", help="iteration_budget: block the first call of tool round N+1 of a run."),
    _opt("detectors", Optional[str], None, "--detectors",
         help="Comma list of the switchable detectors to keep on (genericRepeat, knownPollNoProgress, pingPong); the rest off."),
    _opt("no_detector", Optional[list[str]], None, "--no-detector", help="Turn one switchable detector off (repeatable)."),
]
_NAMES = [p.name for p in DETECTOR_PARAMS]


def with_detector_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the detector options to a command; it receives them as `request: ConfigRequest`."""
    signature = inspect.signature(func)
    hints = typing.get_type_hints(func, include_extras=True)  # resolve string annotations here
    own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()]
    params = [p for p in own if p.name != "request"] + DETECTOR_PARAMS

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in _NAMES}
        kwargs["request"] = build_request(**given)
        return func(*args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


def _detector_name(name: str) -> str:
    key = name.strip()
    key = DETECTOR_ALIASES.get(key, key)
    if key not in DETECTOR_SWITCHES:
        raise typer.BadParameter(f"unknown detector {name!r} (switchable: {', '.join(DETECTOR_SWITCHES)})")
    return key


def build_request(*, config: Path | None, agent: str | None, profile: str, as_configured: bool,
                  detectors: str | None, no_detector: list[str] | None, **thresholds: int | None) -> ConfigRequest:
    if profile not in PROFILES:
        raise typer.BadParameter(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})", param_hint="--profile")
    overrides: dict[str, Any] = {
        THRESHOLD_FLAGS[name]: value for name, value in thresholds.items() if value is not None
    }
    switches: dict[str, bool] = {}
    if detectors is not None:
        switches = parse_detector_variant(detectors)
    for name in no_detector or ():
        switches[_detector_name(name)] = False
    if switches:
        overrides["detectors"] = switches
    e = env.ENV
    path = locate(str(config) if config else None, e.environ, e.home)
    document, source = None, "defaults"
    if path is not None:
        try:
            document = load(path)
        except ConfigError as exc:
            e.stderr.write(f"loopscan: {exc}\n")
            raise typer.Exit(ExitStatus.ERROR) from None
        source = str(path)
    return ConfigRequest(document=document, source=source, overrides=overrides, profile=profile,
                         as_configured=as_configured, agent=agent)


def parse_detector_variant(text: str) -> dict[str, bool]:
    """`all`, `none`, or a comma list of the switchable detectors kept on."""
    key = text.strip().lower()
    if key == "all":
        return dict.fromkeys(DETECTOR_SWITCHES, True)
    if key == "none":
        return dict.fromkeys(DETECTOR_SWITCHES, False)
    keep = {_detector_name(n) for n in text.split(",") if n.strip()}
    return {name: name in keep for name in DETECTOR_SWITCHES}
