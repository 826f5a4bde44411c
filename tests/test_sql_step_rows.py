"""step_rows.sql: step_unions.sql's rows are the window's classified rows, as they are (a view, nothing copied)."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def test_every_classified_row_once_and_a_view():
    con = classified([(1, 0, "gemm", "gemm", 10, 80), (2, 1, "[CUDA memcpy]", "memory", 90, 100)])
    queries.run(con, "step_rows")
    got = con.execute("SELECT occurrence, start_ns, end_ns FROM step_rows ORDER BY occurrence").fetchall()
    assert got == [(1, 10, 80), (2, 90, 100)]
    con.execute("INSERT INTO classified SELECT * REPLACE (3 AS occurrence) FROM classified WHERE occurrence = 1")
    assert con.execute("SELECT count(*) FROM step_rows").fetchone() == (3,)      # a view: it follows the table
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'step_rows'").fetchone() == (1,)
