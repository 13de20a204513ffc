"""Threshold what-if over many sessions, without replaying once per config.

Detection never changes the history (only a block ends a replay), and the per-call streak signals
depend only on the profile, the history size and run scoping, not on any threshold. So each session
is replayed once per (profile, historySize) in observe mode, its per-call signals kept as a polars
table, and every threshold combination is evaluated over that table at once: the first call where a
critical rule fires, in the engine's rule order, respecting detector switches, and the warnings that
would have been emitted before it. A grid row equals what `analyze` reports for that config.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from loopscan.analysis.batch import Failed, map_sessions
from loopscan.analysis.session import SessionAnalyzer, agent_from_path
from loopscan.engine.config import DETECTOR_SWITCHES, ConfigRequest, LoopConfig
from loopscan.engine.profiles import get_profile
from loopscan.engine.detect import warning_keys
from loopscan.engine.replay import COMPACTION_LOOP, WARNING_BUCKET, emission_key
from loopscan.readers import ReadError, open_events

# decision codes, in the engine's rule order (detector.md section 6)
RULES = (
    ("unknown_tool_repeat", "critical"),
    ("global_circuit_breaker", "critical"),
    ("known_poll_no_progress", "critical"),
    ("known_poll_no_progress", "warning"),
    ("ping_pong", "critical"),
    ("ping_pong", "warning"),
    ("generic_repeat", "critical"),
    ("generic_repeat", "warning"),
    # loopscan's own (detect.decide): after OpenClaw's criticals, before its warnings
    ("token_budget", "critical"),
    ("iteration_budget", "critical"),
    ("session_no_progress", "critical"),
    ("session_no_progress", "warning"),
)
CRITICAL_CODES = [i + 1 for i, (_, level) in enumerate(RULES) if level == "critical"]
WARNING_CODES = [i + 1 for i, (_, level) in enumerate(RULES) if level == "warning"]
SAVED = ("calls_after", "tokens_after", "cost_after", "seconds_after")  # what a block at a call would save
CROSS_ROWS = 100_000  # rows of (candidate call x config) evaluated at once: bounds memory


def parse_values(text: str) -> list[int]:
    """`5:15` (inclusive, step 1), `10:40:5`, `20,30,40`, `25`."""
    values: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if ":" in part:
            bits = [int(b) for b in part.split(":")]
            if len(bits) not in (2, 3) or (len(bits) == 3 and bits[2] <= 0):
                raise ValueError(f"bad range {part!r} (use START:END or START:END:STEP)")
            start, end, step = bits[0], bits[1], bits[2] if len(bits) == 3 else 1
            values.extend(range(start, end + 1, step))
        else:
            values.append(int(part))
    if not values:
        raise ValueError(f"no values in {text!r}")
    return sorted(set(values))


@dataclass(frozen=True)
class GridAxes:
    warning: list[int] | None = None
    critical: list[int] | None = None
    global_: list[int] | None = None
    unknown: list[int] | None = None
    history: list[int] | None = None
    session_warning: list[int] | None = None
    session_critical: list[int] | None = None
    session_window: list[int] | None = None
    token_budget: list[int] | None = None
    max_iterations: list[int] | None = None
    profiles: list[str] = field(default_factory=lambda: ["openclaw-2026.6"])
    detector_sets: list[dict[str, bool]] | None = None  # None: the base config's switches


@dataclass
class GridConfig:
    """One resolved config of the grid, and the raw combinations that clamped into it."""

    config: LoopConfig
    asked: list[dict[str, int]]

    def key(self) -> tuple:
        c = self.config
        return (c.profile, c.historySize, c.warningThreshold, c.criticalThreshold,
                c.globalCircuitBreakerThreshold, c.unknownToolThreshold, tuple(sorted(c.detectors.items())),
                c.sessionWarning, c.sessionCritical, c.sessionWindow, c.tokenBudget, c.maxIterations)

    def variant(self) -> tuple[str, int, int]:
        """What the per-call signals depend on: one observe-replay per variant."""
        return self.config.profile, self.config.historySize, self.config.sessionWindow


def build_grid(axes: GridAxes, request: ConfigRequest) -> list[GridConfig]:
    """Every combination, resolved with OpenClaw's rules; combinations that resolve alike are merged."""
    base = request.resolve()
    dims = {
        "warningThreshold": axes.warning or [base.warningThreshold],
        "criticalThreshold": axes.critical or [base.criticalThreshold],
        "globalCircuitBreakerThreshold": axes.global_ or [base.globalCircuitBreakerThreshold],
        "unknownToolThreshold": axes.unknown or [base.unknownToolThreshold],
        "historySize": axes.history or [base.historySize],
        "sessionWarning": axes.session_warning or [base.sessionWarning],
        "sessionCritical": axes.session_critical or [base.sessionCritical],
        "sessionWindow": axes.session_window or [base.sessionWindow],
        "tokenBudget": axes.token_budget or [base.tokenBudget],
        "maxIterations": axes.max_iterations or [base.maxIterations],
    }
    detector_sets = axes.detector_sets or [dict(base.detectors)]
    merged: dict[tuple, GridConfig] = {}
    for profile in axes.profiles:
        get_profile(profile)
        for values in itertools.product(*dims.values()):
            asked = dict(zip(dims, values))
            for switches in detector_sets:
                req = ConfigRequest(document=request.document, source=request.source,
                                    overrides={**request.overrides, **asked, "detectors": switches},
                                    profile=profile, agent=request.agent)
                cfg = GridConfig(req.resolve(), [asked | {"detectors": switches}])
                existing = merged.get(cfg.key())
                if existing:
                    existing.asked.extend(cfg.asked)
                else:
                    merged[cfg.key()] = cfg
    return list(merged.values())


# --- observing sessions -------------------------------------------------------------------------

def observe(path: str, request: ConfigRequest, variants: list[tuple[str, int, int]]) -> dict[str, Any]:
    """Replay one session once per (profile, historySize, sessionWindow) in observe mode, reading the
    file once.

    Returns small columns: per evaluated call its signals and what a block there would save."""
    agent = agent_from_path(path)
    analyzers = {}
    for profile, history, window in variants:
        cfg = ConfigRequest(document=request.document, source=request.source,
                            overrides={**request.overrides, "historySize": history, "sessionWindow": window},
                            profile=profile, agent=request.agent).resolve(agent)
        analyzers[(profile, history, window)] = SessionAnalyzer(path, cfg, observe=True)
    try:
        with open_events(path) as (events, diag):
            for event in events:
                for analyzer in analyzers.values():
                    analyzer.feed(event)
    except (ReadError, OSError) as exc:
        return {"path": path, "error": str(exc)}
    out: dict[str, Any] = {"path": path, "error": None, "variants": {}}
    for variant, analyzer in analyzers.items():
        analyzer.result(diag)  # finishes the replay
        replay = analyzer.replay
        cols: dict[str, list] = {k: [] for k in (
            "idx", "unknown", "np", "pp", "ev", "recent", "kp", "stale", "tokens", "rounds", "key_generic",
            "key_poll", "key_pp", "key_session", "tokens_after", "cost_after", "calls_after", "seconds_after")}
        for (call, args_hash, sig), spent in zip(replay.observed, analyzer.observed_spent):
            keys = warning_keys(sig, call.tool, args_hash)
            cols["idx"].append(call.index)
            cols["unknown"].append(sig.unknown_count)
            cols["np"].append(sig.no_progress)
            cols["pp"].append(sig.ping_pong)
            cols["ev"].append(sig.ping_pong_evidence)
            cols["recent"].append(sig.recent)
            cols["kp"].append(sig.known_poll)
            cols["stale"].append(sig.session_stale)
            cols["tokens"].append(sig.tokens)
            cols["rounds"].append(sig.rounds)
            cols["key_session"].append(emission_key("session", call.run, replay.profile))
            cols["key_generic"].append(emission_key(keys.generic, call.run, replay.profile))
            cols["key_poll"].append(emission_key(keys.poll, call.run, replay.profile))
            cols["key_pp"].append(emission_key(keys.ping_pong, call.run, replay.profile))
            saved = analyzer.saved_after(call.index, call.timestamp, *spent, call_ran=False)
            for name, value in zip(SAVED, saved):
                cols[name].append(value)
        guard = None
        if replay.first_guard_abort is not None and replay.config.guard_enabled:
            call, count = replay.first_guard_abort
            saved = analyzer.saved_after(call.index, call.timestamp, *(analyzer.guard_spent or (0, 0.0)),
                                         call_ran=True)
            guard = {"idx": call.index, "count": count, **dict(zip(SAVED, saved))}
        out["variants"][variant] = {"columns": cols, "guard": guard}
    return out


def observe_all(paths: list[str], request: ConfigRequest, variants: list[tuple[str, int, int]], jobs: int,
                progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Observations in the order of `paths`, whatever order the workers finish in."""
    done = dict(map_sessions(observe, paths, (request, variants), jobs, progress))
    return [{"path": p, "error": str(done[p])} if isinstance(done[p], Failed) else done[p] for p in paths]


# --- evaluating the grid --------------------------------------------------------------------------

def evaluate(grid: list[GridConfig], observed: list[dict[str, Any]], baseline: set[str]) -> list[dict[str, Any]]:
    """One result row per grid config (same order as `grid`); `baseline` holds real paths."""
    import polars as pl

    sessions = [o for o in observed if o["error"] is None]
    rows: list[dict[str, Any]] = []
    by_variant: dict[tuple[str, int, int], list[int]] = {}
    for i, g in enumerate(grid):
        by_variant.setdefault(g.variant(), []).append(i)
    results: dict[int, dict[str, Any]] = {}
    for variant, indices in by_variant.items():
        merged: dict[str, list] = {"sid": [], "guard_idx": []}
        keys: dict[str, int] = {}  # warning keys as small ints: only equality within a session matters
        for sid, obs in enumerate(sessions):
            v = obs["variants"][variant]
            n = len(v["columns"]["idx"])
            merged["sid"].extend([sid] * n)
            merged["guard_idx"].extend([v["guard"]["idx"] if v["guard"] else None] * n)
            for name, values in v["columns"].items():
                if name.startswith("key_"):
                    values = [keys.setdefault(k, len(keys)) for k in values]
                merged.setdefault(name, []).extend(values)
        calls = pl.DataFrame(merged, schema_overrides={"seconds_after": pl.Float64, "cost_after": pl.Float64,
                                                       "guard_idx": pl.Int64}) if merged["sid"] else None
        configs = pl.DataFrame({
            "cfg": indices,
            "W": [grid[i].config.warningThreshold for i in indices],
            "C": [grid[i].config.criticalThreshold for i in indices],
            "G": [grid[i].config.globalCircuitBreakerThreshold for i in indices],
            "U": [grid[i].config.unknownToolThreshold for i in indices],
            "gr": [grid[i].config.detectors["genericRepeat"] for i in indices],
            "kpon": [grid[i].config.detectors["knownPollNoProgress"] for i in indices],
            "ppon": [grid[i].config.detectors["pingPong"] for i in indices],
            "SW": [grid[i].config.sessionWarning for i in indices],
            "SC": [grid[i].config.sessionCritical for i in indices],
            "TB": [grid[i].config.tokenBudget for i in indices],
            "MI": [grid[i].config.maxIterations for i in indices],
        }, schema_overrides={"TB": pl.Int64, "MI": pl.Int64})
        crit_by, warn_by = _decisions(calls, configs, get_profile(variant[0])) if calls is not None else ({}, {})
        guarded = {sid for sid, obs in enumerate(sessions) if obs["variants"][variant]["guard"] is not None}
        for i in indices:
            results[i] = _summarise(grid[i], crit_by.get(i, {}), warn_by.get(i, {}), guarded, sessions, variant,
                                    baseline)
    for i in range(len(grid)):
        rows.append(results[i])
    return rows


def _decisions(calls: Any, configs: Any, profile: Any) -> Any:
    """Per (config, session): the first critical call and the warnings emitted before it."""
    import polars as pl

    W, C, G, U = pl.col("W"), pl.col("C"), pl.col("G"), pl.col("U")
    kp, np_, pp, rec = pl.col("kp"), pl.col("np"), pl.col("pp"), pl.col("recent")
    stale, session_on = pl.col("stale"), pl.lit(profile.session_no_progress)
    poll = kp & pl.col("kpon")
    generic = ~kp & pl.col("gr")
    generic_critical = profile.generic_critical
    openclaw = (
        pl.when(pl.col("unknown") >= U).then(1)
        .when(np_ >= G).then(2)
        .when(poll & (np_ >= C)).then(3)
        .when(poll & (np_ >= W)).then(4)
        .when(pl.col("ppon") & (pp >= C) & pl.col("ev")).then(5)
        .when(pl.col("ppon") & (pp >= W)).then(6)
        .when(generic & (np_ >= C) & pl.lit(generic_critical)).then(7)
        .when(generic & (rec >= W)).then(8)
        .otherwise(0)
    )
    code = (  # detect.decide: OpenClaw's critical, else a budget or the session breaker, else a warning
        pl.when(pl.col("base").is_in(CRITICAL_CODES)).then(pl.col("base"))
        .when(pl.col("TB").is_not_null() & (pl.col("tokens") >= pl.col("TB"))).then(9)
        .when(pl.col("MI").is_not_null() & (pl.col("rounds") > pl.col("MI"))).then(10)
        .when(session_on & (stale >= pl.col("SC"))).then(11)
        .when(pl.col("base") > 0).then(pl.col("base"))
        .when(session_on & (stale >= pl.col("SW"))).then(12)
        .otherwise(0)
    )
    # rows that can never fire under any config of this batch are dropped before the cross join
    floor_w = configs["W"].min()
    floor_u = configs["U"].min()
    maybe = (pl.col("unknown") >= floor_u) | (np_ >= floor_w) | (pp >= floor_w) | (rec >= floor_w)
    if profile.session_no_progress:
        maybe = maybe | (stale >= configs["SW"].min())
    if configs["TB"].min() is not None:
        maybe = maybe | (pl.col("tokens") >= configs["TB"].min())
    if configs["MI"].min() is not None:
        maybe = maybe | (pl.col("rounds") > configs["MI"].min())
    candidates = calls.filter(maybe).with_row_index("row")
    savings = candidates.select("row", "tokens_after", "cost_after", "calls_after", "seconds_after")
    inputs = candidates.select("row", "sid", "idx", "guard_idx", "unknown", "np", "pp", "ev", "recent", "kp", "stale",
                               "tokens", "rounds", "key_generic", "key_poll", "key_pp", "key_session").lazy()
    crit_by: dict[int, dict[int, dict[str, Any]]] = {}
    warn_by: dict[int, dict[int, int]] = {}
    # the calls cross a chunk of configs at a time (memory stays bounded whatever the grid); what
    # leaves the cross join is a few integers a fired (call, config) pair
    chunk = max(1, CROSS_ROWS // max(1, candidates.height))
    for start in range(0, configs.height, chunk):
        fired = (
            inputs.join(configs.slice(start, chunk).lazy(), how="cross")
            .with_columns(base=openclaw)
            .with_columns(code=code)
            .filter(pl.col("code") > 0)
            .select(
                "row", "cfg", "sid", "idx", "guard_idx", "code",
                # the streak that crossed the threshold, and the key a warning is emitted under
                count=pl.when(pl.col("code") == 1).then(pl.col("unknown"))
                .when(pl.col("code").is_in([5, 6])).then(pp)
                .when(pl.col("code") == 8).then(rec)
                .when(pl.col("code") == 9).then(pl.col("tokens"))
                .when(pl.col("code") == 10).then(pl.col("rounds"))
                .when(pl.col("code").is_in([11, 12])).then(stale).otherwise(np_),
                key=pl.when(pl.col("code") == 4).then(pl.col("key_poll"))
                .when(pl.col("code") == 6).then(pl.col("key_pp"))
                .when(pl.col("code") == 12).then(pl.col("key_session")).otherwise(pl.col("key_generic")),
            )
            .cache()
        )
        crit = (
            fired.filter(pl.col("code").is_in(CRITICAL_CODES))
            .group_by(["cfg", "sid"])
            .agg(pl.all().sort_by("idx").first())
        )
        warn = (
            fired.filter(pl.col("code").is_in(WARNING_CODES))
            .join(crit.select("cfg", "sid", pl.col("idx").alias("block_idx")), on=["cfg", "sid"], how="left")
            # warnings count up to the block: before the first critical (that call never runs), and up
            # to and including the call whose outcome made the post-compaction guard abort
            .filter((pl.col("idx") < pl.col("block_idx").fill_null(2**62))
                    & (pl.col("idx") <= pl.col("guard_idx").fill_null(2**62)))
            .with_columns(bucket=pl.col("count") // WARNING_BUCKET)
            # once per key per decade of its count: a streak grows by one a call, so the decades a
            # key is emitted in run from its first warning's to its highest
            .group_by(["cfg", "sid", "key"])
            .agg(emitted=pl.col("bucket").max() - pl.col("bucket").sort_by("idx").first() + 1)
            .group_by(["cfg", "sid"])
            .agg(pl.col("emitted").sum().alias("warnings"))
        )
        crit_df, warn_df = pl.collect_all([
            crit.join(savings.lazy(), on="row").select(
                "cfg", "sid", pl.col("idx").alias("block_idx"), pl.col("code").alias("block_code"),
                pl.col("count").alias("block_count"), "tokens_after", "cost_after", "calls_after", "seconds_after"),
            warn,
        ])
        for row in crit_df.iter_rows(named=True):
            crit_by.setdefault(row["cfg"], {})[row["sid"]] = row
        for cfg, sid, warnings in warn_df.iter_rows():
            warn_by.setdefault(cfg, {})[sid] = warnings
    return crit_by, warn_by


def _summarise(g: GridConfig, crit_by: dict[int, dict[str, Any]], warn_by: dict[int, int], guarded: set[int],
               sessions: list[dict[str, Any]], variant: tuple[str, int, int], baseline: set[str]) -> dict[str, Any]:
    """One grid row: `crit_by` / `warn_by` give, per session, the first critical and the warnings;
    `guarded` are the sessions the post-compaction guard aborts (whatever the thresholds)."""
    per_session = []
    totals = {"sessions_blocked": 0, "tokens_saved": 0, "calls_saved": 0, "seconds_saved": 0.0, "cost_saved_usd": 0.0,
              "warnings": sum(warn_by.values()), "baseline_blocked": 0}
    for sid in sorted(crit_by.keys() | guarded):  # only these can be blocked under this config
        obs = sessions[sid]
        block = crit_by.get(sid)
        guard = obs["variants"][variant]["guard"]
        if guard is not None and (block is None or guard["idx"] < block["block_idx"]):
            block = {"block_idx": guard["idx"], "detector": COMPACTION_LOOP, "block_count": guard["count"],
                     **{k: guard[k] for k in ("tokens_after", "cost_after", "calls_after", "seconds_after")}}
        else:
            block = {**block, "detector": RULES[block["block_code"] - 1][0]}
        totals["sessions_blocked"] += 1
        totals["tokens_saved"] += block["tokens_after"]
        totals["calls_saved"] += block["calls_after"]
        totals["seconds_saved"] += block["seconds_after"] or 0.0
        totals["cost_saved_usd"] += block["cost_after"] or 0.0
        is_baseline = os.path.realpath(obs["path"]) in baseline
        totals["baseline_blocked"] += is_baseline
        per_session.append({"path": obs["path"], "block_call_index": block["block_idx"], "detector": block["detector"],
                            "count": block["block_count"], "tokens_saved": block["tokens_after"], "baseline": is_baseline})
    totals["seconds_saved"] = round(totals["seconds_saved"], 3)
    totals["cost_saved_usd"] = round(totals["cost_saved_usd"], 6)
    return {"config": g.config.to_json(), "merged_from": len(g.asked), **totals, "sessions": per_session}


def recommend(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Most tokens saved with no baseline session blocked; ties: the least aggressive config."""
    safe = [r for r in rows if r["baseline_blocked"] == 0 and r["sessions_blocked"] > 0]
    if not safe:
        return None

    def gentleness(r: dict[str, Any]) -> tuple:
        c = r["config"]
        return (r["tokens_saved"], c["criticalThreshold"], c["globalCircuitBreakerThreshold"],
                c["warningThreshold"], c["unknownToolThreshold"], -r["warnings"])

    best = max(safe, key=gentleness)
    return {"config": best["config"], "snippet": snippet(best["config"])}


def snippet(config: dict[str, Any]) -> str:
    d = config["detectors"]
    ours = config["loopscan"]
    notes = []
    if config["profile"] == "loopscan":
        session = ours["sessionNoProgress"]
        notes.append(f"// session_no_progress ({session['warning']}/{session['critical']} of the last {session['window']}) "
                     "and masked exec outcomes are loopscan's own: OpenClaw has no setting for them")
    for name, label in (("tokenBudget", "token budget"), ("maxIterations", "iteration budget")):
        if ours[name] is not None:
            notes.append(f"// {label} {ours[name]} is loopscan's own: OpenClaw has no setting for it")
    return (
        "// openclaw.json — recommended by loopscan whatif"
        f" (evaluated with profile {config['profile']})\n" + "".join(n + "\n" for n in notes) +
        "{\n  tools: {\n    loopDetection: {\n      enabled: true,\n"
        f"      historySize: {config['historySize']},\n"
        f"      warningThreshold: {config['warningThreshold']},\n"
        f"      criticalThreshold: {config['criticalThreshold']},\n"
        f"      globalCircuitBreakerThreshold: {config['globalCircuitBreakerThreshold']},\n"
        f"      unknownToolThreshold: {config['unknownToolThreshold']},\n"
        "      detectors: { " + ", ".join(f"{k}: {'true' if d[k] else 'false'}" for k in DETECTOR_SWITCHES) + " },\n"
        f"      postCompactionGuard: {{ windowSize: {config['postCompactionGuard']['windowSize']} }},\n"
        "    },\n  },\n}\n"
    )


def rank_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Best rows first: no baseline blocked, then tokens saved, then the gentler config."""
    return sorted(rows, key=lambda r: (r["baseline_blocked"] > 0, -r["tokens_saved"],
                                       -r["config"]["criticalThreshold"], -r["config"]["warningThreshold"]))


def default_jobs() -> int:
    return os.cpu_count() or 1
