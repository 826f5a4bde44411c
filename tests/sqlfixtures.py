"""A hand-made `classified` table, its names and its unions for the SQL tests of issue #5 (no trace needed)."""

from __future__ import annotations

import duckdb

from pipeline.trace import chain

COLUMNS = ("occurrence BIGINT, global_pid BIGINT, device_id BIGINT, name_id BIGINT, start_ns BIGINT, end_ns BIGINT, "
           "stream_id BIGINT, comm_key UBIGINT")
NAME_COLUMNS = "name_id BIGINT, name VARCHAR, class VARCHAR, kind VARCHAR, precision VARCHAR"
# a classified row as the tests write it: the name's columns resolved
RESOLVED = "SELECT c.*, n.name, n.class, n.kind, n.precision FROM classified AS c JOIN kernel_names AS n USING (name_id)"


def plant(rows: list[tuple], streams: list[int | None] | None = None,
          comms: list[int | None] | None = None) -> duckdb.DuckDBPyConnection:
    """rows: (occurrence, global_pid, device_id, name, class, start_ns, end_ns[, precision]); kind follows the
    class; `streams`, one per row, their stream_id (else NULL); `comms` their comm_key (else NULL). `kernel_names` gets one id per distinct
    (name, class, kind, precision), `classified` one insert (a column list per parameter); then the window's unions and name times, as measure.analyse runs them."""
    full = [(o, g, d, (n, c, "memory" if c == "memory" else "kernel", *(p or [None])), s, e)
            for o, g, d, n, c, s, e, *p in rows]
    ids = {name: i for i, name in enumerate(dict.fromkeys(r[3] for r in full), start=1)}
    con = duckdb.connect()
    con.execute(f"CREATE TABLE kernel_names ({NAME_COLUMNS})")
    con.execute(f"CREATE TABLE classified ({COLUMNS})")
    if full:
        con.executemany("INSERT INTO kernel_names VALUES (?, ?, ?, ?, ?)", [(i, *name) for name, i in ids.items()])
        stream_ids, comm_keys = streams or [None] * len(full), comms or [None] * len(full)
        columns = zip(*[(o, g, d, ids[name], s, e, k) for (o, g, d, name, s, e), k in zip(full, stream_ids)])
        con.execute("INSERT INTO classified SELECT " + ", ".join("unnest(?::BIGINT[])" for _ in range(7))
                    + ", unnest(?::UBIGINT[])", [list(col) for col in columns] + [comm_keys])
    chain.run(con, {"window_unions", "name_times"}, comm_class="communication")
    return con


def classified(rows: list[tuple], streams: list[int | None] | None = None,
               comms: list[int | None] | None = None) -> duckdb.DuckDBPyConnection:
    """rows: (occurrence, device_id, name, class, start_ns, end_ns[, precision]), all of one process."""
    return plant([(o, 1, d, n, c, s, e, *p) for o, d, n, c, s, e, *p in rows], streams, comms)


def with_ranges(rows: list[tuple], ranges: list[tuple]) -> duckdb.DuckDBPyConnection:
    """`classified(rows)` plus selected_ranges (occurrence, pid, start_ns, end_ns) and the walls
    (kernel_union, occurrence_times), as measure.analyse leaves them for the timeline's queries."""
    con = classified(rows)
    con.execute("CREATE TABLE selected_ranges (occurrence BIGINT, pid BIGINT, start_ns BIGINT, end_ns BIGINT)")
    con.executemany("INSERT INTO selected_ranges VALUES (?, ?, ?, ?)", ranges)
    chain.run(con, {"kernel_union", "occurrence_times"})
    return con
