"""step_merge.sql: a job's step_unions are its redone steps' own rows and the shared window's for the others."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

COLUMNS = "scope VARCHAR, k1 BIGINT, k2 BIGINT, k3 BIGINT, union_ns BIGINT, sum_ns BIGINT, interval_count BIGINT, " \
          "last_end_ns BIGINT"


def test_redone_steps_are_kept_the_others_taken_from_the_window():
    con = duckdb.connect()
    for table in ("step_unions", "shared_step_unions"):
        con.execute(f"CREATE TABLE {table} ({COLUMNS})")
    # the window: occurrences 1..5, one row each (union = 10 x occurrence); the job: 2..4, redoing 4
    con.execute("INSERT INTO shared_step_unions SELECT 'any', range, 1, NULL, 10 * range, 0, 1, 0 FROM range(1, 6)")
    con.execute("CREATE TABLE occurrence_times AS SELECT range AS occurrence FROM range(2, 5)")
    con.execute("CREATE TABLE step_targets AS SELECT 4 AS occurrence")
    # the redo: step 4's own rows (union 44), and step 3's partly (its spilled rows only): that one goes
    con.execute("INSERT INTO step_unions VALUES ('any', 4, 1, NULL, 44, 0, 1, 0), ('any', 3, 1, NULL, 7, 0, 1, 0)")
    queries.run(con, "step_merge")
    assert con.execute("SELECT k1, union_ns FROM step_unions ORDER BY k1").fetchall() == [(2, 20), (3, 30), (4, 44)]
