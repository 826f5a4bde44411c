"""rank_union.sql: each rank's own kernel union per occurrence, by hand."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import plant


def test_union_per_rank_and_occurrence():
    con = plant([(1, 10, 0, "a", "gemm", 0, 100), (1, 10, 0, "b", "gemm", 50, 150),   # overlap: union 150
                 (1, 10, 0, "a", "gemm", 150, 160),                                   # touching: merges, 160
                 (1, 10, 0, "a", "gemm", 200, 210),                                   # gap: +10 -> 170
                 (1, 10, 0, "[CUDA memcpy]", "memory", 300, 400),                     # copies are not kernels
                 (1, 20, 1, "a", "gemm", 0, 1000),                                    # another rank, same occurrence
                 (2, 10, 0, "a", "gemm", 500, 530)])
    assert queries.run(con, "rank_union") == [{"occurrence": 1, "global_pid": 10, "union_ns": 170},
                                              {"occurrence": 1, "global_pid": 20, "union_ns": 1000},
                                              {"occurrence": 2, "global_pid": 10, "union_ns": 30}]
