"""discovery_occurrences.sql: every name group's occurrences per process, and their time buckets; by hand."""

from __future__ import annotations

from nsys_export import Export, gtid
from pipeline.trace import queries

P1, P2 = gtid(1, 1), gtid(2, 1)


def test_occurrences_islands_and_buckets(open_export) -> None:
    """pid 1: 'step' 0-100 and 100-200 (back to back: two occurrences, the first sharing its end), and
    'step' 250-300 with a nested 'step' 260-270 (one island); pid 2: 'step' 0-50. Mean occurrence length
    (100 + 100 + 50 + 50) // 4 = 75 beats the envelope 0-300 over 4 (75 too): buckets of 75 ns."""
    e = Export()
    for s, t in ((0, 100), (100, 200), (250, 300), (260, 270)):
        e.range(s, t, P1, "step")
    e.range(0, 50, P2, "step")
    con = open_export(e).con
    queries.run(con, "discovery_occurrences")
    assert con.execute("SELECT pid, occurrence, start_ns, end_ns, ranges, shared_end FROM discovery_occ "
                       "ORDER BY ALL").fetchall() == [
        (1, 1, 0, 100, 1, True), (1, 2, 100, 200, 1, False), (1, 3, 250, 300, 2, False), (2, 1, 0, 50, 1, False)]
    assert con.execute("SELECT o.pid, b.start_ns, b.width_ns, b.bucket FROM discovery_buckets AS b "
                       "JOIN discovery_occ AS o USING (occ_id) ORDER BY ALL").fetchall() == [
        (1, 0, 75, 0), (1, 0, 75, 1), (1, 100, 75, 1), (1, 100, 75, 2), (1, 250, 75, 3), (1, 250, 75, 4),
        (2, 0, 75, 0)]
