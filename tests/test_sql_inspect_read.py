"""inspect_read.sql: inspect's one read of the launch and kernel tables; every row written down by hand."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import queries

P1, P2 = gpid(1), gpid(2)


def test_each_kernel_once_with_its_first_launch(open_export) -> None:
    e = Export()
    e.launch(100, gtid(1, 1), 1)
    e.launch(90, gtid(1, 2), 1, name="cudaLaunchKernel_v7000")    # the same launch key, earlier: the first
    e.launch(200, gtid(1, 1), 2)
    e.kernel(300, 400, P1, 1)
    e.kernel(410, 420, P1, 2)
    e.kernel(430, 440, P2, 1, device=1)                            # correlationId 1 has no launch in process 2
    e.kernel(450, 460, None, None)                                 # no process: never a launch
    e.graph(500, 600, P1, 2, graph_id=4)                           # a whole graph launch, launched by key 2
    con = open_export(e).con
    queries.run(con, "inspect_read")
    assert con.execute("SELECT global_pid, correlation_id, launch_ns, launch_rows FROM launch_keys "
                       "ORDER BY ALL").fetchall() == [(P1, 1, 90, 2), (P1, 2, 200, 1)]
    assert con.execute("SELECT global_pid, device_id, graph_id, start_ns, end_ns, launch_ns FROM kernel_rows "
                       "ORDER BY start_ns").fetchall() == [
        (P1, 0, None, 300, 400, 90), (P1, 0, None, 410, 420, 200), (P2, 1, None, 430, 440, None),
        (None, 0, None, 450, 460, None), (P1, 0, 4, 500, 600, 200)]
