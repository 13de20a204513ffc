"""The HTML report (`--format html`): one self-contained file, inline CSS and SVG, no script, no
external fetch, readable when printed. Every transcript string goes through `html.escape`."""

from __future__ import annotations

from html import escape
from typing import Any

from loopscan.reports.text import block_sentence, config_text, number, short_number

CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d2330;margin:2rem auto;max-width:1100px;padding:0 1rem}
h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.8rem 0 .6rem;border-bottom:1px solid #dde2ea;padding-bottom:.2rem}
.verdict{padding:.8rem 1rem;border-radius:6px;font-weight:600;margin-bottom:1rem}
.loop{background:#fdecec;border-left:6px solid #c62828}.warn{background:#fff6e0;border-left:6px solid #e69500}.ok{background:#e9f7ee;border-left:6px solid #2e7d32}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}dl.meta dt{color:#5b6475}dl.meta dd{margin:0;overflow-wrap:anywhere}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:.5rem}
.stat{background:#f5f7fa;border-radius:6px;padding:.5rem .7rem}.stat b{display:block;font-size:1.15rem}.stat span{color:#5b6475;font-size:.85rem}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #e6e9ef;vertical-align:top}
th{background:#f5f7fa}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.t{white-space:nowrap}td.code{font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.critical{color:#c62828;font-weight:600}.warning{color:#a66a00;font-weight:600}.muted{color:#5b6475}
svg{width:100%;height:auto;background:#fff}svg text{font:11px system-ui,sans-serif;fill:#5b6475}
@media print{body{margin:0;max-width:none}.verdict{border:1px solid #999}h2{break-after:avoid}table{break-inside:auto}tr{break-inside:avoid}}
"""


def _num(value: Any) -> str:
    return escape(number(value))


def chart(tokens: list[dict[str, Any]], firings: list[dict[str, Any]], block: dict[str, Any] | None) -> str:
    """Context tokens per model turn, with warning / critical / block turns marked."""
    if not tokens:
        return '<p class="muted">No model turns with token usage.</p>'
    w, h, left, right, top, bottom = 1000, 300, 60, 20, 20, 40
    turns = [t["turn"] for t in tokens]
    first, last = min(turns), max(turns)
    span = max(last - first, 1)
    peak = max(t["context_tokens"] for t in tokens) or 1

    def x(turn: float) -> float:
        return left + (turn - first) / span * (w - left - right)

    def y(v: float) -> float:
        return top + (1 - v / peak) * (h - top - bottom)

    points = " ".join(f"{x(t['turn']):.1f},{y(t['context_tokens']):.1f}" for t in tokens)
    parts = [f'<svg viewBox="0 0 {w} {h}" role="img" aria-label="context tokens per model turn">']
    for frac in (0, 0.25, 0.5, 0.75, 1):
        yy = y(peak * frac)
        parts.append(f'<line x1="{left}" x2="{w - right}" y1="{yy:.1f}" y2="{yy:.1f}" stroke="#eef0f4"/>')
        parts.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{short_number(peak * frac)}</text>')
    for i in range(6):
        turn = first + span * i / 5
        parts.append(f'<text x="{x(turn):.1f}" y="{h - bottom + 16}" text-anchor="middle">{turn:.0f}</text>')
    parts.append(f'<text x="{(w + left) / 2:.0f}" y="{h - 6}" text-anchor="middle">model turn</text>')
    parts.append(f'<polyline fill="none" stroke="#3461c1" stroke-width="2" points="{points}"/>')
    marks = [(f["turn"], f["level"], f"{f['level']} {f['detector']} @ call {f['call_index']}") for f in firings if f.get("turn")]
    if block and block.get("turn"):
        marks.append((block["turn"], "block", f"block: {block['detector']} @ call {block['call_index']}"))
    for turn, level, label in marks:
        color = {"warning": "#e69500", "critical": "#c62828", "block": "#c62828"}[level]
        dash = ' stroke-dasharray="4 3"' if level == "warning" else ""
        width = 3 if level == "block" else 1.5
        parts.append(
            f'<line x1="{x(turn):.1f}" x2="{x(turn):.1f}" y1="{top}" y2="{h - bottom}" stroke="{color}" '
            f'stroke-width="{width}"{dash}><title>{escape(label)}</title></line>'
        )
    if block and block.get("turn"):
        parts.append(f'<text x="{x(block["turn"]) + 4:.1f}" y="{top + 12}" style="fill:#c62828">block</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: list[str], rows: list[list[tuple[str, str]]]) -> str:
    """rows of (css class, already-escaped html) cells."""
    head = "".join(f'<th class="{"n" if i in _numeric(rows) else ""}">{escape(h)}</th>' for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f'<td class="{c}">{v}</td>' for c, v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _numeric(rows: list[list[tuple[str, str]]]) -> set[int]:
    return {i for i, (c, _) in enumerate(rows[0]) if c == "n"} if rows else set()


def render(docs: list[dict[str, Any]]) -> str:
    """One page for one or more analyze documents."""
    title = escape(str(docs[0]["session"]["session_id"])) if len(docs) == 1 else f"{len(docs)} sessions"
    head = f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>loopscan: {title}</title><style>{CSS}</style></head><body>'
    return head + "<hr>".join(_session(doc) for doc in docs) + "</body></html>\n"


def _session(doc: dict[str, Any]) -> str:
    s, sess, block = doc["summary"], doc["session"], doc["block"]
    kind = "loop" if block else ("warn" if doc["firings"] else "ok")
    out = [
        f"<section><h1>loopscan: session {escape(str(sess['session_id']))}</h1>",
        f'<div class="verdict {kind}">{escape(doc["verdict"])}</div>',
        '<dl class="meta">',
    ]
    for label, value in (
        ("file", sess["path"]), ("agent", sess["agent_id"]), ("models", ", ".join(sess["models"]) or None),
        ("started", sess["started_at"]), ("ended", sess["ended_at"]),
        ("duration", f"{sess['duration_s'] / 60:.1f} min" if sess["duration_s"] is not None else None),
        ("final state", s["final_state"]),
    ):
        out.append(f"<dt>{label}</dt><dd>{_num(value)}</dd>")
    out.append("</dl><h2>Summary</h2><div class=\"grid\">")
    for key, value in s.items():
        out.append(f'<div class="stat"><b>{_num(value)}</b><span>{escape(key.replace("_", " "))}</span></div>')
    out.append("</div><h2>Context growth</h2>")
    out.append(chart(doc["tokens"], doc["firings"], block))
    if block:
        out.append(f'<p class="critical">{escape(block_sentence(block))}</p>')
    if doc["repeats"]:
        out.append("<h2>Most repeated calls</h2>")
        out.append(_table(
            ["count", "distinct outcomes", "tool", "command / arguments", "calls"],
            [[("n", _num(r["count"])), ("n", _num(r["distinct_outcomes"])), ("", escape(r["tool"])),
              ("code", escape(r["key"])), ("t", f"{r['first_call']}–{r['last_call']}")] for r in doc["repeats"]],
        ))
    out.append("<h2>Detector</h2>")
    out.append(f'<p class="muted">{escape(config_text(doc["config"]))}</p>')
    if doc["firings"]:
        out.append(_table(
            ["call", "level", "detector", "count", "tool", "tokens so far", "time"],
            [[("n", _num(f["call_index"])), (f["level"], escape(f["level"])), ("", escape(f["detector"])),
              ("n", _num(f["count"])), ("", escape(f["tool"])), ("n", _num(f["tokens_so_far"])),
              ("", _num(f["timestamp"]))] for f in doc["firings"]],
        ))
    else:
        out.append("<p>No detector firings.</p>")
    if doc["failures"]:
        out.append("<h2>Failures</h2>")
        out.append(_table(
            ["time", "kind", "call / turn", "message"],
            [[("t", _num(f["timestamp"])), ("t", escape(f["kind"])), ("n", _num(f["call_or_turn"])),
              ("code", escape(f["message"]))] for f in doc["failures"]],
        ))
    if doc["notes"]:
        out.append("<h2>Reader notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in doc["notes"]) + "</ul>")
    out.append("</section>")
    return "".join(out)
