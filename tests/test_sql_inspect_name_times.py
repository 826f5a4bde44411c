"""inspect_name_times.sql: kernels and time per kernel name id over the whole trace, from one classified row per
name id triple, summed by hand; and the same as name_times.sql over one classified row per kernel."""

from __future__ import annotations

from nsys_export import Export, gpid
from pipeline.analysis.classes import classify_params, load_rules
from pipeline.trace import chain, queries

P = gpid(1)


def _export() -> Export:
    e = Export()
    e.kernel(0, 50, P, 1, name="sm90_xmma_gemm_bf16bf16_bf16f32")
    e.kernel(60, 90, P, 2, name="sm90_xmma_gemm_bf16bf16_bf16f32", device=1)
    e.kernel(100, 110, None, None, name="vectorized_elementwise_kernel")
    e.graph(200, 260, P, 4, 9)
    e.graph(300, 301, P, 5, 9)
    return e


def _per_name(con) -> list[tuple]:
    return con.execute("SELECT n.name, n.class, t.occurrence, t.kernel_count, t.sum_ns FROM name_times AS t "
                       "JOIN kernel_names AS n USING (name_id) ORDER BY n.name").fetchall()


def test_kernels_and_time_per_name_by_hand(open_export) -> None:
    con = open_export(_export()).con
    chain.run(con, {"inspect_read", "inspect_all_kernels", "classify", "inspect_name_times"},
              **classify_params(load_rules()))
    assert _per_name(con) == [("[CUDA graph 9]", "cuda_graph", 1, 2, 60 + 1),
                              ("sm90_xmma_gemm_bf16bf16_bf16f32", "gemm", 1, 2, 50 + 30),
                              ("vectorized_elementwise_kernel", "elementwise", 1, 1, 10)]


def test_as_name_times_over_every_kernel(open_export) -> None:
    """Classifying one row per kernel (as inspect did before) gives the same rows."""
    con = open_export(_export()).con
    params = classify_params(load_rules())
    chain.run(con, {"inspect_read", "inspect_all_kernels", "classify", "inspect_name_times"}, **params)
    keyed = _per_name(con)
    con.execute("CREATE OR REPLACE TEMP VIEW attributed AS SELECT 1 AS occurrence, global_pid, device_id, "
                "CAST(NULL AS BIGINT) AS stream_id, name_id, start_ns, end_ns, graph_id, detail_id, "
                "CAST(NULL AS UBIGINT) AS comm_key FROM kernel_rows")
    queries.run(con, "classify", **params)
    assert con.execute("SELECT count(*) FROM classified").fetchone() == (5,)
    queries.run(con, "name_times")
    assert _per_name(con) == keyed


def test_a_row_ending_before_it_starts_has_no_time(open_export) -> None:
    """A bf16 GEMM of 100 ns and an fp32 one recorded ending 50 ns before it starts: summed as they were, fp32 had
    -50 ns and bf16 a share of 100 / 50 = 200 % in `mfu inspect`'s precision table. The backwards row has no time:
    bf16 100 %, fp32 0 %, its kernel still counted."""
    from pipeline.trace.inspect import _precision
    e = Export()
    e.kernel(0, 100, P, 1, name="sm90_xmma_gemm_bf16bf16_bf16f32")
    e.kernel(200, 150, P, 2, name="sm80_xmma_gemm_f32f32_f32f32")
    con = open_export(e).con
    queries.run(con, "inspect_read")
    shares = {r["precision"]: (r["kernels"], r["kernel_ns"], r["share"]) for r in _precision(con)}
    assert shares == {"bf16": (1, 100, 1.0), "fp32": (1, 0, 0.0)}
