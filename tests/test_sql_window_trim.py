"""window_trim.sql: after the build, only the tables the analyses read are left."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries
from pipeline.trace.connection import MEMORY_LIMIT, connect

BUILT = ("selected_ranges", "range_buckets", "attributed", "launched", "unlaunched", "attributed_memops", "classified",
         "kernel_names", "kernel_copies", "memop_copies")


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary ORDER BY 1").fetchall()]


def test_the_build_tables_go_and_the_window_stays():
    con = connect()
    limit = con.execute("SELECT current_setting('memory_limit')").fetchone()
    for t in BUILT:
        con.execute(f"CREATE TEMP TABLE {t} AS SELECT 1 AS occurrence")
    queries.run(con, "window_trim", memory_limit=MEMORY_LIMIT)
    assert _tables(con) == ["classified", "kernel_names", "selected_ranges"]
    assert con.execute("SELECT current_setting('memory_limit')").fetchone() == limit      # set again, not changed


def test_window_attribution_leaves_no_unlaunched_table():
    con = duckdb.connect()
    for t in BUILT:
        if t not in ("unlaunched", "range_buckets"):       # attribute_window.sql creates neither
            con.execute(f"CREATE TEMP TABLE {t} AS SELECT 1 AS occurrence")
    queries.run(con, "window_trim", memory_limit=MEMORY_LIMIT)
    assert _tables(con) == ["classified", "kernel_names", "selected_ranges"]
