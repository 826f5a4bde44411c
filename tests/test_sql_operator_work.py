"""operator_work.sql: the kernels each leaf launched, and the GEMM/attention time no counted leaf launched."""

from __future__ import annotations

from operator_export import operator_export
from pipeline.analysis import classes
from pipeline.trace import chain, queries

COLUMNS = "op, label, pass, status, calls, flops, kernel_count, kernel_ns, gemm_ns"


def _work(trace, launched_by_range: bool = True) -> list[tuple]:
    chain.run(trace.con, {"region_ranges", "select_occurrences", "attribute_launch", "attribute_memops",
                          "duplicate_kernels", "classify", "operator_ranges"},
              name="step", match="exact", domain=None, first=1, last=1, same_thread=False, mode="process",
              **classes.classify_params(classes.load_rules()))
    queries.run(trace.con, "operator_work", coverage_classes=["gemm", "attention"], launched_by_range=launched_by_range)
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


def test_window_attribution_places_no_kernel_and_reads_no_launch(open_export) -> None:
    rows = _work(open_export(operator_export()), launched_by_range=False)
    assert [r for r in rows if r[3] in ("outside", "range")] == [
        (None, None, None, "outside", 0, None, 8, 11800, 11800)]
    assert sum(r[5] or 0 for r in rows) == 60928           # the FLOPs are the shapes', whatever the kernels
