"""step_unions.sql: per step, the union of each group of rows step_parts.sql needs, rows clipped to the steps."""

from __future__ import annotations

import re

import duckdb

from pipeline.trace import chain, queries
from tests.sqlfixtures import with_ranges

PARAMS = {"comm_class": "communication", "gemm_classes": ["gemm", "convolution"], "attention_classes": ["attention"]}


def _unions(con) -> dict[tuple[str, int], int]:
    chain.run(con, {"step_rows", "step_unions"}, **PARAMS)
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


def test_a_tail_through_several_later_steps_counts_in_each():
    """Occurrences at [0,50), [60,110), [120,170), [180,190); occurrence 1's GEMM [10,185) runs through all of
    them: step 1 is [0,60) (occurrence 2 starts inside its envelope), steps 2 and 3 their walls (the next starts
    after their end), step 4 [180,190). The GEMM counts 50, 50, 50 and 5 in them, and never in the gaps."""
    con = with_ranges([(1, 0, "gemm", "gemm", 10, 185)], [(1, 100, 0, 50), (2, 100, 60, 110), (3, 100, 120, 170),
                                                          (4, 100, 180, 190)])
    got = _unions(con)
    assert [got[("kernels", o)] for o in (1, 2, 3, 4)] == [50, 50, 50, 5]
    assert [got[("no_gemm", o)] if ("no_gemm", o) in got else 0 for o in (1, 2, 3, 4)] == [0, 0, 0, 0]


def _many_steps(n: int) -> duckdb.DuckDBPyConnection:
    """n occurrences 100 ns apart, each range [100 i, 100 i + 50) with one GEMM [100 i + 10, 100 i + 130): every
    GEMM's tail runs 30 ns into the next step (each step 100 ns: the next occurrence starts inside the envelope)."""
    return with_ranges([(i, 0, "gemm", "gemm", 100 * i + 10, 100 * i + 130) for i in range(1, n + 1)],
                       [(i, 100, 100 * i, 100 * i + 50) for i in range(1, n + 1)])


def test_tails_into_the_next_step_over_many_occurrences():
    """By hand: step i holds its own GEMM [100 i + 10, 100 i + 100) and the previous one's tail [100 i, 100 i + 30):
    90 ns of union joined with the tail, 100 ns; the first step has no tail (90 ns), the last is its wall (130)."""
    n = 300
    got = _unions(_many_steps(n))
    assert got[("kernels", 1)] == 90 and got[("kernels", n)] == 130
    assert all(got[("kernels", o)] == 100 for o in range(2, n))


def test_tails_are_paired_with_later_steps_without_a_join_of_steps_with_steps():
    """Issue #33: the later steps a row runs into were found by an inequality join of every step with every later
    one (450 M pairs at 30,000 occurrences, a minute); now by two ASOF lookups and an equality join, so every join
    of the plan is a hash or ASOF join, whatever the number of occurrences."""
    con = _many_steps(300)
    queries.run(con, "step_rows")
    plan = "\n".join(con.execute("EXPLAIN " + s, {k: v for k, v in PARAMS.items() if f"${k}" in s}).fetchall()[0][1]
                     for s in queries.statements("step_unions"))
    joins = set(re.findall(r"\b([A-Z_]*(?:JOIN|CROSS_PRODUCT))\b", plan))
    assert joins and joins <= {"HASH_JOIN", "ASOF_JOIN"}, joins


def test_parameters_reach_the_fetched_statement_and_leave_no_variable():
    """The rows of a unions file come through a relation, its parameters as DuckDB variables (queries._intervals):
    the same unions as the classes say, an empty list of classes too (a cursor then: a variable would type [] as
    INTEGER[] and fail to compare classes), and no variable left behind."""
    rows = [(1, 0, "gemm", "gemm", 10, 30), (1, 0, "flash", "attention", 20, 50)]
    con = with_ranges(rows, [(1, 100, 0, 60)])
    assert _unions(con)[("compute", 1)] == 40 and _unions(con)[("no_gemm", 1)] == 30     # attention [20,50)
    chain.run(con, {"step_rows", "step_unions"}, **{**PARAMS, "gemm_classes": []})
    got = dict(con.execute("SELECT scope, union_ns FROM step_unions WHERE k1 = 1 AND k2 = 1").fetchall())
    assert got["no_gemm"] == 40 and got["no_other"] == 30        # no class is GEMM: the gemm kernel is "other"
    assert con.execute("SELECT count(*) FROM duckdb_variables() WHERE name LIKE 'mfu_param_%'").fetchone() == (0,)
