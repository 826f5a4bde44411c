"""step_parts.sql (over step_unions.sql): each occurrence's step cut into what ran (docs/compare.md), by hand on
planted rows.

Every expected figure is added up here from the planted intervals; the parts of an occurrence add
up to its step time exactly.
"""

from __future__ import annotations

from pipeline.trace import chain
from tests.sqlfixtures import with_ranges

PARAMS = {"comm_class": "communication", "gemm_classes": ["gemm", "convolution"], "attention_classes": ["attention"]}
PARTS = ("gemm", "attention", "other_compute", "mixed_compute", "comm", "comm_overlap", "memory", "idle")


def _parts(con) -> list[dict]:
    return [{"occurrence": r["occurrence"], "step_ns": r["step_ns"], **{p: r[f"{p}_ns"] for p in PARTS}}
            for r in chain.run(con, {"step_rows", "step_unions", "step_parts"}, **PARAMS)["step_parts"]]


def test_each_instant_gets_one_part_by_what_ran_on_any_gpu():
    con = with_ranges([
        # device 0: GEMM [0,30), NCCL [20,45): 20 gemm alone, 10 overlapped, 15 communication alone
        (1, 0, "gemm", "gemm", 0, 30), (1, 0, "nccl", "communication", 20, 45),
        # device 1: attention [50,60), elementwise [55,70): 5 attention, 5 both (mixed), 10 other compute
        (1, 1, "flash", "attention", 50, 60), (1, 1, "add", "elementwise", 55, 70),
        # a copy alone [70,80): memory; a convolution [84,88) under a copy [85,90): 4 gemm, then 2 memory
        (1, 0, "[CUDA memcpy]", "memory", 70, 80), (1, 1, "conv", "convolution", 84, 88),
        (1, 0, "[CUDA memcpy]", "memory", 85, 90)],
        [(1, 100, 0, 100)])
    # idle: [45,50) 5 + [80,84) 4 + [90,100) 10 = 19; 24+5+10+5+15+10+12+19 = 100, the step
    assert _parts(con) == [{"occurrence": 1, "step_ns": 100, "gemm": 24, "attention": 5, "other_compute": 10,
                            "mixed_compute": 5, "comm": 15, "comm_overlap": 10, "memory": 12, "idle": 19}]


def test_a_step_holds_what_ran_during_it_whichever_occurrence_launched_it():
    """Occurrence 1's range [0,50) launches a GEMM [10,80); occurrence 2 starts at 60, inside that envelope, so step 1
    is 60 (docs/figures.md §6). Step 1: idle 10, gemm 50. Step 2 [60,120): the tail [60,80) of occurrence 1's GEMM, idle
    [80,90), its own GEMM [90,100), idle [100,120): gemm 30, idle 30. Nothing counts twice."""
    con = with_ranges([(1, 0, "gemm", "gemm", 10, 80), (2, 0, "gemm", "gemm", 90, 100)],
                      [(1, 100, 0, 50), (2, 100, 60, 120)])
    got = _parts(con)
    assert [(r["occurrence"], r["step_ns"], r["gemm"], r["idle"]) for r in got] == [(1, 60, 50, 10), (2, 60, 30, 30)]
    assert all(sum(r[p] for p in PARTS) == r["step_ns"] for r in got)


def test_an_occurrence_without_kernels_is_idle_and_touching_rows_leave_no_gap():
    con = with_ranges([(1, 0, "nccl", "communication", 0, 10), (1, 0, "nccl", "communication", 10, 20),
                       (1, 0, "gemm", "gemm", 10, 20)],
                      [(1, 100, 0, 40), (2, 100, 50, 70)])
    got = _parts(con)
    assert got[0] == {"occurrence": 1, "step_ns": 40, "gemm": 0, "attention": 0, "other_compute": 0,
                      "mixed_compute": 0, "comm": 10, "comm_overlap": 10, "memory": 0, "idle": 20}
    assert got[1]["idle"] == got[1]["step_ns"] == 20
