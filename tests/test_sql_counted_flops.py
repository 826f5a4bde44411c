"""counted_flops.sql: operator_work summed by operator, kind, label and in total; causal halving by choice."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries


def mm_elements(m: int, k: int, n: int) -> int:
    """A and B read once, C written once (docs/figures.md §9)."""
    return m * k + k * n + m * n

COLUMNS = ("occurrence BIGINT, op VARCHAR, shapes VARCHAR, kind VARCHAR, label VARCHAR, pass VARCHAR, status VARCHAR, "
           "reason VARCHAR, calls BIGINT, flops BIGINT, elements BIGINT, kernel_count BIGINT, kernel_ns BIGINT, "
           "gemm_ns BIGINT")
ROWS = [   # two occurrences: an mm and an attention leaf each, a shape-less mm, GEMM time outside any leaf
    (1, "aten::mm", "[[4, 8], [8, 16]]", "mm", "mlp", "forward", "counted", None, 2, 2048, 448, 2, 100, 90),
    (2, "aten::mm", "[[4, 8], [8, 16]]", "mm", "mlp", "forward", "counted", None, 2, 2048, 448, 2, 120, 110),
    (1, "flash_attn::_flash_attn_forward", "[[1, 16, 2, 8]]", "attention", "attn", "forward", "counted", None,
     1, 16384, 1024, 1, 50, 50),
    (2, "flash_attn::_flash_attn_forward", "[[1, 16, 2, 8]]", "attention", "attn", "forward", "counted", None,
     1, 16384, 1024, 1, 50, 50),
    (2, "aten::mm", None, "mm", "mlp", "forward", "not_covered", "no shapes recorded", 1, None, None, 1, 30, 30),
    (1, None, None, None, None, None, "outside", None, 0, None, None, 1, 20, 20),
    # each part's time: all kernels launched where the label holds (the leaves' and others)
    (1, None, None, None, "mlp", "forward", "range", None, 0, None, None, 5, 400, 90),
    (2, None, None, None, "mlp", "forward", "range", None, 0, None, None, 6, 500, 140),
    (1, None, None, None, "attn", "backward", "range", None, 0, None, None, 2, 300, 200),
]


def _summed() -> dict[tuple, dict]:
    con = duckdb.connect()
    con.execute(f"CREATE TABLE operator_work ({COLUMNS})")
    con.executemany(f"INSERT INTO operator_work VALUES ({', '.join('?' * 14)})", ROWS)
    return {(r["level"], r["op"] or r["kind"] or r["label"], r["status"]): r
            for r in queries.run(con, "counted_flops")}


def test_totals_kinds_labels_and_operators_by_hand() -> None:
    rows = _summed()
    total = rows[("total", None, None)]
    assert (total["flops"], total["calls"], total["coverage_ns"], total["class_ns"], total["occurrences"]) == (
        2 * 2048 + 2 * 16384, 7, 90 + 110 + 50 + 50, 90 + 110 + 50 + 50 + 30 + 20, 2)
    assert rows[("kind", "mm", None)]["flops"] == 4096 and rows[("kind", "attention", None)]["flops"] == 32768
    mlp, attn = rows[("label", "mlp", None)], rows[("label", "attn", None)]
    assert (mlp["flops"], mlp["kernel_ns"], mlp["kernel_count"], mlp["class_ns"], mlp["coverage_ns"]) == (
        4096, 900, 11, 230, 200)             # the time is the part's (range rows), FLOPs its counted leaves'
    assert (attn["flops"], attn["kernel_ns"]) == (32768, 300)
    assert mm_elements(4, 8, 16) * 2 == rows[("operator", "aten::mm", "counted")]["elements"] // 2
    mm = rows[("operator", "aten::mm", "counted")]
    assert (mm["calls"], mm["flops"], mm["kernel_ns"], mm["occurrences"]) == (4, 4096, 220, 2)
    shapeless = rows[("operator", "aten::mm", "not_covered")]
    assert (shapeless["flops"], shapeless["reason"], shapeless["class_ns"]) == (None, "no shapes recorded", 30)
    assert rows[("operator", None, "outside")]["class_ns"] == 20


def test_causal_half_halves_attention_only() -> None:
    rows = _summed()
    assert rows[("kind", "attention", None)]["flops_causal_half"] == 16384
    assert rows[("kind", "mm", None)]["flops_causal_half"] == 4096
    assert rows[("total", None, None)]["flops_causal_half"] == 4096 + 16384


def test_no_operator_ranges_is_one_empty_total() -> None:
    con = duckdb.connect()
    con.execute(f"CREATE TABLE operator_work ({COLUMNS})")
    rows = queries.run(con, "counted_flops")
    assert [(r["level"], r["flops"], r["class_ns"]) for r in rows] == [("total", None, None)]
