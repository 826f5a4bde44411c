"""history_migrate.sql: a format-1 table gains the format-2 columns; its rows keep their values, marked format 1."""

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
                         "mfu_pct_wall_min"]
    assert con.execute("SELECT * FROM history").fetchall() == \
        [(1, "a", "c", "t", "ok", 40.0, 40.0, 1.0, 10.0, None, None, None, None, None, 1, None)]


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
    assert con.execute("SELECT run, label, format_version, mfu_pct_wall_min FROM history").fetchall() == \
        [(1, "v1", 2, None)]
    assert [c for c, in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'history' "
                                    "ORDER BY column_index").fetchall()][-1] == "mfu_pct_wall_min"
