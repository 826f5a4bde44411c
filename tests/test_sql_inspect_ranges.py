"""inspect_ranges.sql: range names grouped with PyTorch's sequence/op suffixes collapsed."""

from __future__ import annotations

from nsys_export import Export, gtid
from pipeline.trace import queries

P1, P2 = gtid(1, 1), gtid(2, 2)


def _export() -> Export:
    e = Export()
    e.range(0, 10, P1, "aten::mm, seq = 1, op_id = 5")
    e.range(0, 60, P1, "aten::mm, seq = 2, op_id = 6", via_text_id=True)   # median 20, mean 30
    e.range(0, 20, P2, "aten::mm, seq = 3, op_id = 9")
    e.range(0, 7, P1, "aten::mm")                          # no suffix: its own row
    e.range(0, 40, P1, "aten::copy_, op_id = 991065")      # newer PyTorch: op_id without seq
    e.range(0, 60, P2, "aten::copy_, op_id = 991090")
    e.range(0, 100, P1, "step")
    e.range(0, 300, P2, "step")
    e.domain(P1, 4, "NCCL")
    e.range(0, 5, P1, "step", domain_id=4)
    e.range(9, 14, P1, "step", domain_id=4)               # ties the default-domain "step" on count
    e.range(0, 1, P1, "zz, seq = none")                    # not a numbered suffix: kept whole
    e.range(0, 30, P1, "zstep 7")                          # names differing only in their number: one row
    e.range(0, 50, P1, "zstep 8")
    e.range(0, 2, P1, "conv2d")                            # a digit inside a word is no number
    e.range(0, 3, P1, "conv3d")
    return e


def test_groups_by_hand(open_export) -> None:
    trace = open_export(_export())
    rows = queries.run(trace.con, "inspect_ranges", limit=10)
    assert [(r["name_group"], r["has_suffix"], r["domain"], r["ranges"], r["processes"], r["median_ns"])
            for r in rows] == [
        ("aten::mm", True, None, 3, 2, 20),
        ("aten::copy_", True, None, 2, 2, 50),
        ("step", False, None, 2, 2, 200),                  # ties: by name, the default domain first
        ("step", False, "NCCL", 2, 1, 5),
        ("zstep <n>", False, None, 2, 1, 40),
        ("aten::mm", False, None, 1, 1, 7),
        ("conv2d", False, None, 1, 1, 2),
        ("conv3d", False, None, 1, 1, 3),
        ("zz, seq = none", False, None, 1, 1, 1),
    ]


def test_limit(open_export) -> None:
    trace = open_export(_export())
    assert [r["name_group"] for r in queries.run(trace.con, "inspect_ranges", limit=2)] == [
        "aten::mm", "aten::copy_"]
