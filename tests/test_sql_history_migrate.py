"""history_migrate.sql: an older table gains the current columns (format 2's, format 3's comparability inputs,
format 4's exit code and error); its rows keep their values, marked with the format they were written in."""

import duckdb

from pipeline.trace import queries
from tests.test_sql_history_append import V1_DDL, V1_ROW


def test_format_1_rows_keep_values_and_get_marked():
    con = duckdb.connect()
    con.execute(V1_DDL)
    con.execute(V1_ROW)
    queries.run(con, "history_migrate")
    cols = [c for c, in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'history' "
                                    "ORDER BY column_index").fetchall()]
    assert cols[10:] == ["label", "samples_field", "step_samples_s", "mfu_samples_pct", "format_version",
                         "mfu_pct_wall_min", "comparability_inputs", "exit_code", "error", "what_ran"]
    assert con.execute("SELECT * FROM history").fetchall() == \
        [(1, "a", "c", "t", "ok", 40.0, 40.0, 1.0, 10.0, None, None, None, None, None, 1, None, None, None, None, None)]


# A format-2 table as written before the MFU threshold was kept (format_version is its last column).
V2_DDL = V1_DDL[:-1] + (", label VARCHAR, samples_field VARCHAR, step_samples_s DOUBLE[], mfu_samples_pct DOUBLE[], "
                        "format_version INTEGER)")


def test_format_2_table_without_threshold_gains_it_null_and_current_table_is_unchanged():
    con = duckdb.connect()
    con.execute(V2_DDL)
    con.execute("INSERT INTO history VALUES (1, 'a', 'c', 't', 'ok', 40.0, 40.0, 1.0, 10.0, NULL, 'v1', "
                "'step_time_s', [1.0], [40.0], 2)")
    queries.run(con, "history_migrate")
    queries.run(con, "history_migrate")                        # runs on every open: a no-op the second time
    assert con.execute("SELECT run, label, format_version, mfu_pct_wall_min, comparability_inputs FROM history"
                       ).fetchall() == [(1, "v1", 2, None, None)]
    assert [c for c, in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'history' "
                                    "ORDER BY column_index").fetchall()][-5:] == ["mfu_pct_wall_min",
                                                                                  "comparability_inputs",
                                                                                  "exit_code", "error", "what_ran"]


def test_format_2_table_with_threshold_gains_comparability_inputs_null():
    """Format 3 stores the inputs compare decides comparability on; a format-2 row's are unknown (NULL)."""
    con = duckdb.connect()
    con.execute(V2_DDL[:-1] + ", mfu_pct_wall_min DOUBLE)")
    con.execute("INSERT INTO history VALUES (1, 'a', 'c', 't', 'ok', 40.0, 40.0, 1.0, 10.0, NULL, 'v1', "
                "'step_time_s', [1.0], [40.0], 2, 35.0)")
    queries.run(con, "history_migrate")
    assert con.execute("SELECT run, format_version, mfu_pct_wall_min, comparability_inputs FROM history"
                       ).fetchall() == [(1, 2, 35.0, None)]


def test_format_3_table_gains_exit_code_and_error_null():
    """Format 4 records failed jobs (exit code, error); every format-3 row has a result: both NULL."""
    con = duckdb.connect()
    con.execute(V2_DDL[:-1] + ", mfu_pct_wall_min DOUBLE, comparability_inputs VARCHAR)")
    con.execute("INSERT INTO history VALUES (1, 'a', 'c', 't', 'ok', 40.0, 40.0, 1.0, 10.0, NULL, 'v1', "
                "'step_time_s', [1.0], [40.0], 3, 35.0, '{}')")
    queries.run(con, "history_migrate")
    assert con.execute("SELECT run, status, format_version, comparability_inputs, exit_code, error FROM history"
                       ).fetchall() == [(1, "ok", 3, "{}", None, None)]
