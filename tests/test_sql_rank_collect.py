"""rank_collect.sql: each file's selected ranges kept under its index; file 0 starts afresh."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

RANGES = ("CREATE OR REPLACE TEMP TABLE selected_ranges AS SELECT * FROM (VALUES (1, 16777216, 1, 16777217, {s}, 10, "
          "'s', NULL)) AS t(occurrence, global_pid, pid, global_tid, start_ns, end_ns, name, period_ns)")


def collect(con, file: int, start: int) -> None:
    con.execute(RANGES.format(s=start))
    con.execute(f"CREATE OR REPLACE TEMP TABLE operator_work AS SELECT 1 AS occurrence, {start} AS calls")
    queries.run(con, "rank_collect", file=file)


def test_files_accumulate_and_file_zero_clears():
    con = duckdb.connect()
    collect(con, 0, 1)
    collect(con, 1, 2)
    assert con.execute("SELECT file, global_pid, start_ns FROM all_ranges ORDER BY file").fetchall() == [
        (0, 16777216, 1), (1, 16777216, 2)]
    assert con.execute("SELECT file, calls FROM all_operator_work ORDER BY file").fetchall() == [(0, 1), (1, 2)]
    collect(con, 0, 3)          # the next job on a shared connection
    assert con.execute("SELECT file, start_ns FROM all_ranges").fetchall() == [(0, 3)]
    assert con.execute("SELECT file, calls FROM all_operator_work").fetchall() == [(0, 3)]
