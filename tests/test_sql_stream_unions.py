"""stream_unions.sql: attributed kernels unioned per device and CUDA stream (trace/unions.py)."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def test_kernels_per_device_and_stream_by_hand():
    con = classified([(1, 0, "gemm", "gemm", 0, 10), (1, 0, "add", "elementwise", 5, 20),
                      (1, 0, "nccl", "communication", 0, 30), (2, 0, "gemm", "gemm", 100, 110),
                      (1, 1, "gemm", "gemm", 0, 7), (1, 0, "[CUDA memcpy]", "memory", 0, 50),
                      (1, 0, "nostream", "gemm", 40, 44)],
                     streams=[7, 7, 13, 7, 7, 7, None])
    assert queries.run(con, "stream_unions") == []              # the rows go to a table
    got = con.execute("SELECT scope, k1, k2, union_ns, sum_ns, interval_count FROM stream_unions "
                      "ORDER BY k1, k2").fetchall()
    # device 0 stream 7: 0..10, 5..20 (occurrence 1) and 100..110 (occurrence 2) -> 20 + 10 = 30, sum 10 + 15 + 10;
    # the memcpy on stream 7 is no kernel. Stream 13: 30. No stream: -1. Device 1 stream 7: 7.
    assert got == [("stream", 0, -1, 4, 4, 1), ("stream", 0, 7, 30, 35, 3), ("stream", 0, 13, 30, 30, 1),
                   ("stream", 1, 7, 7, 7, 1)]
