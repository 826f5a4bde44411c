"""discovery_active.sql: the GPU-active window per process, every figure worked out by hand."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import queries


def test_window_per_process_by_hand(open_export) -> None:
    """pid 1: a kernel 100-200, a graph launch 150-400, a memcpy 50-60 (the first row), a memset 390-420 (the last):
    window 50-420, 4 rows. pid 2: one kernel 1000-1000 (no length): window 0 ns, no busy row. A kernel without a
    process id, 10-20, is no process's among two (gpu_work.sql): in no window."""
    e = Export()
    e.launch(90, gtid(1, 1), 1)
    e.kernel(100, 200, gpid(1), 1)
    e.graph(150, 400, gpid(1), 2, 7)
    e.memory(50, 60, gpid(1), 3)
    e.memory(390, 420, gpid(1), 4, kind="memset")
    e.kernel(1000, 1000, gpid(2), 1)
    e.kernel(10, 20, None, 9)
    con = open_export(e).con
    queries.run(con, "inspect_read")
    rows = queries.run(con, "discovery_active")
    assert [(r["global_pid"], r["rows"], r["busy_rows"], r["start_ns"], r["end_ns"], r["span_ns"]) for r in rows] == [
        (gpid(1), 4, 4, 50, 420, 370), (gpid(2), 1, 0, 1000, 1000, 0)]


def test_no_gpu_rows(open_export) -> None:
    e = Export()
    e.range(0, 10, gtid(1, 1), "step")
    con = open_export(e).con
    queries.run(con, "inspect_read")
    assert queries.run(con, "discovery_active") == []
