"""negative_launches.sql: a kernel with no launch row in its process whose launch row has a negative thread id."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain, queries

A_MAIN = gtid(100, 100)
A = gpid(100)


def test_the_launch_row_under_a_negative_id_is_named(open_export) -> None:
    """Kernel 2 of process 100 runs inside its range; its launch row (corr 2) has the sign bit set on the thread
    id, so attribute_launch.sql cannot match it and unattributed.sql counts it as never launched. This query
    names that launch row; kernel 3, with no launch row at all (a trimmed capture), is no such case, and
    a negative launch row of a correlationId no missed kernel has (corr 9) is not named either."""
    broken = A_MAIN - 2 ** 63
    assert broken == (100 << 24 | 100) - 9_223_372_036_854_775_808
    e = Export()
    e.range(1000, 2000, A_MAIN, "step")
    e.launch(1010, A_MAIN, 1)
    e.kernel(1100, 1200, A, 1)                  # attributed
    e.launch(1020, broken, 2)
    e.kernel(1300, 1400, A, 2)                  # launched under a negative id: missed
    e.kernel(1500, 1600, A, 3)                  # no launch row anywhere: missed
    e.launch(1005, broken, 9)
    trace = open_export(e)
    chain.run(trace.con, {"region_ranges", "select_occurrences", "nccl_ranges", "attribute_launch"}, name="step", match="exact",
              domain=None, first=1, last=1, same_thread=False)
    assert queries.run(trace.con, "unattributed") == [{"occurrence": 1, "kernel_count": 2, "kernel_sum_ns": 200}]
    assert queries.run(trace.con, "negative_launches") == [
        {"start_ns": 1020, "global_tid": broken, "correlation_id": 2}]


def test_no_negative_launch_no_row(open_export) -> None:
    e = Export()
    e.range(1000, 2000, A_MAIN, "step")
    e.kernel(1500, 1600, A, 3)                  # no launch row anywhere: missed, but no broken id to name
    e.launch(1005, A_MAIN, 4)
    trace = open_export(e)
    chain.run(trace.con, {"region_ranges", "select_occurrences", "nccl_ranges", "attribute_launch"}, name="step", match="exact",
              domain=None, first=1, last=1, same_thread=False)
    assert queries.run(trace.con, "unattributed") == [{"occurrence": 1, "kernel_count": 1, "kernel_sum_ns": 100}]
    assert queries.run(trace.con, "negative_launches") == []
