"""occurrence_times.sql: one row per occurrence across ranks (docs/figures.md §5)."""

from __future__ import annotations

from nsys_export import attribute, overlapping_steps, two_rank_steps
from pipeline.trace import queries


def test_two_ranks_by_hand(open_export) -> None:
    trace = open_export(two_rank_steps())
    attribute(trace.con, "step", 1, 2)
    queries.run(trace.con, "select_occurrences", first=1, last=2)
    assert queries.run(trace.con, "occurrence_times") == [
        {"occurrence": 1, "processes": 2, "pids": [100, 200], "start_ns": 1000,
         "cpu_range_ns": 1200,                 # pid 200's 1100..2300 is the longer range
         "wall_ns": 1600,                      # max(2300, last kernel end 2600) - 1000
         "kernel_sum_ns": 1700,                # 300 + 400 + 600 + 400
         "kernel_union_ns": 1200,              # 1200..1800 and 2000..2600; 1300..1700 lies inside
         "kernel_count": 4,
         "step_ns": 1600},                     # occurrence 2 starts at 5000, after this envelope ends: the wall
        {"occurrence": 2, "processes": 1, "pids": [100], "start_ns": 5000, "cpu_range_ns": 1000,
         "wall_ns": 1000, "kernel_sum_ns": 0, "kernel_union_ns": 0, "kernel_count": 0,
         "step_ns": 1000},                     # the last selected occurrence: its wall
    ]


def test_step_is_the_period_when_the_next_occurrence_starts_inside_this_envelope(open_export) -> None:
    trace = open_export(overlapping_steps())
    attribute(trace.con, "step", 1, 3)
    rows = queries.run(trace.con, "occurrence_times")
    assert [(r["start_ns"], r["wall_ns"], r["step_ns"]) for r in rows] == [
        (0, 1800, 1000),        # envelope 0..1800; occurrence 2 starts at 1000, inside it
        (1000, 1600, 1000),     # envelope 1000..2600; occurrence 3 starts at 2000
        (2000, 1500, 1500),     # the last: its wall
    ]


def test_selection_window(open_export) -> None:
    trace = open_export(two_rank_steps())
    attribute(trace.con, "step", 2, 2)
    queries.run(trace.con, "select_occurrences", first=2, last=2)
    assert [r["occurrence"] for r in queries.run(trace.con, "occurrence_times")] == [2]


def test_synthetic_ground_truth(synth_trace, open_views) -> None:
    """Asynchronous tails, NCCL overlap, rank skew, a straggler: every field to the nanosecond."""
    path, truth = synth_trace(ranks=4, steps=5, straggler_rank=2, straggler_ns=3_000_000)
    trace = open_views(path)
    attribute(trace.con, "train_step", 1, 5)
    fields = ("processes", "start_ns", "cpu_range_ns", "wall_ns", "kernel_sum_ns", "kernel_union_ns",
              "kernel_count")
    queries.run(trace.con, "select_occurrences", first=1, last=5)
    got = [{f: r[f] for f in fields} for r in queries.run(trace.con, "occurrence_times")]
    assert got == [{f: o[f] for f in fields} for o in truth["occurrences"]]
    assert all(o["wall_ns"] > o["cpu_range_ns"] for o in truth["occurrences"])   # the tail is exercised
