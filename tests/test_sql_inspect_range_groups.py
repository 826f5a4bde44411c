"""inspect_range_groups.sql: how many name groups exist (to say when a listing is cut)."""

from __future__ import annotations

from nsys_export import Export, gtid
from pipeline.trace import queries


def test_group_count_by_hand(open_export) -> None:
    e = Export()
    p = gtid(1, 1)
    e.range(0, 1, p, "aten::mm, seq = 1, op_id = 5")
    e.range(0, 1, p, "aten::mm, seq = 2, op_id = 6")
    e.range(0, 1, p, "aten::add, op_id = 7")
    e.range(0, 1, p, "aten::add, op_id = 8")
    e.range(0, 1, p, "step")
    e.domain(p, 2, "NCCL")
    e.range(0, 1, p, "step", domain_id=2)        # same name, other domain: another group
    e.range(0, None, p, "a mark", event_type=34)
    e.range(0, 1, p, "ProfilerStep#1")
    e.range(0, 1, p, "ProfilerStep#12")           # differs only in its number: the same group
    trace = open_export(e)
    assert queries.run(trace.con, "inspect_range_groups") == [{"groups": 5}]


def test_empty_trace(open_export) -> None:
    trace = open_export(Export())
    assert queries.run(trace.con, "inspect_range_groups") == [{"groups": 0}]
