"""A hand-made emit_nvtx(record_shapes=True) export for the counted-FLOPs SQL tests (issue #31).

pid 100, main thread T1, autograd thread T2; one `step` range 0..100000 on T1 holding
`layer 0` 1000..40000 > `attention` 1000..20000 and `mlp` 20000..40000. Operators (FLOPs by hand):
  T1 aten::linear > aten::t, aten::addmm [[16], [4, 8], [8, 16], [], []]    2·4·8·16       = 1024 (mlp)
  T1 aten::matmul > aten::bmm [[2, 4, 8], [2, 8, 4]]                        2·2·4·8·4      = 512  (attention)
  T1 _scaled_dot_product_flash_attention q = k = v = [1, 2, 16, 8]          2·1·2·16·16·16 = 16384 (attention)
  T1 aten::mm with no shapes, aten::convolution with shapes: not covered      (attention)
  T2 AddmmBackward0 (seq 1, the forward addmm's) > two aten::mm [[4, 16], [16, 8]] and [[16, 4], [4, 8]]
     1024 each, labelled mlp through seq 1
  T2 ScaledDotProductFlashAttentionBackward0 (seq 3) > the flash backward, 2·1·2·16·16·(3·8 + 2·8) = 40960
Kernels (launch, thread, start, end, name): GEMM/attention class inside counted leaves 1000 (addmm) +
2000 (bmm) + 2000 (flash) + 1000 + 1000 (backward mm) + 4000 (flash backward) = 11000 ns; an elementwise
kernel of 100 ns launched in the addmm; 500 ns of GEMM in the shape-less mm; 300 ns of GEMM launched in
no operator.
"""

from __future__ import annotations

from nsys_export import Export, gpid, gtid

T1, T2, A = gtid(100, 100), gtid(100, 101), gpid(100)
RANGES = [
    (0, 100000, T1, "step"),
    (1000, 40000, T1, "layer 0"), (1000, 20000, T1, "attention"), (20000, 40000, T1, "mlp"),
    (21000, 25000, T1, "aten::linear, seq = 1, op_id = 1, sizes = [[4, 8], [16, 8], [16]], input_op_ids = [(0, 0)]"),
    (21100, 21200, T1, "aten::t, seq = 1, op_id = 2, sizes = [[16, 8]]"),
    (21300, 24000, T1, "aten::addmm, seq = 1, op_id = 3, sizes = [[16], [4, 8], [8, 16], [], []], "
                       "input_op_ids = [(1, 0), (2, 0)]"),
    (2000, 9000, T1, "aten::matmul, seq = 2, op_id = 4, sizes = [[2, 4, 8], [2, 8, 4]]"),
    (2100, 8000, T1, "aten::bmm, seq = 2, op_id = 5, sizes = [[2, 4, 8], [2, 8, 4]]"),
    (10000, 15000, T1, "aten::_scaled_dot_product_flash_attention, seq = 3, op_id = 6, "
                       "sizes = [[1, 2, 16, 8], [1, 2, 16, 8], [1, 2, 16, 8], [], [], [], []]"),
    (16000, 17000, T1, "aten::mm, seq = 4, op_id = 9"),
    (17500, 18000, T1, "aten::convolution, seq = 5, op_id = 10, "
                       "sizes = [[1, 3, 8, 8], [4, 3, 3, 3], [4], [], [], [], [], [], []]"),
    (60000, 70000, T2, "AddmmBackward0, seq = 1, op_id = 20"),
    (61000, 62000, T2, "aten::mm, op_id = 21, sizes = [[4, 16], [16, 8]]"),
    (63000, 64000, T2, "aten::mm, op_id = 22, sizes = [[16, 4], [4, 8]]"),
    (71000, 80000, T2, "ScaledDotProductFlashAttentionBackward0, seq = 3, op_id = 30"),
    (71100, 79000, T2, "aten::_scaled_dot_product_flash_attention_backward, op_id = 31, sizes = [[1, 2, 16, 8], "
                       "[1, 2, 16, 8], [1, 2, 16, 8], [1, 2, 16, 8], [1, 2, 16, 8], [1, 2, 16], [], []]"),
]
KERNELS = [   # launch, thread, start, end, name
    (21500, T1, 30000, 31000, "gemm"), (23000, T1, 31000, 31100, "elementwise_kernel"),
    (2200, T1, 10000, 12000, "gemm"), (10100, T1, 13000, 15000, "flash_fwd_kernel"),
    (16100, T1, 17000, 17500, "gemm"), (50000, T1, 50000, 50300, "gemm"),
    (61100, T2, 65000, 66000, "gemm"), (63100, T2, 66000, 67000, "gemm"),
    (71200, T2, 81000, 85000, "flash_bwd_kernel"),
]


def operator_export() -> Export:
    e = Export()
    for start, end, tid, name in RANGES:
        e.range(start, end, tid, name)
    for corr, (launch, tid, start, end, name) in enumerate(KERNELS, start=1):
        e.launch(launch, tid, corr)
        e.kernel(start, end, A, corr, name=name)
    return e
