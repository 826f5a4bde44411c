"""occurrence_spans.sql: the time the selected occurrences span, as unions (span_unions, docs/figures.md §6)."""

from __future__ import annotations

import duckdb

from pipeline.trace import chain


def test_envelopes_and_ranges_unioned_by_hand():
    con = duckdb.connect()
    con.execute("CREATE TABLE occurrence_times (occurrence BIGINT, start_ns BIGINT, wall_ns BIGINT, "
                "cpu_start_ns BIGINT, cpu_range_ns BIGINT)")
    con.executemany("INSERT INTO occurrence_times VALUES (?, ?, ?, ?, ?)", [
        (1, 0, 1800, 0, 1000),          # envelope 0..1800, range 0..1000
        (2, 1000, 1600, 1000, 1000),    # envelope 1000..2600 overlaps 1; range 1000..2000 touches 1's
        (3, 5000, 500, 5100, 200),      # apart: envelope 5000..5500, range 5100..5300
    ])
    chain.run(con, {"occurrence_spans"})
    got = con.execute("SELECT scope, k1, union_ns, sum_ns, interval_count, last_end_ns FROM span_unions "
                      "ORDER BY k1").fetchall()
    assert got == [("span", 0, 2600 + 500, 1800 + 1600 + 500, 3, 5500),     # 0..2600 and 5000..5500
                   ("span", 1, 2000 + 200, 1000 + 1000 + 200, 3, 5300)]     # 0..2000 and 5100..5300
