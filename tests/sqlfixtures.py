"""A hand-made `classified` table (and its unions) for the SQL tests of issue #5 (no trace needed)."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

COLUMNS = "occurrence BIGINT, global_pid BIGINT, device_id BIGINT, name VARCHAR, class VARCHAR, " \
          "kind VARCHAR, start_ns BIGINT, end_ns BIGINT, precision VARCHAR"


def classified(rows: list[tuple]) -> duckdb.DuckDBPyConnection:
    """rows: (occurrence, device_id, name, class, start_ns, end_ns[, precision]); kind follows the class."""
    con = duckdb.connect()
    con.execute(f"CREATE TABLE classified ({COLUMNS})")
    if rows:
        con.executemany("INSERT INTO classified VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)",
                        [(o, d, n, c, "memory" if c == "memory" else "kernel", s, e, *(p or [None]))
                         for o, d, n, c, s, e, *p in rows])
    queries.run(con, "classified_unions", comm_class="communication")   # as classes.classify leaves it
    return con
