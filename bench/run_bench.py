"""Benchmark harness for issue #7 (not part of the test suite): cost of `mfu run` against reading the trace.

For each size it generates (once, with `mfu synth --scaled`) an 8-rank trace and times,
each in a fresh child process so wall time and peak RSS are that step's alone:
  (a) floor: DuckDB reads the kernel table joined to the runtime table and sums durations
  (b) `mfu run` on one job over 10 occurrences (no cache: reads the SQLite file)
  (c) `mfu run` on 20 such jobs over the same trace, cache cold (built during the batch)
  (d) the same 20 jobs with the cache warm; (d1) one job with the cache warm
Prints a table and writes bench/RESULTS.md. Usage:
  python bench/run_bench.py [--sizes 1,5,20] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RANKS, KERNELS_PER_STEP, JOBS, OCCURRENCES = 8, 1000, 20, 10


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child process; a failing child stops the benchmark."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):            # 1: a threshold or validity verdict, still a full run
        raise SystemExit(f"{' '.join(cmd)} failed ({code}): {proc.stderr.read().decode()[-2000:]}")
    proc.stderr.close()
    return wall, usage.ru_maxrss / 1024


def make_trace(work: Path, millions: int) -> Path:
    trace = work / f"synth-{millions}m.sqlite"
    if not trace.is_file():
        steps = millions * 1_000_000 // (RANKS * KERNELS_PER_STEP)
        subprocess.run([sys.executable, "-m", "pipeline.cli", "synth", str(trace), "--scaled",
                        "--ranks", str(RANKS), "--steps", str(steps), "--kernels-per-step", str(KERNELS_PER_STEP)],
                       check=True, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.DEVNULL)
    return trace


def make_jobs(work: Path, trace: Path) -> list[Path]:
    """20 jobs over distinct 10-occurrence windows of the same trace (JSON is YAML)."""
    folder = work / f"jobs-{trace.stem}"
    folder.mkdir(exist_ok=True)
    jobs = []
    for i in range(JOBS):
        body = {"name": f"bench-{i:02d}", "trace": str(trace),
                "region": {"name": "train_step", "occurrences": {"first": 1 + 5 * i, "last": OCCURRENCES + 5 * i}},
                "hardware": {"gpu": "auto", "num_gpus": RANKS, "precision": "bf16"},
                "model": {"flops_per_step": 1.0e+14},
                "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16}}
        path = folder / f"job{i:02d}.yaml"
        path.write_text(json.dumps(body))
        jobs.append(path)
    return jobs


def measure_size(work: Path, millions: int) -> dict:
    trace = make_trace(work, millions)
    jobs = make_jobs(work, trace)
    cache, out = work / "cache", work / "reports"
    shutil.rmtree(cache, ignore_errors=True)
    mfu = [sys.executable, "-m", "pipeline.cli", "run", "--out", str(out)]
    row = {"millions": millions, "kernels": millions * 1_000_000, "bytes": trace.stat().st_size,
           "runtime_rows": json.loads(Path(f"{trace}.truth.json").read_text())["runtime_rows"]}
    row["a"] = timed([sys.executable, str(HERE / "floor.py"), str(trace)])
    row["b"] = timed(mfu + ["--no-cache", str(jobs[0])])
    row["c"] = timed(mfu + ["--cache", str(cache), *map(str, jobs)])
    row["d"] = timed(mfu + ["--cache", str(cache), *map(str, jobs)])
    row["d1"] = timed(mfu + ["--cache", str(cache), str(jobs[0])])
    row["cache_bytes"] = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
    return row


def exponent(rows: list[dict], key: str) -> float | None:
    """Least-squares slope of log(time) on log(kernels): 1.0 is linear growth."""
    if len(rows) < 2:
        return None
    xs = [math.log(r["kernels"]) for r in rows]
    ys = [math.log(r[key][0]) for r in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def table(rows: list[dict]) -> str:
    head = ("| kernels | trace GB | (a) floor s / MB | (b) run s / MB | (c) 20 jobs cold s / MB | "
            "(d) 20 jobs warm s / MB | (d1) 1 job warm s | b/a | c/b | d/b | d1/b | rows/s (b) |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        rate = (r["kernels"] + r["runtime_rows"]) / r["b"][0]
        cell = lambda k: f"{r[k][0]:.2f} / {r[k][1]:.0f}"
        lines.append(f"| {r['millions']} M | {r['bytes'] / 1e9:.2f} | {cell('a')} | {cell('b')} | {cell('c')} | "
                     f"{cell('d')} | {r['d1'][0]:.2f} | {r['b'][0] / r['a'][0]:.2f} | {r['c'][0] / r['b'][0]:.2f} | "
                     f"{r['d'][0] / r['b'][0]:.2f} | {r['d1'][0] / r['b'][0]:.2f} | {rate / 1e6:.2f} M |")
    return "\n".join(lines)


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM; "
            f"Python {platform.python_version()}, DuckDB {duckdb.__version__}; 1-min load average at the end: {load:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,5,20", help="millions of kernels, comma-separated")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "mfu-bench",
                    help="where traces, jobs, cache and reports go (traces are kept for reruns)")
    ap.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for millions in (int(s) for s in args.sizes.split(",")):
        rows.append(measure_size(args.workdir, millions))
        print(table(rows[-1:]).splitlines()[-1], flush=True)
    fits = {k: exponent(rows, k) for k in ("a", "b", "c")}
    text = (f"{table(rows)}\n\nFitted exponent of time on kernel count (1.0 = linear): "
            + ", ".join(f"({k}) {v:.2f}" for k, v in fits.items() if v is not None)
            + f"\n\nMachine: {machine()}\n")
    print(text)
    args.results.with_suffix(".last.md").write_text(text)
    print(f"table written to {args.results.with_suffix('.last.md')}; copy it into {args.results.name}")


if __name__ == "__main__":
    main()
