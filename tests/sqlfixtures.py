"""A hand-made `classified` table (and its unions) for the SQL tests of issue #5 (no trace needed)."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

COLUMNS = "occurrence BIGINT, global_pid BIGINT, device_id BIGINT, name VARCHAR, class VARCHAR, " \
          "kind VARCHAR, start_ns BIGINT, end_ns BIGINT, precision VARCHAR"
TYPES = [c.split()[1] for c in COLUMNS.split(", ")]


def plant(rows: list[tuple]) -> duckdb.DuckDBPyConnection:
    """rows: (occurrence, global_pid, device_id, name, class, start_ns, end_ns[, precision]); kind follows the
    class. One insert (a column list per parameter), then the window's unions, as measure.analyse runs them."""
    full = [(o, g, d, n, c, "memory" if c == "memory" else "kernel", s, e, *(p or [None]))
            for o, g, d, n, c, s, e, *p in rows]
    con = duckdb.connect()
    con.execute(f"CREATE TABLE classified ({COLUMNS})")
    if full:
        con.execute("INSERT INTO classified SELECT " + ", ".join(f"unnest(?::{t}[])" for t in TYPES),
                    [list(col) for col in zip(*full)])
    queries.run(con, "window_unions", comm_class="communication")
    return con


def classified(rows: list[tuple]) -> duckdb.DuckDBPyConnection:
    """rows: (occurrence, device_id, name, class, start_ns, end_ns[, precision]), all of one process."""
    return plant([(o, 1, d, n, c, s, e, *p) for o, d, n, c, s, e, *p in rows])


def merge(intervals: list[tuple[int, int]]) -> int:
    """Reference union: sort, extend the current island while the next starts at or before its end."""
    islands: list[list[int]] = []
    for s, e in sorted(intervals):
        if islands and s <= islands[-1][1]:
            islands[-1][1] = max(islands[-1][1], e)
        else:
            islands.append([s, e])
    return sum(e - s for s, e in islands)
