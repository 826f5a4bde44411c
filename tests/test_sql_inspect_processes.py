"""inspect_processes.sql: processes with kernels or NVTX ranges, named from PROCESSES."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain


def test_processes_by_hand(open_export) -> None:
    e = Export(processes=[{"globalPid": gpid(300, host=2), "pid": 300, "name": "python3"},
                          {"globalPid": gpid(9), "pid": 9, "name": "unused"}])
    e.kernel(0, 1, gpid(300, host=2), 1)
    e.kernel(2, 3, gpid(300, host=2), 2)
    e.range(0, 5, gtid(300, 301, host=2), "step")
    e.range(0, 5, gtid(40, 40), "cpu only")             # ranges but no kernels, no PROCESSES row
    e.range(6, 9, gtid(40, 41), "cpu only")
    e.range(7, None, gtid(41, 41), "mark", event_type=34)    # marks are not ranges: pid 41 is not active
    e.kernel(4, 5, None, None)                          # no process: left out
    trace = open_export(e)
    assert chain.run(trace.con, {"inspect_read", "inspect_processes"})["inspect_processes"] == [
        {"global_pid": gpid(40), "pid": 40, "name": None, "kernels": 0, "ranges": 2},
        {"global_pid": gpid(300, host=2), "pid": 300, "name": "python3", "kernels": 2, "ranges": 1},
    ]


def test_without_processes_table(open_export) -> None:
    e = Export()
    e.kernel(0, 1, gpid(5), 1)
    trace = open_export(e)
    assert chain.run(trace.con, {"inspect_read", "inspect_processes"})["inspect_processes"] == [
        {"global_pid": gpid(5), "pid": 5, "name": None, "kernels": 1, "ranges": 0}]
