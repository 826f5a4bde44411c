"""window_ranges.sql: a region that is no NVTX range, as one synthetic range per process (job region.kind)."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import queries

A, B = gpid(100), gpid(200)
RANGE = "occurrence, global_pid, pid, global_tid, start_ns, end_ns, name, period_ns"


def ranges(open_export, e: Export, start_ns: int | None = None, end_ns: int | None = None) -> tuple[list, dict]:
    """region_ranges' rows, and the trace's span the file returns."""
    trace = open_export(e)
    (span,) = queries.run(trace.con, "window_ranges", start_ns=start_ns, end_ns=end_ns)
    return trace.con.execute(f"SELECT {RANGE} FROM region_ranges ORDER BY global_pid").fetchall(), span


def two_processes() -> Export:
    """pid 100: kernel 1000..1500, memcpy 400..600, memset 2000..2100 (its work: 400..2100).
    pid 200: CUDA graph launch row 700..3000 on device 1, kernel 2500..2600 (its work: 700..3000).
    An NVTX range and launch rows are not GPU work: they move no window."""
    e = Export()
    e.range(100, 5000, gtid(100, 100), "step")
    e.launch(50, gtid(100, 100), 1)
    e.kernel(1000, 1500, A, 1)
    e.memory(400, 600, A, 2)
    e.memory(2000, 2100, A, 3, kind="memset")
    e.graph(700, 3000, B, 1, 9, device=1)
    e.kernel(2500, 2600, B, 2, device=1)
    return e


def test_the_gpu_active_window_spans_each_process_first_to_last_gpu_row(open_export) -> None:
    rows, span = ranges(open_export, two_processes())
    assert rows == [(1, A, 100, None, 400, 2100, None, None), (1, B, 200, None, 700, 3000, None, None)]
    assert span == {"first_ns": 400, "last_ns": 3000, "rows": 5, "without_length": 0}


def test_a_window_of_no_length_is_counted(open_export) -> None:
    """pid 100's rows all end at or before its first start (a lost GPU clock): its window 1000..1000 has no length."""
    e = Export()
    e.kernel(1000, 1000, A, 1)
    e.kernel(1000, 900, A, 2)
    e.kernel(2000, 2500, B, 1, device=1)
    rows, span = ranges(open_export, e)
    assert rows == [(1, A, 100, None, 1000, 1000, None, None), (1, B, 200, None, 2000, 2500, None, None)]
    assert span["without_length"] == 1


def test_a_time_window_is_given_to_each_process_with_gpu_work_overlapping_it(open_export) -> None:
    """2200..2400 overlaps pid 200's graph row only; a row touching the window's end (pid 100's memset ends at 2100,
    the window 2100..2400) does not overlap it."""
    assert ranges(open_export, two_processes(), 2100, 2400)[0] == [(1, B, 200, None, 2100, 2400, None, None)]
    assert ranges(open_export, two_processes(), 1400, 1600)[0] == [(1, A, 100, None, 1400, 1600, None, None),
                                                                   (1, B, 200, None, 1400, 1600, None, None)]
    rows, span = ranges(open_export, two_processes(), 3000, 4000)
    assert rows == [] and span == {"first_ns": 400, "last_ns": 3000, "rows": 5, "without_length": 0}


def test_rows_without_a_process_id(open_export) -> None:
    """One process named: its rows. None named (an export without globalPid): one window, process key 0.
    Several named: a row without an id is nobody's, as window attribution leaves it out."""
    e = Export()
    e.kernel(1000, 1500, A, 1)
    e.kernel(200, 300, None, 2)
    e.memory(1700, 1800, None, 3)
    assert ranges(open_export, e)[0] == [(1, A, 100, None, 200, 1800, None, None)]
    e = Export()
    e.kernel(1000, 1500, None, 1)
    e.memory(1700, 1800, None, 3)
    assert ranges(open_export, e)[0] == [(1, 0, 0, None, 1000, 1800, None, None)]
    e = Export()
    e.kernel(1000, 1500, A, 1)
    e.kernel(2000, 2500, B, 1, device=1)
    e.kernel(100, 3000, None, 2)
    rows, span = ranges(open_export, e)
    assert rows == [(1, A, 100, None, 1000, 1500, None, None), (1, B, 200, None, 2000, 2500, None, None)]
    assert span == {"first_ns": 1000, "last_ns": 2500, "rows": 2, "without_length": 0}


def test_no_gpu_rows_no_range(open_export) -> None:
    e = Export()
    e.range(100, 5000, gtid(100, 100), "step")
    e.launch(50, gtid(100, 100), 1)
    assert ranges(open_export, e) == ([], {"first_ns": None, "last_ns": None, "rows": 0, "without_length": 0})
