"""stream_times.sql: count, sum and union per device and CUDA stream, busiest first."""

from __future__ import annotations

from pipeline.trace import chain
from tests.sqlfixtures import classified


def _times(con) -> list[dict]:
    return chain.run(con, {"stream_times"})["stream_times"]         # over the unions `classified` made


def test_busiest_stream_first_and_missing_keys_as_null():
    con = classified([(1, 0, "gemm", "gemm", 0, 10), (1, 0, "gemm", "gemm", 5, 20),
                      (1, 0, "nccl", "communication", 0, 40), (1, None, "x", "other", 0, 3)],
                     streams=[7, 7, 13, None])
    assert _times(con) == [
        {"device_id": 0, "stream_id": 13, "kernel_count": 1, "sum_ns": 40, "union_ns": 40},
        {"device_id": 0, "stream_id": 7, "kernel_count": 2, "sum_ns": 10 + 15, "union_ns": 20},
        {"device_id": None, "stream_id": None, "kernel_count": 1, "sum_ns": 3, "union_ns": 3}]


def test_no_kernels_no_rows():
    con = classified([(1, 0, "[CUDA memcpy]", "memory", 0, 5)], streams=[7])
    assert _times(con) == []
