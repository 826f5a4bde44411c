"""discovery_work.sql: the kernels each occurrence's process launched inside it, summed per occurrence."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain

P1, P2 = gtid(1, 1), gtid(2, 1)


def test_kernels_by_their_launch_time(open_export) -> None:
    """pid 1: 'step' 0-100 and 100-200 back to back. Launches at 10 (kernels 20-60 and 40-70: union 50,
    sum 70), at 100 (the shared boundary: the next occurrence's; kernel 110-150) and at 300 (in no
    occurrence). pid 2 reuses correlationId 1 for a kernel launched at 500, outside its own 'step' 0-50."""
    e = Export()
    e.range(0, 100, P1, "step")
    e.range(100, 200, P1, "step")
    e.range(0, 50, P2, "step")
    for corr, at in ((1, 10), (2, 100), (3, 300)):
        e.launch(at, P1, corr)
    e.launch(12, P1, 4)
    e.launch(500, P2, 1)
    e.kernel(20, 60, gpid(1), 1)
    e.kernel(40, 70, gpid(1), 4)
    e.kernel(110, 150, gpid(1), 2)
    e.kernel(300, 310, gpid(1), 3)
    e.kernel(510, 520, gpid(2), 1)
    con = open_export(e).con
    chain.run(con, {"inspect_read", "discovery_occurrences", "discovery_work"})
    assert con.execute("SELECT o.pid, o.occurrence, w.scope, w.union_ns, w.sum_ns, w.interval_count, w.last_end_ns "
                       "FROM discovery_work AS w JOIN discovery_occ AS o ON o.occ_id = w.k1 ORDER BY ALL").fetchall() == [
        (1, 1, "occurrence", 50, 70, 2, 70), (1, 2, "occurrence", 40, 40, 1, 150)]
