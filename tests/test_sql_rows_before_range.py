"""rows_before_range.sql: attributed rows starting before their process's selected range, by hand."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import plant


def _with_ranges(rows: list[tuple], ranges: list[tuple]):
    """plant(rows) plus selected_ranges (occurrence, global_pid, start_ns, end_ns)."""
    con = plant(rows)
    con.execute("CREATE TABLE selected_ranges (occurrence BIGINT, global_pid BIGINT, start_ns BIGINT, end_ns BIGINT)")
    con.executemany("INSERT INTO selected_ranges VALUES (?, ?, ?, ?)", ranges)
    return con


def test_rows_before_their_own_range_per_occurrence_and_table():
    ranges = [(1, 10, 1000, 2000), (1, 20, 500, 2000), (2, 10, -3000, 3000)]
    con = _with_ranges([
        (1, 10, 0, "gemm", "gemm", 1000, 1500),                  # starts with its range: fine
        (1, 10, 0, "gemm", "gemm", 999, 1500),                   # 1 ns early
        (1, 10, 0, "gemm", "gemm", -5000, 1500),                 # 6,000 ns early
        (1, 20, 0, "gemm", "gemm", 600, 700),                    # before pid 10's range, not before its own
        (1, 10, 0, "[CUDA memcpy]", "memory", 900, 950),         # 100 ns early
        (1, 10, 0, "[CUDA memset]", "memory", 990, 995),         # 10 ns early
        (1, 10, 0, "[CUDA graph 3]", "cuda_graph", 0, 1200),     # 1,000 ns early
        (2, 10, 0, "gemm", "gemm", -2500, -2000),                # negative, inside its range -3000..3000: fine
        (2, 10, 0, "gemm", "gemm", -3500, 0),                    # 500 ns early
        (3, 10, 0, "gemm", "gemm", 0, 10),                       # no selected range of occurrence 3: not judged
    ], ranges)
    assert queries.run(con, "rows_before_range") == [
        {"occurrence": 1, "source": "raw_graph_trace", "rows": 1, "most_early_ns": 1000},
        {"occurrence": 1, "source": "raw_kernel", "rows": 2, "most_early_ns": 6000},
        {"occurrence": 2, "source": "raw_kernel", "rows": 1, "most_early_ns": 500},
        {"occurrence": 1, "source": "raw_memcpy", "rows": 1, "most_early_ns": 100},
        {"occurrence": 1, "source": "raw_memset", "rows": 1, "most_early_ns": 10}]


def test_none_when_every_row_starts_inside():
    con = _with_ranges([(1, 10, 0, "gemm", "gemm", 1000, 1500)], [(1, 10, 1000, 2000)])
    assert queries.run(con, "rows_before_range") == []
