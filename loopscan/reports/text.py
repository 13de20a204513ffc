"""Wording and number formats shared by every report format (plain text: each format escapes it)."""

from __future__ import annotations

from typing import Any


def number(value: Any) -> str:
    """Thousands separators; floats to at most 4 decimals; None as a dash."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.4f}".rstrip("0").rstrip(".")
    return f"{value:,}" if isinstance(value, int) else str(value)


def short_number(n: float) -> str:
    for unit, size in (("M", 1e6), ("K", 1e3)):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return f"{n:.0f}"


def block_sentence(block: dict[str, Any]) -> str:
    cost = f", cost ${block['cost_after_usd']:.2f}" if block["cost_after_usd"] is not None else ""
    minutes = f" and ran {block['seconds_after'] / 60:.0f} minutes" if block["seconds_after"] is not None else ""
    return (
        f"critical at call {block['call_index']} ({block['detector']}, count {block['count']}): after it the "
        f"session made {block['calls_after']} calls, used {block['tokens_after']:,} tokens "
        f"({block['tokens_after_pct']}% of the session){cost}{minutes}."
    )


def config_text(cfg: dict[str, Any]) -> str:
    off = [k for k, v in cfg["detectors"].items() if not v]
    text = (
        f"config ({cfg['profile']}, {cfg['source']}): warning {cfg['warningThreshold']}, "
        f"critical {cfg['criticalThreshold']}, global {cfg['globalCircuitBreakerThreshold']}, "
        f"unknown {cfg['unknownToolThreshold']}, history {cfg['historySize']}, "
        f"guard window {cfg['postCompactionGuard']['windowSize']}"
    )
    if off:
        text += f"; off: {', '.join(off)}"
    ours = cfg["loopscan"]
    if cfg["profile"] == "loopscan":
        session = ours["sessionNoProgress"]
        text += (f"; session_no_progress warning {session['warning']}, critical {session['critical']} "
                 f"of the last {session['window']}")
    if ours["tokenBudget"] is not None:
        text += f"; token budget {ours['tokenBudget']:,}"
    if ours["maxIterations"] is not None:
        text += f"; at most {ours['maxIterations']} tool rounds a run"
    if cfg["clamped"]:
        text += f"; clamped: {', '.join(cfg['clamped'])}"
    if cfg["enabled_in_config"] is False:
        text += "; the config file says enabled:false" + (" (honoured)" if not cfg["simulated_enabled"] else " (simulated as enabled)")
    return text
