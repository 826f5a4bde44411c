"""select_occurrences.sql: occurrences first..last of every process, and nothing else."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries


def test_keeps_the_inclusive_range_for_every_process():
    con = duckdb.connect()
    queries.run(con, "macros")                         # time_buckets
    con.execute("CREATE TABLE region_ranges AS SELECT * FROM (VALUES "
                "(1, 10, 100, 0, 5), (2, 10, 100, 10, 15), (3, 10, 100, 20, 25), "
                "(1, 20, 200, 1, 6), (2, 20, 200, 11, 16)) AS t(occurrence, global_pid, pid, start_ns, end_ns)")
    queries.run(con, "select_occurrences", first=2, last=3)
    got = con.execute("SELECT occurrence, pid FROM selected_ranges ORDER BY occurrence, pid").fetchall()
    assert got == [(2, 100), (2, 200), (3, 100)]       # process 200 has no third range
    queries.run(con, "select_occurrences", first=1, last=1)      # replaced, not appended
    assert con.execute("SELECT count(*) FROM selected_ranges").fetchone() == (2,)


def test_counts_the_hosts_of_the_selected_ranges():
    """Bits 48+ of the process key are the host: two hosts' pid 10 are two processes on two hosts."""
    con = duckdb.connect()
    queries.run(con, "macros")                         # time_buckets
    host = 1 << 48
    con.execute("CREATE TABLE region_ranges AS SELECT * FROM (VALUES "
                f"(1, 10, 10, 0, 5), (1, {host + 10}, 10, 0, 5), (2, 10, 10, 10, 15)) "
                "AS t(occurrence, global_pid, pid, start_ns, end_ns)")
    assert queries.run(con, "select_occurrences", first=1, last=2) == [{"hosts": 2}]
    assert queries.run(con, "select_occurrences", first=2, last=2) == [{"hosts": 1}]
