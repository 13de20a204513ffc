"""The Markdown report (`--format markdown`): every transcript string escaped (no markup, links or
table breaks can come from a transcript)."""

from __future__ import annotations

import re
from typing import Any

from loopscan.reports.text import block_sentence, config_text, number

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]|~])")


def esc(value: Any) -> str:
    """Plain text safe inside Markdown paragraphs and table cells."""
    text = "—" if value is None else str(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return " ".join(text.split())  # newlines would end a table row


def _num(value: Any) -> str:
    return esc(number(value))


def render(doc: dict[str, Any]) -> str:
    s, sess = doc["summary"], doc["session"]
    out = [f"# loopscan: session {esc(sess['session_id'])}", "", f"**{esc(doc['verdict'])}**", ""]
    out += ["| | |", "|---|---|"]
    for label, value in (
        ("file", sess["path"]), ("agent", sess["agent_id"]), ("models", ", ".join(sess["models"])),
        ("started", sess["started_at"]), ("ended", sess["ended_at"]), ("duration (s)", sess["duration_s"]),
        ("final state", s["final_state"]),
    ):
        out.append(f"| {label} | {esc(value) if not isinstance(value, (int, float)) else _num(value)} |")
    out += ["", "## Summary", "", "| metric | value |", "|---|---:|"]
    for key, value in s.items():
        out.append(f"| {esc(key)} | {_num(value)} |")
    if doc["repeats"]:
        out += ["", "## Most repeated calls", "", "| count | distinct outcomes | tool | command / arguments | calls |",
                "|---:|---:|---|---|---|"]
        for r in doc["repeats"]:
            out.append(f"| {r['count']} | {r['distinct_outcomes']} | {esc(r['tool'])} | {esc(r['key'])} | "
                       f"{r['first_call']}–{r['last_call']} |")
    if doc["failures"]:
        out += ["", "## Failures", "", "| kind | call/turn | time | message |", "|---|---:|---|---|"]
        for f in doc["failures"]:
            out.append(f"| {esc(f['kind'])} | {_num(f['call_or_turn'])} | {esc(f['timestamp'])} | {esc(f['message'])} |")
    out += ["", "## Detector", "", esc(config_text(doc["config"])), ""]
    if doc["firings"]:
        out += ["| call | level | detector | count | tool | tokens so far |", "|---:|---|---|---:|---|---:|"]
        for f in doc["firings"]:
            out.append(f"| {f['call_index']} | {esc(f['level'])} | {esc(f['detector'])} | {f['count']} | "
                       f"{esc(f['tool'])} | {_num(f['tokens_so_far'])} |")
    else:
        out.append("No detector firings.")
    if doc["block"]:
        out += ["", f"**Block:** {esc(block_sentence(doc['block']))}"]
    if doc["notes"]:
        out += ["", "## Notes", ""] + [f"- {esc(n)}" for n in doc["notes"]]
    return "\n".join(out) + "\n"
