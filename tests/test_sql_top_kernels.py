"""top_kernels.sql: names ranked by summed time, cut at $limit, optionally of one class."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified

ROWS = [(1, 0, "a", "gemm", 0, 10), (1, 0, "a", "gemm", 10, 15), (1, 0, "b", "elementwise", 0, 30),
        (1, 1, "c", "memory", 0, 1), (1, 0, "solve", "other", 0, 4), (1, 0, "saxpy", "other", 4, 11)]


def test_ranked_by_sum_and_limited():
    rows = queries.run(classified(ROWS), "top_kernels", limit=2, **{"class": None})
    assert rows == [{"name": "b", "class": "elementwise", "kernel_count": 1, "sum_ns": 30},
                    {"name": "a", "class": "gemm", "kernel_count": 2, "sum_ns": 15}]


def test_one_class_only_lists_the_unclassified_names():
    rows = queries.run(classified(ROWS), "top_kernels", limit=10, **{"class": "other"})
    assert rows == [{"name": "saxpy", "class": "other", "kernel_count": 1, "sum_ns": 7},
                    {"name": "solve", "class": "other", "kernel_count": 1, "sum_ns": 4}]


def test_one_row_per_name_and_ties_by_name():
    """A name whose kernels were read in two precisions (two name ids) is one row; equal sums go by name."""
    rows = [(1, 0, "flash", "attention", 0, 10, "bf16"), (1, 0, "flash", "attention", 10, 14, "fp16"),
            (1, 0, "zeta", "other", 0, 14), (1, 0, "alpha", "other", 20, 34)]
    got = queries.run(classified(rows), "top_kernels", limit=10, **{"class": None})
    assert [(r["name"], r["kernel_count"], r["sum_ns"]) for r in got] == [("alpha", 1, 14), ("flash", 2, 14),
                                                                         ("zeta", 1, 14)]
