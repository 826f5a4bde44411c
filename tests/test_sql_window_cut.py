"""window_cut.sql: one job sees the rows of its own occurrences of a shared window, under the usual names."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries


def _shared() -> duckdb.DuckDBPyConnection:
    """Occurrences 1..6, two ranges, three classified rows and one name row per occurrence."""
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE shared_ranges AS SELECT o AS occurrence, p AS global_pid "
                "FROM range(1, 7) AS a(o), range(2) AS b(p)")
    con.execute("CREATE TEMP TABLE shared_classified AS SELECT o AS occurrence, k AS name_id "
                "FROM range(1, 7) AS a(o), range(3) AS b(k)")
    con.execute("CREATE TEMP TABLE shared_name_times AS SELECT range AS occurrence, 7 AS name_id FROM range(1, 7)")
    con.execute("CREATE TEMP TABLE shared_operator_work AS SELECT o AS occurrence, k AS calls "
                "FROM range(1, 7) AS a(o), range(4) AS b(k)")
    return con


def _seen(con) -> tuple:
    return tuple(con.execute(f"SELECT count(*), min(occurrence), max(occurrence) FROM {t}").fetchone()
                 for t in ("selected_ranges", "classified", "name_times", "operator_work"))


def test_each_cut_shows_its_occurrences_only():
    con = _shared()
    queries.run(con, "window_cut", first=2, last=4, place=True)
    assert _seen(con) == ((6, 2, 4), (9, 2, 4), (3, 2, 4), (12, 2, 4))
    queries.run(con, "window_cut", first=6, last=6, place=True)       # the next job: its own rows, not 2..6
    assert _seen(con) == ((2, 6, 6), (3, 6, 6), (1, 6, 6), (4, 6, 6))
    assert con.execute("SELECT count(*) FROM shared_classified").fetchone() == (18,)     # the shared rows stay


def test_each_scan_filters_by_the_bounds_itself():
    """The bounds reach the table scan as constants (no join with a bounds table for every row)."""
    con = _shared()
    queries.run(con, "window_cut", first=2, last=4, place=True)
    plan = con.execute("EXPLAIN SELECT count(*) FROM classified").fetchall()[0][1]
    assert "occurrence>=2" in plan.replace(" ", "") and "occurrence<=4" in plan.replace(" ", "")
    assert "JOIN" not in plan


def test_a_cut_of_no_rows_is_empty_not_an_error():
    con = _shared()
    queries.run(con, "window_cut", first=7, last=9, place=True)
    assert _seen(con) == ((0, None, None),) * 4


def test_a_job_whose_own_window_places_no_kernels_sees_no_operator_work():
    """The window placed kernels in operators for some job's occurrences; a job whose own window would not (place
    false, SharedWindow.cut) sees operator_work empty, as operator_work.sql leaves it then, and its other rows."""
    con = _shared()
    queries.run(con, "window_cut", first=2, last=4, place=False)
    assert _seen(con) == ((6, 2, 4), (9, 2, 4), (3, 2, 4), (0, None, None))
    queries.run(con, "window_cut", first=2, last=4, place=True)      # the next job's own decision, not this one's
    assert _seen(con)[3] == (12, 2, 4)
