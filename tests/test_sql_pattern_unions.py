"""pattern_unions.sql: kernels whose name matches an RE2 pattern, unioned per device (trace/unions.py)."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def _unions(con) -> list[tuple]:
    return con.execute("SELECT scope, k1, k2, k3, union_ns, sum_ns, interval_count, last_end_ns "
                       "FROM pattern_unions ORDER BY k1").fetchall()


def test_matching_names_per_device_by_hand():
    con = classified([(1, 0, "x", "gemm", 5, 15), (1, 0, "x", "gemm", 10, 30), (1, 0, "y", "gemm", 0, 99),
                      (2, 1, "xy", "gemm", 100, 110), (2, None, "x_nodev", "gemm", 0, 4)])
    assert queries.run(con, "pattern_unions", pattern="x") == []            # the rows go to a table
    # device 0: 5..15 and 10..30 -> 5..30 = 25 (sum 30); "y" does not match. device 1: "xy" (unanchored
    # search): 10. No device: -1.
    assert _unions(con) == [("device", -1, None, None, 4, 4, 1, 4), ("device", 0, None, None, 25, 30, 2, 30),
                            ("device", 1, None, None, 10, 10, 1, 110)]
    queries.run(con, "pattern_unions", pattern="^x$")
    assert _unions(con) == [("device", 0, None, None, 25, 30, 2, 30)]
    queries.run(con, "pattern_unions", pattern="nothing")
    assert _unions(con) == []
