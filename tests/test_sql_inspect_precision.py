"""inspect_precision.sql: kernel time by the precision the kernel names announce."""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid

P = gpid(1)


def test_precision_by_name(open_export) -> None:
    from pipeline.trace import queries
    e = Export()
    e.kernel(0, 50, P, 1, name="sm90_xmma_gemm_bf16bf16_bf16f32")
    e.kernel(50, 70, P, 2, name="at::native::add<c10::BFloat16>")
    e.kernel(70, 80, P, 3, name="sm90_gemm_e4m3_e4m3")
    e.kernel(80, 85, P, 4, name="hgemm_fp16_128x128")
    e.kernel(85, 100, P, 5, name="ncclDevKernel_AllReduce")       # no precision in the name
    rows = queries.run(open_export(e).con, "inspect_precision")
    # 100 ns of kernels: bf16 70, fp8 10, fp16 5
    assert [(r["precision"], r["kernel_ns"], r["kernels"]) for r in rows] == [
        ("bf16", 70, 2), ("fp8", 10, 1), ("fp16", 5, 1)]
    assert rows[0]["share"] == pytest.approx(0.70)
