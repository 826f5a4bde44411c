"""negative_ranges.sql: the first selected range whose thread id is negative, for the refusal to name."""

from __future__ import annotations

from nsys_export import Export, gtid
from pipeline.trace import queries


def test_the_first_negative_range_is_named(open_export) -> None:
    """Process 7's ranges are sound; process 9's at 300 and 500 have the sign bit set (9 << 24 | 9, minus 2^63):
    the earlier one is returned. Without such a range, no row."""
    e = Export()
    for start in (100, 300):
        e.range(start, start + 50, gtid(7, 7), "step")
    broken = gtid(9, 9) - 2 ** 63
    assert broken == 150_994_953 - 9_223_372_036_854_775_808
    e.range(500, 550, broken, "step")
    e.range(300, 350, broken, "step")
    e.range(200, 250, broken, "other")                    # not the region's: not selected
    trace = open_export(e)
    queries.run(trace.con, "region_ranges", name="step", match="exact", domain=None)
    assert queries.run(trace.con, "negative_ranges") == [{"start_ns": 300, "global_tid": broken}]
    queries.run(trace.con, "region_ranges", name="other", match="exact", domain=None)
    assert queries.run(trace.con, "negative_ranges") == [{"start_ns": 200, "global_tid": broken}]
    sound = open_export(Export(nvtx=e.nvtx[:2]))
    queries.run(sound.con, "region_ranges", name="step", match="exact", domain=None)
    assert queries.run(sound.con, "negative_ranges") == []
