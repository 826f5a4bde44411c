"""inspect_near_names.sql: what a region name that matched nothing probably meant."""

from __future__ import annotations

from nsys_export import Export, gtid
from pipeline.trace import queries

P1 = gtid(1, 1)


def _export() -> Export:
    e = Export()
    for k in range(3):
        e.range(k, k + 1, P1, f"FSDP::root_pre_forward, op_id = {10 + k}")
    e.range(0, 1, P1, "FSDP::root_pre_forward_hook")          # another group the prefix also finds
    for k in range(4):
        e.range(k, k + 1, P1, "Train_step")                     # distance 1 from train_stp (case ignored: 1)
    e.range(0, 1, P1, "train_steps")                            # distance 1
    e.range(0, 1, P1, "forward")                                # far from everything asked
    return e


def test_prefix_groups_with_an_example(open_export) -> None:
    trace = open_export(_export())
    rows = queries.run(trace.con, "inspect_near_names", name="FSDP::root_pre_forward")
    assert [(r["kind"], r["name_group"], r["example"], r["ranges"]) for r in rows] == [
        ("prefix", "FSDP::root_pre_forward", "FSDP::root_pre_forward, op_id = 10", 3),
        ("prefix", "FSDP::root_pre_forward_hook", "FSDP::root_pre_forward_hook", 1),
    ]


def test_near_misses_by_edit_distance(open_export) -> None:
    trace = open_export(_export())
    rows = queries.run(trace.con, "inspect_near_names", name="train_stp")
    # train_stp -> train_step: insert 'e' (1); -> train_steps: 2 inserts; 'Train_step' lower-cased: 1.
    assert [(r["kind"], r["name_group"], r["distance"], r["ranges"]) for r in rows] == [
        ("near", "Train_step", 1, 4), ("near", "train_steps", 2, 1)]


def test_nothing_close(open_export) -> None:
    trace = open_export(_export())
    assert queries.run(trace.con, "inspect_near_names", name="optimizer.step") == []
