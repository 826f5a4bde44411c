"""Scale limits of issue 33, each a fresh `mfu` child process, timed in wall and CPU seconds.

    python bench/limits_bench.py [--only NAME ...]

- keys40k:   `mfu validate` of a job file with 40,000 unknown top-level keys (exit 3, every key listed)
- glob10k:   `mfu run` of a job whose trace glob matches 10,000 empty files (exit 4 at the first)
- history100k: `mfu history` of a DuckDB history of 100,001 rows (10 jobs)
- occ30k:    `mfu run --no-cache` of one rank selecting 30,000 occurrences (4 kernels each)
- rss2m:     `mfu run --no-cache` of run_bench.py's 2 M-kernel job (8 ranks x 25 steps x 10,000 kernels, steps
             8-17: 0.8 M kernels in the window), for its peak RSS (270 MB before counted FLOPs, 567-604 after)

CPU seconds (user + system of the child) are the comparable figure on a shared, loaded machine; wall
seconds are printed beside them with the 1-minute load average, and each child's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
JOB = {"region": {"name": "train_step"}, "hardware": {"num_gpus": 1, "precision": "bf16", "gpu": "h100-sxm"},
       "model": {"flops_per_step": 4.0e+13}, "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}


def mfu(*args: str) -> tuple[float, float, int, float]:
    """(wall s, CPU s, exit code, peak RSS MB) of one `mfu` child."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def keys40k(tmp: Path) -> tuple[str, ...]:
    job = tmp / "keys.yaml"
    job.write_text(json.dumps({"name": "keys", "trace": "t.sqlite", **JOB})[:-1] + ", "
                   + ", ".join(f'"unknown_{i}": {i}' for i in range(40_000)) + "}\n")
    return "validate", str(job)


def glob10k(tmp: Path) -> tuple[str, ...]:
    (tmp / "many").mkdir()
    for i in range(10_000):
        (tmp / "many" / f"t{i:05d}.sqlite").touch()
    (tmp / "glob.yaml").write_text(json.dumps({"name": "globbed", "trace": "many/*.sqlite", **JOB}))
    return "run", str(tmp / "glob.yaml"), "--out", str(tmp / "out-glob")


def history100k(tmp: Path) -> tuple[str, ...]:
    sys.path.insert(0, str(REPO))
    from pipeline.history import append
    from tests.test_history import fake
    db = tmp / "h.duckdb"
    append(db, [fake("a", 40.0)])
    with duckdb.connect(str(db)) as con:
        cols = [r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'history' "
                                          "ORDER BY column_index").fetchall()]
        made = {"run": "r.i + 2 AS run", "job": "'job' || (r.i % 10) AS job",
                "mfu_pct_wall": "40 + (r.i % 7) * 0.1 AS mfu_pct_wall"}
        con.execute(f"INSERT INTO history SELECT {', '.join(made.get(c, f'h.{c}') for c in cols)} "
                    "FROM history h, range(100000) r(i)")
    return "history", str(db), "--out", str(tmp / "out-history")


def occ30k(tmp: Path) -> tuple[str, ...]:
    trace = tmp / "occ.sqlite"
    subprocess.run([sys.executable, "-m", "pipeline.cli", "synth", "--ranks", "1", "--steps", "30000",
                    "--kernels-per-step", "4", "--step-ns", "4000000", str(trace)], check=True, capture_output=True,
                   cwd=REPO)
    (tmp / "occ.yaml").write_text(json.dumps({"name": "occ", "trace": str(trace), **JOB}))
    return "run", str(tmp / "occ.yaml"), "--out", str(tmp / "out-occ"), "--no-cache"


def rss2m(tmp: Path) -> tuple[str, ...]:
    sys.path.insert(0, str(REPO / "bench"))
    import run_bench
    k = run_bench.KERNELS[2]
    trace = run_bench.synth(tmp / f"scaled-{k}.sqlite", run_bench.RANKS, run_bench.STEPS, k)
    job = run_bench.job(tmp, "rss2m", str(trace), run_bench.FIRST, run_bench.LAST, run_bench.RANKS)
    return "run", str(job), "--out", str(tmp / "out-rss"), "--no-cache"


CASES = {"keys40k": keys40k, "glob10k": glob10k, "history100k": history100k, "occ30k": occ30k, "rss2m": rss2m}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), default=sorted(CASES))
    args = parser.parse_args()
    print(f"{'case':<12} {'exit':>4} {'wall s':>8} {'CPU s':>8} {'RSS MB':>7}  load")
    for name in args.only:
        with tempfile.TemporaryDirectory() as folder:
            command = CASES[name](Path(folder))
            wall, cpu, code, rss = mfu(*command)
            print(f"{name:<12} {code:>4} {wall:>8.2f} {cpu:>8.2f} {rss:>7.0f}  {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
