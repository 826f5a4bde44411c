"""history_load.sql: Parquet files of either format read back as one temporary `history` table."""

import duckdb

from pipeline import history
from pipeline.trace import queries
from tests.test_sql_history_append import ROW, V1_DDL, V1_ROW


def _file(path, run, mfu):
    con = duckdb.connect()
    queries.run(con, "history_append", run=run, **{**ROW, "mfu_pct_wall": mfu})
    con.table("history").write_parquet(str(path))


def _v1_file(path):
    con = duckdb.connect()
    con.execute(V1_DDL)
    con.execute(V1_ROW)
    con.table("history").write_parquet(str(path))


def test_files_become_one_table_with_the_append_types(tmp_path):
    _file(tmp_path / "one.parquet", 1, 40.0)
    _file(tmp_path / "two.parquet", 2, 41.5)
    con = duckdb.connect()
    queries.run(con, "history_load", files=[str(tmp_path / "one.parquet"), str(tmp_path / "two.parquet")])
    assert con.execute("SELECT run, job, mfu_pct_wall, straggler_s, step_samples_s FROM history ORDER BY run"
                       ).fetchall() == [(1, "a", 40.0, None, [1.0, 1.1]), (2, "a", 41.5, None, [1.0, 1.1])]
    types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                             "WHERE table_name = 'history'").fetchall())
    assert types["run"] == "INTEGER" and types["straggler_s"] == "DOUBLE" and types["step_samples_s"] == "DOUBLE[]"


def test_format_1_and_4_files_mix(tmp_path):
    _v1_file(tmp_path / "old.parquet")
    _file(tmp_path / "new.parquet", 2, 41.5)
    con = duckdb.connect()
    queries.run(con, "history_load", files=[str(tmp_path / "old.parquet"), str(tmp_path / "new.parquet")])
    assert con.execute("SELECT run, step_samples_s, format_version, comparability_inputs FROM history "
                       "ORDER BY run").fetchall() == [(1, None, None, None), (2, [1.0, 1.1], 4, '{"GPU count": 8}')]
    assert history.table_version(con, "temp") == 4


def test_a_parquet_file_that_is_not_a_history_has_no_version(tmp_path):
    duckdb.connect().sql("SELECT 1 AS x").write_parquet(str(tmp_path / "other.parquet"))
    con = duckdb.connect()
    queries.run(con, "history_load", files=[str(tmp_path / "other.parquet")])
    assert history.table_version(con, "temp") is None
