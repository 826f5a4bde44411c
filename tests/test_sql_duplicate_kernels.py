"""duplicate_kernels.sql: exact copies of an attributed kernel row, counted and deleted, by hand."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

COLUMNS = ("occurrence", "global_pid", "device_id", "stream_id", "correlation_id", "start_ns", "end_ns", "name_id")


def attributed(rows: list[tuple]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE attributed (" + ", ".join(f"{c} BIGINT" for c in COLUMNS) + ")")
    con.executemany("INSERT INTO attributed VALUES (" + ", ".join("?" for _ in COLUMNS) + ")", rows)
    return con


def test_copies_are_counted_per_occurrence_and_deleted_but_one():
    con = attributed([
        (1, 10, 0, 7, 1, 100, 400, 5),       # three rows of one kernel: two copies of 300 ns
        (1, 10, 0, 7, 1, 100, 400, 5),
        (1, 10, 0, 7, 1, 100, 400, 5),
        (1, 10, 0, 9, 1, 100, 400, 5),       # another stream (a graph node beside it): a kernel of its own
        (1, 10, 1, 7, 1, 100, 400, 5),       # another device
        (1, 20, 0, 7, 1, 100, 400, 5),       # another process (correlationIds repeat across processes)
        (1, 10, 0, 7, 2, 100, 400, 5),       # another launch
        (1, 10, 0, 7, 1, 100, 401, 5),       # another end
        (2, 10, 0, 7, 1, 100, 400, 5),       # the same kernel in occurrence 2 (ranges overlapping): not a copy
        (2, 10, 0, 7, 3, 500, 550, 6),       # occurrence 2: one copy of 50 ns
        (2, 10, 0, 7, 3, 500, 550, 6),
        (3, None, 0, 7, None, 10, 20, 6),    # no process, no correlationId (window attribution): still one kernel
        (3, None, 0, 7, None, 10, 20, 6),    # ... recorded twice: one copy of 10 ns
    ])
    assert queries.run(con, "duplicate_kernels") == [{"occurrence": 1, "rows": 2, "duplicate_ns": 600},
                                                     {"occurrence": 2, "rows": 1, "duplicate_ns": 50},
                                                     {"occurrence": 3, "rows": 1, "duplicate_ns": 10}]
    left = con.execute("SELECT * FROM attributed ORDER BY ALL").fetchall()
    assert left == [
        (1, 10, 0, 7, 1, 100, 400, 5), (1, 10, 0, 7, 1, 100, 401, 5), (1, 10, 0, 7, 2, 100, 400, 5),
        (1, 10, 0, 9, 1, 100, 400, 5), (1, 10, 1, 7, 1, 100, 400, 5), (1, 20, 0, 7, 1, 100, 400, 5),
        (2, 10, 0, 7, 1, 100, 400, 5), (2, 10, 0, 7, 3, 500, 550, 6),
        (3, None, 0, 7, None, 10, 20, 6)]


def test_nothing_when_no_row_is_copied():
    rows = [(1, 10, 0, 7, 1, 100, 400, 5), (1, 10, 0, 7, 2, 400, 500, 5)]
    con = attributed(rows)
    assert queries.run(con, "duplicate_kernels") == []
    assert con.execute("SELECT * FROM attributed ORDER BY ALL").fetchall() == rows


def test_two_streams_starting_together_on_one_device_are_two_kernels():
    """Device and start alone make a candidate, not a copy: another stream is another kernel (both kept)."""
    rows = [(1, 10, 0, 7, 1, 100, 400, 5), (1, 10, 0, 9, 1, 100, 400, 5)]
    con = attributed(rows)
    assert queries.run(con, "duplicate_kernels") == []
    assert con.execute("SELECT * FROM attributed ORDER BY ALL").fetchall() == rows


def test_one_stream_starting_twice_with_two_ends_is_two_rows():
    """Same device, stream, start and launch but another end: not the same recorded execution (both kept)."""
    rows = [(1, 10, 0, 7, 1, 100, 400, 5), (1, 10, 0, 7, 1, 100, 450, 5)]
    con = attributed(rows)
    assert queries.run(con, "duplicate_kernels") == []
    assert con.execute("SELECT * FROM attributed ORDER BY ALL").fetchall() == rows
