"""history_older.sql: per job, the runs history_trend.sql leaves out, summarised, by hand."""

import duckdb
import pytest

from pipeline.trace import queries
from tests.test_sql_history_append import ROW


def test_the_runs_before_the_latest_summarised_per_job():
    """recent=2. Job a: runs 1-6, the latest two (5, 6) given in full; of runs 1-4, run 2 invalid (MFU 400) and run 3
    failed (no MFU): MFU of runs 1 and 4 (40, 30): least 30, median 35, greatest 40. Job b: two runs, none left out."""
    con = duckdb.connect()
    rows = [(1, "a", "ok", 40.0), (2, "a", "invalid", 400.0), (3, "a", "failed", None), (4, "a", "ok", 30.0),
            (5, "a", "ok", 31.0), (6, "a", "ok", 32.0), (7, "b", "ok", 20.0), (8, "b", "ok", 21.0)]
    for run, job, status, mfu in rows:
        queries.run(con, "history_append", run=run, **{**ROW, "job": job, "status": status, "mfu_pct_wall": mfu})
    got = queries.run(con, "history_older", recent=2)
    assert got == [{"job": "a", "runs": 4, "first_run": 1, "last_run": 4, "invalid_runs": 1, "failed_runs": 1,
                    "mfu_pct_wall_min": 30.0, "mfu_pct_wall_median": pytest.approx(35.0), "mfu_pct_wall_max": 40.0}]


def test_a_job_whose_left_out_runs_measured_nothing_has_no_mfu_range():
    con = duckdb.connect()
    for run, status, mfu in [(1, "failed", None), (2, "ok", 40.0)]:
        queries.run(con, "history_append", run=run, **{**ROW, "status": status, "mfu_pct_wall": mfu})
    [got] = queries.run(con, "history_older", recent=1)
    assert (got["runs"], got["failed_runs"], got["mfu_pct_wall_min"], got["mfu_pct_wall_median"],
            got["mfu_pct_wall_max"]) == (1, 1, None, None, None)
