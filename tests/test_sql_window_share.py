"""window_share.sql: a window built for several jobs is kept under shared_* names, nothing copied."""

from __future__ import annotations

import duckdb
import pytest

from pipeline.trace import queries


def _window(con: duckdb.DuckDBPyConnection, occurrences: range) -> None:
    con.execute("CREATE OR REPLACE TEMP TABLE selected_ranges AS SELECT range AS occurrence, 100 * range AS start_ns "
                f"FROM range({occurrences.start}, {occurrences.stop})")
    con.execute("CREATE OR REPLACE TEMP TABLE classified AS SELECT occurrence, start_ns + 1 AS start_ns "
                "FROM selected_ranges")
    con.execute("CREATE OR REPLACE TEMP TABLE name_times AS SELECT occurrence, 7 AS name_id FROM selected_ranges")
    con.execute("CREATE OR REPLACE TEMP TABLE operator_work AS SELECT occurrence, 9 AS calls FROM selected_ranges")
    con.execute("CREATE OR REPLACE TEMP TABLE occurrence_places AS SELECT occurrence, CAST(occurrence % 2 AS HUGEINT) "
                "AS operators, CASE WHEN occurrence = 1 THEN ['a', 'b'] ELSE ['a'] END AS labels FROM selected_ranges")


def test_the_window_tables_move_to_shared_names():
    con = duckdb.connect()
    _window(con, range(1, 6))
    placed = queries.run(con, "window_share")
    assert placed == [{"occurrence": k, "operators": k % 2, "labels": ["a", "b"] if k == 1 else ["a"]}
                      for k in range(1, 6)]                          # each occurrence's, for SharedWindow.cut
    assert con.execute("SELECT count(*) FROM shared_ranges").fetchone() == (5,)
    assert con.execute("SELECT sum(start_ns) FROM shared_classified").fetchone() == (1505,)
    assert con.execute("SELECT count(*) FROM shared_name_times WHERE name_id = 7").fetchone() == (5,)
    assert con.execute("SELECT sum(calls) FROM shared_operator_work").fetchone() == (45,)
    for gone in ("selected_ranges", "classified", "name_times", "operator_work",
                 "occurrence_places"):        # the names are free for the job views
        with pytest.raises(duckdb.CatalogException):
            con.execute(f"SELECT * FROM {gone}")


def test_a_second_shared_window_replaces_the_first():
    con = duckdb.connect()
    _window(con, range(1, 6))
    queries.run(con, "window_share")
    _window(con, range(7, 9))
    queries.run(con, "window_share")
    assert con.execute("SELECT list(occurrence ORDER BY occurrence) FROM shared_ranges").fetchone() == ([7, 8],)
