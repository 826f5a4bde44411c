"""classify_collect.sql: each file's classified rows kept under its index; file 0 starts afresh."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries
from tests.sqlfixtures import COLUMNS


def collect(con: duckdb.DuckDBPyConnection, file: int, name: str) -> None:
    """One file's `classified` table (one kernel named `name`), then collected under `file`."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE classified ({COLUMNS})")
    con.execute("INSERT INTO classified VALUES (1, 16777216, 0, ?, 'gemm', 'kernel', 10, 20, 'bf16')", [name])
    queries.run(con, "classify_collect", file=file)


def test_files_accumulate_and_file_zero_clears():
    con = duckdb.connect()
    collect(con, 0, "a")
    collect(con, 1, "b")
    assert con.execute("SELECT file, name, global_pid, device_id FROM all_classified ORDER BY file").fetchall() == [
        (0, "a", 16777216, 0), (1, "b", 16777216, 0)]
    collect(con, 0, "c")          # the next job on a shared connection
    assert con.execute("SELECT file, name FROM all_classified").fetchall() == [(0, "c")]
