"""interval_islands (pipeline/trace/sql/macros.sql): the union algorithm every union query uses."""

from __future__ import annotations

import random

import duckdb

from pipeline.trace import queries


def islands(rows: list[tuple[str, int, int]]) -> list[tuple]:
    con = duckdb.connect()
    queries.run(con, "macros")
    con.execute("CREATE TABLE t (grp VARCHAR, start_ns BIGINT, end_ns BIGINT)")
    if rows:
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    return con.execute("SELECT grp, start_ns, end_ns, sum_ns, interval_count FROM interval_islands('t') "
                       "ORDER BY grp, start_ns").fetchall()


def test_overlap_touch_gap_and_groups_by_hand():
    # a: [0,10) and [5,20) overlap -> one island 0-20 (sum 10+15); [20,25) touches -> merges;
    #    [30,31) after a gap -> its own island.  b: its own partition, same times, no merging with a.
    rows = [("a", 0, 10), ("a", 5, 20), ("a", 20, 25), ("a", 30, 31), ("b", 0, 3)]
    assert islands(rows) == [("a", 0, 25, 30, 3), ("a", 30, 31, 1, 1), ("b", 0, 3, 3, 1)]


def test_running_maximum_not_just_the_previous_interval():
    # [0,100) covers [10,20); [50,60) starts before 100, so it stays in the first island.
    assert islands([("g", 0, 100), ("g", 10, 20), ("g", 50, 60)]) == [("g", 0, 100, 120, 3)]


def test_empty_input():
    assert islands([]) == []


def test_random_against_sort_and_merge():
    rng = random.Random(7)
    rows = [("g", s, s + rng.randint(1, 50)) for s in (rng.randint(0, 2_000) for _ in range(400))]
    union, cur = 0, None
    for s, e in sorted((s, e) for _, s, e in rows):
        if cur is None or s > cur[1]:
            union += 0 if cur is None else cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    union += cur[1] - cur[0]
    assert sum(e - s for _, s, e, _, _ in islands(rows)) == union
