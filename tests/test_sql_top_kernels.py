"""top_kernels.sql: names ranked by summed time, cut at $limit."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def test_ranked_by_sum_and_limited():
    con = classified([(1, 0, "a", "gemm", 0, 10), (1, 0, "a", "gemm", 10, 15),
                      (1, 0, "b", "elementwise", 0, 30), (1, 1, "c", "memory", 0, 1)])
    rows = queries.run(con, "top_kernels", limit=2)
    assert rows == [{"name": "b", "class": "elementwise", "kernel_count": 1, "sum_ns": 30},
                    {"name": "a", "class": "gemm", "kernel_count": 2, "sum_ns": 15}]
