"""duplicate_memops.sql: exact copies of an attributed memory copy or set, counted and deleted, by hand."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

COLUMNS = ("occurrence", "global_pid", "device_id", "stream_id", "correlation_id", "name", "start_ns", "end_ns")
CPY, SET = "[CUDA memcpy]", "[CUDA memset]"


def attributed_memops(rows: list[tuple]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE attributed_memops (" + ", ".join(
        f"{c} {'VARCHAR' if c == 'name' else 'BIGINT'}" for c in COLUMNS) + ")")
    con.executemany("INSERT INTO attributed_memops VALUES (" + ", ".join("?" for _ in COLUMNS) + ")", rows)
    return con


def test_copies_are_counted_per_occurrence_and_deleted_but_one():
    con = attributed_memops([
        (1, 10, 0, 7, 1, CPY, 100, 400),      # three rows of one copy: two copies of 300 ns
        (1, 10, 0, 7, 1, CPY, 100, 400),
        (1, 10, 0, 7, 1, CPY, 100, 400),
        (1, 10, 0, 7, 1, SET, 100, 400),      # a set with every other column equal: another operation
        (1, 10, 0, 9, 1, CPY, 100, 400),      # another stream
        (1, 10, 1, 7, 1, CPY, 100, 400),      # another device
        (1, 20, 0, 7, 1, CPY, 100, 400),      # another process
        (1, 10, 0, 7, 2, CPY, 100, 400),      # another call
        (1, 10, 0, 7, 1, CPY, 100, 450),      # another end
        (2, 10, 0, 7, 1, CPY, 100, 400),      # the same copy in occurrence 2 (window attribution): not a copy
        (2, 10, 0, 7, 3, SET, 500, 520),      # occurrence 2: one copy of a 20 ns set
        (2, 10, 0, 7, 3, SET, 500, 520),
        (3, None, 0, None, None, CPY, 10, 20),    # no process, stream or correlationId: still one operation
        (3, None, 0, None, None, CPY, 10, 20),    # ... recorded twice: one copy of 10 ns
    ])
    assert queries.run(con, "duplicate_memops") == [{"occurrence": 1, "rows": 2, "duplicate_ns": 600},
                                                    {"occurrence": 2, "rows": 1, "duplicate_ns": 20},
                                                    {"occurrence": 3, "rows": 1, "duplicate_ns": 10}]
    left = con.execute("SELECT * FROM attributed_memops ORDER BY ALL").fetchall()
    assert left == sorted([
        (1, 10, 0, 7, 1, CPY, 100, 400), (1, 10, 0, 7, 1, SET, 100, 400), (1, 10, 0, 9, 1, CPY, 100, 400),
        (1, 10, 1, 7, 1, CPY, 100, 400), (1, 20, 0, 7, 1, CPY, 100, 400), (1, 10, 0, 7, 2, CPY, 100, 400),
        (1, 10, 0, 7, 1, CPY, 100, 450), (2, 10, 0, 7, 1, CPY, 100, 400), (2, 10, 0, 7, 3, SET, 500, 520),
        (3, None, 0, None, None, CPY, 10, 20)], key=lambda r: tuple((v is None, v) for v in r))


def test_nothing_when_no_row_is_copied():
    rows = [(1, 10, 0, 7, 1, CPY, 100, 400), (1, 10, 0, 7, 2, SET, 400, 500)]
    con = attributed_memops(rows)
    assert queries.run(con, "duplicate_memops") == []
    assert con.execute("SELECT * FROM attributed_memops ORDER BY ALL").fetchall() == rows
