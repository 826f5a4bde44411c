"""history_columns.sql: the `history` table's columns in one database, in order; a loaded copy apart from the file's."""

import duckdb

from pipeline.trace import queries
from tests.test_sql_history_append import V1_DDL


def test_columns_of_one_database(tmp_path):
    con = duckdb.connect(str(tmp_path / "h.duckdb"))
    con.execute(V1_DDL)
    con.execute("CREATE TEMP TABLE history (run INTEGER, extra VARCHAR)")
    own = queries.run(con, "history_columns", database="h")
    assert [r["column_name"] for r in own][:3] == ["run", "job", "config_sha256"] and len(own) == 10
    assert [(r["column_name"], r["data_type"]) for r in queries.run(con, "history_columns", database="temp")] == \
        [("run", "INTEGER"), ("extra", "VARCHAR")]
    assert queries.run(con, "history_columns", database="nope") == []
