"""inspect's precision_by_kernel_names: matrix-kernel time per precision, checked against hand-summed times."""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid
from pipeline.trace.inspect import inspect_trace


def test_time_count_and_share_per_precision_by_hand(tmp_path) -> None:
    e = Export()
    e.kernel(0, 50, gpid(1), 1, name="sm90_xmma_gemm_bf16bf16_bf16f32")        # bf16 gemm: 50 ns
    e.kernel(100, 130, gpid(1), 2, name="sm90_xmma_gemm_bf16bf16_bf16f32")     # bf16 gemm: 30 ns
    e.kernel(60, 80, gpid(1), 3, name="nvjet_tst_192x192")                      # gemm, no type said: 20 ns
    e.kernel(200, 900, gpid(1), 4, name="vectorized_elementwise_kernel")        # not a matrix kernel
    got = inspect_trace(e.write(tmp_path / "t.sqlite"))["precision_by_kernel_names"]
    # the unknown 20 ns count in the share's denominator (all matrix time) but get no row
    assert got == [{"precision": "bf16", "kernel_ns": 80, "kernels": 2, "share": pytest.approx(80 / 100, rel=1e-12)}]
