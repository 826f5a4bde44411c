"""region_ranges.sql: name matching, domain filter, per-process numbering, tie order, periods."""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.trace import queries

P1, P1_WORKER, P2 = gtid(10, 10), gtid(10, 11), gtid(20, 20)


def _steps() -> Export:
    e = Export()
    # process 10: a tie at 3000 (the longer range first) and a same-name range nested inside
    e.range(3000, 3500, P1, "train_step")
    e.range(1000, 2000, P1, "train_step")
    e.range(3100, 3200, P1_WORKER, "train_step", via_text_id=True)
    e.range(3000, 4000, P1, "train_step")
    # process 20 starts each step a little later: numbering must not interleave the two ranks
    e.range(1050, 2100, P2, "train_step")
    e.range(3050, 4100, P2, "train_step")
    e.range(5000, 5100, P2, "train_step_extra")
    e.range(5200, 5300, P2, "Train_step")
    e.range(5400, 5500, P2, "my train_step x")
    e.range(5600, 5700, P2, "aten::mm, seq = 3, op_id = 7")
    e.range(5800, None, P2, "train_step", event_type=34)   # a mark, not a range
    return e


def _select(trace, name: str, match: str = "exact", domain: str | None = None) -> list[tuple]:
    queries.run(trace.con, "region_ranges", name=name, match=match, domain=domain)
    return trace.con.execute("SELECT pid, occurrence, start_ns, end_ns, period_ns, global_pid, global_tid, name "
                             "FROM region_ranges ORDER BY pid, occurrence").fetchall()


def test_exact_numbers_per_process_longer_first_on_ties(open_export) -> None:
    trace = open_export(_steps())
    g1, g2 = gpid(10), gpid(20)
    assert _select(trace, "train_step") == [
        (10, 1, 1000, 2000, 2000, g1, P1, "train_step"),
        (10, 2, 3000, 4000, None, g1, P1, "train_step"),   # same start as 3000..3500: longer first, outermost
        (20, 1, 1050, 2100, 2000, g2, P2, "train_step"),
        (20, 2, 3050, 4100, None, g2, P2, "train_step"),
    ]
    # 3000..3500 and the worker thread's 3100..3200 lie inside 3000..4000 of the same process:
    # folded into it, not occurrences of their own (docs/figures.md §6)
    assert trace.con.execute("SELECT pid, start_ns, end_ns, global_tid FROM nested_ranges ORDER BY start_ns"
                             ).fetchall() == [(10, 3000, 3500, P1), (10, 3100, 3200, P1_WORKER)]
    assert queries.run(trace.con, "nested_counts") == [{"pid": 10, "nested": 2, "example": "train_step"}]


def test_overlapping_but_not_nested_ranges_both_count(open_export) -> None:
    e = Export()
    e.range(0, 100, P1, "step")
    e.range(50, 150, P1_WORKER, "step")         # starts inside, ends outside: not nested
    e.range(150, 160, P1, "step")               # starts exactly where the reach ends: not inside
    e.range(150, 160, P1, "step")               # the same range twice: the second is folded
    trace = open_export(e)
    assert [r[1:4] for r in _select(trace, "step")] == [(1, 0, 100), (2, 50, 150), (3, 150, 160)]
    assert queries.run(trace.con, "nested_counts") == [{"pid": 10, "nested": 1, "example": "step"}]


def test_a_range_ending_before_it_starts_is_never_nested(open_export) -> None:
    """docs/figures.md §6: a range with end < start is trace data that cannot be right (exit 4 when selected), not a
    range nested inside another: it is numbered like any range, so ranges_have_length sees and refuses it,
    and is not folded away as `nested_occurrences` (which would measure the trace as if nothing were wrong).
    A zero-length range inside another is still a point inside it, and still folded."""
    e = Export()
    e.range(1000, 3000, P1, "step")
    e.range(1500, 1400, P1, "step")             # starts inside 1000..3000, ends before it starts
    e.range(2000, 2000, P1_WORKER, "step")      # zero length, inside 1000..3000: nested
    e.range(4000, 5000, P1, "step")
    e.range(4000, 3900, P1, "step")             # same start as 4000..5000, ends before it starts
    trace = open_export(e)
    assert [r[1:5] for r in _select(trace, "step")] == [
        (1, 1000, 3000, 500), (2, 1500, 1400, 2500), (3, 4000, 5000, 0), (4, 4000, 3900, None)]
    assert trace.con.execute("SELECT start_ns, end_ns FROM nested_ranges").fetchall() == [(2000, 2000)]
    assert queries.run(trace.con, "nested_counts") == [{"pid": 10, "nested": 1, "example": "step"}]


@pytest.mark.parametrize(("match", "name", "expected"), [
    ("exact", "train_step", ["train_step", "train_step"]),
    ("prefix", "train_step", ["train_step", "train_step", "train_step_extra"]),
    ("contains", "train_step", ["train_step", "train_step", "train_step_extra", "my train_step x"]),
    ("exact", "Train_step", ["Train_step"]),                                   # case-sensitive
    ("prefix", "aten::mm", ["aten::mm, seq = 3, op_id = 7"]),
    ("regex", r"seq = \d+, op_id", ["aten::mm, seq = 3, op_id = 7"]),          # unanchored search
    ("regex", r"^train_step$", ["train_step", "train_step"]),
    ("regex", r"step_e.t", ["train_step_extra"]),
    ("exact", "train", []),
])
def test_match_modes(open_export, match: str, name: str, expected: list[str]) -> None:
    trace = open_export(_steps())
    assert [r[-1] for r in _select(trace, name, match) if r[0] == 20] == expected


def test_domain_filter_uses_the_domain_of_the_ranges_process(open_export) -> None:
    e = Export()
    e.domain(P1, 1, "NCCL", via_text_id=True)
    e.range(100, 200, P1, "allreduce", domain_id=1)
    e.range(300, 400, P1, "allreduce")                      # default domain
    e.domain(P2, 1, "other")                                # domainId 1 means something else in process 20
    e.range(150, 250, P2, "allreduce", domain_id=1)
    trace = open_export(e)
    assert [(r[0], r[2]) for r in _select(trace, "allreduce", domain="NCCL")] == [(10, 100)]
    assert [(r[0], r[2]) for r in _select(trace, "allreduce")] == [(10, 100), (10, 300), (20, 150)]
    assert _select(trace, "allreduce", domain="nccl") == []
