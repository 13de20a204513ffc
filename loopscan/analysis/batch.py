"""Running one function over many sessions: in worker processes, largest files first, small ones
batched so that per-task overhead does not eat the second core. Results stream back as they finish."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from loopscan.discovery import file_size

BATCH_BYTES = 4 << 20  # small sessions travel together up to this many bytes ...
BATCH_FILES = 16  # ... or this many files


class Failed(str):
    """What a function raised for one path (its message), in place of the result."""



def _batches(paths: list[str]) -> list[list[str]]:
    batches: list[list[str]] = []
    current: list[str] = []
    weight = 0
    for path in sorted(paths, key=file_size, reverse=True):
        current.append(path)
        weight += file_size(path)
        if weight >= BATCH_BYTES or len(current) >= BATCH_FILES:
            batches.append(current)
            current, weight = [], 0
    if current:
        batches.append(current)
    return batches


def _run(func: Callable[..., Any], paths: list[str], args: tuple) -> list[tuple[str, Any]]:
    out = []
    for path in paths:
        try:
            out.append((path, func(path, *args)))
        except Exception as exc:  # one bad session must not take its batch down
            out.append((path, Failed(f"{path}: failed ({type(exc).__name__}: {exc})")))
    return out


def map_sessions(func: Callable[..., Any], paths: list[str], args: tuple, jobs: int,
                 progress: Callable[[str], None] | None = None) -> Iterator[tuple[str, Any]]:
    """(path, func(path, *args)) for every path, as they finish; a `Failed` where func raised."""
    if jobs <= 1 or len(paths) <= 1:
        for path in paths:
            yield from _run(func, [path], args)
            if progress:
                progress(path)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_run, func, batch, args): batch for batch in _batches(paths)}
        for future in as_completed(futures):
            try:
                results = future.result()
            except Exception as exc:  # a worker died: its sessions fail, the others go on
                results = [(p, Failed(f"{p}: failed ({type(exc).__name__}: {exc})")) for p in futures[future]]
            for path, result in results:
                if progress:
                    progress(path)
                yield path, result
