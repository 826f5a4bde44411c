"""history_copy.sql: a read-only DuckDB history copied into a temporary table that shadows the file's."""

import duckdb

from pipeline.trace import queries
from tests.test_sql_history_append import V1_DDL, V1_ROW


def test_copy_shadows_the_file_table_and_can_be_migrated(tmp_path):
    path = tmp_path / "h.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(V1_DDL)
        con.execute(V1_ROW)
    before = path.read_bytes()
    con = duckdb.connect(str(path), read_only=True)
    queries.run(con, "history_copy")
    queries.run(con, "history_migrate")                        # on the copy: the file is read-only
    assert con.execute("SELECT run, label, format_version FROM history").fetchall() == [(1, None, 1)]
    assert con.execute("SELECT count(*) FROM main.history").fetchall() == [(1,)]
    con.close()
    assert path.read_bytes() == before
