"""The audit report: one row per session, ranked by waste, with totals."""

from __future__ import annotations

from typing import IO, Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from loopscan.analysis.audit import flatten
from loopscan.reports.text import number
from loopscan.reports.redact import redact_document


def document(rows: list[dict[str, Any]], totals: dict[str, Any], config: dict[str, Any], redact: bool = True) -> dict[str, Any]:
    doc = {"schema": "loopscan.audit/1", "config": config, "sessions": rows, "totals": totals}
    return redact_document(doc) if redact else doc


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def render_table(doc: dict[str, Any], console: Console) -> None:
    table = Table(title="loopscan audit: sessions ranked by tokens after the block", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    columns = (("#", "right"), ("session", "left"), ("agent", "left"), ("started", "left"), ("calls", "right"),
               ("tokens", "right"), ("first warning", "left"), ("block", "left"), ("tokens after", "right"),
               ("cost after", "right"), ("worst repeat", "left"))
    for name, justify in columns:
        table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis",
                         max_width={"session": 32, "worst repeat": 48}.get(name))
    for i, row in enumerate(doc["sessions"], 1):
        name = Text(_name(row["path"]))
        if row["error"]:
            reason = row["error"].split(": ", 1)[-1]
            table.add_row(str(i), name, row["agent_id"] or "—", "—", "—", "—", "—", "—", "—", "—",
                          Text(f"unreadable: {reason}", style="red"))
            continue
        worst, warn, block = row["worst_repeat"], row["first_warning"], row["block"]
        started = row["started_at"] or ""
        table.add_row(
            str(i),
            name,
            Text(row["agent_id"] or "—"),
            f"{started[5:10]} {started[11:16]}" if started else "—",
            number(row["tool_calls"]),
            number(row["total_tokens"]),
            f"{warn['detector']} @{warn['call_index']}" if warn else "—",
            Text(f"{block['detector']} @{block['call_index']}", style="red") if block else "—",
            number(block["tokens_after"]) if block else "—",
            f"${block['cost_after_usd']:.2f}" if block and block["cost_after_usd"] is not None else "—",
            Text(f"{worst['count']}× {worst['key']}") if worst else "—",
        )
    console.print(table)
    t = doc["totals"]
    console.print(
        f"{t['sessions']} sessions: {t['sessions_blocked']} would have been blocked, {t['sessions_warned']} warned, "
        f"{t['errors']} unreadable; {t['tokens']:,} tokens in all, {t['tokens_after_block']:,} after a block "
        f"(${t['cost_after_block_usd']:.2f} of ${t['cost_usd']:.2f})."
    )


def write_frame(doc: dict[str, Any], fmt: str, out: IO[bytes] | IO[str] | str) -> None:
    """CSV or Parquet, one flat row per session (polars)."""
    import polars as pl

    frame = pl.DataFrame([flatten(r) for r in doc["sessions"]], infer_schema_length=None)
    if fmt == "csv":
        frame.write_csv(out)
    else:
        frame.write_parquet(out)


def render_markdown(doc: dict[str, Any]) -> str:
    from loopscan.reports.markdown import esc

    t = doc["totals"]
    out = ["# loopscan audit", "",
           f"{t['sessions']} sessions: {t['sessions_blocked']} would have been blocked, {t['sessions_warned']} warned, "
           f"{t['errors']} unreadable; {number(t['tokens'])} tokens in all, {number(t['tokens_after_block'])} after a "
           f"block (${t['cost_after_block_usd']:.2f} of ${t['cost_usd']:.2f}).", "",
           "| # | session | agent | started | calls | tokens | first warning | block | tokens after | worst repeat |",
           "|---:|---|---|---|---:|---:|---|---|---:|---|"]
    for i, row in enumerate(doc["sessions"], 1):
        if row["error"]:
            out.append(f"| {i} | {esc(_name(row['path']))} | {esc(row['agent_id'])} | | | | | | | unreadable: {esc(row['error'])} |")
            continue
        warn, block, worst = row["first_warning"], row["block"], row["worst_repeat"]
        first = esc(f"{warn['detector']} @{warn['call_index']}") if warn else "—"
        stop = esc(f"{block['detector']} @{block['call_index']}") if block else "—"
        repeated = esc(f"{worst['count']}× {worst['key']}") if worst else "—"
        out.append(
            f"| {i} | {esc(_name(row['path']))} | {esc(row['agent_id'])} | {esc(row['started_at'])} | "
            f"{number(row['tool_calls'])} | {number(row['total_tokens'])} | {first} | {stop} | "
            f"{number(block['tokens_after']) if block else '—'} | {repeated} |"
        )
    return "\n".join(out) + "\n"
