"""fp16_accumulate_times.sql: time of the fp16 matrix kernels whose names say they accumulate in FP16."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified

PATTERNS = ["(?i)f16f16_f16f16", "(?i)_h\\d{3,5}(gemm|cudnn)"]     # as configs/kernel_classes.yaml


def test_only_fp16_matrix_kernels_that_accumulate_in_fp16_count():
    con = classified([
        (1, 0, "sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwc", "convolution", 0, 30, "fp16"),   # acc f16
        (2, 0, "sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwc", "convolution", 50, 60, "fp16"),
        (1, 0, "turing_h1688cudnn_256x64_relu", "convolution", 30, 35, "fp16"),                           # h: f16
        (1, 0, "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n", "gemm", 0, 20, "fp16"),                           # acc f32
        (1, 0, "turing_fp16_s1688cudnn_fp16_128x128", "convolution", 35, 42, "fp16"),                     # s: f32
        (1, 0, "sm80_xmma_gemm_bf16bf16_bf16f32_f32", "gemm", 0, 40, "bf16"),
        (1, 0, "copy_f16f16_f16f16", "elementwise", 0, 99),                # not a matrix kernel: no precision
    ])
    rows = queries.run(con, "fp16_accumulate_times", patterns=PATTERNS, names=1)
    # by hand: 30 + 10 ns of the xmma f16-accumulate convolution, 5 ns of h1688cudnn
    assert rows == [{"kernel_count": 3, "sum_ns": 45,
                     "top_names": ["sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwc"]}]


def test_no_such_kernels_one_row_of_zeros():
    con = classified([(1, 0, "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n", "gemm", 0, 20, "fp16"),
                      (1, 0, "relu", "elementwise", 0, 9)])
    assert queries.run(con, "fp16_accumulate_times", patterns=PATTERNS, names=3) == [
        {"kernel_count": 0, "sum_ns": 0, "top_names": []}]
