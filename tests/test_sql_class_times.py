"""class_times.sql against unions worked out by hand on a few intervals."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def test_count_sum_union_and_device_seconds_per_class():
    con = classified([
        # gemm on device 0: [0,10) and [5,20) overlap -> union 20; device 1: [0,10) -> 10
        (1, 0, "g", "gemm", 0, 10), (1, 0, "g", "gemm", 5, 20), (1, 1, "g", "gemm", 0, 10),
        # touching intervals merge: [30,40) + [40,50) -> 20
        (1, 0, "n", "communication", 30, 40), (1, 0, "n", "communication", 40, 50),
        # a second occurrence adds its own union: [100,105) on both devices -> 5 across, 10 GPU-ns
        (2, 0, "g", "gemm", 100, 105), (2, 1, "g", "gemm", 100, 105),
    ])
    rows = {r["class"]: r for r in queries.run(con, "class_times")}
    assert rows["gemm"] == {"class": "gemm", "kernel_count": 5, "sum_ns": 10 + 15 + 10 + 5 + 5,
                            "union_ns": 20 + 5, "device_union_ns": 20 + 10 + 5 + 5}
    assert rows["communication"] == {"class": "communication", "kernel_count": 2, "sum_ns": 20,
                                     "union_ns": 20, "device_union_ns": 20}
    assert list(rows) == ["gemm", "communication"]      # largest union first


def test_no_kernels_no_rows():
    assert queries.run(classified([]), "class_times") == []


def test_classes_ordered_by_union_not_sum():
    """a: [0,10) twice (sum 20, union 10); b: [0,15) (sum 15, union 15): b comes first."""
    con = classified([(1, 0, "x", "a", 0, 10), (1, 1, "x", "a", 0, 10), (1, 0, "y", "b", 0, 15)])
    assert [(r["class"], r["sum_ns"], r["union_ns"]) for r in queries.run(con, "class_times")] == [
        ("b", 15, 15), ("a", 20, 10)]
