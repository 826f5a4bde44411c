"""A window shared by several jobs, and one job's cut of it, for the SQL tests of the shared steps
(step_share.sql, step_redo.sql, step_merge.sql): planted rows, no trace needed."""

from __future__ import annotations

import duckdb

from pipeline.trace import chain, queries
from tests.sqlfixtures import with_ranges

PARAMS = {"comm_class": "communication", "gemm_classes": ["gemm", "convolution"], "attention_classes": ["attention"]}
PARTS = ("gemm", "attention", "other_compute", "mixed_compute", "comm", "comm_overlap", "memory", "idle")


def alone(rows: list[tuple], ranges: list[tuple], first: int, last: int) -> list[dict]:
    """step_parts.sql's rows of a job's own window over occurrences first..last (the usual path)."""
    con = with_ranges([r for r in rows if first <= r[0] <= last], [r for r in ranges if first <= r[0] <= last])
    return chain.run(con, {"step_rows", "step_unions", "step_parts"}, **PARAMS)["step_parts"]


def shared(rows: list[tuple], ranges: list[tuple]) -> duckdb.DuckDBPyConnection:
    """The whole window's steps cut once (step_share.sql), its tables left as a shared window leaves them."""
    con = with_ranges(rows, ranges)
    chain.run(con, {"step_rows", "step_unions", "step_share"}, **PARAMS)
    con.execute("ALTER TABLE classified RENAME TO all_classified")
    con.execute("ALTER TABLE selected_ranges RENAME TO all_ranges")
    return con


def cut(con: duckdb.DuckDBPyConnection, first: int, last: int) -> None:
    """The job's window as window_cut.sql shows it (views of its occurrences' rows), and its walls and steps."""
    for view, table in (("classified", "all_classified"), ("selected_ranges", "all_ranges")):
        con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM {table} "
                    f"WHERE occurrence BETWEEN {first} AND {last}")
    chain.run(con, {"window_unions", "kernel_union", "occurrence_times"}, comm_class="communication")


def redone(con: duckdb.DuckDBPyConnection, first: int, last: int) -> tuple[list[dict], set[int]]:
    """step_parts.sql's rows of the job first..last on the shared window (classes.step_parts), and the steps it cut."""
    cut(con, first, last)
    chain.run(con, {"step_redo", "step_unions"}, **PARAMS)
    queries.run(con, "step_merge")
    targets = {o for (o,) in con.execute("SELECT occurrence FROM step_targets").fetchall()}
    return queries.run(con, "step_parts"), targets
