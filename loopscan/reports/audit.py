"""The audit report: one row per session, ranked by waste, with totals."""

from __future__ import annotations

from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from loopscan.analysis.audit import flatten
from loopscan.reports.redact import redact_document


def document(rows: list[dict[str, Any]], totals: dict[str, Any], config: dict[str, Any], redact: bool = True) -> dict[str, Any]:
    doc = {"schema": "loopscan.audit/1", "config": config, "sessions": rows, "totals": totals}
    return redact_document(doc) if redact else doc


def _n(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def render_table(doc: dict[str, Any], console: Console) -> None:
    table = Table(title="loopscan audit — sessions ranked by tokens after the block", title_justify="left")
    for name, right in (("#", True), ("session", False), ("agent", False), ("started", False), ("calls", True),
                        ("tokens", True), ("worst repeat", False), ("first warning", False), ("block", False),
                        ("tokens after", True), ("cost after", True)):
        table.add_column(name, justify="right" if right else "left", overflow="fold")
    for i, row in enumerate(doc["sessions"], 1):
        if row["error"]:
            table.add_row(str(i), Text(row["path"]), row["agent_id"] or "—", "—", "—", "—",
                          Text(f"error: {row['error']}", style="red"), "", "", "", "")
            continue
        worst, warn, block = row["worst_repeat"], row["first_warning"], row["block"]
        table.add_row(
            str(i),
            Text(str(row["session_id"])[:18]),
            Text(row["agent_id"] or "—"),
            (row["started_at"] or "—")[:16],
            _n(row["tool_calls"]),
            _n(row["total_tokens"]),
            Text(f"{worst['count']}× {worst['key'][:60]}") if worst else "—",
            f"{warn['detector']} @{warn['call_index']}" if warn else "—",
            Text(f"{block['detector']} @{block['call_index']}", style="red") if block else "—",
            _n(block["tokens_after"]) if block else "—",
            f"${block['cost_after_usd']:.2f}" if block and block["cost_after_usd"] is not None else "—",
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
