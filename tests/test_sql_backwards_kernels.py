"""backwards_kernels.sql: attributed rows that end before they start, per occurrence, by hand."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def test_rows_ending_before_they_start_per_occurrence():
    con = classified([(1, 0, "gemm", "gemm", 0, 10),                  # fine
                      (1, 0, "gemm", "gemm", 50, 20),                 # 30 ns backwards
                      (1, 1, "[CUDA memcpy]", "memory", 9, 4),        # 5 ns backwards
                      (2, 0, "gemm", "gemm", 7, 7),                   # zero length: no interval, not backwards
                      (3, 0, "gemm", "gemm", 100, 1)])                # 99 ns backwards
    assert queries.run(con, "backwards_kernels") == [{"occurrence": 1, "rows": 2, "negative_ns": 35},
                                                     {"occurrence": 3, "rows": 1, "negative_ns": 99}]


def test_none_when_every_row_runs_forward():
    assert queries.run(classified([(1, 0, "gemm", "gemm", 0, 10)]), "backwards_kernels") == []
