"""classify.sql: first matching rule wins, unmatched kernels are 'other', memory ops are 'memory'.

Also the shipped rules on real kernel names from the shared traces, with the class each
name must get written down by hand.
"""

from __future__ import annotations

import duckdb
import pytest

from pipeline.trace import queries
from pipeline.analysis.classes import load_rules
from pipeline.analysis.measure import prepare
from pipeline.trace.open import open_trace


def _con(names: list[str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE raw_strings (id BIGINT, value VARCHAR)")
    con.executemany("INSERT INTO raw_strings VALUES (?, ?)", list(enumerate(names, start=1)))
    con.execute("CREATE TABLE attributed (occurrence BIGINT, global_pid BIGINT, device_id BIGINT, "
                "stream_id BIGINT, name_id BIGINT, start_ns BIGINT, end_ns BIGINT)")
    con.executemany("INSERT INTO attributed VALUES (1, 7, 0, 7, ?, ?, ?)",
                    [(i, 10 * i, 10 * i + 5) for i in range(1, len(names) + 1)])
    con.execute("CREATE TABLE attributed_memops (occurrence BIGINT, global_pid BIGINT, device_id BIGINT, "
                "name VARCHAR, start_ns BIGINT, end_ns BIGINT)")
    con.execute("INSERT INTO attributed_memops VALUES (1, 7, 0, '[CUDA memcpy]', 0, 3)")
    return con


def _classes(con, classes, patterns) -> dict[str, str]:
    queries.run(con, "classify", classes=classes, patterns=patterns)
    return dict(con.execute("SELECT name, class FROM classified").fetchall())


def test_first_matching_rule_wins_and_the_rest_is_other():
    con = _con(["my_gemm_flash", "plain_gemm", "mystery"])
    got = _classes(con, ["attention", "gemm"], ["flash", "gemm"])
    assert got == {"my_gemm_flash": "attention", "plain_gemm": "gemm", "mystery": "other",
                   "[CUDA memcpy]": "memory"}
    kinds = dict(con.execute("SELECT class, kind FROM classified").fetchall())
    assert kinds["memory"] == "memory" and kinds["gemm"] == "kernel"


def test_no_rules_leaves_every_kernel_other():
    got = _classes(_con(["a", "b"]), [], [])
    assert got == {"a": "other", "b": "other", "[CUDA memcpy]": "memory"}


def test_job_rules_take_precedence_over_shipped_ones():
    rules = load_rules([{"class": "communication", "pattern": "^my_allgather_gemm$"}])
    got = _classes(_con(["my_allgather_gemm", "other_gemm"]), [r.kernel_class for r in rules],
                   [r.pattern for r in rules])
    assert got["my_allgather_gemm"] == "communication"
    assert got["other_gemm"] == "gemm"


# Real names (shortName) from nsysai__mfu_2gpu_before.sqlite and the synthetic set, by hand.
SHIPPED = {
    "ncclDevKernel_SendRecv": "communication",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)": "communication",
    "flash_fwd_kernel": "attention",
    "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel": "attention",
    "fmha_cutlassF_bf16_aligned_64x128_rf_sm80": "attention",
    "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN": "gemm",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel"
    "__5x_cublas": "gemm",
    "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>": "gemm",
    "vectorized_layer_norm_kernel": "normalization",
    "reduce_kernel": "normalization",
    "void at::native::(anonymous namespace)::RMSNormForward<c10::BFloat16>": "normalization",
    "elementwise_kernel": "elementwise",
    "vectorized_elementwise_kernel": "elementwise",
    "unrolled_elementwise_kernel": "elementwise",
    "CatArrayBatchedCopy_vectorized": "elementwise",
}


def test_shipped_rules_on_real_kernel_names():
    rules = load_rules()
    names = list(SHIPPED)
    got = _classes(_con(names), [r.kernel_class for r in rules], [r.pattern for r in rules])
    assert {n: got[n] for n in names} == SHIPPED


def test_nccl_kernels_of_a_real_two_rank_trace_are_communication(real_trace):
    """Every kernel of the file counts (one pseudo-occurrence): each 'nccl…' name, on both ranks,
    is communication, and nothing else is."""
    trace = open_trace(real_trace("nsysai__mfu_2gpu_before.sqlite"))
    try:
        prepare(trace)
        trace.con.execute("CREATE TEMP TABLE attributed AS SELECT 1 AS occurrence, global_pid, device_id, "
                          "stream_id, name_id, start_ns, end_ns FROM kernels")
        trace.con.execute("CREATE TEMP TABLE attributed_memops AS SELECT 1 AS occurrence, globalPid AS "
                          "global_pid, deviceId AS device_id, 'memcpy' AS name, start AS start_ns, "
                          "\"end\" AS end_ns FROM raw_memcpy")
        rules = load_rules()
        queries.run(trace.con, "classify", classes=[r.kernel_class for r in rules],
                    patterns=[r.pattern for r in rules])
        rows = trace.con.execute("SELECT starts_with(lower(name), 'nccl') AS nccl, class, "
                                 "count(DISTINCT device_id) AS devices, count(*) AS n "
                                 "FROM classified WHERE class = 'communication' OR name ILIKE 'nccl%' "
                                 "GROUP BY ALL").fetchall()
    finally:
        trace.con.close()
    assert rows == [(True, "communication", 2, 66)]   # 66 ncclDevKernel_SendRecv, counted by sqlite3


@pytest.mark.parametrize("bad", ["(unclosed", "a{2,1}"])
def test_a_broken_job_pattern_is_a_located_config_error(bad):
    from pipeline.errors import ConfigError
    with pytest.raises(ConfigError) as exc:
        load_rules([{"class": "x", "pattern": bad}])
    assert exc.value.problems[0].pointer == "/analysis/kernel_classes/0/pattern"
