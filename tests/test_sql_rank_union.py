"""rank_union.sql: each rank's own kernel union per occurrence, by hand."""

from __future__ import annotations

import duckdb

from pipeline.trace import chain


def test_union_per_rank_and_occurrence():
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE attributed (occurrence BIGINT, global_pid BIGINT, device_id BIGINT, "
                "stream_id BIGINT, name_id BIGINT, start_ns BIGINT, end_ns BIGINT)")
    rows = [(1, 10, 0, 7, 1, 0, 100), (1, 10, 0, 13, 1, 50, 150),   # overlap: union 150
            (1, 10, 0, 7, 1, 150, 160),                              # touching: merges, 160
            (1, 10, 0, 7, 1, 200, 210),                              # gap: +10 -> 170
            (1, 20, 1, 7, 1, 0, 1000),                               # another rank, same occurrence
            (2, 10, 0, 7, 1, 500, 530)]
    con.executemany("INSERT INTO attributed VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    got = chain.run(con, {"attributed_unions", "rank_union"})["rank_union"]
    assert got == [{"occurrence": 1, "global_pid": 10, "union_ns": 170},
                   {"occurrence": 1, "global_pid": 20, "union_ns": 1000},
                   {"occurrence": 2, "global_pid": 10, "union_ns": 30}]
