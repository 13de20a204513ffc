"""Which files are sessions: expanding paths and folders into session transcripts."""

from __future__ import annotations

import os
import re
from pathlib import Path

_ARCHIVED = re.compile(r"\.jsonl\.(reset|deleted)\.[^/]+$")
_NEVER = re.compile(r"(\.checkpoint\.[^/]+\.jsonl|\.trajectory\.jsonl|\.lock)$|(^|/)sessions\.json$")


def is_session_name(name: str, include_archived: bool = True) -> bool:
    if _NEVER.search(name):
        return False
    if name.endswith((".jsonl", ".jsonl.gz")):
        return True
    return include_archived and bool(_ARCHIVED.search(name))


def expand(paths: list[str], include_archived: bool = True) -> tuple[list[str], list[str]]:
    """(session files, problems). Files named explicitly are taken as they are (content decides);
    folders are searched recursively for session names, following no symlinked folder twice."""
    found: list[str] = []
    problems: list[str] = []
    for raw in paths:
        if raw == "-" or not os.path.isdir(raw):
            found.append(raw)
            continue
        before = len(found)
        seen: set[tuple[int, int]] = set()
        for root, dirs, files in os.walk(raw, followlinks=True, onerror=lambda e: problems.append(f"{e.filename}: cannot list ({e.strerror})")):
            st = os.stat(root)
            if (st.st_dev, st.st_ino) in seen:
                dirs[:] = []
                continue
            seen.add((st.st_dev, st.st_ino))
            dirs.sort()
            for name in sorted(files):
                if is_session_name(name, include_archived):
                    found.append(os.path.join(root, name))
        if len(found) == before:
            problems.append(f"{raw}: no session files in this folder")
    return found, problems
