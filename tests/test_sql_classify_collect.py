"""classify_collect.sql: each file's classified rows and names kept under its index; file 0 starts afresh."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries
from tests.sqlfixtures import COLUMNS, NAME_COLUMNS


def collect(con: duckdb.DuckDBPyConnection, file: int, name: str) -> None:
    """One file's `classified` table (one kernel named `name`, name id 1), then collected under `file`."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE classified ({COLUMNS})")
    con.execute(f"CREATE OR REPLACE TEMP TABLE kernel_names ({NAME_COLUMNS})")
    con.execute("INSERT INTO classified VALUES (1, 16777216, 0, 1, 10, 20, 7, NULL)")
    con.execute("INSERT INTO kernel_names VALUES (1, ?, 'gemm', 'kernel', 'bf16')", [name])
    queries.run(con, "classify_collect", file=file)


def _rows(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    return con.execute("SELECT c.file, n.name, c.global_pid, c.device_id FROM all_classified AS c "
                       "JOIN all_kernel_names AS n ON n.file = c.file AND n.name_id = c.name_id "
                       "ORDER BY c.file").fetchall()


def test_files_accumulate_and_file_zero_clears():
    con = duckdb.connect()
    collect(con, 0, "a")
    collect(con, 1, "b")
    assert _rows(con) == [(0, "a", 16777216, 0), (1, "b", 16777216, 0)]
    collect(con, 0, "c")          # the next job on a shared connection
    assert _rows(con) == [(0, "c", 16777216, 0)]
    assert con.execute("SELECT count(*) FROM all_kernel_names").fetchone() == (1,)
