"""step_unions.sql: per step, the union of each group of rows step_parts.sql needs, rows clipped to the steps."""

from __future__ import annotations

from pipeline.trace import chain
from tests.sqlfixtures import with_ranges

PARAMS = {"comm_class": "communication", "gemm_classes": ["gemm", "convolution"], "attention_classes": ["attention"]}


def _unions(con) -> dict[tuple[str, int], int]:
    chain.run(con, {"step_unions"}, **PARAMS)
    return {(s, o): u for s, o, u in con.execute("SELECT scope, k1, union_ns FROM step_unions WHERE k2 = 1").fetchall()}


def test_unions_by_hand_with_a_tail_clipped_into_the_next_step():
    """Step 1 [0,60) (occurrence 2 starts at 60, inside occurrence 1's envelope), step 2 [60,120). Occurrence 1:
    GEMM [10,80) and NCCL [20,30); occurrence 2: a copy [90,100) and attention [95,110). The GEMM's tail [60,80)
    counts in step 2, clipped."""
    con = with_ranges([(1, 0, "gemm", "gemm", 10, 80), (1, 0, "nccl", "communication", 20, 30),
                       (2, 0, "[CUDA memcpy]", "memory", 90, 100), (2, 0, "flash", "attention", 95, 110)],
                      [(1, 100, 0, 50), (2, 100, 60, 120)])
    got = _unions(con)
    # step 1: any [10,60) 50; kernels 50; compute (GEMM) 50; comm 10; no_gemm (NCCL) 10; no_attention 50; no_other 50
    assert {s: got[(s, 1)] for s in ("any", "kernels", "compute", "comm", "no_gemm", "no_attention", "no_other")} == \
        {"any": 50, "kernels": 50, "compute": 50, "comm": 10, "no_gemm": 10, "no_attention": 50, "no_other": 50}
    # step 2: GEMM tail [60,80) 20, copy [90,100), attention [95,110): any 20 + 20 = 40; kernels 20 + 15 = 35
    assert got[("any", 2)] == 40 and got[("kernels", 2)] == 35 and got[("no_gemm", 2)] == 15
    assert got[("no_attention", 2)] == 20 and ("comm", 2) not in got
