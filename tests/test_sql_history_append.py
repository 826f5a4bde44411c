"""history_append.sql: creates the table once, appends rows."""

import duckdb

from pipeline.trace import queries

ROW = dict(job="a", config_sha256="c", trace_sha256="t", status="ok", mfu_pct_wall=40.0, hfu_pct_wall=40.0,
           step_time_median_s=1.0, tokens_per_s=10.0, straggler_s=None, label=None, samples_field="step_time_s",
           step_samples_s=[1.0, 1.1], mfu_samples_pct=[41.0, 39.0], format_version=4,
           mfu_pct_wall_min=None, comparability_inputs='{"GPU count": 8}', exit_code=None, error=None,
           what_ran='{"step_parts": []}')

# The table as formats 1 wrote it (before versioning): what history_migrate and the loaders must accept.
V1_DDL = ("CREATE TABLE history (run INTEGER, job VARCHAR, config_sha256 VARCHAR, trace_sha256 VARCHAR, "
          "status VARCHAR, mfu_pct_wall DOUBLE, hfu_pct_wall DOUBLE, step_time_median_s DOUBLE, "
          "tokens_per_s DOUBLE, straggler_s DOUBLE)")
V1_ROW = "INSERT INTO history VALUES (1, 'a', 'c', 't', 'ok', 40.0, 40.0, 1.0, 10.0, NULL)"


def test_appends_rows():
    con = duckdb.connect()
    queries.run(con, "history_append", run=1, **ROW)
    queries.run(con, "history_append", run=2, **{**ROW, "mfu_pct_wall": 41.0, "label": "abc123",
                                                  "step_samples_s": None, "mfu_samples_pct": None,
                                                  "mfu_pct_wall_min": 35.0})
    assert con.execute("SELECT run, mfu_pct_wall, label, step_samples_s, mfu_samples_pct, format_version, "
                       "mfu_pct_wall_min, comparability_inputs FROM history ORDER BY run").fetchall() == \
        [(1, 40.0, None, [1.0, 1.1], [41.0, 39.0], 4, None, '{"GPU count": 8}'),
         (2, 41.0, "abc123", None, None, 4, 35.0, '{"GPU count": 8}')]


def test_appends_to_a_migrated_format_1_table_by_column_name():
    con = duckdb.connect()
    con.execute(V1_DDL)
    con.execute(V1_ROW)
    queries.run(con, "history_migrate")
    queries.run(con, "history_append", run=2, **{**ROW, "label": "x", "mfu_pct_wall_min": 35.0})
    assert con.execute("SELECT run, label, step_samples_s, format_version, mfu_pct_wall_min, comparability_inputs "
                       "FROM history ORDER BY run").fetchall() == [(1, None, None, 1, None, None),
                                                                   (2, "x", [1.0, 1.1], 4, 35.0, '{"GPU count": 8}')]


def test_keeps_what_ran_and_a_format_4_table_from_before_it_gains_it_null():
    """what_ran (a nullable column within format 4) is stored as given; a table written before it gains it NULL
    (history_migrate.sql), so appending to it works and its old rows read 'not kept'."""
    con = duckdb.connect()
    queries.run(con, "history_append", run=1, **ROW)
    con.execute("ALTER TABLE history DROP COLUMN what_ran")            # as a format-4 table from before it
    queries.run(con, "history_migrate")
    queries.run(con, "history_append", run=2, **ROW)
    assert con.execute("SELECT run, what_ran FROM history ORDER BY run").fetchall() == [
        (1, None), (2, '{"step_parts": []}')]
