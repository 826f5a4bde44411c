"""precision_times.sql: matrix-kernel time per precision, with the names that took most of it."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def test_time_per_precision_with_its_largest_names():
    con = classified([(1, 0, "sgemm_a", "gemm", 0, 10, "fp32"), (2, 0, "sgemm_a", "gemm", 20, 25, "fp32"),
                      (1, 0, "sgemm_b", "gemm", 10, 30, "fp32"), (1, 0, "sgemm_c", "gemm", 30, 31, "fp32"),
                      (1, 1, "bf16_gemm", "gemm", 0, 40, "bf16"), (1, 1, "nvjet_x", "gemm", 40, 43, "unknown"),
                      (1, 0, "relu", "elementwise", 0, 99), (1, 0, "[CUDA memcpy]", "memory", 0, 99)])
    rows = queries.run(con, "precision_times", names=2)
    assert rows == [
        {"precision": "bf16", "kernel_count": 1, "sum_ns": 40, "top_names": ["bf16_gemm"]},
        {"precision": "fp32", "kernel_count": 4, "sum_ns": 36, "top_names": ["sgemm_b", "sgemm_a"]},
        {"precision": "unknown", "kernel_count": 1, "sum_ns": 3, "top_names": ["nvjet_x"]}]


def test_no_matrix_kernels_no_rows():
    assert queries.run(classified([(1, 0, "relu", "elementwise", 0, 9)]), "precision_times", names=3) == []
