"""interval_union (pipeline/trace/sql/macros.sql): the union algorithm every union query uses."""

from __future__ import annotations

import random

import duckdb

from pipeline.trace import queries


def unions(rows: list[tuple[str, int, int]]) -> list[tuple]:
    """(group, start, end) rows -> (group, union, sum, count, last end) per group."""
    con = duckdb.connect()
    queries.run(con, "macros")
    con.execute("CREATE TABLE t (scope VARCHAR, k1 BIGINT, k2 BIGINT, start_ns BIGINT, end_ns BIGINT)")
    if rows:
        con.executemany("INSERT INTO t VALUES ('s', NULL, ?, ?, ?)", [(ord(g), s, e) for g, s, e in rows])
    return [(chr(k2), *rest) for k2, *rest in con.execute(
        "SELECT k2, union_ns, sum_ns, interval_count, last_end_ns FROM interval_union('t') ORDER BY k2").fetchall()]


def test_overlap_touch_gap_and_groups_by_hand():
    # a: [0,10) and [5,20) overlap -> 0-20 (sum 10+15); [20,25) touches -> merges: 25;
    #    [30,31) after a gap -> +1.  b: its own group, same times, no merging with a.
    rows = [("a", 0, 10), ("a", 5, 20), ("a", 20, 25), ("a", 30, 31), ("b", 0, 3)]
    assert unions(rows) == [("a", 26, 31, 4, 31), ("b", 3, 3, 1, 3)]


def test_running_maximum_not_just_the_previous_interval():
    # [0,100) covers [10,20); [50,60) starts before 100, so it adds nothing.
    assert unions([("g", 0, 100), ("g", 10, 20), ("g", 50, 60)]) == [("g", 100, 120, 3, 100)]


def test_equal_starts_in_any_order():
    # the order among equal starts is not fixed by the sort; the union must not depend on it
    assert unions([("g", 5, 6), ("g", 5, 30), ("g", 5, 10), ("g", 30, 31)]) == [("g", 26, 32, 4, 31)]


def test_empty_input():
    assert unions([]) == []


def test_random_against_sort_and_merge():
    rng = random.Random(7)
    rows = [("g", s, s + rng.randint(0, 50)) for s in (rng.randint(0, 2_000) for _ in range(400))]
    union, cur = 0, None
    for s, e in sorted((s, e) for _, s, e in rows):
        if cur is None or s > cur[1]:
            union += 0 if cur is None else cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    union += cur[1] - cur[0]
    assert unions(rows)[0][1] == union


def _overlaps(ranges: list[tuple[int, int, int, int]], rows: list[tuple[str, int, int]]) -> list[tuple]:
    """overlapping_ranges over `rows` (name, start, end), the ranges (occurrence, pid, start, end) selected."""
    con = duckdb.connect()
    queries.run(con, "macros")
    con.execute("CREATE TABLE region_ranges (occurrence BIGINT, global_pid BIGINT, start_ns BIGINT, end_ns BIGINT)")
    con.executemany("INSERT INTO region_ranges VALUES (?, ?, ?, ?)", ranges)
    queries.run(con, "select_occurrences", first=1, last=len(ranges))
    con.execute("CREATE TABLE t (name VARCHAR, start_ns BIGINT, end_ns BIGINT)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    return con.execute("SELECT name, occurrence, range_pid, range_start_ns FROM overlapping_ranges(t) "
                       "ORDER BY ALL").fetchall()


def test_overlapping_ranges_each_pair_once():
    # process 1: 0-100, 100-300 (touching), 5000-5010 after a long gap; process 2: 50-60
    ranges = [(1, 1, 0, 100), (2, 1, 100, 300), (3, 1, 5000, 5010), (1, 2, 50, 60)]
    rows = [("across_touch", 90, 110), ("zero_at_touch", 100, 100), ("everything", 0, 6000),
            ("touches_end", 300, 400), ("both_processes", 55, 56), ("in_gap", 1000, 2000)]
    assert _overlaps(ranges, rows) == [
        ("across_touch", 1, 1, 0), ("across_touch", 2, 1, 100),
        ("both_processes", 1, 1, 0), ("both_processes", 1, 2, 50),
        ("everything", 1, 1, 0), ("everything", 1, 2, 50), ("everything", 2, 1, 100), ("everything", 3, 1, 5000),
    ]


def test_overlapping_ranges_against_every_pair():
    """Random ranges and rows of two processes: the bucketed join finds exactly the overlapping pairs."""
    rng = random.Random(11)
    ranges = []
    for pid in (1, 2):
        start = rng.randint(0, 50)
        for occurrence in range(1, 41):
            length = rng.choice((1, 5, 40, 300))
            ranges.append((occurrence, pid, start, start + length))
            start += rng.randint(-length // 2, 400)          # some overlap the next, some far apart
    rows = [(f"r{i}", s, s + rng.choice((0, 3, 50, 2_000))) for i, s in
            enumerate(rng.randint(-100, 9_000) for _ in range(300))]
    expected = sorted((n, o, p, rs) for n, s, e in rows for o, p, rs, re_ in ranges if s < re_ and e > rs)
    assert _overlaps(ranges, rows) == expected
