"""Which files are sessions: expanding paths, globs and folders into session transcripts."""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path
from typing import Mapping

_ARCHIVED = re.compile(r"\.jsonl\.(reset|deleted)\.[^/]+$")
_NEVER = re.compile(r"(\.checkpoint\.[^/]+\.jsonl|\.trajectory\.jsonl|\.lock)$|^sessions\.json$")
_GLOB_CHARS = re.compile(r"[*?\[]")
STATE_DIRS = (".openclaw", ".clawdbot", ".moltbot")  # current, then legacy names


def is_session_name(name: str, include_archived: bool = False) -> bool:
    """Session transcripts by name; checkpoints, trajectory sidecars, locks and the store never are."""
    if _NEVER.search(name):
        return False
    if name.endswith((".jsonl", ".jsonl.gz")):
        return True
    return include_archived and bool(_ARCHIVED.search(name))


def default_roots(environ: Mapping[str, str], home: Path) -> list[str]:
    """`$OPENCLAW_STATE_DIR/agents/*/sessions`, else `~/.openclaw/agents/*/sessions` (+ legacy dirs)."""
    state = environ.get("OPENCLAW_STATE_DIR")
    bases = [Path(state)] if state else [home / name for name in STATE_DIRS]
    roots: list[str] = []
    for base in bases:
        roots.extend(sorted(glob.glob(str(base / "agents" / "*" / "sessions"))))
    return roots


def expand(paths: list[str], include_archived: bool = False) -> tuple[list[str], list[str]]:
    """(session files, problems).

    A file named explicitly is taken as it is (its content decides); a glob keeps the session names
    it matches; a folder is searched recursively without following symlinked folders.
    """
    found: list[str] = []
    problems: list[str] = []
    for raw in paths:
        if raw == "-" or os.path.isfile(raw):
            found.append(raw)
        elif os.path.isdir(raw):
            before = len(found)
            found.extend(_walk(raw, include_archived, problems))
            if len(found) == before:
                problems.append(f"{raw}: no session files in this folder")
        elif _GLOB_CHARS.search(raw):
            matches = sorted(m for m in glob.glob(raw, recursive=True)
                             if os.path.isfile(m) and is_session_name(os.path.basename(m), include_archived))
            if not matches:
                problems.append(f"{raw}: no session files match")
            found.extend(matches)
        else:
            found.append(raw)  # missing: the reader reports it with its path
    return unique(found), problems


def file_size(path: str) -> int:
    """Size in bytes; 0 for what cannot be stat'ed (stdin, a vanished file)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def unique(paths: list[str]) -> list[str]:
    """Paths in order, each file once however it was named (`a.jsonl`, `./a.jsonl`, a symlink)."""
    seen: set[str] = set()
    out = []
    for path in paths:
        key = path if path == "-" else os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def _walk(top: str, include_archived: bool, problems: list[str]) -> list[str]:
    """Session names below `top`. Symlinked folders are not followed: a scan never leaves the tree it
    was given, and a symlink loop cannot trap it."""
    out: list[str] = []

    def onerror(exc: OSError) -> None:
        problems.append(f"{exc.filename}: cannot list ({exc.strerror})")

    for root, dirs, files in os.walk(top, onerror=onerror):
        dirs.sort()
        out.extend(os.path.join(root, name) for name in sorted(files) if is_session_name(name, include_archived))
    return out
