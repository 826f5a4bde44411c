"""occurrence_totals.sql: totals over the selected occurrences are unions (SEMANTICS §6), by hand."""

from __future__ import annotations

from nsys_export import attribute, overlapping_steps, two_rank_steps
from pipeline.trace import chain


def _totals(trace, first: int, last: int) -> dict:
    attribute(trace.con, "step", first, last)
    return chain.run(trace.con, {"occurrence_times", "occurrence_spans", "occurrence_totals"})["occurrence_totals"][0]


def test_overlapping_occurrences_count_once(open_export) -> None:
    got = _totals(open_export(overlapping_steps()), 1, 3)
    assert got == {
        "wall_ns": 3500,                # 0..1800, 1000..2600, 2000..3500 merge into 0..3500
        "wall_sum_ns": 1800 + 1600 + 1500,
        "cpu_range_ns": 3000,           # the ranges 0..1000, 1000..2000, 2000..3000 touch
        "cpu_range_sum_ns": 3000,
        "kernel_union_ns": 3300,        # 200..1800 and 1500..2600 overlap: 200..2600, then 2600..3500
        "kernel_sum_ns": 1600 + 1100 + 900,
        "kernel_count": 3,
        "devices": [{"device_id": 0, "union_ns": 1600 + 900, "kernel_count": 2},
                    {"device_id": 1, "union_ns": 1100, "kernel_count": 1}],
    }


def test_disjoint_occurrences_union_equals_sum(open_export) -> None:
    got = _totals(open_export(two_rank_steps()), 1, 2)
    # occurrence 1: envelope 1000..2600, longest range pid 200's 1100..2300; occurrence 2: 5000..6000
    assert (got["wall_ns"], got["wall_sum_ns"]) == (1600 + 1000, 1600 + 1000)
    assert (got["cpu_range_ns"], got["cpu_range_sum_ns"]) == (1200 + 1000, 1200 + 1000)
    assert (got["kernel_union_ns"], got["kernel_sum_ns"], got["kernel_count"]) == (1200, 1700, 4)
    assert got["devices"] == [{"device_id": 0, "union_ns": 1200, "kernel_count": 3},
                              {"device_id": 1, "union_ns": 400, "kernel_count": 1}]


def test_nothing_selected_has_kernels(open_export) -> None:
    got = _totals(open_export(two_rank_steps()), 2, 2)
    assert got == {"wall_ns": 1000, "wall_sum_ns": 1000, "cpu_range_ns": 1000, "cpu_range_sum_ns": 1000,
                   "kernel_union_ns": 0, "kernel_sum_ns": 0, "kernel_count": 0, "devices": []}
