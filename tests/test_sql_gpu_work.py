"""gpu_work.sql: the GPU rows and the process each belongs to, the one rule for a row without a process id."""

from __future__ import annotations

from nsys_export import Export, gpid
from pipeline.trace import queries

A, B = gpid(1), gpid(2)


def work(open_export, e: Export, table: str = "kernels") -> list[tuple]:
    trace = open_export(e)
    if table == "kernel_rows":
        queries.run(trace.con, "inspect_read")
    return trace.con.execute(f"SELECT global_pid, start_ns, end_ns FROM gpu_work({table}) ORDER BY ALL").fetchall()


def test_rows_of_one_process_and_rows_without_an_id_are_its(open_export) -> None:
    """Kernel 100-200 and CUDA graph launch 300-400 of process 1; a memcpy 50-60 and a memset 500-510 with no
    process id: the trace names one process, so they are its rows."""
    e = Export()
    e.kernel(100, 200, A, 1)
    e.graph(300, 400, A, 2, 7)
    e.memory(50, 60, None, 3)
    e.memory(500, 510, None, 4, kind="memset")
    assert work(open_export, e) == [(A, 50, 60), (A, 100, 200), (A, 300, 400), (A, 500, 510)]


def test_rows_of_no_named_process_are_process_key_0(open_export) -> None:
    e = Export()
    e.kernel(10, 20, None, 1)
    e.memory(30, 40, None, 2)
    assert work(open_export, e) == [(0, 10, 20), (0, 30, 40)]


def test_a_row_without_an_id_among_several_processes_is_left_out(open_export) -> None:
    e = Export()
    e.kernel(10, 20, A, 1)
    e.kernel(30, 40, B, 1)
    e.kernel(50, 60, None, 2)
    assert work(open_export, e) == [(A, 10, 20), (B, 30, 40)]


def test_inspects_copy_of_the_kernels_gives_the_same_rows(open_export) -> None:
    e = Export()
    e.kernel(100, 200, A, 1)
    e.kernel(150, 250, None, 2)
    e.memory(5, 6, A, 3)
    assert work(open_export, e, "kernel_rows") == work(open_export, e) == [(A, 5, 6), (A, 100, 200), (A, 150, 250)]


def test_the_run_and_init_see_the_same_window(open_export) -> None:
    """window_ranges.sql (a run's gpu_active region) and discovery_active.sql (init's proposal) read gpu_work:
    with one process and rows without an id (memcpy 10-20 first, kernel 900-1000 last), both span 10-1000."""
    e = Export()
    e.kernel(100, 200, A, 1)
    e.memory(10, 20, None, 2)
    e.kernel(900, 1000, None, 3)
    trace = open_export(e)
    queries.run(trace.con, "window_ranges", start_ns=None, end_ns=None)
    queries.run(trace.con, "inspect_read")
    run = trace.con.execute("SELECT global_pid, start_ns, end_ns FROM region_ranges").fetchall()
    init = [(r["global_pid"], r["start_ns"], r["end_ns"]) for r in queries.run(trace.con, "discovery_active")]
    assert run == init == [(A, 10, 1000)]
