"""Macros of pipeline/trace/sql/macros.sql: time_buckets and overlapping_ranges (linear in ranges)."""

from __future__ import annotations

import random

import duckdb

from pipeline.trace import queries


def _buckets(ranges: list[tuple[int, int]]) -> list[tuple[int, int, int, int]]:
    """time_buckets over ranges (start, end): (start, end, width, bucket) rows."""
    con = duckdb.connect()
    queries.run(con, "macros")
    con.execute("CREATE TABLE r (start_ns BIGINT, end_ns BIGINT)")
    if ranges:
        con.executemany("INSERT INTO r VALUES (?, ?)", ranges)
    return con.execute("SELECT start_ns, end_ns, width_ns, bucket FROM time_buckets(r) ORDER BY ALL").fetchall()


def test_time_buckets_by_hand():
    # mean length (10 + 30) // 2 = 20; envelope 0-100 over 2 ranges = 50: the wider, 50.
    # [0,10] lies in bucket 0; [70,100] touches buckets 1 (50-99) and 2 (its end, 100).
    assert _buckets([(0, 10), (70, 100)]) == [(0, 10, 50, 0), (70, 100, 50, 1), (70, 100, 50, 2)]
    # dense ranges: mean length 40 beats the envelope 0-90 over 3 ranges (30)
    assert [(s, b) for s, _, w, b in _buckets([(0, 40), (25, 65), (50, 90)]) if w == 40] == [
        (0, 0), (0, 1), (25, 0), (25, 1), (50, 1), (50, 2)]


def test_time_buckets_of_nothing():
    assert _buckets([]) == []


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


def test_numbered_key_and_label_by_hand():
    """The last run of digits, followed by nothing but spaces or punctuation, is the name's number."""
    con = duckdb.connect()
    queries.run(con, "macros")
    got = {n: con.execute("SELECT numbered_key(?), numbered_label(?)", [n, n]).fetchone() for n in (
        "ProfilerStep#7", "step 12", "iter_3", "Warm-up Step 1", "x9)", "conv2d", "/layer1/conv1/Conv", "step",
        "step 12, seq = 4, op_id = 5")}
    assert got == {"ProfilerStep#7": ("ProfilerStep#0", "ProfilerStep#<n>"), "step 12": ("step 0", "step <n>"),
                   "iter_3": ("iter_0", "iter_<n>"), "Warm-up Step 1": ("Warm-up Step 0", "Warm-up Step <n>"),
                   "x9)": ("x0)", "x<n>)"), "conv2d": ("conv2d", "conv2d"),
                   "/layer1/conv1/Conv": ("/layer1/conv1/Conv", "/layer1/conv1/Conv"), "step": ("step", "step"),
                   "step 12, seq = 4, op_id = 5": ("step 0", "step <n>")}
