"""device_times.sql: per-device union, sum and count per occurrence."""

from __future__ import annotations

from nsys_export import attribute, two_rank_steps
from pipeline.trace import queries


def test_two_ranks_by_hand(open_export) -> None:
    trace = open_export(two_rank_steps())
    attribute(trace.con, "step", 1, 2)
    assert queries.run(trace.con, "device_times") == [
        # device 0: 1200..1800 (two overlapping kernels) + 2000..2600
        {"occurrence": 1, "device_id": 0, "union_ns": 1200, "sum_ns": 1300, "kernel_count": 3},
        {"occurrence": 1, "device_id": 1, "union_ns": 400, "sum_ns": 400, "kernel_count": 1},
    ]   # occurrence 2 launched nothing: no device rows, and no all-devices (NULL) row


def test_synthetic_ground_truth(synth_trace, open_views) -> None:
    path, truth = synth_trace(ranks=3, steps=4)
    trace = open_views(path)
    attribute(trace.con, "train_step", 1, 4)
    got: dict[int, dict[str, int]] = {}
    for r in queries.run(trace.con, "device_times"):
        got.setdefault(r["occurrence"], {})[str(r["device_id"])] = r["union_ns"]
    assert got == {o["index"]: o["device_union_ns"] for o in truth["occurrences"]}
