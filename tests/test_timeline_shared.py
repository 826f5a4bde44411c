"""A shared window's job takes its timeline step's rows from the window's rows sorted once (timeline._step_from_sorted):
the tables it makes must be those of timeline_islands.sql and timeline_busy.sql, row for row."""

from __future__ import annotations

import pytest

from pipeline.analysis import timeline
from pipeline.analysis.measure import SortedRows
from pipeline.trace import chain, queries
from tests.sqlfixtures import with_ranges
from tests.test_sql_timeline_busy import RANGES, ROWS

COMM = "communication"
# beside test_sql_timeline_busy's step: a copy running past the wall (1120), one wholly after it, a copy inside
# another copy, a communication kernel starting before the step, and a device the timeline does not draw
MORE = [(2, 0, "[CUDA memcpy]", "memory", 1100, 1200), (2, 0, "[CUDA memcpy]", "memory", 1130, 1140),
        (2, 0, "[CUDA memset]", "memory", 1082, 1085),
        (2, 1, "nccl", COMM, 990, 1004), (2, 2, "gemm", "gemm", 1010, 1020), (3, 1, "gemm", "gemm", 5000, 5100)]


def _tables(con) -> dict[str, list[tuple]]:
    return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("timeline_islands", "timeline_busy")}


@pytest.mark.parametrize("gap", [1, 5, 40])
def test_the_sorted_rows_make_the_tables_the_queries_make(gap):
    con = with_ranges(ROWS + MORE, RANGES)
    step = con.execute("SELECT occurrence, start_ns, wall_ns FROM occurrence_times WHERE occurrence = 2").fetchone()
    assert step == (2, 1000, 120)             # the wall: the last kernel's end, not the copy's
    params = {"occurrence": 2, "devices": [0, 1], "min_gap_ns": gap, "comm_class": COMM}
    chain.run(con, {"timeline_islands", "timeline_busy"}, **params)
    by_queries = _tables(con)
    assert by_queries["timeline_islands"] and by_queries["timeline_busy"]
    rows = SortedRows(queries.sort_unions(con, "window_unions", "occurrence", comm_class=COMM))
    con.execute("DROP TABLE timeline_islands; DROP TABLE timeline_busy")
    timeline._step_from_sorted(con, rows, {"occurrence": 2, "start_ns": 1000, "wall_ns": 120}, [0, 1], gap)
    assert _tables(con) == by_queries


def test_an_occurrence_without_rows_makes_empty_tables():
    con = with_ranges(ROWS, RANGES)
    rows = SortedRows(queries.sort_unions(con, "window_unions", "occurrence", comm_class=COMM))
    timeline._step_from_sorted(con, rows, {"occurrence": 7, "start_ns": 0, "wall_ns": 10}, [0, 1], 1)
    assert _tables(con) == {"timeline_islands": [], "timeline_busy": []}
