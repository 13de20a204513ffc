"""`make bench`: loopscan analyze against a bare "orjson.loads every line" loop, same run, same files;
then the batch benchmarks of bench/batch.py (audit and whatif over a night of sessions, against ccusage).

    .venv/bin/python bench/run.py [--quick] [--runs 3] [--regen] [--json PATH] [--batch-only]

Generates (when missing or stale) synthetic OpenClaw transcripts under bench/data/ with
bench/gen_transcript.py: t30.jsonl (~30 MB), t300.jsonl (~300 MB) and t0.jsonl (~0.2 MB, one run, for the
fixed start-up cost). Warms the page cache, then runs every measurement as a child process, the
jobs interleaved round by round, and reports the best wall time of N runs (default 3), the CPU time
of that best run and the largest peak RSS seen (the child's own ru_maxrss, from os.wait4).

Targets (quality.md "Speed and memory"): loopscan/baseline wall-time ratio <= 1.0 on the largest
file; peak RSS < 64 MiB; RSS growth from the 30 MB to the 300 MB file <= 16 MiB. A missed target is
printed as MISSED; it never fails the run (exit 1 only when a child cannot run at all).
The batch targets are listed in bench/batch.py. MB = 10**6 bytes for file sizes and MB/s; RSS is in MiB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
MB = 1_000_000
MIB = 1 << 20
SEED = 1

TARGET_RATIO = 1.0
TARGET_RSS_MIB = 64.0
TARGET_GROWTH_MIB = 16.0

BASELINE = (
    "import sys, time, orjson\n"
    "t = time.perf_counter()\n"
    "for line in open(sys.argv[1], 'rb'): orjson.loads(line)\n"
    "print(time.perf_counter() - t)\n"
)


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_kib: int


@dataclass
class Job:
    label: str
    file: str
    cmd: list[str]
    size: int
    samples: list[Sample] = field(default_factory=list)
    error: str | None = None

    @property
    def best(self) -> Sample | None:
        return min(self.samples, key=lambda s: s.wall) if self.samples else None

    @property
    def rss_mib(self) -> float | None:
        return max(s.rss_kib for s in self.samples) / 1024 if self.samples else None


# --- data ---------------------------------------------------------------------------------------


def _generator_digest() -> str:
    return hashlib.sha256((HERE / "gen_transcript.py").read_bytes()).hexdigest()[:16]


def ensure_file(name: str, size_mb: float, regen: bool) -> Path:
    """bench/data/<name>.jsonl, (re)generated when missing, stale (generator changed) or --regen."""
    path = DATA / f"{name}.jsonl"
    stamp = DATA / f"{name}.meta.json"
    want = {"size_mb": size_mb, "seed": SEED, "generator": _generator_digest()}
    try:
        fresh = path.exists() and json.loads(stamp.read_text()) == want
    except (OSError, ValueError):
        fresh = False
    if fresh and not regen:
        return path
    sys.path.insert(0, str(HERE))
    import gen_transcript  # noqa: E402 - bench/ is a folder of scripts, not a package

    DATA.mkdir(parents=True, exist_ok=True)
    print(f"generating {path.relative_to(HERE.parent)} (~{size_mb:g} MB) ...", end=" ", flush=True)
    t0 = time.perf_counter()
    size, lines = gen_transcript.generate(str(path), size_mb, SEED)
    print(f"{size / MB:.1f} MB, {lines:,} lines in {time.perf_counter() - t0:.1f}s", flush=True)
    stamp.write_text(json.dumps(want))
    return path


def warm(path: Path) -> float:
    """Read the file once so every measurement starts from a warm page cache. Returns seconds."""
    t0 = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(8 << 20)
        while f.readinto(buf):
            pass
    return time.perf_counter() - t0


def count_lines(path: Path) -> int:
    n = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(8 << 20), b""):
            n += chunk.count(b"\n")
    return n


# --- measuring ----------------------------------------------------------------------------------


# The child is started by this small wrapper, not by the bench process itself: on Linux a child's
# ru_maxrss also counts the high-water RSS of the process it was forked / vforked from, so a child
# spawned straight from this (larger) process would report at least this process's peak. The
# wrapper (python -S, about 8 MiB) spawns it instead and reports its wall time, CPU time and
# ru_maxrss from os.wait4; `floor` below measures what the wrapper itself adds (/bin/true).
WRAPPER = """
import os, sys, time
argv = sys.argv[1:]
null = os.open(os.devnull, os.O_RDWR)
t = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ,
                      file_actions=[(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1)])
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t
print(wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def measure(cmd: list[str]) -> Sample:
    """Run `cmd` as a child; its wall time, CPU time and peak RSS (KiB, Linux ru_maxrss)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run([sys.executable, "-S", "-E", "-c", WRAPPER, *cmd],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        try:
            wall, cpu, rss, code = proc.stdout.split()
            code = int(code)
        except ValueError:
            code = proc.returncode or -1
        if proc.returncode != 0 or code != 0:
            err.seek(0)
            tail = "\n".join(err.read().decode("utf-8", "replace").rstrip().splitlines()[-8:])
            raise RuntimeError(f"exit status {code}: {' '.join(cmd)}\n{tail}")
    return Sample(float(wall), float(cpu), int(rss))


def measurement_floor() -> float | None:
    """The smallest peak RSS the wrapper can report (MiB), measured on /bin/true."""
    true = shutil.which("true")
    try:
        return measure([true]).rss_kib / 1024 if true else None
    except (RuntimeError, OSError):
        return None


def loopscan_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "loopscan"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("loopscan")
    return [found] if found else [sys.executable, "-m", "loopscan"]


def analyze_cmd(path: Path) -> list[str]:
    return loopscan_cmd() + ["analyze", str(path), "--format", "json", "--output", os.devnull, "--fail-on", "never"]


def run_jobs(jobs: list[Job], runs: int) -> None:
    """Round-robin: every job once per round, so a burst of outside load hits all of them alike."""
    for r in range(runs):
        print(f"round {r + 1}/{runs}:", end="", flush=True)
        for job in jobs:
            if job.error:
                continue
            try:
                job.samples.append(measure(job.cmd))
                print(f" {job.label}[{job.file}] {job.samples[-1].wall:.2f}s", end="", flush=True)
            except (RuntimeError, OSError) as exc:
                job.error = str(exc)
                print(f" {job.label}[{job.file}] FAILED", end="", flush=True)
        print(flush=True)


# --- report -------------------------------------------------------------------------------------


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("ok" if ok else "MISSED")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="loopscan speed and memory benchmark (see bench/README.md)")
    parser.add_argument("--quick", action="store_true", help="30 MB file only (no 300 MB file, no RSS growth figure); batch: the 40- and 130-session folders")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement; the best wall time is kept (default 3)")
    parser.add_argument("--regen", action="store_true", help="regenerate the data files even when present")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    parser.add_argument("--batch-only", action="store_true",
                        help="only the batch benchmarks (audit, whatif, ccusage; bench/batch.py), not analyze")
    args = parser.parse_args(argv)
    runs = max(1, args.runs)
    results: dict = {}
    failed = False
    if not args.batch_only:
        results, failed = analyze_bench(args, runs)
    import batch  # noqa: E402 - bench/batch.py imports this module; imported here to keep that one-way at load time

    results["batch"], batch_failed = batch.run_batch(args.quick, runs, args.regen)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 1 if failed or batch_failed else 0


def analyze_bench(args: argparse.Namespace, runs: int) -> tuple[dict, bool]:
    """The analyze benchmark: loopscan analyze against the orjson baseline. Returns (figures, failed)."""
    sizes = [("t30", 30.0)] if args.quick else [("t30", 30.0), ("t300", 300.0)]
    tiny = ensure_file("t0", 0.05, args.regen)
    files = {name: ensure_file(name, mb, args.regen) for name, mb in sizes}
    big_name = sizes[-1][0]

    info = {name: (p.stat().st_size, count_lines(p)) for name, p in [("t0", tiny), *files.items()]}
    for p in [tiny, *files.values()]:
        warm(p)

    jobs: list[Job] = [Job("loopscan", "t0", analyze_cmd(tiny), info["t0"][0])]
    for name, path in files.items():
        jobs.append(Job("baseline", name, [sys.executable, "-c", BASELINE, str(path)], info[name][0]))
        jobs.append(Job("loopscan", name, analyze_cmd(path), info[name][0]))
    by_key = {(j.label, j.file): j for j in jobs}

    floor = measurement_floor()
    load_before = os.getloadavg()
    t_start = time.perf_counter()
    run_jobs(jobs, runs)
    elapsed = time.perf_counter() - t_start
    load_after = os.getloadavg()

    # --- the table ---
    print()
    print(f"loopscan bench: python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"best wall time of {runs} run(s) each, warm page cache, {elapsed:.0f}s of measuring")
    print()
    if floor is not None:
        print(f"peak RSS is each child's own ru_maxrss; the measuring wrapper puts a floor of {floor:.1f} MiB under it")
        print()
    print(f"{'file':<8} {'size':>10} {'lines':>9}")
    for name, (size, lines) in info.items():
        print(f"{name:<8} {size / MB:>7.1f} MB {lines:>9,}")
    print()
    head = f"{'what':<34} {'file':<5} {'wall s':>7} {'cpu s':>7} {'MB/s':>7} {'peak RSS':>10}"
    print(head)
    print("-" * len(head))
    titles = {"baseline": "baseline: orjson.loads every line", "loopscan": "loopscan analyze --format json"}
    for job in jobs:
        title = "loopscan analyze (start-up cost)" if job.file == "t0" else titles[job.label]
        best = job.best
        if job.error or best is None:
            print(f"{title:<34} {job.file:<5} FAILED")
            continue
        rate = "" if job.file == "t0" else f"{job.size / MB / best.wall:7.0f}"
        print(f"{title:<34} {job.file:<5} {best.wall:7.2f} {best.cpu:7.2f} {rate:>7} {job.rss_mib:7.1f} MiB")
    print()

    # --- the targets ---
    results: dict = {"runs": runs, "rss_floor_mib": floor, "load_before": load_before, "load_after": load_after,
                     "files": {k: {"bytes": v[0], "lines": v[1]} for k, v in info.items()},
                     "jobs": [{"label": j.label, "file": j.file, "error": j.error,
                               "wall_s": [s.wall for s in j.samples], "cpu_s": [s.cpu for s in j.samples],
                               "rss_kib": [s.rss_kib for s in j.samples]} for j in jobs],
                     "targets": {}}
    base, scan = by_key[("baseline", big_name)], by_key[("loopscan", big_name)]
    rows = []
    if base.best and scan.best:
        ratio = scan.best.wall / base.best.wall
        cpu_ratio = scan.best.cpu / base.best.cpu
        rows.append((f"wall time loopscan/baseline, {big_name}", f"{ratio:.2f}", f"<= {TARGET_RATIO:.1f}", ratio <= TARGET_RATIO))
        rows.append((f"  (cpu time ratio, {big_name}, for the noise)", f"{cpu_ratio:.2f}", "", None))
        results["targets"]["ratio"] = ratio
        results["targets"]["cpu_ratio"] = cpu_ratio
    else:
        rows.append((f"wall time loopscan/baseline, {big_name}", "-", f"<= {TARGET_RATIO:.1f}", False))
    worst_rss = max((j.rss_mib for j in jobs if j.label == "loopscan" and j.samples), default=None)
    if worst_rss is not None:
        rows.append(("peak RSS of loopscan analyze (any file)", f"{worst_rss:.1f} MiB", f"< {TARGET_RSS_MIB:.0f} MiB", worst_rss < TARGET_RSS_MIB))
        results["targets"]["peak_rss_mib"] = worst_rss
    else:
        rows.append(("peak RSS of loopscan analyze (any file)", "-", f"< {TARGET_RSS_MIB:.0f} MiB", False))
    small, large = by_key.get(("loopscan", "t30")), by_key.get(("loopscan", "t300"))
    if small and large and small.samples and large.samples:
        growth = large.rss_mib - small.rss_mib
        rows.append(("RSS growth loopscan t30 -> t300", f"{growth:+.1f} MiB", f"<= {TARGET_GROWTH_MIB:.0f} MiB", growth <= TARGET_GROWTH_MIB))
        results["targets"]["rss_growth_mib"] = growth
    else:
        rows.append(("RSS growth loopscan t30 -> t300", "-", f"<= {TARGET_GROWTH_MIB:.0f} MiB", None if args.quick else False))
    t0_job = by_key[("loopscan", "t0")]
    if small and small.samples and t0_job.samples:
        rows.append(("  (RSS growth t0 -> t30, for reference)", f"{small.rss_mib - t0_job.rss_mib:+.1f} MiB", "", None))
    print(f"{'target':<46} {'measured':>10}  {'wanted':<12} verdict")
    for name, measured, wanted, ok in rows:
        print(f"{name:<46} {measured:>10}  {wanted:<12} {_verdict(ok) if wanted else ''}")
    if max(load_before[0], load_after[0]) > 0.5:
        print(f"\nnote: the machine was busy (load average up to {max(load_before[0], load_after[0]):.1f} on "
              f"{os.cpu_count()} CPUs); wall times are noisy, compare the cpu columns too.")
    failed = [j for j in jobs if j.error]
    for job in failed:
        print(f"\n{job.label} on {job.file} FAILED: {job.error}", file=sys.stderr)
    return results, bool(failed)


if __name__ == "__main__":
    sys.exit(main())
