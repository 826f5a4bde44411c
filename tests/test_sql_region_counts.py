"""region_counts.sql: occurrences per process, processes told apart by host as well as pid."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import queries


def test_counts_per_process(open_export) -> None:
    e = Export()
    for start in (100, 300, 500):
        e.range(start, start + 50, gtid(20, 21), "step")
    e.range(110, 160, gtid(7, 7), "step")
    e.range(120, 170, gtid(7, 7, host=1), "step")     # same pid on another host: another process
    e.range(130, 140, gtid(7, 7), "other")
    trace = open_export(e)
    queries.run(trace.con, "region_ranges", name="step", match="exact", domain=None)
    assert queries.run(trace.con, "region_counts") == [
        {"pid": 7, "global_pid": gpid(7), "occurrences": 1},
        {"pid": 7, "global_pid": gpid(7, host=1), "occurrences": 1},
        {"pid": 20, "global_pid": gpid(20), "occurrences": 3},
    ]


def test_no_match_gives_no_rows(open_export) -> None:
    e = Export()
    e.range(100, 200, gtid(20, 20), "step")
    trace = open_export(e)
    queries.run(trace.con, "region_ranges", name="missing", match="exact", domain=None)
    assert queries.run(trace.con, "region_counts") == []
