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
    assert cols[10:] == ["label", "samples_field", "step_samples_s", "mfu_samples_pct", "format_version"]
    assert con.execute("SELECT * FROM history").fetchall() == \
        [(1, "a", "c", "t", "ok", 40.0, 40.0, 1.0, 10.0, None, None, None, None, None, 1)]
