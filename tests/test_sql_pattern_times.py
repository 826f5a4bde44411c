"""pattern_times.sql: kernels a user figure names, with per-device unions."""

from __future__ import annotations

from pipeline.trace import chain
from tests.sqlfixtures import classified



def _times(con, pattern: str) -> list[dict]:
    return chain.run(con, {"pattern_unions", "pattern_times"}, pattern=pattern)["pattern_times"]


def test_only_matching_names_and_per_device_union():
    con = classified([(1, 0, "gemm_a", "gemm", 0, 10), (1, 0, "gemm_b", "gemm", 5, 12),
                      (1, 1, "gemm_a", "gemm", 0, 4), (1, 0, "flash", "attention", 0, 100)])
    assert _times(con, "^gemm_") == [
        {"kernel_count": 3, "sum_ns": 10 + 7 + 4, "device_union_ns": 12 + 4}]


def test_nothing_matches_gives_zeros():
    con = classified([(1, 0, "gemm_a", "gemm", 0, 10)])
    assert _times(con, "nccl") == [
        {"kernel_count": 0, "sum_ns": 0, "device_union_ns": 0}]
