"""operator_work.sql: the kernels each leaf launched, and the GEMM/attention time no counted leaf launched."""

from __future__ import annotations

import re

from nsys_export import Export
from operator_export import A, T1, operator_export
from pipeline.analysis import classes
from pipeline.trace import chain, queries

COLUMNS = "op, label, pass, status, calls, flops, kernel_count, kernel_ns, gemm_ns"


def _work(trace, mode: str = "process") -> list[tuple]:
    attribute = {"attribute_window"} if mode == "window" else {"nccl_ranges", "attribute_launch"}
    chain.run(trace.con, {"region_ranges", "select_occurrences", *attribute, "attribute_memops", "duplicate_kernels",
                          "classify", "operator_ranges", "operator_work"},
              name="step", match="exact", domain=None, first=1, last=1, same_thread=False, mode=mode,
              coverage_classes=["gemm", "attention"], place=True, **classes.classify_params(classes.load_rules()))
    return trace.con.execute(f"SELECT {COLUMNS} FROM operator_work ORDER BY status, op, shapes, label, pass").fetchall()


def test_kernels_belong_to_the_leaf_whose_range_holds_their_launch(open_export) -> None:
    flash, flash_back = "aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_flash_attention_backward"
    assert _work(open_export(operator_export())) == [
        (flash, "attention", "forward", "counted", 1, 16384, 1, 2000, 2000),
        (flash_back, "attention", "backward", "counted", 1, 40960, 1, 4000, 4000),
        ("aten::addmm", "mlp", "forward", "counted", 1, 1024, 2, 1100, 1000),    # with its elementwise kernel
        ("aten::bmm", "attention", "forward", "counted", 1, 512, 1, 2000, 2000),
        ("aten::mm", "mlp", "backward", "counted", 1, 1024, 1, 1000, 1000),      # [[16, 4], [4, 8]]
        ("aten::mm", "mlp", "backward", "counted", 1, 1024, 1, 1000, 1000),      # [[4, 16], [16, 8]]
        ("aten::convolution", "attention", "forward", "not_covered", 1, None, 0, 0, 0),
        ("aten::mm", "attention", "forward", "not_covered", 1, None, 1, 500, 500),
        (None, None, None, "outside", 0, None, 1, 300, 300),                   # GEMM launched in no operator
        # each part's time: every kernel launched where its label holds (the backward ones through seq)
        (None, "attention", "backward", "range", 0, None, 1, 4000, 4000),
        (None, "attention", "forward", "range", 0, None, 3, 4500, 4500),      # bmm, flash, shape-less mm
        (None, "mlp", "backward", "range", 0, None, 2, 2000, 2000),
        (None, "mlp", "forward", "range", 0, None, 2, 1100, 1000),            # addmm's gemm and elementwise
        (None, "step", "forward", "range", 0, None, 1, 300, 300),             # launched in no sublayer
    ]


def test_window_attribution_places_no_kernel(open_export) -> None:
    """No launch says which operator a kernel came from: all GEMM time counts as launched in none."""
    rows = _work(open_export(operator_export()), mode="window")
    assert [r for r in rows if r[3] in ("outside", "range")] == [
        (None, None, None, "outside", 0, None, 8, 11800, 11800)]
    assert sum(r[5] or 0 for r in rows) == 60928           # the FLOPs are the shapes', whatever the kernels


def test_named_parts_get_their_time_without_any_operator_range(open_export) -> None:
    """A trace of named sublayers only (no emit_nvtx): each part still gets the kernels launched inside it."""
    e = Export()
    e.range(0, 10000, T1, "step")
    e.range(1000, 4000, T1, "attention sublayer")
    e.range(5000, 8000, T1, "feed-forward sublayer")
    for corr, (launch, start, end, name) in enumerate(((1500, 2000, 2600, "gemm"), (3000, 3000, 3100, "softmax"),
                                                        (6000, 6000, 6900, "gemm"), (9000, 9000, 9050, "gemm")), 1):
        e.launch(launch, T1, corr)
        e.kernel(start, end, A, corr, name=name)
    assert _work(open_export(e)) == [
        (None, None, None, "outside", 0, None, 3, 1550, 1550),             # no counted operator: all GEMM time
        (None, "attention sublayer", "forward", "range", 0, None, 2, 700, 600),
        (None, "feed-forward sublayer", "forward", "range", 0, None, 1, 900, 900),
        (None, "step", "forward", "range", 0, None, 1, 50, 50)]


def test_nothing_to_place_in_leaves_the_table_empty(open_export) -> None:
    """measure.build_window passes place=False without operators or named parts: no kernel is sorted for them."""
    trace = open_export(operator_export())
    _work(trace)
    chain.run(trace.con, {"operator_ranges", "operator_work"}, coverage_classes=["gemm"], place=False)
    assert trace.con.execute("SELECT count(*) FROM operator_work WHERE status <> 'counted' AND status <> "
                             "'not_covered'").fetchone() == (0,)


def test_launches_at_the_edges_of_leaves_and_parts(open_export) -> None:
    """By hand, on T1 inside `step` 0..10000: parts `a` 1000..3000 and `b` 3000..6000 (a part holds [start, end)),
    leaves mm 1000..1999 and mm 2000..3000 (a leaf holds its end too), one 100 ns GEMM launched at each of 1999
    (first mm, part a), 2000 (second mm, part a), 3000 (second mm, part b: the part a leaf ends in) and 3001 (no
    mm, part b)."""
    e = Export()
    e.range(0, 10000, T1, "step")
    e.range(1000, 3000, T1, "a")
    e.range(3000, 6000, T1, "b")
    e.range(1000, 1999, T1, "aten::mm, seq = 1, op_id = 1, sizes = [[2, 2], [2, 2]]")
    e.range(2000, 3000, T1, "aten::mm, seq = 2, op_id = 2, sizes = [[2, 2], [2, 4]]")
    for corr, launch in enumerate((1999, 2000, 3000, 3001), 1):
        e.launch(launch, T1, corr)
        e.kernel(7000 + 100 * corr, 7100 + 100 * corr, A, corr, name="gemm")
    assert _work(open_export(e)) == [
        ("aten::mm", "a", "forward", "counted", 1, 16, 1, 100, 100),        # [[2, 2], [2, 2]]: 2·2·2·2
        ("aten::mm", "a", "forward", "counted", 1, 32, 2, 200, 200),        # [[2, 2], [2, 4]]: 2·2·2·4
        (None, None, None, "outside", 0, None, 1, 100, 100),
        (None, "a", "forward", "range", 0, None, 2, 200, 200),
        (None, "b", "forward", "range", 0, None, 2, 200, 200)]


def test_kernels_are_placed_by_hash_joins_not_sorted_per_lookup(open_export) -> None:
    """Issue #33: the three lookups (leaf, backward node, part) were ASOF joins, each sorting every kernel of the
    window (peak RSS 567 MB at 0.8 M kernels, 270 before); spans listed under time buckets are joined by equality,
    so the plan has hash joins only (and the cross products that pair rows with their one-row bucket width)."""
    trace = open_export(operator_export())
    _work(trace)
    chain.run(trace.con, {"operator_ranges"})
    create = queries.statements("operator_work")[0]
    plan = trace.con.execute("EXPLAIN " + create, {"coverage_classes": ["gemm"], "place": True}).fetchall()[0][1]
    joins = set(re.findall(r"\b([A-Z_]*(?:JOIN|CROSS_PRODUCT))\b", plan))
    assert "HASH_JOIN" in joins and joins <= {"HASH_JOIN", "CROSS_PRODUCT"}, joins
