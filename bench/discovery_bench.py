"""Benchmark for region discovery (issue 12; not part of the test suite): inspect's read and discovery
chain (inspect_read.sql, then trace/discovery.py's FILES) on millions of NVTX ranges, against a floor that
reads the same columns once.

Tables named like the pipeline's views (ranges, launches, kernels) are generated inside DuckDB:
per process, `ops` PyTorch-style op ranges (', seq = N, op_id = M' suffixes, 50 operators),
each launching one kernel, nested in a 'layer' range per 100 ops and a 'train_step' per 1000.
Prints, per size: ranges, floor seconds, discovery seconds and their ratio, and checks that
train_step is the one step-like name. Usage: python bench/discovery_bench.py [--ops 100000,1000000]
"""

from __future__ import annotations

import argparse
import time

import duckdb

from pipeline.trace import chain, queries
from pipeline.trace.discovery import FILES, MAX_PERIOD_CV, MIN_REPEATS, MIN_SHARE, WARMUP_FACTOR

PROCESSES = 2
TABLES = """
CREATE TABLE ops AS SELECT p, i, 1000000 + i * 2000 AS s FROM range({p}) t(p), range({n}) r(i);
CREATE TABLE ranges AS
 SELECT s AS start_ns, s + 1000 AS end_ns, p << 24 AS global_pid, (p << 24) | 1 AS global_tid, p AS pid,
        'aten::op' || (i % 50) || ', seq = ' || i || ', op_id = ' || i AS name, NULL::VARCHAR AS domain FROM ops
 UNION ALL
 SELECT min(s) - 10, max(s) + 1500, p << 24, (p << 24) | 1, p, 'layer', NULL FROM ops GROUP BY p, i // 100
 UNION ALL
 SELECT min(s) - 20, max(s) + 1600, p << 24, (p << 24) | 1, p, 'train_step', NULL FROM ops GROUP BY p, i // 1000;
CREATE TABLE launches AS SELECT s + 100 AS start_ns, s + 200 AS end_ns, (p << 24) | 1 AS global_tid,
        p << 24 AS global_pid, i AS correlation_id FROM ops;
CREATE TABLE kernels AS SELECT s + 300 AS start_ns, s + 1800 AS end_ns, p AS device_id, 7 AS stream_id,
        i AS correlation_id, p << 24 AS global_pid, 1 AS name_id, 2 AS detail_id, NULL::BIGINT AS graph_id,
        NULL::BIGINT AS node_graph_id FROM ops;
"""
FLOOR = ("SELECT (SELECT count(DISTINCT name) + sum(end_ns - start_ns) FROM ranges), "
         "(SELECT sum(end_ns - start_ns) FROM launches), (SELECT sum(end_ns - start_ns) FROM kernels)")


def bench(ops: int) -> tuple[int, float, float]:
    con = duckdb.connect()
    queries.run(con, "macros")
    for stmt in TABLES.format(p=PROCESSES, n=ops).strip().split(";\n"):
        con.execute(stmt)
    ranges = con.execute("SELECT count(*) FROM ranges").fetchone()[0]
    t0 = time.perf_counter()
    con.execute(FLOOR).fetchall()
    t1 = time.perf_counter()
    rows = chain.run(con, {"inspect_read", *FILES}, limit=10, min_repeats=MIN_REPEATS, min_share=MIN_SHARE,
                     max_period_cv=MAX_PERIOD_CV, warmup_factor=WARMUP_FACTOR)["inspect_regions"]
    t2 = time.perf_counter()
    assert [r["name_group"] for r in rows if r["step_like"]] == ["train_step"], rows[:3]
    return ranges, t1 - t0, t2 - t1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default="100000,1000000", help="op ranges per process, comma-separated")
    args = ap.parse_args()
    print(f"{'ranges':>10} {'floor s':>8} {'discovery s':>12} {'ratio':>6}")
    for n in (int(x) for x in args.ops.split(",")):
        ranges, floor, found = bench(n)
        print(f"{ranges:>10,} {floor:>8.2f} {found:>12.2f} {found / floor:>6.1f}")


if __name__ == "__main__":
    main()
