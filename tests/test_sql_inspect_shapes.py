"""inspect_shapes.sql: PyTorch operator ranges, and those naming their input shapes (issue #31)."""

from __future__ import annotations

from nsys_export import Export, gtid
from pipeline.init import skeleton
from pipeline.trace import queries
from pipeline.trace.inspect import inspect_trace


def _export(shapes: bool) -> Export:
    e = Export()
    e.range(0, 100, gtid(1, 1), "train_step")
    e.range(10, 20, gtid(1, 1), "aten::mm, seq = 3, op_id = 7" + (", sizes = [[4, 8], [8, 16]]" if shapes else ""))
    e.range(30, 40, gtid(1, 2), "aten::addmm, op_id = 8" + (", sizes = [[16], [4, 8], [8, 16], [], []]" if shapes else ""))
    e.range(50, 60, gtid(1, 1), "MmBackward0, seq = 3, op_id = 9")          # an autograd node: no operator
    e.range(60, 70, gtid(1, 1), "attention sublayer")
    return e


def test_operator_ranges_and_the_shaped_ones_by_hand(open_export) -> None:
    assert queries.run(open_export(_export(True)).con, "inspect_shapes") == [{"operator_ranges": 2, "shaped_ranges": 2}]
    assert queries.run(open_export(_export(False)).con, "inspect_shapes") == [{"operator_ranges": 2, "shaped_ranges": 0}]


def test_inspect_says_what_shapes_enable_and_init_mentions_it(tmp_path) -> None:
    shaped = _export(True).write(tmp_path / "shaped.sqlite")
    assert "2 PyTorch operator ranges record their input shapes" in inspect_trace(shaped)["supports"][-1]
    bare = _export(False).write(tmp_path / "bare.sqlite")
    assert "record no shapes" in inspect_trace(bare)["supports"][-1]
    e = _export(True)
    e.launch(12, gtid(1, 1), 1)
    e.kernel(15, 25, 1 << 24, 1)
    assert "# Operator shapes: 2 PyTorch operator ranges record them" in skeleton(
        e.write(tmp_path / "init.sqlite"), None, None)
