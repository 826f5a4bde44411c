"""unattributed.sql: kernels inside a range with no launch row in their process (docs/figures.md §4)."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain, queries

A_MAIN, B_MAIN = gtid(100, 100), gtid(200, 200)
A, B = gpid(100), gpid(200)


def _export() -> Export:
    e = Export()
    e.range(1000, 2000, A_MAIN, "step")
    e.range(3000, 4000, A_MAIN, "step")
    e.launch(1010, A_MAIN, 1)
    e.kernel(1100, 1200, A, 1)                  # launched in the range: attributed, not missed
    e.kernel(1900, 2200, A, 2)                  # no launch anywhere: missed, 100 ns inside
    e.launch(1500, B_MAIN, 3)                   # corr 3 launched by the other process only
    e.kernel(950, 1050, A, 3)                   # so A's kernel 3 is missed: 50 ns inside
    e.launch(500, A_MAIN, 4)                    # launched before the range: has a launch row
    e.kernel(1300, 1400, A, 4)
    e.kernel(2500, 2600, A, 5)                  # between the ranges
    e.kernel(2000, 2050, A, 8)                  # starts at the range end: zero overlap
    e.kernel(3100, 3300, A, None)               # no correlationId at all: missed in occurrence 2
    e.kernel(1500, 1600, B, 9, device=1)        # B has no range
    return e


def _attribute(trace, name: str, first: int, last: int) -> None:
    """unattributed.sql looks up only the kernels attribute_launch.sql found in a range but not launched there."""
    chain.run(trace.con, {"region_ranges", "select_occurrences", "nccl_ranges", "attribute_launch"}, name=name, match="exact",
              domain=None, first=first, last=last, same_thread=False)


def test_counts_and_clipped_sum(open_export) -> None:
    trace = open_export(_export())
    _attribute(trace, "step", 1, 2)
    assert queries.run(trace.con, "unattributed") == [
        {"occurrence": 1, "kernel_count": 2, "kernel_sum_ns": 150},
        {"occurrence": 2, "kernel_count": 1, "kernel_sum_ns": 200},
    ]
    _attribute(trace, "step", 2, 2)
    assert queries.run(trace.con, "unattributed") == [
        {"occurrence": 2, "kernel_count": 1, "kernel_sum_ns": 200}]


def test_synthetic_dropped_launches(synth_trace, open_views) -> None:
    path, truth = synth_trace(ranks=2, steps=3, drop_launch_every=7)
    trace = open_views(path)
    _attribute(trace, "train_step", 1, 3)
    got = {r["occurrence"]: r["kernel_count"] for r in queries.run(trace.con, "unattributed")}
    expected = {o["index"]: o["unattributed_kernel_count"] for o in truth["occurrences"]}
    assert all(expected.values())
    assert got == expected


def test_a_kernel_across_several_ranges_counts_once_in_each(open_export) -> None:
    """Ranges of very different lengths (attribute_launch.sql cuts time into buckets of their mean length,
    1,525 ns here): a kernel crossing many buckets and four ranges is found once per range it overlaps."""
    e = Export()
    for start, end in ((1000, 2000), (3000, 4000), (4000, 4100), (5000, 9000)):
        e.range(start, end, A_MAIN, "step")
    e.kernel(1500, 5500, A, 1)                  # no launch row: 500, 1000, 100 and 500 ns inside
    e.kernel(3900, 4050, A, 2)                  # no launch row: 100 ns in the second range, 50 in the third
    trace = open_export(e)
    _attribute(trace, "step", 1, 4)
    assert queries.run(trace.con, "unattributed") == [
        {"occurrence": 1, "kernel_count": 1, "kernel_sum_ns": 500},
        {"occurrence": 2, "kernel_count": 2, "kernel_sum_ns": 1100},
        {"occurrence": 3, "kernel_count": 2, "kernel_sum_ns": 150},
        {"occurrence": 4, "kernel_count": 1, "kernel_sum_ns": 500},
    ]


def test_sparse_ranges_and_a_kernel_across_the_gap(open_export) -> None:
    """Two 10 ns ranges a second apart: buckets of their mean length would list a kernel across the gap
    under 10^8 buckets; at the envelope over the range count it touches three, and meets each range once."""
    e = Export()
    e.range(1_000, 1_010, A_MAIN, "step")
    e.range(1_000_001_000, 1_000_001_010, A_MAIN, "step")
    e.launch(1_000_001_002, A_MAIN, 1)
    e.kernel(1_000_001_003, 1_000_001_004, A, 1)        # launched in the second range: attributed
    e.kernel(1_005, 1_000_001_005, A, 2)                # no launch row: 5 ns inside each range
    trace = open_export(e)
    _attribute(trace, "step", 1, 2)
    assert queries.run(trace.con, "unattributed") == [
        {"occurrence": 1, "kernel_count": 1, "kernel_sum_ns": 5},
        {"occurrence": 2, "kernel_count": 1, "kernel_sum_ns": 5},
    ]
    assert trace.con.execute("SELECT occurrence, start_ns FROM attributed").fetchall() == [(2, 1_000_001_003)]
