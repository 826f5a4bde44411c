"""nested_counts.sql: per process, the ranges folded into an outer one, for the nested_occurrences warning."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries


def test_counts_per_process_with_an_example_by_hand():
    con = duckdb.connect()
    con.execute("CREATE TABLE nested_ranges (global_pid BIGINT, pid BIGINT, global_tid BIGINT, start_ns BIGINT, "
                "end_ns BIGINT, name VARCHAR)")
    con.executemany("INSERT INTO nested_ranges VALUES (?, ?, ?, ?, ?, ?)", [
        (20 << 24, 20, (20 << 24) + 1, 10, 20, "step b"),
        (10 << 24, 10, (10 << 24) + 1, 10, 20, "step z"),
        (10 << 24, 10, (10 << 24) + 2, 30, 40, "step a"),
        ((1 << 56) | (10 << 24), 10, (1 << 56) | (10 << 24) | 1, 5, 6, "step"),   # pid 10 on another host
    ])
    # ordered by pid, then process key: host 0's pid 10 (2 ranges, first name 'step a'), host 1's pid 10, pid 20
    assert queries.run(con, "nested_counts") == [
        {"pid": 10, "nested": 2, "example": "step a"}, {"pid": 10, "nested": 1, "example": "step"},
        {"pid": 20, "nested": 1, "example": "step b"}]


def test_nothing_nested_is_no_row():
    con = duckdb.connect()
    con.execute("CREATE TABLE nested_ranges (global_pid BIGINT, pid BIGINT, name VARCHAR)")
    assert queries.run(con, "nested_counts") == []
