"""The what-if report: grid rows (best first), the recommended config, a warning x critical heatmap."""

from __future__ import annotations

from html import escape
from typing import IO, Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from loopscan.reports.html import CSS
from loopscan.reports.text import short_number


def document(rows: list[dict[str, Any]], recommended: dict[str, Any] | None, sessions: int, baseline: int,
             errors: list[str]) -> dict[str, Any]:
    return {"schema": "loopscan.whatif/1", "sessions": sessions, "baseline_sessions": baseline, "errors": errors,
            "grid": rows, "recommended": recommended}


def _cfg(c: dict[str, Any]) -> str:
    off = [k for k, v in c["detectors"].items() if not v]
    return (f"w{c['warningThreshold']} c{c['criticalThreshold']} g{c['globalCircuitBreakerThreshold']} "
            f"u{c['unknownToolThreshold']} h{c['historySize']}" + (f" off:{','.join(off)}" if off else ""))


def render_table(doc: dict[str, Any], console: Console, top: int = 25) -> None:
    table = Table(title=f"loopscan whatif: {len(doc['grid'])} configs over {doc['sessions']} sessions "
                  f"({doc['baseline_sessions']} baseline), best first", title_justify="left", box=box.SIMPLE_HEAD)
    for name, right in (("profile", False), ("config", False), ("blocked", True), ("tokens saved", True),
                        ("calls saved", True), ("minutes saved", True), ("cost saved", True), ("warnings", True),
                        ("baseline blocked", True), ("merged", True)):
        table.add_column(name, justify="right" if right else "left", no_wrap=True)
    for row in doc["grid"][:top]:
        c = row["config"]
        table.add_row(c["profile"], _cfg(c), str(row["sessions_blocked"]), f"{row['tokens_saved']:,}",
                      f"{row['calls_saved']:,}", f"{row['seconds_saved'] / 60:,.0f}", f"${row['cost_saved_usd']:.2f}",
                      str(row["warnings"]),
                      Text(str(row["baseline_blocked"]), style="red" if row["baseline_blocked"] else ""),
                      str(row["merged_from"]))
    console.print(table)
    if len(doc["grid"]) > top:
        console.print(f"… {len(doc['grid']) - top} more rows (--format json for all)")
    rec = doc["recommended"]
    if rec:
        console.print(Text("recommended (most tokens saved, no baseline session blocked):", style="bold green"))
        console.print(rec["snippet"], markup=False, highlight=False)
    elif doc["recommended"] is None:
        console.print("no config saves tokens without blocking a baseline session" if doc["baseline_sessions"]
                      else "no config of the grid blocks any session")


def write_frame(doc: dict[str, Any], fmt: str, out: IO[bytes] | IO[str] | str) -> None:
    import polars as pl

    flat = []
    for row in doc["grid"]:
        c = row["config"]
        flat.append({
            "profile": c["profile"], "historySize": c["historySize"], "warningThreshold": c["warningThreshold"],
            "criticalThreshold": c["criticalThreshold"], "globalCircuitBreakerThreshold": c["globalCircuitBreakerThreshold"],
            "unknownToolThreshold": c["unknownToolThreshold"],
            **{f"detector_{k}": v for k, v in c["detectors"].items()},
            **{k: row[k] for k in ("sessions_blocked", "tokens_saved", "calls_saved", "seconds_saved",
                                   "cost_saved_usd", "warnings", "baseline_blocked", "merged_from")},
        })
    frame = pl.DataFrame(flat, infer_schema_length=None)
    if fmt == "csv":
        frame.write_csv(out)
    else:
        frame.write_parquet(out)


def render_html(doc: dict[str, Any]) -> str:
    """A heatmap of tokens saved over warning x critical (best row of each cell), baseline blocks marked."""
    cells: dict[tuple[int, int], dict[str, Any]] = {}
    for row in doc["grid"]:
        c = row["config"]
        key = (c["warningThreshold"], c["criticalThreshold"])
        best = cells.get(key)
        if best is None or (row["baseline_blocked"] == 0, row["tokens_saved"]) > (best["baseline_blocked"] == 0, best["tokens_saved"]):
            cells[key] = row
    warnings = sorted({w for w, _ in cells})
    criticals = sorted({c for _, c in cells})
    top = max((r["tokens_saved"] for r in cells.values()), default=0) or 1
    head = "".join(f"<th class=\"n\">c {c}</th>" for c in criticals)
    body = []
    for w in warnings:
        tds = []
        for c in criticals:
            row = cells.get((w, c))
            if row is None:
                tds.append("<td></td>")
                continue
            shade = int(235 - 150 * row["tokens_saved"] / top)
            mark = row["baseline_blocked"] > 0
            style = f"background:rgb({shade},{min(255, shade + 25)},255)" + (";outline:2px solid #c62828" if mark else "")
            title = escape(f"{_cfg(row['config'])}: {row['tokens_saved']:,} tokens saved, "
                           f"{row['sessions_blocked']} blocked, {row['baseline_blocked']} baseline blocked")
            tds.append(f'<td class="n" style="{style}" title="{title}">{short_number(row["tokens_saved"])}'
                       + (' <span class="critical">✕</span>' if mark else "") + "</td>")
        body.append(f"<tr><th>w {w}</th>{''.join(tds)}</tr>")
    rec = doc["recommended"]
    rec_html = (f"<h2>Recommended</h2><pre>{escape(rec['snippet'])}</pre>" if rec else
                "<p>No config saves tokens without blocking a baseline session.</p>")
    rows = "".join(
        f"<tr><td>{escape(r['config']['profile'])}</td><td>{escape(_cfg(r['config']))}</td>"
        f"<td class=\"n\">{r['sessions_blocked']}</td><td class=\"n\">{r['tokens_saved']:,}</td>"
        f"<td class=\"n\">{r['warnings']}</td><td class=\"n\">{r['baseline_blocked']}</td></tr>"
        for r in doc["grid"][:50]
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>loopscan whatif</title><style>{CSS}'
        "td.n{min-width:4.5rem}</style></head><body>"
        f"<h1>loopscan whatif: {len(doc['grid'])} configs over {doc['sessions']} sessions</h1>"
        "<p class=\"muted\">Tokens saved by the best config of each warning × critical cell (other axes vary); "
        "✕ with a red outline: that best config blocks a baseline (healthy) session.</p>"
        f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f"{rec_html}<h2>Best configs</h2><table><thead><tr><th>profile</th><th>config</th><th class=\"n\">blocked</th>"
        f"<th class=\"n\">tokens saved</th><th class=\"n\">warnings</th><th class=\"n\">baseline blocked</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></body></html>\n"
    )


def render_markdown(doc: dict[str, Any], top: int = 25) -> str:
    out = [f"# loopscan whatif: {len(doc['grid'])} configs over {doc['sessions']} sessions "
           f"({doc['baseline_sessions']} baseline)", "",
           "| profile | config | blocked | tokens saved | calls saved | minutes saved | cost saved | warnings | baseline blocked |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for row in doc["grid"][:top]:
        c = row["config"]
        out.append(f"| {c['profile']} | {_cfg(c)} | {row['sessions_blocked']} | {row['tokens_saved']:,} | "
                   f"{row['calls_saved']:,} | {row['seconds_saved'] / 60:,.0f} | ${row['cost_saved_usd']:.2f} | "
                   f"{row['warnings']} | {row['baseline_blocked']} |")
    if len(doc["grid"]) > top:
        out += ["", f"… {len(doc['grid']) - top} more rows (--format json for all)"]
    if doc["recommended"]:
        out += ["", "## Recommended", "", "```json5", doc["recommended"]["snippet"].rstrip(), "```"]
    return "\n".join(out) + "\n"
