"""inspect_all_kernels.sql: every kernel as one pseudo-occurrence, so inspect classifies like run."""

from __future__ import annotations

from nsys_export import Export, gpid
from pipeline.trace import chain

P = gpid(1)


def test_every_kernel_once_and_no_memory_operations(open_export) -> None:
    e = Export()
    e.kernel(0, 50, P, 1, name="sm90_xmma_gemm_bf16bf16_bf16f32")
    e.kernel(50, 70, P, 2, name="vectorized_elementwise_kernel", device=1)
    e.kernel(70, 80, None, None, name="nvjet_tst_192x192")
    con = open_export(e).con
    chain.run(con, {"inspect_read", "inspect_all_kernels"})
    assert con.execute("SELECT occurrence, global_pid, device_id, start_ns, end_ns, graph_id FROM attributed "
                       "ORDER BY start_ns").fetchall() == [(1, P, 0, 0, 50, None), (1, P, 1, 50, 70, None),
                                                           (1, None, 0, 70, 80, None)]
    # no stream: inspect shows none, so it never reads streamId (Export's kernels run on stream 7)
    assert con.execute("SELECT DISTINCT stream_id FROM attributed").fetchall() == [(None,)]
    assert con.execute("SELECT count(*) FROM attributed_memops").fetchone() == (0,)
