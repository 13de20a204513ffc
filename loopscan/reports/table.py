"""The terminal report (`--format table`), rendered with rich."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from loopscan.reports.text import block_sentence, config_text, number


SPARK = "▁▂▃▄▅▆▇█"
MAX_FAILURE_ROWS = 15


def sparkline(values: list[int], width: int = 60) -> str:
    if not values:
        return ""
    if len(values) > width:  # max per bucket keeps peaks visible
        step = len(values) / width
        values = [max(values[int(i * step): max(int((i + 1) * step), int(i * step) + 1)]) for i in range(width)]
    top = max(values) or 1
    return "".join(SPARK[min(len(SPARK) - 1, v * len(SPARK) // (top + 1))] for v in values)


def render(doc: dict[str, Any], console: Console) -> None:
    """The analyze document (already redacted) as a terminal report."""
    s, sess, cfg = doc["summary"], doc["session"], doc["config"]
    style = "bold red" if doc["block"] else ("bold yellow" if doc["firings"] else "bold green")
    console.print(Text(doc["verdict"], style=style))
    head = Table.grid(padding=(0, 2))
    head.add_column(style="dim")
    head.add_column()
    for label, value in (
        ("session", sess["session_id"]),
        ("file", sess["path"]),
        ("agent", sess["agent_id"]),
        ("models", ", ".join(sess["models"]) or None),
        ("started", sess["started_at"]),
        ("duration", f"{sess['duration_s'] / 60:.1f} min" if sess["duration_s"] is not None else None),
        ("final state", s["final_state"]),
    ):
        head.add_row(label, number(value))
    console.print(Panel(head, title="session", expand=False))

    summary = Table(title="summary", show_header=False, box=None, padding=(0, 2))
    pairs = [
        ("tool calls", s["tool_calls"]), ("tool errors", s["tool_errors"]),
        ("model turns", s["assistant_turns"]), ("runs", s["runs"]),
        ("prompt tokens", s["prompt_tokens"]), ("output tokens", s["output_tokens"]),
        ("cache read", s["cache_read_tokens"]), ("cache write", s["cache_write_tokens"]),
        ("total tokens", s["total_tokens"]), ("peak context", s["peak_context_tokens"]),
        ("cost (USD)", s["cost_usd"]), ("turn failures", s["turn_failures"]),
        ("aborted turns", s["aborted_turns"]), ("prompt errors", s["prompt_errors"]),
        ("compactions", s["compactions"]), ("bad lines", s["bad_lines"]),
    ]
    for i in range(0, len(pairs), 2):
        (a, av), (b, bv) = pairs[i], pairs[i + 1]
        summary.add_row(a, number(av), b, number(bv))
    console.print(summary)

    contexts = [t["context_tokens"] for t in doc["tokens"]]
    if contexts:
        console.print(f"context per turn  {sparkline(contexts)}  peak {number(max(contexts))}")

    if doc["repeats"]:
        rep = Table(title="most repeated calls", title_justify="left")
        rep.add_column("count", justify="right")
        rep.add_column("outcomes", justify="right")
        rep.add_column("tool")
        rep.add_column("command / arguments", overflow="fold")
        rep.add_column("calls", justify="right")
        for r in doc["repeats"][:10]:
            rep.add_row(str(r["count"]), str(r["distinct_outcomes"]), r["tool"], Text(r["key"]),
                        f"{r['first_call']}–{r['last_call']}")
        console.print(rep)

    if doc["failures"]:
        fail = Table(title=f"failures ({len(doc['failures'])}, in time order)", title_justify="left")
        for col in ("time", "kind", "call/turn", "message"):
            fail.add_column(col, justify="right" if col == "call/turn" else "left", overflow="fold")
        shown = doc["failures"] if len(doc["failures"]) <= MAX_FAILURE_ROWS else doc["failures"][-MAX_FAILURE_ROWS:]
        for f in shown:
            fail.add_row((f["timestamp"] or "—")[11:19], f["kind"], number(f["call_or_turn"]), Text(f["message"]))
        console.print(fail)
        if len(shown) < len(doc["failures"]):
            console.print(Text(f"(the last {len(shown)} shown; --format json/markdown/html list all)", style="dim"))
    console.print(Text(config_text(cfg), style="dim"))
    if doc["firings"]:
        fire = Table(title="detector firings", title_justify="left")
        for col in ("call", "level", "detector", "count", "tool", "tokens so far"):
            fire.add_column(col, justify="right" if col in ("call", "count", "tokens so far") else "left")
        for f in doc["firings"]:
            fire.add_row(str(f["call_index"]), Text(f["level"], style="red" if f["level"] == "critical" else "yellow"),
                         f["detector"], str(f["count"]), f["tool"], number(f["tokens_so_far"]))
        console.print(fire)
    if doc["block"]:
        console.print(Text(block_sentence(doc["block"]), style="bold red"))
    if doc["notes"]:
        console.print(Group(*(Text(n, style="dim") for n in doc["notes"][:10])))
