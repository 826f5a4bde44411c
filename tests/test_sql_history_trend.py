"""history_trend.sql: changes against each job's own previous run, by hand."""

import duckdb
import pytest

from pipeline.trace import queries
from tests.test_sql_history_append import ROW


def test_change_since_previous_run_per_job():
    con = duckdb.connect()
    for run, job, mfu, step in [(1, "a", 40.0, 1.0), (1, "b", 30.0, 2.0), (2, "a", 38.0, 1.1), (3, "b", 33.0, 1.8)]:
        queries.run(con, "history_append", run=run, **{**ROW, "job": job, "mfu_pct_wall": mfu,
                                                       "step_time_median_s": step})
    got = [(r["job"], r["run"], r["mfu_change_pt"], r["step_change_pct"]) for r in queries.run(con, "history_trend", recent=100)]
    assert got[0] == ("a", 1, None, None) and got[2] == ("b", 1, None, None)
    assert got[1][:3] == ("a", 2, pytest.approx(-2.0)) and got[1][3] == pytest.approx(10.0)
    assert got[3][:3] == ("b", 3, pytest.approx(3.0)) and got[3][3] == pytest.approx(-10.0)


def test_an_invalid_run_has_no_change_and_the_next_is_compared_with_the_last_valid_run():
    con = duckdb.connect()
    for run, status, mfu, step, config in [(1, "ok", 40.0, 1.0, "c1"), (2, "invalid", 400.0, 0.1, "c2"),
                                           (3, "threshold", 30.0, 1.2, "c3")]:
        queries.run(con, "history_append", run=run, **{**ROW, "status": status, "mfu_pct_wall": mfu,
                                                       "step_time_median_s": step, "config_sha256": config})
    got = [(r["run"], r["mfu_change_pt"], r["step_change_pct"], r["previous_config_sha256"])
           for r in queries.run(con, "history_trend", recent=100)]
    assert got[0] == (1, None, None, None)
    assert got[1] == (2, None, None, "c1")                   # invalid: no change; its hashes still against run 1
    # run 3 against run 1: 30 - 40 = -10 pt; 1.2 / 1.0 - 1 = +20 %
    assert got[2][0] == 3 and got[2][1] == pytest.approx(-10.0) and got[2][2] == pytest.approx(20.0)
    assert got[2][3] == "c1"


def test_both_runs_comparability_inputs_and_the_run_compared_with():
    """history.py applies compare's rules to these two; an invalid run between is skipped as before."""
    con = duckdb.connect()
    for run, status, inputs in [(1, "ok", '{"GPU count": 8}'), (2, "invalid", '{"GPU count": 4}'),
                                (3, "ok", '{"GPU count": 16}')]:
        queries.run(con, "history_append", run=run, **{**ROW, "status": status, "comparability_inputs": inputs})
    got = [(r["run"], r["previous_run"], r["comparability_inputs"], r["previous_comparability_inputs"])
           for r in queries.run(con, "history_trend", recent=100)]
    assert got == [(1, None, '{"GPU count": 8}', None), (2, 1, '{"GPU count": 4}', '{"GPU count": 8}'),
                   (3, 1, '{"GPU count": 16}', '{"GPU count": 8}')]


def test_a_failed_run_has_no_change_and_is_no_baseline():
    """Format 4: a job that failed without a result (no figures) is skipped as an invalid run is."""
    con = duckdb.connect()
    queries.run(con, "history_append", run=1, **ROW)
    queries.run(con, "history_append", run=2, **{**ROW, "status": "failed", "mfu_pct_wall": None,
                                                  "step_time_median_s": None, "trace_sha256": None,
                                                  "exit_code": 4, "error": "t.sqlite: no NVTX range"})
    queries.run(con, "history_append", run=3, **{**ROW, "mfu_pct_wall": 36.0, "step_time_median_s": 1.25})
    got = [(r["run"], r["status"], r["previous_run"], r["mfu_change_pt"], r["step_change_pct"], r["exit_code"],
            r["error"]) for r in queries.run(con, "history_trend", recent=100)]
    # run 3 against run 1: 36 - 40 = -4 pt; 1.25 / 1.0 - 1 = +25 %
    assert got == [(1, "ok", None, None, None, None, None), (2, "failed", 1, None, None, 4, "t.sqlite: no NVTX range"),
                   (3, "ok", 1, pytest.approx(-4.0), pytest.approx(25.0), None, None)]


def test_only_the_latest_runs_of_each_job_and_their_previous_runs_among_all():
    """recent=2: job a's runs 3 and 5 of 1, 3, 5 (run 5 against 3, run 3 against 1, which is left out); job b's one
    run 2 is its own latest."""
    con = duckdb.connect()
    for run, job, mfu in [(1, "a", 40.0), (2, "b", 30.0), (3, "a", 38.0), (5, "a", 39.0)]:
        queries.run(con, "history_append", run=run, **{**ROW, "job": job, "mfu_pct_wall": mfu})
    got = [(r["job"], r["run"], r["previous_run"], r["mfu_change_pt"])
           for r in queries.run(con, "history_trend", recent=2)]
    assert got == [("a", 3, 1, pytest.approx(-2.0)), ("a", 5, 3, pytest.approx(1.0)), ("b", 2, None, None)]
