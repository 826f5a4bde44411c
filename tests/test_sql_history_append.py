"""history_append.sql: creates the table once, appends rows."""

import duckdb

from pipeline.trace import queries

ROW = dict(job="a", config_sha256="c", trace_sha256="t", status="ok", mfu_pct_wall=40.0, hfu_pct_wall=40.0,
           step_time_median_s=1.0, tokens_per_s=10.0, straggler_s=None)


def test_appends_rows():
    con = duckdb.connect()
    queries.run(con, "history_append", run=1, **ROW)
    queries.run(con, "history_append", run=2, **{**ROW, "mfu_pct_wall": 41.0})
    assert con.execute("SELECT run, mfu_pct_wall FROM history ORDER BY run").fetchall() == [(1, 40.0), (2, 41.0)]
