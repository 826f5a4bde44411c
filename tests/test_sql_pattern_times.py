"""pattern_times.sql: kernels a user figure names, with per-device unions."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def test_only_matching_names_and_per_device_union():
    con = classified([(1, 0, "gemm_a", "gemm", 0, 10), (1, 0, "gemm_b", "gemm", 5, 12),
                      (1, 1, "gemm_a", "gemm", 0, 4), (1, 0, "flash", "attention", 0, 100)])
    assert queries.run(con, "pattern_times", pattern="^gemm_") == [
        {"kernel_count": 3, "sum_ns": 10 + 7 + 4, "device_union_ns": 12 + 4}]


def test_nothing_matches_gives_zeros():
    con = classified([(1, 0, "gemm_a", "gemm", 0, 10)])
    assert queries.run(con, "pattern_times", pattern="nccl") == [
        {"kernel_count": 0, "sum_ns": 0, "device_union_ns": 0}]
