"""history_version.sql: the newest format a row was written in; rows without a marker are format 1."""

import duckdb

from pipeline.trace import queries
from tests.test_sql_history_append import ROW, V1_DDL, V1_ROW


def test_newest_marker_and_unmarked_rows():
    con = duckdb.connect()
    con.execute(V1_DDL)
    con.execute(V1_ROW)
    con.execute("ALTER TABLE history ADD COLUMN format_version INTEGER")          # NULL: written before markers
    assert queries.run(con, "history_version") == [{"version": 1}]
    con.execute("DROP TABLE history")
    queries.run(con, "history_append", run=1, **ROW)
    assert queries.run(con, "history_version") == [{"version": 4}]
