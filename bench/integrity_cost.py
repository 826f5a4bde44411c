"""What checking a trace's bytes would cost (not part of the test suite): ratios within one run.

Two checks that read the whole file, against the runs they would be added to (same trace shape and
job as bench/run_bench.py, each run a fresh child process, alternating, medians of --repeat):
  cold          `mfu run` without the cache
  warm          `mfu run` with the cache built (the SHA-256 comes from the entry's manifest)
  warm+sha256   the same, but the trace's SHA-256 computed again as a cold run does (trace/files.Hashing
                in its nice-19 thread from the moment the entry is attached, finished before the report):
                what comparing the file with its entry exactly would add to every warm run
  sha256, quick_check, integrity_check
                that read alone, timed inside a child (start-up excluded): the file is in the page cache
and quick_check over each shared real trace ($MFU_TRACES_DIR or ../shared/traces), timed in this process.
  python bench/integrity_cost.py [--sizes 2] [--repeat 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_bench import FIRST, KERNELS, LAST, RANKS, REPO, STEPS, child, job, mfu, reports, synth  # noqa: E402

# A warm run whose Trace hashes the file like a cold one (open.attach), instead of taking the entry's digest.
WARM_HASHED = """import sys
from pipeline.cli import main
from pipeline.trace import cache, files
real = cache.attach_cached
def hashed(*args, **kwargs):
    trace = real(*args, **kwargs)
    if trace is not None:
        trace.digest = files.Hashing(trace.path)
    return trace
cache.attach_cached = hashed
sys.exit(main(sys.argv[1:]))
"""
# One read of the file, timed in the child: sha256, `mfu inspect --verify`'s quick_check, or integrity_check
# opened as verify_pages opens the file.
ALONE = """import sqlite3, sys, time
from pathlib import Path
from pipeline.trace import files, integrity
path, what = Path(sys.argv[1]), sys.argv[2]
start = time.perf_counter()
if what == "sha256":
    files.file_sha256(path)
elif what == "quick_check":
    integrity.verify_pages(path)
else:
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    con.execute("PRAGMA integrity_check").fetchall()
    con.close()
print(time.perf_counter() - start)
"""


def measure(work: Path, millions: float, repeat: int) -> dict[str, float]:
    trace = synth(work / f"synth-{millions:g}m.sqlite", RANKS, STEPS, KERNELS[millions])
    folder = work / f"jobs-{millions:g}m"
    folder.mkdir(exist_ok=True)
    one = job(folder, "one", f"../{trace.name}", FIRST, LAST, RANKS)
    cache, out = work / f"integrity-cache-{millions:g}m", reports(work, f"integrity-{millions:g}m")
    shutil.rmtree(cache, ignore_errors=True)
    child(mfu(out, "--cache", str(cache), str(one)))                   # builds the entry and keeps the window
    warm = mfu(out, "--cache", str(cache), str(one))
    runs: dict[str, list[float]] = {k: [] for k in ("cold", "warm", "warm+sha256", "sha256", "quick_check",
                                                    "integrity_check")}
    for _ in range(repeat):
        runs["cold"].append(child(mfu(out, "--no-cache", str(one)))[0])
        runs["warm"].append(child(warm)[0])
        runs["warm+sha256"].append(child([sys.executable, "-c", WARM_HASHED, *warm[3:]])[0])
        for what in ("sha256", "quick_check", "integrity_check"):
            runs[what].append(float(child([sys.executable, "-c", ALONE, str(trace), what])[2]))
    row = {k: statistics.median(v) for k, v in runs.items()}
    row["bytes"] = trace.stat().st_size
    return row


def real_traces() -> list[tuple[str, int, float]]:
    from pipeline.errors import TraceError
    from pipeline.trace import integrity
    folder = Path(os.environ.get("MFU_TRACES_DIR") or REPO.parent / "shared" / "traces")
    out = []
    for path in sorted(folder.glob("*.sqlite")):
        start = time.perf_counter()
        try:
            integrity.verify_pages(path)
            said = "ok"
        except TraceError as exc:
            said = str(exc)
        out.append((f"{path.name} ({said})", path.stat().st_size, time.perf_counter() - start))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2", help="millions of kernels, comma-separated: 0.5, 2, 8")
    ap.add_argument("--repeat", type=int, default=3, help="alternating runs per measurement (median)")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "mfu-bench",
                    help="where traces, jobs, caches and reports go (traces are kept for reruns)")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO))
    lines = ["| kernels | trace GB | cold s | warm s | warm+sha256 s | sha256 s | quick_check s | integrity_check s | "
             "warm+sha256 / warm | quick_check / cold |", "|" + "---|" * 10]
    for millions in (float(s) for s in args.sizes.split(",")):
        load = os.getloadavg()[0]
        r = measure(args.workdir, millions, args.repeat)
        lines.append(f"| {millions:g} M | {r['bytes'] / 1e9:.2f} | {r['cold']:.2f} | {r['warm']:.2f} | "
                     f"{r['warm+sha256']:.2f} | {r['sha256']:.2f} | {r['quick_check']:.2f} | "
                     f"{r['integrity_check']:.2f} | {r['warm+sha256'] / r['warm']:.2f} | "
                     f"{r['quick_check'] / r['cold']:.2f} |")
        print(lines[-1] + f" (load {load:.1f} -> {os.getloadavg()[0]:.1f})", flush=True)
    found = real_traces()
    damaged = [name for name, _, _ in found if not name.endswith("(ok)")]
    lines += ["", f"quick_check over the {len(found)} shared real traces ({sum(b for _, b, _ in found) / 1e6:.1f} MB): "
              f"{sum(t for _, _, t in found):.3f} s in all, at most {max((t for _, _, t in found), default=0):.3f} s; "
              + ("; ".join(damaged) if damaged else "every one ok")]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
