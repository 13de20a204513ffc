"""The batch benchmarks of `make bench`: `loopscan audit` and `loopscan whatif` over a night of sessions.

Called by bench/run.py (`run.py --batch-only` runs just these; `python bench/batch.py [...]` is the same).
Targets (quality.md "Speed and memory"), measured in one run, never asserted (a miss prints MISSED):

- `loopscan audit NIGHT` (default --jobs, all cores) at least as fast as ccusage
  (`ccusage openclaw session --json --offline --open-claw-path NIGHT`, its Rust binary) on the same
  sessions: wall-time ratio loopscan/ccusage <= 1.0;
- token totals per session equal to ccusage's: input, output, cacheRead, cacheWrite of every
  session (`loopscan analyze NIGHT --format json` summaries against ccusage's session rows);
- `audit --jobs 2` against `--jobs 1` on the 4x night: speed-up >= 1.5 (the issue) and >= 1.7 (quality.md);
- `loopscan whatif` over ~2,000 resolved configs: at most 2x the time of one `audit` of the same folder.

Data (bench/data/, git-ignored), made by bench/gen_night.py when missing or stale:
`night/` (~130 sessions, ~35 MB), `night4/` (~520 sessions, ~140 MB); with --quick `nightq/`
(~40 sessions, ~10 MB) takes night's place and `night/` that of night4.
ccusage is a benchmark peer, never a dependency: it is npm-installed into bench/data/ccusage when
missing; when that fails the comparison is skipped (with the reason) and the run still exits 0.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import run as R  # bench/run.py: Job, measure, run_jobs, warm, loopscan_cmd, ...

HERE = R.HERE
DATA = R.DATA
MB = R.MB

CCUSAGE_VERSION = "20.0.24"  # 20.0.26 ships no Linux binary
CCUSAGE_DIR = DATA / "ccusage"
CCUSAGE_NATIVE_PKG = {("Linux", "x86_64"): "@ccusage/ccusage-linux-x64", ("Linux", "aarch64"): "@ccusage/ccusage-linux-arm64",
                      ("Darwin", "arm64"): "@ccusage/ccusage-darwin-arm64", ("Darwin", "x86_64"): "@ccusage/ccusage-darwin-x64"}

# (name, sessions, total MB, seed)
FOLDERS = {"night": (130, 35.0, 11), "night4": (520, 140.0, 44), "nightq": (40, 10.0, 7)}

# The issue's case: ~2,000 resolved configs of one profile and history size (20 warning x 20 critical x
# 5 global = 2,000 combinations, 1,990 after OpenClaw's clamping), against one audit of the same folder.
WHATIF_AXES = ["--warning", "5:24", "--critical", "22:60:2", "--global", "61:80:4"]

TARGET_CCUSAGE = 1.0
TARGET_SPEEDUP_ISSUE = 1.5
TARGET_SPEEDUP_SPEC = 1.7
TARGET_WHATIF = 2.0
TOKEN_FIELDS = (("input_tokens", "inputTokens"), ("output_tokens", "outputTokens"),
                ("cache_read_tokens", "cacheReadTokens"), ("cache_write_tokens", "cacheCreationTokens"))


# --- data ---------------------------------------------------------------------------------------


def _generator_digest() -> str:
    h = hashlib.sha256()
    for name in ("gen_transcript.py", "gen_night.py"):
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:16]


def ensure_night(name: str, regen: bool) -> Path:
    """bench/data/<name>/ (a state dir: agents/<agent>/sessions/<uuid>.jsonl), (re)generated when
    missing, stale (a generator changed) or --regen."""
    sessions, total_mb, seed = FOLDERS[name]
    root = DATA / name
    stamp = DATA / f"{name}.meta.json"
    want = {"sessions": sessions, "total_mb": total_mb, "seed": seed, "generator": _generator_digest()}
    try:
        fresh = (root / "agents").is_dir() and json.loads(stamp.read_text()) == want
    except (OSError, ValueError):
        fresh = False
    if fresh and not regen:
        return root
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import gen_night  # noqa: E402 - bench/ is a folder of scripts, not a package

    DATA.mkdir(parents=True, exist_ok=True)
    print(f"generating {root.relative_to(HERE.parent)}/ ({sessions} sessions, ~{total_mb:g} MB) ...", end=" ", flush=True)
    t0 = time.perf_counter()
    n, size, lines = gen_night.generate_night(root, sessions, total_mb, seed)
    print(f"{size / MB:.1f} MB, {lines:,} lines in {time.perf_counter() - t0:.1f}s", flush=True)
    stamp.write_text(json.dumps(want))
    return root


def session_files(root: Path) -> list[Path]:
    return sorted(root.glob("agents/*/sessions/*.jsonl"))


def folder_info(root: Path) -> dict:
    files = session_files(root)
    sizes = sorted(p.stat().st_size for p in files)
    return {"sessions": len(files), "bytes": sum(sizes), "lines": sum(R.count_lines(p) for p in files),
            "agents": len({p.parent.parent.name for p in files}),
            "median_bytes": sizes[len(sizes) // 2] if sizes else 0, "max_bytes": sizes[-1] if sizes else 0}


def warm_folder(root: Path) -> None:
    for p in session_files(root):
        R.warm(p)


# --- ccusage --------------------------------------------------------------------------------------


class Ccusage:
    """The installed peer: its npm wrapper (node + cli.js, which spawns the native binary) and the
    native (Rust) binary itself. `why` says why it is unavailable."""

    def __init__(self) -> None:
        self.wrapper: list[str] | None = None
        self.native: list[str] | None = None
        self.version: str | None = None
        self.why: str | None = None


def _native_path() -> Path | None:
    pkg = CCUSAGE_NATIVE_PKG.get((platform.system(), platform.machine()))
    return CCUSAGE_DIR / "node_modules" / pkg / "bin" / "ccusage" if pkg else None


def _installed_version() -> str | None:
    try:
        return json.loads((CCUSAGE_DIR / "node_modules" / "ccusage" / "package.json").read_text()).get("version")
    except (OSError, ValueError):
        return None


def ensure_ccusage() -> Ccusage:
    """Install ccusage@CCUSAGE_VERSION into bench/data/ccusage when missing; never raises."""
    cc = Ccusage()
    native = _native_path()
    if native is None:
        cc.why = f"no ccusage {CCUSAGE_VERSION} native package for {platform.system()} {platform.machine()}"
        return cc
    if _installed_version() != CCUSAGE_VERSION or not native.exists():
        npm = shutil.which("npm")
        if npm is None:
            cc.why = "npm not found on PATH (needed to install the ccusage peer)"
            return cc
        cmd = [npm, "install", "--prefix", str(CCUSAGE_DIR), "--no-audit", "--no-fund",
               f"ccusage@{CCUSAGE_VERSION}", f"{native.parts[-4]}/{native.parts[-3]}@{CCUSAGE_VERSION}"]
        print(f"installing the ccusage peer: {' '.join(cmd[1:])} ...", flush=True)
        CCUSAGE_DIR.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            cc.why = f"npm install failed: {exc}"
            return cc
        if proc.returncode != 0 or not native.exists():
            tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-4:])
            cc.why = f"npm install failed (exit {proc.returncode}): {tail or 'no native binary installed'}"
            return cc
    # npm may unpack the binary without its x bit; the wrapper would chmod it on first use, do it here
    try:
        if not os.access(native, os.X_OK):
            native.chmod(0o755)
    except OSError as exc:
        cc.why = f"the ccusage binary is not executable: {exc}"
        return cc
    try:
        out = subprocess.run([str(native), "--version"], capture_output=True, text=True, timeout=60)
        cc.version = out.stdout.strip().removeprefix("ccusage").strip() or None
    except (OSError, subprocess.TimeoutExpired) as exc:
        cc.why = f"the ccusage binary does not run: {exc}"
        return cc
    if out.returncode != 0:
        cc.why = f"`ccusage --version` exited {out.returncode}: {out.stderr.strip()[:200]}"
        return cc
    cc.native = [str(native)]
    node, cli = shutil.which("node"), CCUSAGE_DIR / "node_modules" / "ccusage" / "src" / "cli.js"
    if node and cli.exists():
        cc.wrapper = [node, str(cli)]
    return cc


def ccusage_args(root: Path) -> list[str]:
    # --open-claw-path takes the state dir (or any folder above the .jsonl files: ccusage 20.0.24
    # searches it recursively; the state dir, `agents/` and a sessions folder give the same sessions)
    return ["openclaw", "session", "--json", "--offline", "--open-claw-path", str(root)]


# --- commands -------------------------------------------------------------------------------------


def audit_cmd(root: Path, jobs: int | None = None, output: str = os.devnull) -> list[str]:
    cmd = R.loopscan_cmd() + ["audit", str(root), "--format", "json", "--output", output, "--fail-on", "never"]
    return cmd + (["--jobs", str(jobs)] if jobs else [])


def whatif_cmd(root: Path, output: str = os.devnull) -> list[str]:
    return R.loopscan_cmd() + ["whatif", str(root), *WHATIF_AXES, "--format", "json", "--output", output]


def _run_json(cmd: list[str], out_file: Path | None = None, timeout: float = 900) -> object:
    """Run once (untimed) and parse its JSON report (from out_file, else standard output)."""
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    if proc.returncode not in (0, 1):
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-4:]
        raise RuntimeError(f"exit status {proc.returncode}: {' '.join(cmd)}\n" + "\n".join(tail))
    return json.loads(out_file.read_bytes() if out_file else proc.stdout)


def compare_tokens(root: Path, cc: Ccusage, tmp: Path) -> dict:
    """Per session: loopscan analyze's input/output/cache-read/cache-write sums against ccusage's."""
    out = tmp / "analyze.json"
    reports = _run_json(R.loopscan_cmd() + ["analyze", str(root), "--format", "json", "--output", str(out),
                                            "--fail-on", "never"], out)
    if isinstance(reports, dict):
        reports = [reports]
    ours = {}
    for rep in reports:
        sid = Path(rep["session"]["path"]).name.removesuffix(".jsonl")
        ours[sid] = {k: rep["summary"].get(k) for k, _ in TOKEN_FIELDS}
        ours[sid]["cost_usd"] = rep["summary"].get("cost_usd")
    theirs_doc = _run_json(cc.native + ccusage_args(root))
    theirs = {s["sessionId"]: s for s in theirs_doc.get("sessions", [])}
    mismatches, cost_diff = [], 0
    for sid in sorted(set(ours) | set(theirs)):
        a, b = ours.get(sid), theirs.get(sid)
        if a is None or b is None:
            mismatches.append({"session": sid, "missing_in": "loopscan" if a is None else "ccusage"})
            continue
        diff = {ours_k: [a[ours_k], b.get(cc_k)] for ours_k, cc_k in TOKEN_FIELDS if a[ours_k] != b.get(cc_k)}
        if diff:
            mismatches.append({"session": sid, "fields": diff})
        if a["cost_usd"] is not None and abs(a["cost_usd"] - (b.get("totalCost") or 0)) > 1e-5:
            cost_diff += 1
    both = len(set(ours) & set(theirs))
    return {"sessions_loopscan": len(ours), "sessions_ccusage": len(theirs),
            "matching": both - sum(1 for m in mismatches if "fields" in m),
            "mismatches": mismatches, "cost_differs": cost_diff}


def whatif_grid(root: Path, tmp: Path) -> dict:
    out = tmp / "whatif.json"
    doc = _run_json(whatif_cmd(root, str(out)), out)
    grid = doc.get("grid", [])
    return {"configs": len(grid), "combinations": sum(row.get("merged_from", 1) for row in grid),
            "sessions": doc.get("sessions")}


def audit_totals(root: Path, tmp: Path) -> dict:
    out = tmp / "audit.json"
    doc = _run_json(audit_cmd(root, output=str(out)), out)
    return doc.get("totals", {})


# --- the benchmark ------------------------------------------------------------------------------


def run_batch(quick: bool, runs: int, regen: bool) -> tuple[dict, bool]:
    """Measure and print. Returns (figures for --json, whether a loopscan job could not run)."""
    main_name, jobs_name = ("nightq", "night") if quick else ("night", "night4")
    print(f"\n=== batch: audit / whatif / ccusage on {main_name}/, --jobs on {jobs_name}/ ===", flush=True)
    folders = {name: ensure_night(name, regen) for name in (main_name, jobs_name)}
    info = {name: folder_info(root) for name, root in folders.items()}
    cc = ensure_ccusage()
    if cc.why:
        print(f"ccusage comparison skipped: {cc.why}", flush=True)
    main_root, jobs_root = folders[main_name], folders[jobs_name]
    for root in folders.values():
        warm_folder(root)

    # untimed: what the runs report (grid size, blocks, token totals against ccusage); also warms the
    # binaries and loopscan's byte-code caches
    checks: dict = {}
    with tempfile.TemporaryDirectory(prefix="loopscan-bench-") as tmp:
        for label, fn in (("audit", lambda: audit_totals(main_root, Path(tmp))),
                          ("whatif", lambda: whatif_grid(main_root, Path(tmp))),
                          ("tokens", lambda: compare_tokens(main_root, cc, Path(tmp)) if cc.native else None)):
            try:
                checks[label] = fn()
            except (RuntimeError, OSError, ValueError, KeyError, subprocess.TimeoutExpired) as exc:
                checks[label] = {"error": str(exc)}
                print(f"check {label} FAILED: {exc}", file=sys.stderr, flush=True)

    size = {name: i["bytes"] for name, i in info.items()}
    jobs: list[R.Job] = [R.Job("audit", main_name, audit_cmd(main_root), size[main_name])]
    if cc.native:
        jobs.append(R.Job("ccusage", main_name, cc.native + ccusage_args(main_root), size[main_name]))
    if cc.wrapper:
        jobs.append(R.Job("ccusage-npm", main_name, cc.wrapper + ccusage_args(main_root), size[main_name]))
    jobs.append(R.Job("whatif", main_name, whatif_cmd(main_root), size[main_name]))
    jobs.append(R.Job("audit-j1", jobs_name, audit_cmd(jobs_root, 1), size[jobs_name]))
    jobs.append(R.Job("audit-j2", jobs_name, audit_cmd(jobs_root, 2), size[jobs_name]))
    if cc.native:
        jobs.append(R.Job("ccusage", jobs_name, cc.native + ccusage_args(jobs_root), size[jobs_name]))
    by_key = {(j.label, j.file): j for j in jobs}

    load_before = os.getloadavg()
    t_start = time.perf_counter()
    R.run_jobs(jobs, runs)
    elapsed = time.perf_counter() - t_start
    load_after = os.getloadavg()

    # --- the tables ---
    print()
    print(f"batch bench: python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"best wall time of {runs} run(s) each, warm page cache, {elapsed:.0f}s of measuring"
          + (f"; ccusage {cc.version}" if cc.version else ""))
    print()
    print(f"{'folder':<8} {'sessions':>8} {'agents':>6} {'size':>10} {'lines':>9} {'median':>9} {'largest':>9}")
    for name, i in info.items():
        print(f"{name:<8} {i['sessions']:>8} {i['agents']:>6} {i['bytes'] / MB:>7.1f} MB {i['lines']:>9,} "
              f"{i['median_bytes'] / 1e3:>6.0f} KB {i['max_bytes'] / MB:>6.2f} MB")
    audit_check = checks.get("audit") or {}
    if "sessions" in audit_check:
        print(f"{main_name}: {audit_check.get('sessions_warned')} sessions warned, "
              f"{audit_check.get('sessions_blocked')} blocked (default config)")
    print()
    titles = {"audit": "loopscan audit (default --jobs)", "ccusage": "ccusage openclaw session (native)",
              "ccusage-npm": "ccusage via npm wrapper (node)", "whatif": "loopscan whatif (grid)",
              "audit-j1": "loopscan audit --jobs 1", "audit-j2": "loopscan audit --jobs 2"}
    head = f"{'what':<36} {'folder':<7} {'wall s':>7} {'cpu s':>7} {'MB/s':>7} {'peak RSS':>10}"
    print(head)
    print("-" * len(head))
    for job in jobs:
        best = job.best
        if job.error or best is None:
            print(f"{titles[job.label]:<36} {job.file:<7} FAILED")
            continue
        print(f"{titles[job.label]:<36} {job.file:<7} {best.wall:7.2f} {best.cpu:7.2f} "
              f"{job.size / MB / best.wall:7.0f} {job.rss_mib:7.1f} MiB")
    print("(cpu s includes worker processes; peak RSS is the largest single process)")
    print()

    # --- the targets ---
    targets: dict = {}
    rows: list[tuple[str, str, str, bool | None]] = []

    def ratio(a: R.Job | None, b: R.Job | None) -> float | None:
        return a.best.wall / b.best.wall if a and b and a.best and b.best else None

    r = ratio(by_key.get(("audit", main_name)), by_key.get(("ccusage", main_name)))
    if cc.native:
        cc_failed = bool(by_key[("ccusage", main_name)].error)  # ccusage could not run: n/a, not a miss
        rows.append((f"wall loopscan audit / ccusage, {main_name}", f"{r:.2f}" if r else "-", f"<= {TARGET_CCUSAGE:.1f}",
                     (r <= TARGET_CCUSAGE) if r else (None if cc_failed else False)))
        a, c = by_key.get(("audit", main_name)), by_key.get(("ccusage", main_name))
        if a and c and a.best and c.best:
            rows.append((f"  (cpu time ratio, {main_name})", f"{a.best.cpu / c.best.cpu:.2f}", "", None))
        targets["audit_over_ccusage"] = r
        r4 = ratio(by_key.get(("audit-j2", jobs_name)), by_key.get(("ccusage", jobs_name)))
        if r4:
            rows.append((f"  (audit --jobs 2 / ccusage, {jobs_name})", f"{r4:.2f}", "", None))
            targets["audit_j2_over_ccusage_jobs_folder"] = r4
        rw = ratio(by_key.get(("ccusage-npm", main_name)), by_key.get(("ccusage", main_name)))
        if rw:
            rows.append(("  (ccusage npm wrapper / native binary)", f"{rw:.2f}", "", None))
            targets["ccusage_wrapper_over_native"] = rw
        rn = ratio(by_key.get(("audit", main_name)), by_key.get(("ccusage-npm", main_name)))
        if rn:
            rows.append((f"  (loopscan audit / ccusage npm wrapper, {main_name})", f"{rn:.2f}", "", None))
            targets["audit_over_ccusage_wrapper"] = rn
    else:
        rows.append(("wall loopscan audit / ccusage", "skipped", f"<= {TARGET_CCUSAGE:.1f}", None))

    tok = checks.get("tokens")
    if tok and "matching" in tok:
        n = max(tok["sessions_loopscan"], tok["sessions_ccusage"])
        rows.append(("sessions whose 4 token sums equal ccusage's", f"{tok['matching']}/{n}", "all",
                     tok["matching"] == n and not tok["mismatches"]))
        rows.append(("  (sessions whose cost differs by > $0.00001)", f"{tok['cost_differs']}", "", None))
        targets["tokens"] = tok
    elif tok:
        rows.append(("sessions whose 4 token sums equal ccusage's", "error", "all", False))
        targets["tokens"] = tok
    else:
        rows.append(("sessions whose 4 token sums equal ccusage's", "skipped", "all", None))

    s = ratio(by_key.get(("audit-j1", jobs_name)), by_key.get(("audit-j2", jobs_name)))
    rows.append((f"speed-up --jobs 1 -> 2, {jobs_name} (issue)", f"{s:.2f}x" if s else "-", f">= {TARGET_SPEEDUP_ISSUE:.1f}x",
                 (s >= TARGET_SPEEDUP_ISSUE) if s else False))
    rows.append((f"speed-up --jobs 1 -> 2, {jobs_name} (quality.md)", f"{s:.2f}x" if s else "-", f">= {TARGET_SPEEDUP_SPEC:.1f}x",
                 (s >= TARGET_SPEEDUP_SPEC) if s else False))
    j1, j2 = by_key.get(("audit-j1", jobs_name)), by_key.get(("audit-j2", jobs_name))
    if j1 and j2 and j1.best and j2.best:
        rows.append(("  (cpu time --jobs 2 / --jobs 1)", f"{j2.best.cpu / j1.best.cpu:.2f}", "", None))
    targets["jobs_speedup"] = s

    w = ratio(by_key.get(("whatif", main_name)), by_key.get(("audit", main_name)))
    grid = checks.get("whatif") or {}
    label = f"wall whatif / audit, {main_name}"
    rows.append((label, f"{w:.2f}" if w else "-", f"<= {TARGET_WHATIF:.1f}", (w <= TARGET_WHATIF) if w else False))
    if "configs" in grid:
        rows.append((f"  (whatif grid: {grid['configs']:,} configs from {grid['combinations']:,} combinations)", "", "", None))
    wj = by_key.get(("whatif", main_name))
    if wj and wj.samples:
        rows.append(("  (peak RSS of whatif)", f"{wj.rss_mib:.0f} MiB", "", None))
    targets["whatif_over_audit"] = w
    targets["whatif_grid"] = grid

    print(f"{'target':<52} {'measured':>10}  {'wanted':<9} verdict")
    for name, measured, wanted, ok in rows:
        print(f"{name:<52} {measured:>10}  {wanted:<9} {R._verdict(ok) if wanted else ''}")
    if tok and tok.get("mismatches"):
        print(f"\ntoken mismatches ({len(tok['mismatches'])}; loopscan value first, then ccusage's):")
        for m in tok["mismatches"][:20]:
            print(f"  {m['session']}: " + (f"only in {'ccusage' if m.get('missing_in') == 'loopscan' else 'loopscan'}"
                                            if "missing_in" in m else json.dumps(m["fields"])))
        if len(tok["mismatches"]) > 20:
            print(f"  ... {len(tok['mismatches']) - 20} more (all in --json)")
    if cc.why:
        print(f"\nccusage comparison skipped: {cc.why}")
    busy = max(load_before[0], load_after[0])
    if busy > 0.5:
        print(f"\nnote: the machine was busy (load average up to {busy:.1f} on {os.cpu_count()} CPUs); "
              f"wall times are noisy, compare the cpu columns too.")
    failed = [j for j in jobs if j.error and j.label not in ("ccusage", "ccusage-npm")]
    for job in jobs:
        if job.error:
            print(f"\n{job.label} on {job.file} FAILED: {job.error}", file=sys.stderr)

    results = {"runs": runs, "load_before": load_before, "load_after": load_after, "folders": info,
               "ccusage": {"version": cc.version, "skipped": cc.why, "native": cc.native, "wrapper": cc.wrapper},
               "checks": checks,
               "jobs": [{"label": j.label, "folder": j.file, "cmd": j.cmd, "error": j.error,
                         "wall_s": [x.wall for x in j.samples], "cpu_s": [x.cpu for x in j.samples],
                         "rss_kib": [x.rss_kib for x in j.samples]} for j in jobs],
               "targets": targets}
    return results, bool(failed)


if __name__ == "__main__":
    sys.exit(R.main(["--batch-only", *sys.argv[1:]]))
