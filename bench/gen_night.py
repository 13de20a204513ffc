"""Write a synthetic OpenClaw "night": many v3 sessions of a few agents, laid out as a state dir.

    python bench/gen_night.py --out bench/data/night --sessions 130 --total-mb 35 [--seed 11]

Layout: OUT/agents/<agent>/sessions/<uuid>.jsonl (the file name is the header's session id), plus
a `sessions.json` store per agent, as OpenClaw writes it (not a session; every reader skips it).
Deterministic for a given seed, session count and size. The sessions are made by
gen_transcript._Writer (same entry shapes, usage and costs), sharing one text corpus, with:

- skewed sizes: ~70 % small (20-200 KB, log-uniform), ~22 % medium (0.2-1 MB), ~8 % large (1-3 MB);
  the medium and large ones are scaled so the folder totals about --total-mb;
- 50-500 KB tool outputs (about one line in 60) only in the sessions of 1 MB or more;
- agents `main` (Anthropic Sonnet, Telegram delivery mirrors), `ops` (a free model, cron-like) and
  `research` (Opus); start times spread over one night (2026-06-14 18:00Z + 0-12 h);
- loops: each run is stuck (the same call 4-16 times; a process polled with no new output) with a
  per-session probability of 0-35 %, so some sessions warn and many do not; about one session in 5
  has a doom loop (the same failing call 20-40 times) somewhere in its second half, which a default
  config blocks.

"MB" is 10**6 bytes, as in gen_transcript.py and run.py.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import orjson

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_transcript as gt  # noqa: E402 - bench/ is a folder of scripts, not a package

MB = gt.MB
KB = 1_000
NIGHT_START_MS = 1_781_460_000_000  # 2026-06-14T18:00:00Z
AGENTS = (  # (agent id, weight, first model, delivery-mirror rate)
    ("main", 0.5, gt._MODELS[0], 0.5),
    ("ops", 0.3, gt._MODELS[2], 0.0),
    ("research", 0.2, gt._MODELS[1], 0.1),
)


@dataclass
class Planned:
    agent: str
    session_id: str
    target: int  # bytes
    seed: int
    start_ms: int
    stuck_rate: float
    doom_at: float | None  # fraction of the file, None = no doom loop
    doom_times: int
    model: tuple
    mirror_rate: float


def plan(n_sessions: int, total_mb: float, seed: int) -> list[Planned]:
    """The sessions of a night: sizes, agents, loops. Cheap and deterministic."""
    rng = random.Random(seed)
    sizes = []
    for _ in range(n_sessions):
        r = rng.random()
        if r < 0.70:
            sizes.append(("small", math.exp(rng.uniform(math.log(20 * KB), math.log(200 * KB)))))
        elif r < 0.92:
            sizes.append(("medium", math.exp(rng.uniform(math.log(200 * KB), math.log(1 * MB)))))
        else:
            sizes.append(("large", rng.uniform(1 * MB, 3 * MB)))
    # the writer overshoots each target by up to one run (a few KB; a doom loop adds up to ~80 KB): aim low
    want = total_mb * MB * 0.88
    small = sum(s for kind, s in sizes if kind == "small")
    rest = sum(s for kind, s in sizes if kind != "small")
    if rest:
        k = max(0.3, (want - small) / rest)
        sizes = [(kind, s if kind == "small" else s * k) for kind, s in sizes]
    out = []
    weights = [a[1] for a in AGENTS]
    for i, (kind, size) in enumerate(sizes):
        agent, _, model, mirror = rng.choices(AGENTS, weights)[0]
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        loopy = rng.random() < 0.2 and size >= 60 * KB
        out.append(Planned(
            agent=agent, session_id=sid, target=int(size), seed=seed * 1_000_003 + i,
            start_ms=NIGHT_START_MS + rng.randint(0, 12 * 3600 * 1000),
            stuck_rate=rng.choice((0.0, 0.0, 0.05, 0.1, 0.2, 0.35)),
            doom_at=rng.uniform(0.5, 0.9) if loopy else None, doom_times=rng.randint(20, 40),
            model=model, mirror_rate=mirror,
        ))
    return out


class _NightWriter(gt._Writer):
    """gen_transcript's session writer with a shared corpus, a per-session loop rate, an optional
    doom loop, large tool outputs only in large sessions, and delivery-mirror messages."""

    def __init__(self, out, p: Planned, corpus: gt._Corpus):
        super().__init__(out, p.seed, p.target, corpus=corpus)
        self.p = p
        self.ms = p.start_ms
        self.model = p.model
        self.large_ok = p.target >= 1 * MB
        self.stuck_rate = p.stuck_rate
        self.doom_times = p.doom_times

    def write(self) -> None:
        p = self.p
        self._emit({"type": "session", "version": 3, "id": p.session_id, "timestamp": self._iso(), "cwd": gt._CWD})
        self._entry("model_change", provider=self.model[0], modelId=self.model[1])
        self._entry("thinking_level_change", thinkingLevel=self.rng.choice(("low", "medium", "high")))
        doom_at = int(self.target * p.doom_at) if p.doom_at is not None else None
        while self.written < self.target:
            doom = doom_at is not None and self.written >= doom_at
            self._run(doom=doom)
            if doom:
                doom_at = None

    def _large_due(self) -> bool:
        return self.large_ok and super()._large_due()

    def _final(self) -> None:
        super()._final()
        if self.rng.random() < self.p.mirror_rate:  # the reply as delivered to the channel: zero usage
            zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
            self._tick(50, 900)
            self._entry("message", message={
                "role": "assistant", "content": [{"type": "text", "text": self.corpus.slice(self.rng, self.corpus.prose, 200)}],
                "api": "openai-responses", "provider": "openclaw", "model": "delivery-mirror", "usage": zero,
                "stopReason": "stop", "timestamp": self.ms,
            })


def generate_night(root: str | Path, n_sessions: int, total_mb: float, seed: int) -> tuple[int, int, int]:
    """Write the night under `root` (built in a temporary folder, renamed at the end; an existing
    `root` is replaced). Returns (sessions, bytes, lines)."""
    root = Path(root)
    tmp = root.with_name(f"{root.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    corpus = gt._Corpus(random.Random(seed))
    total = lines = 0
    stores: dict[str, dict] = {}
    try:
        for p in plan(n_sessions, total_mb, seed):
            folder = tmp / "agents" / p.agent / "sessions"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{p.session_id}.jsonl"
            with open(path, "wb", buffering=1 << 20) as out:
                w = _NightWriter(out, p, corpus)
                w.write()
            total += w.written
            lines += w.lines
            stores.setdefault(p.agent, {})[f"agent:{p.agent}:{p.session_id[:8]}"] = {
                "sessionId": p.session_id, "sessionFile": str(path.relative_to(tmp)), "updatedAt": w.ms,
                "abortedLastRun": False, "compactionCount": 0,
            }
        for agent, store in stores.items():
            (tmp / "agents" / agent / "sessions" / "sessions.json").write_bytes(orjson.dumps(store, option=orjson.OPT_INDENT_2))
        shutil.rmtree(root, ignore_errors=True)
        os.replace(tmp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return n_sessions, total, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the state dir to write (replaced if present)")
    parser.add_argument("--sessions", type=int, default=130, help="number of sessions (default 130)")
    parser.add_argument("--total-mb", type=float, default=35.0, help="approximate total size in MB (default 35)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default 11)")
    args = parser.parse_args(argv)
    if args.sessions <= 0 or args.total_mb <= 0:
        parser.error("--sessions and --total-mb must be positive")
    t0 = time.perf_counter()
    n, size, lines = generate_night(args.out, args.sessions, args.total_mb, args.seed)
    print(f"wrote {args.out}: {n} sessions, {size / MB:.1f} MB, {lines:,} lines in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
