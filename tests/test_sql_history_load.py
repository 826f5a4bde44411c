"""history_load.sql: Parquet files written from history_append rows read back as one `history` table."""

import duckdb
import pytest

from pipeline.trace import queries
from tests.test_sql_history_append import ROW


def _file(path, run, mfu):
    con = duckdb.connect()
    queries.run(con, "history_append", run=run, **{**ROW, "mfu_pct_wall": mfu})
    con.table("history").write_parquet(str(path))


def test_files_become_one_table_with_the_append_types(tmp_path):
    _file(tmp_path / "one.parquet", 1, 40.0)
    _file(tmp_path / "two.parquet", 2, 41.5)
    con = duckdb.connect()
    queries.run(con, "history_load", files=[str(tmp_path / "one.parquet"), str(tmp_path / "two.parquet")])
    assert con.execute("SELECT run, job, mfu_pct_wall, straggler_s FROM history ORDER BY run").fetchall() == \
        [(1, "a", 40.0, None), (2, "a", 41.5, None)]
    types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                             "WHERE table_name = 'history'").fetchall())
    assert types["run"] == "INTEGER" and types["job"] == "VARCHAR" and types["straggler_s"] == "DOUBLE"


def test_a_parquet_file_that_is_not_a_history_fails(tmp_path):
    duckdb.connect().sql("SELECT 1 AS x").write_parquet(str(tmp_path / "other.parquet"))
    with pytest.raises(duckdb.BinderException, match="run"):
        queries.run(duckdb.connect(), "history_load", files=[str(tmp_path / "other.parquet")])
