"""inspect_all_kernels.sql: every kernel of the trace once, as one row per distinct name id triple (count, time)."""

from __future__ import annotations

from nsys_export import Export, gpid
from pipeline.trace import chain

P = gpid(1)


def test_one_row_per_name_triple_with_its_kernels_count_and_time(open_export) -> None:
    e = Export()
    e.kernel(0, 50, P, 1, name="sm90_xmma_gemm_bf16bf16_bf16f32")
    e.kernel(50, 70, P, 2, name="vectorized_elementwise_kernel", device=1)
    e.kernel(70, 80, None, None, name="sm90_xmma_gemm_bf16bf16_bf16f32")       # no process, no launch: still counted
    e.kernel(90, 85, P, 3, name="vectorized_elementwise_kernel")               # ends before it starts: -5 ns
    e.graph(100, 130, P, 4, 9)
    con = open_export(e).con
    chain.run(con, {"inspect_read", "inspect_all_kernels"})
    keys = con.execute("SELECT coalesce(s.value, '[graph]'), k.graph_id, k.kernel_count, k.sum_ns FROM kernel_keys AS k "
                       "LEFT JOIN raw_strings AS s ON s.id = k.name_id ORDER BY 1").fetchall()
    assert keys == [("[graph]", 9, 1, 30), ("sm90_xmma_gemm_bf16bf16_bf16f32", None, 2, 50 + 10),
                    ("vectorized_elementwise_kernel", None, 2, 20 - 5)]
    # classify.sql reads one row per triple, its key_id as the occurrence, times zero (classes need names only)
    rows = con.execute("SELECT a.name_id IS NOT DISTINCT FROM k.name_id AND a.detail_id IS NOT DISTINCT FROM k.detail_id "
                       "AND a.graph_id IS NOT DISTINCT FROM k.graph_id, a.start_ns, a.end_ns, a.stream_id, a.device_id, "
                       "a.global_pid FROM attributed AS a JOIN kernel_keys AS k ON k.key_id = a.occurrence").fetchall()
    assert rows == [(True, 0, 0, None, None, None)] * 3
    assert con.execute("SELECT count(*) FROM attributed_memops").fetchone() == (0,)
