"""occurrence_cut.sql: a job's occurrence_times rows out of a shared window's are those of its own window."""

from __future__ import annotations

import pytest

from pipeline.trace import queries
from tests.sqlfixtures import with_ranges

# four steps of two processes (pids 10, 11); the CPU runs ahead: each range ends 20 ns after the next one starts, so
# every step but the window's last is cut short by the next start; occurrence 3's kernel runs 50 ns past its ranges
RANGES = [(k, pid, 1000 * k + pid - 10, 1000 * k + 1020) for k in range(1, 5) for pid in (10, 11)]
ROWS = [(k, 0, "gemm", "gemm", 1000 * k + 5, 1000 * k + (1070 if k == 3 else 900)) for k in range(1, 5)] + \
       [(2, 1, "nccl", "communication", 2100, 2300)]


def _rows(con) -> list[tuple]:
    return con.execute("SELECT * FROM occurrence_times ORDER BY occurrence").fetchall()


@pytest.mark.parametrize("first, last", [(1, 4), (2, 3), (1, 2), (3, 3), (4, 4)])
def test_the_cut_is_the_jobs_own_occurrence_times(first, last):
    window = with_ranges(ROWS, RANGES)                     # occurrence_times.sql over all four (sqlfixtures)
    window.execute("CREATE TABLE shared_occurrence_times AS SELECT * FROM occurrence_times")
    cut = queries.run(window, "occurrence_cut", first=first, last=last)
    own = with_ranges([r for r in ROWS if first <= r[0] <= last], [r for r in RANGES if first <= r[0] <= last])
    assert _rows(window) == _rows(own)
    assert cut == [
        dict(zip(("occurrence", "processes", "pids", "start_ns", "cpu_range_ns", "wall_ns", "kernel_sum_ns",
                  "kernel_union_ns", "kernel_count", "step_ns"), r))
        for r in own.execute("SELECT occurrence, processes, pids, start_ns, cpu_range_ns, wall_ns, kernel_sum_ns, "
                             "kernel_union_ns, kernel_count, step_ns FROM occurrence_times ORDER BY occurrence").fetchall()]


def test_only_the_last_step_is_its_wall():
    con = with_ranges(ROWS, RANGES)
    con.execute("CREATE TABLE shared_occurrence_times AS SELECT * FROM occurrence_times")
    steps = {r["occurrence"]: (r["step_ns"], r["wall_ns"]) for r in queries.run(con, "occurrence_cut", first=1, last=3)}
    assert steps == {1: (1000, 1020), 2: (1000, 1020), 3: (1070, 1070)}     # 3: its kernel's end, the next start gone
