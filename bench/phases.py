"""One `mfu run` in this process with per-phase timers (bench/run_bench.py runs it as a child).

Prints JSON: wall seconds per phase and per SQL file. Phases:
  read         opening the files and the region's ranges (views, region_ranges, selection)
  attribution  kernels and memory operations to occurrences, and their classes
  analyses     unions, times, kernel classes, overlap, top kernels, precision, roofline inputs
  flops        the numerator (model FLOPs)
  render       report files (Markdown, HTML, JSON)
  other        the rest: start-up imports, job loading, peak, result assembly
The timers wrap module functions by name; a name that no longer exists is skipped (its time
then counts as `other`), so the benchmark keeps running while the code moves.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict

START = time.perf_counter()

from pipeline.trace import queries  # noqa: E402  (after START: imports count as `other`)

READ = {"views", "region_ranges", "region_counts", "nested_counts", "select_occurrences", "gpu_rows", "macros"}
ATTRIBUTION = {"attribute_launch", "attribute_window", "attribute_memops", "unattributed", "classify",
               "classify_collect", "classify_combine", "rank_collect", "rank_combine"}

phase_s: dict[str, float] = defaultdict(float)
sql_s: dict[str, float] = defaultdict(float)


def timed(phase: str, fn):
    def wrapper(*args, **kw):
        t = time.perf_counter()
        try:
            return fn(*args, **kw)
        finally:
            phase_s[phase] += time.perf_counter() - t
    return wrapper


def timed_sql(fn):
    def wrapper(con, name, /, **params):
        t = time.perf_counter()
        try:
            return fn(con, name, **params)
        finally:
            dt = time.perf_counter() - t
            sql_s[name] += dt
            phase_s["read" if name in READ else "attribution" if name in ATTRIBUTION else "analyses"] += dt
    return wrapper


def patch(module: str, name: str, phase: str) -> None:
    mod = sys.modules.get(module) or __import__(module, fromlist=[name])
    if hasattr(mod, name):
        setattr(mod, name, timed(phase, getattr(mod, name)))


def main(argv: list[str]) -> None:
    queries.run = timed_sql(queries.run)
    patch("pipeline.analysis.ranks", "open_set", "read")
    patch("pipeline.run", "job_flops", "flops")
    patch("pipeline.report.render", "render_all", "render")
    patch("pipeline.report.render", "write_files", "render")
    from pipeline import cli
    try:
        cli.main(["run", *argv])
    except SystemExit:
        pass
    total = time.perf_counter() - START
    phase_s["other"] = total - sum(phase_s.values())
    print(json.dumps({"total_s": total, "phases_s": dict(phase_s), "sql_s": dict(sql_s)}))


if __name__ == "__main__":
    main(sys.argv[1:])
