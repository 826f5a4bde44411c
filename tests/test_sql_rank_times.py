"""rank_times.sql: per process and occurrence, its range, its kernels' end and its step period."""

from __future__ import annotations

from nsys_export import attribute, gpid, two_rank_steps
from pipeline.trace import queries


def test_two_ranks_by_hand(open_export) -> None:
    trace = open_export(two_rank_steps())
    attribute(trace.con, "step", 1, 2)
    queries.run(trace.con, "select_occurrences", first=1, last=2)
    assert queries.run(trace.con, "rank_times") == [
        {"occurrence": 1, "pid": 100, "global_pid": gpid(100), "start_ns": 1000, "cpu_range_ns": 1000,
         "wall_ns": 1600, "period_ns": 4000, "kernel_count": 3},       # its last kernel ends at 2600
        {"occurrence": 1, "pid": 200, "global_pid": gpid(200), "start_ns": 1100, "cpu_range_ns": 1200,
         "wall_ns": 1200, "period_ns": None, "kernel_count": 1},       # its kernel ends before its range
        {"occurrence": 2, "pid": 100, "global_pid": gpid(100), "start_ns": 5000, "cpu_range_ns": 1000,
         "wall_ns": 1000, "period_ns": None, "kernel_count": 0},
    ]


def test_synthetic_ground_truth(synth_trace, open_views) -> None:
    path, truth = synth_trace(ranks=3, steps=4, straggler_rank=1, straggler_ns=5_000_000)
    first_pid = truth["spec"]["first_pid"]
    trace = open_views(path)
    attribute(trace.con, "train_step", 1, 4)
    queries.run(trace.con, "select_occurrences", first=1, last=4)
    rows = queries.run(trace.con, "rank_times")
    got: dict[int, dict[str, int]] = {}
    for r in rows:
        got.setdefault(r["occurrence"], {})[str(r["pid"] - first_pid)] = r["wall_ns"]
    assert got == {o["index"]: o["rank_wall_ns"] for o in truth["occurrences"]}
    # every rank starts a step each step_ns + step_gap_ns (the straggler is late by a constant)
    period = truth["spec"]["step_ns"] + truth["spec"]["step_gap_ns"]
    assert [r["period_ns"] for r in rows] == [period] * 9 + [None] * 3
