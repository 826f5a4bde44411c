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


def test_a_shared_window_cut_gives_each_job_its_own_unions():
    """A window of occurrences 1..3 sorted once (analysis/sharing.py), cut to a job's occurrences: the job's own
    window's unions. Stream 7 of device 0: [100 k, 100 k + 30) and [100 k + 20, 100 k + 50) in occurrence k, and
    occurrence 2's kernel runs on to [250, 320), into occurrence 3's (so the occurrences of a stream overlap)."""
    rows = [(k, 0, "gemm", "gemm", 100 * k + a, 100 * k + b) for k in (1, 2, 3) for a, b in ((0, 30), (20, 50))]
    rows += [(2, 0, "add", "elementwise", 250, 320), (3, 1, "gemm", "gemm", 300, 310)]
    streams = [7] * 6 + [7, 9]
    read = "SELECT scope, k1, k2, union_ns, sum_ns, interval_count FROM stream_unions ORDER BY ALL"
    whole = classified(rows, streams=streams)
    done = queries.sort_unions(whole, "stream_unions", "occurrence")
    for first, last in ((1, 3), (2, 2), (2, 3), (3, 3)):
        queries.store_cut(whole, "stream_unions", done, first, last)
        kept = [(r, s) for r, s in zip(rows, streams) if first <= r[0] <= last]
        own = classified([r for r, _ in kept], streams=[s for _, s in kept])
        queries.run(own, "stream_unions")
        assert whole.execute(read).fetchall() == own.execute(read).fetchall(), (first, last)
    # the last cut, occurrence 3, by hand: device 0 stream 7: [300, 330) and [320, 350), union 50, sum 60
    assert whole.execute(read).fetchall()[0] == ("stream", 0, 7, 50, 60, 2)
