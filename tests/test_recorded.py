"""trace/recorded.py: rows recorded by one run are answered again, exactly, to a run asking the same
query with the same parameters; anything else is NotRecorded; a value JSON cannot give back as it was
makes the recording unkeepable instead of kept altered."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from pipeline.trace import queries, recorded


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("CREATE TABLE classified AS SELECT * FROM (VALUES (1, 0, 10, 0), (1, 5, 30, 1), (2, 0, 7, 0)) "
                "AS t(occurrence, start_ns, end_ns, name_id)")
    con.execute("CREATE TABLE kernel_names AS SELECT * FROM (VALUES (0, 'gemm', 'gemm', 'kernel', 'bf16'), "
                "(1, 'nccl', 'communication', 'kernel', NULL)) AS t(name_id, name, class, kind, precision)")
    queries.run(con, "name_times")
    yield con
    con.close()


TOP = {"limit": 5, "class": None}


def test_a_replay_answers_the_recorded_rows_without_the_tables(con):
    with recorded.recording() as rec:
        rows = queries.run(con, "top_kernels", **TOP)
        rows[0]["changed"] = True                               # recorded as returned, not as changed later
    del rows[0]["changed"]
    assert rec.keepable and len(rec.calls) == 1
    assert rows == [{"name": "nccl", "class": "communication", "kernel_count": 1, "sum_ns": 25},
                    {"name": "gemm", "class": "gemm", "kernel_count": 2, "sum_ns": 17}]
    con.execute("DROP TABLE name_times")                        # a replay never reads it
    with recorded.replaying(rec.calls):
        replayed = queries.run(con, "top_kernels", **TOP)
        replayed[0]["changed"] = True                           # callers get their own copy
        assert queries.run(con, "top_kernels", **TOP) == rows
    assert replayed[0].pop("changed") and replayed == rows
    assert [type(v) for v in replayed[0].values()] == [type(v) for v in rows[0].values()]


def test_another_query_or_other_parameters_are_not_recorded(con):
    with recorded.recording() as rec:
        queries.run(con, "top_kernels", limit=1, **{"class": None})
    with recorded.replaying(rec.calls):
        with pytest.raises(recorded.NotRecorded):
            queries.run(con, "top_kernels", limit=2, **{"class": None})
        with pytest.raises(recorded.NotRecorded):
            queries.run(con, "precision_times", names=2)
    assert len(queries.run(con, "top_kernels", limit=2, **{"class": None})) == 2   # outside a replay: run for real


@pytest.mark.parametrize("value", [(1, 2), Decimal("1.5"), {1: "a"}, [1, (2,)]])
def test_rows_json_would_change_make_the_recording_unkeepable(value):
    with recorded.recording() as rec:
        recorded.note("q", {}, [{"a": 1}])
        recorded.note("r", {}, [{"a": value}])
    assert not rec.keepable


def test_parameters_json_would_change_make_the_recording_unkeepable():
    with recorded.recording() as rec:
        recorded.note("q", {"devices": (0, 1)}, [])
    assert not rec.keepable


def test_a_table_kept_in_python_cannot_be_replayed():
    with recorded.recording() as rec:
        recorded.not_replayable("window_unions")
    assert not rec.keepable
    with recorded.replaying({"x": "[]"}), pytest.raises(recorded.NotRecorded):
        recorded.not_replayable("window_unions")
    recorded.not_replayable("window_unions")                     # neither recording nor replaying: nothing
