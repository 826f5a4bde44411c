"""attribute_window.sql: kernels of the range's process overlapping it, clipped to it."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import queries

A, B = gpid(100), gpid(200)


def attributed(open_export, e: Export, last: int) -> list[tuple]:
    """Occurrences 1..last of `step` attributed by window: (occurrence, pid, device, start, end, name)."""
    trace = open_export(e)
    queries.run(trace.con, "region_ranges", name="step", match="exact", domain=None)
    queries.run(trace.con, "select_occurrences", first=1, last=last)
    queries.run(trace.con, "attribute_window")
    return trace.con.execute("SELECT occurrence, global_pid, device_id, start_ns, end_ns, s.value "
                             "FROM attributed JOIN raw_strings AS s ON s.id = name_id "
                             "ORDER BY occurrence, s.value, start_ns").fetchall()


def test_overlap_clipping_and_process(open_export) -> None:
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.range(1750, 1760, gtid(200, 200), "step")
    e.range(5000, 6000, gtid(100, 100), "step")
    e.kernel(900, 1100, A, None, name="head")          # -> 1000..1100
    e.kernel(1500, 2500, A, None, name="tail")         # -> 1500..2000
    e.kernel(500, 3000, A, None, name="spans")         # -> 1000..2000
    e.kernel(1200, 1300, A, None, name="inside")
    e.kernel(2000, 2100, A, None, name="touch_end")    # zero overlap: excluded
    e.kernel(800, 1000, A, None, name="touch_start")
    e.kernel(1200, 1300, B, None, device=1, name="other")      # B's range is 1750..1760
    e.kernel(1700, 1800, None, None, device=1, name="nopid")   # two processes: whose? left out
    e.kernel(5500, 5600, A, None, name="second")
    assert attributed(open_export, e, last=1) == [
        (1, A, 0, 1000, 1100, "head"),
        (1, A, 0, 1200, 1300, "inside"),
        (1, A, 0, 1000, 2000, "spans"),
        (1, A, 0, 1500, 2000, "tail"),
    ]


def test_kernel_without_process_belongs_to_the_lone_process(open_export) -> None:
    """With one process in the window, a kernel with no process id is that process's, clipped like any."""
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.range(3000, 4000, gtid(100, 100), "step")
    e.kernel(1700, 3200, None, None, name="nopid")     # overlaps both occurrences
    e.kernel(1200, 1300, A, None, name="own")
    assert attributed(open_export, e, last=2) == [
        (1, A, 0, 1700, 2000, "nopid"), (1, A, 0, 1200, 1300, "own"), (2, A, 0, 3000, 3200, "nopid")]
