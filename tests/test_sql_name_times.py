"""name_times.sql: count and summed time per kernel name id and occurrence, by hand."""

from __future__ import annotations

from tests.sqlfixtures import classified


def test_per_name_and_occurrence():
    con = classified([(1, 0, "gemm", "gemm", 0, 10), (1, 1, "gemm", "gemm", 5, 12), (2, 0, "gemm", "gemm", 20, 21),
                      (1, 0, "[CUDA memcpy]", "memory", 3, 7)])       # classified() runs name_times.sql
    rows = con.execute("SELECT occurrence, n.name, kernel_count, sum_ns FROM name_times JOIN kernel_names AS n "
                       "USING (name_id) ORDER BY occurrence, n.name").fetchall()
    assert rows == [(1, "[CUDA memcpy]", 1, 4), (1, "gemm", 2, 17), (2, "gemm", 1, 1)]


def test_kernels_starting_together_all_count():
    """The same kernel started at the same time on two devices is two kernels."""
    con = classified([(1, 0, "gemm", "gemm", 0, 10), (1, 1, "gemm", "gemm", 0, 10)])
    rows = con.execute("SELECT occurrence, n.name, kernel_count, sum_ns FROM name_times JOIN kernel_names AS n "
                       "USING (name_id)").fetchall()
    assert rows == [(1, "gemm", 2, 20)]
