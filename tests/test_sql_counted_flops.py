"""counted_flops.sql: operator_work summed by operator, kind, label and in total; causal halving by choice."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

COLUMNS = ("occurrence BIGINT, op VARCHAR, shapes VARCHAR, kind VARCHAR, label VARCHAR, pass VARCHAR, status VARCHAR, "
           "reason VARCHAR, calls BIGINT, flops BIGINT, kernel_count BIGINT, kernel_ns BIGINT, gemm_ns BIGINT")
ROWS = [   # two occurrences: an mm and an attention leaf each, a shape-less mm, GEMM time outside any leaf
    (1, "aten::mm", "[[4, 8], [8, 16]]", "mm", "mlp", "forward", "counted", None, 2, 2048, 2, 100, 90),
    (2, "aten::mm", "[[4, 8], [8, 16]]", "mm", "mlp", "forward", "counted", None, 2, 2048, 2, 120, 110),
    (1, "flash_attn::_flash_attn_forward", "[[1, 16, 2, 8]]", "attention", "attn", "forward", "counted", None,
     1, 16384, 1, 50, 50),
    (2, "flash_attn::_flash_attn_forward", "[[1, 16, 2, 8]]", "attention", "attn", "forward", "counted", None,
     1, 16384, 1, 50, 50),
    (2, "aten::mm", None, "mm", "mlp", "forward", "not_covered", "no shapes recorded", 1, None, 1, 30, 30),
    (1, None, None, None, None, None, "outside", None, 0, None, 1, 20, 20),
]


def _summed(causal_half: bool) -> dict[tuple, dict]:
    con = duckdb.connect()
    con.execute(f"CREATE TABLE operator_work ({COLUMNS})")
    con.executemany(f"INSERT INTO operator_work VALUES ({', '.join('?' * 13)})", ROWS)
    return {(r["level"], r["op"] or r["kind"] or r["label"], r["status"]): r
            for r in queries.run(con, "counted_flops", causal_half=causal_half)}


def test_totals_kinds_labels_and_operators_by_hand() -> None:
    rows = _summed(causal_half=False)
    total = rows[("total", None, None)]
    assert (total["flops"], total["calls"], total["coverage_ns"], total["class_ns"], total["occurrences"]) == (
        2 * 2048 + 2 * 16384, 7, 90 + 110 + 50 + 50, 90 + 110 + 50 + 50 + 30 + 20, 2)
    assert rows[("kind", "mm", None)]["flops"] == 4096 and rows[("kind", "attention", None)]["flops"] == 32768
    assert rows[("label", "mlp", None)]["flops"] == 4096 and rows[("label", "attn", None)]["kernel_ns"] == 100
    mm = rows[("operator", "aten::mm", "counted")]
    assert (mm["calls"], mm["flops"], mm["kernel_ns"], mm["occurrences"]) == (4, 4096, 220, 2)
    shapeless = rows[("operator", "aten::mm", "not_covered")]
    assert (shapeless["flops"], shapeless["reason"], shapeless["class_ns"]) == (None, "no shapes recorded", 30)
    assert rows[("operator", None, "outside")]["class_ns"] == 20


def test_causal_half_halves_attention_only() -> None:
    rows = _summed(causal_half=True)
    assert rows[("kind", "attention", None)]["flops"] == 16384 and rows[("kind", "mm", None)]["flops"] == 4096
    assert rows[("total", None, None)]["flops"] == 4096 + 16384


def test_no_operator_ranges_is_one_empty_total() -> None:
    con = duckdb.connect()
    con.execute(f"CREATE TABLE operator_work ({COLUMNS})")
    rows = queries.run(con, "counted_flops", causal_half=False)
    assert [(r["level"], r["flops"], r["class_ns"]) for r in rows] == [("total", None, None)]
