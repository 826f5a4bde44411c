"""operator_ranges.sql: GEMM- and attention-class leaves of an emit_nvtx export, FLOPs from their shapes."""

from __future__ import annotations

from nsys_export import Export
from operator_export import T1, T2, operator_export
from pipeline.trace import chain
from pipeline.trace.synth import attention_flops, mm_flops


def _leaves(trace) -> list[tuple]:
    chain.run(trace.con, {"region_ranges", "select_occurrences", "operator_ranges"},
              name="step", match="exact", domain=None, first=1, last=1)
    return trace.con.execute("SELECT global_tid, start_ns, op, kind, flops, status, reason, label, pass "
                             "FROM operator_ranges ORDER BY global_tid, start_ns").fetchall()


def test_labels_hold_where_the_innermost_named_range_or_the_forward_of_a_node_does(open_export) -> None:
    trace = open_export(operator_export())
    _leaves(trace)
    # `layer 0` is never innermost: `attention` and `mlp` cover it; the nodes take their forward's label by seq
    assert trace.con.execute("SELECT global_tid, start_ns, end_ns, label, node FROM label_spans "
                             "ORDER BY global_tid, start_ns").fetchall() == [
        (T1, 0, 1000, "step", False), (T1, 1000, 20000, "attention", False), (T1, 20000, 40000, "mlp", False),
        (T1, 40000, 100000, "step", False), (T2, 60000, 70000, "mlp", True), (T2, 71000, 80000, "attention", True)]


def test_each_occurrence_keeps_the_counts_placement_is_decided_from(open_export) -> None:
    """occurrence_places: per occurrence, its operator ranges and distinct labels (the test above's), from which a
    shared window's job decides placement over its own occurrences as the last row decides it over the window's."""
    trace = open_export(operator_export())
    _leaves(trace)
    assert trace.con.execute("SELECT occurrence, operators, labels FROM occurrence_places").fetchall() == [
        (1, 8, ["attention", "mlp", "step"])]                       # the 8 leaves of the next test


def test_elements_moved_follow_from_the_shapes(open_export) -> None:
    trace = open_export(operator_export())
    _leaves(trace)
    assert trace.con.execute("SELECT start_ns, elements FROM operator_ranges ORDER BY global_tid, start_ns"
                             ).fetchall() == [
        (2100, 2 * (4 * 8 + 8 * 4 + 4 * 4)), (10000, 4 * 256), (16000, None), (17500, None),
        (21300, 4 * 8 + 8 * 16 + 4 * 16), (61000, 4 * 16 + 16 * 8 + 4 * 8), (63000, 16 * 4 + 4 * 8 + 16 * 8),
        (71100, 2 * 4 * 256)]       # q, k, v, out of 1·2·16·8 = 256 each; backward reads and writes twice as much


def test_leaves_only_counted_from_their_shapes_with_labels_through_seq(open_export) -> None:
    conv = "convolution: stride, padding and dilation are not in the shapes"
    assert _leaves(open_export(operator_export())) == [
        (T1, 2100, "aten::bmm", "bmm", mm_flops(4, 8, 4, batch=2), "counted", None, "attention", "forward"),
        (T1, 10000, "aten::_scaled_dot_product_flash_attention", "attention", attention_flops(1, 2, 16, 16, 8, 8),
         "counted", None, "attention", "forward"),
        (T1, 16000, "aten::mm", "mm", None, "not_covered", "no shapes recorded", "attention", "forward"),
        (T1, 17500, "aten::convolution", None, None, "not_covered", conv, "attention", "forward"),
        (T1, 21300, "aten::addmm", "mm", mm_flops(4, 8, 16), "counted", None, "mlp", "forward"),
        (T2, 61000, "aten::mm", "mm", mm_flops(4, 16, 8), "counted", None, "mlp", "backward"),
        (T2, 63000, "aten::mm", "mm", mm_flops(16, 4, 8), "counted", None, "mlp", "backward"),
        (T2, 71100, "aten::_scaled_dot_product_flash_attention_backward", "attention_backward",
         attention_flops(1, 2, 16, 16, 8, 8, backward=True), "counted", None, "attention", "backward"),
    ]
    assert mm_flops(4, 8, 4, batch=2) == 512 and attention_flops(1, 2, 16, 16, 8, 8, backward=True) == 40960


def test_shapes_that_do_not_fit_the_operator_are_not_covered_not_guessed(open_export) -> None:
    e = Export()
    e.range(0, 1000, T1, "step")
    e.range(10, 20, T1, "aten::mm, seq = 1, op_id = 1, sizes = [[4, 8], [9, 16]]")       # inner sizes differ
    e.range(30, 40, T1, "aten::bmm, seq = 2, op_id = 2, sizes = [[4, 8], [8, 16]]")      # 2-D, not batched
    e.range(50, 60, T1, "aten::einsum, seq = 3, op_id = 3, sizes = [[], [4, 8], [8, 16]]")
    e.range(70, 80, T1, "aten::add, seq = 4, op_id = 4, sizes = [[4, 8], [4, 8], []]")  # not GEMM-class
    rows = _leaves(open_export(e))
    assert [(r[2], r[4], r[6]) for r in rows] == [
        ("aten::mm", None, "shapes not as the operator takes them"),
        ("aten::bmm", None, "shapes not as the operator takes them"),
        ("aten::einsum", None, "no formula for this operator")]


def test_ranges_of_another_process_or_outside_the_step_are_not_the_steps(open_export) -> None:
    e = Export()
    e.range(0, 1000, T1, "step")
    e.range(2000, 2100, T1, "aten::mm, seq = 1, op_id = 1, sizes = [[4, 8], [8, 16]]")              # after it
    e.range(10, 20, T2 + (1 << 24), "aten::mm, seq = 1, op_id = 1, sizes = [[4, 8], [8, 16]]")     # pid 101
    assert _leaves(open_export(e)) == []

