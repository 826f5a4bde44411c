"""Scale limits of issue 33, each a fresh `mfu` child process, timed in wall and CPU seconds.

    python bench/limits_bench.py [--only NAME ...]

- keys40k:   `mfu validate` of a job file with 40,000 unknown top-level keys (exit 3, every key listed)
- glob10k:   `mfu run` of a job whose trace glob matches 10,000 empty files (exit 4 at the first)
- history100k: `mfu history` of a DuckDB history of 100,001 rows (10 jobs)
- occ30k:    `mfu run --no-cache` of one rank selecting 30,000 occurrences (4 kernels each)

CPU seconds (user + system of the child) are the comparable figure on a shared, loaded machine; wall
seconds are printed beside them with the 1-minute load average.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
JOB = {"region": {"name": "train_step"}, "hardware": {"num_gpus": 1, "precision": "bf16", "gpu": "h100-sxm"},
       "model": {"flops_per_step": 4.0e+13}, "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}


def mfu(*args: str) -> tuple[float, float, int]:
    """(wall s, CPU s, exit code) of one `mfu` child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", *args], capture_output=True, cwd=REPO)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.returncode


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


CASES = {"keys40k": keys40k, "glob10k": glob10k, "history100k": history100k, "occ30k": occ30k}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), default=sorted(CASES))
    args = parser.parse_args()
    print(f"{'case':<12} {'exit':>4} {'wall s':>8} {'CPU s':>8}  load")
    for name in args.only:
        with tempfile.TemporaryDirectory() as folder:
            command = CASES[name](Path(folder))
            wall, cpu, code = mfu(*command)
            print(f"{name:<12} {code:>4} {wall:>8.2f} {cpu:>8.2f}  {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
