"""window_unshare.sql: after a shared window, the next job builds its own tables under the usual names."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries


def test_the_views_and_shared_tables_go():
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE selected_ranges AS SELECT 1 AS occurrence")
    con.execute("CREATE TEMP TABLE classified AS SELECT 1 AS occurrence")
    con.execute("CREATE TEMP TABLE name_times AS SELECT 1 AS occurrence")
    con.execute("CREATE TEMP TABLE operator_work AS SELECT 1 AS occurrence")
    con.execute("CREATE TEMP TABLE occurrence_places AS SELECT 1 AS occurrence, 0 AS operators, ['step'] AS labels")
    queries.run(con, "window_share")
    queries.run(con, "window_cut", first=1, last=1, place=False)
    queries.run(con, "window_unshare")
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM duckdb_variables()").fetchone() == (0,)           # the cut's bounds
    con.execute("CREATE OR REPLACE TEMP TABLE classified AS SELECT 2 AS occurrence")   # as build_window does
    assert con.execute("SELECT * FROM classified").fetchall() == [(2,)]
