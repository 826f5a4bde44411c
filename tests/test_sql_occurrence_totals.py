"""occurrence_totals.sql: totals over the selected occurrences are unions (docs/figures.md §6), by hand."""

from __future__ import annotations

from nsys_export import Export, attribute, gtid, overlapping_steps, two_rank_steps
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


def test_cpu_range_is_the_union_of_each_occurrence_longest_range(open_export) -> None:
    """Two ranks whose ranges of consecutive occurrences overlap (no kernels needed):
    pid 100: 1000..1500, 1900..2900; pid 200: 1200..2000, 1950..2100.
    Occurrence 1's longest range is pid 200's 1200..2000 (800), occurrence 2's pid 100's 1900..2900 (1000):
    they overlap by 100, so the union is 1200..2900 = 1700 against a sum of 1800. Envelopes 1000..2000 and
    1900..2900: union 1900, sum 2000."""
    e = Export()
    a_main, b_main = gtid(100, 100), gtid(200, 200)
    e.range(1000, 1500, a_main, "step")
    e.range(1900, 2900, a_main, "step")
    e.range(1200, 2000, b_main, "step")
    e.range(1950, 2100, b_main, "step")
    got = _totals(open_export(e), 1, 2)
    assert got == {"wall_ns": 1900, "wall_sum_ns": 2000, "cpu_range_ns": 1700, "cpu_range_sum_ns": 1800,
                   "kernel_union_ns": 0, "kernel_sum_ns": 0, "kernel_count": 0, "devices": []}
