"""step_redo.sql: on a window shared by several jobs, a job cuts only the steps that differ from the window's, and
with step_merge.sql its step parts are those of its own window, whichever occurrences it selects."""

from __future__ import annotations

import pytest

from tests.stepfixtures import alone, redone, shared


def _tails(n: int) -> tuple[list[tuple], list[tuple]]:
    """n occurrences 100 ns apart, ranges [100 i, 100 i + 50), each with a GEMM [100 i + 10, 100 i + 130) whose tail
    runs 30 ns into the next step (its step is 100 ns, the last one's its wall, 130), an NCCL kernel [100 i + 20,
    100 i + 40) on device 1, and in occurrence 3 a copy [320, 345) and an attention kernel [395, 420) that
    runs past its step end too."""
    rows = [(i, 0, "gemm", "gemm", 100 * i + 10, 100 * i + 130) for i in range(1, n + 1)]
    rows += [(i, 1, "nccl", "communication", 100 * i + 20, 100 * i + 40) for i in range(1, n + 1)]
    rows += [(3, 1, "[CUDA memcpy]", "memory", 320, 345), (3, 1, "flash", "attention", 395, 420)]
    return rows, [(i, 100, 100 * i, 100 * i + 50) for i in range(1, n + 1)]


@pytest.mark.parametrize("first, last", [(1, 6), (2, 4), (3, 3), (1, 1), (6, 6), (4, 6), (2, 3)])
def test_tails_into_the_next_step_give_each_job_its_own_parts(first, last):
    rows, ranges = _tails(6)
    con = shared(rows, ranges)
    parts, targets = redone(con, first, last)
    assert parts == alone(rows, ranges, first, last)
    # a step differs from the window's only where an earlier occurrence's tail runs into it (the job's first, unless
    # the window's) and at the job's last (its step is its wall, 130, where the window's next occurrence made it 100)
    assert targets == ({first} if first > 1 else set()) | ({last} if last < 6 else set())


def test_steps_that_do_not_touch_are_all_the_windows():
    """Ranges [100 i, 100 i + 50), kernels inside them: no step runs into another, so no step is cut again."""
    rows = [(i, 0, "gemm", "gemm", 100 * i + 10, 100 * i + 45) for i in range(1, 6)]
    ranges = [(i, 100, 100 * i, 100 * i + 50) for i in range(1, 6)]
    con = shared(rows, ranges)
    parts, targets = redone(con, 2, 4)
    assert parts == alone(rows, ranges, 2, 4) and targets == set()
    assert [p["gemm_ns"] for p in parts] == [35, 35, 35]


def test_a_tail_through_several_steps_from_outside_the_job():
    """Occurrence 1's GEMM [110, 385) runs through the steps of occurrences 2 and 3 (walls [200,250), [300,350), their
    next starting after their end; step 1 is [100,200)): a job of 2..3 cuts both steps itself, without it; a job of
    1..3 takes them from the window. Each step has an elementwise kernel [100 i + 5, 100 i + 15) too."""
    rows = [(1, 0, "gemm", "gemm", 110, 385)] + [(i, 0, "add", "elementwise", 100 * i + 5, 100 * i + 15)
                                                 for i in range(1, 5)]
    ranges = [(i, 100, 100 * i, 100 * i + 50) for i in range(1, 5)]
    con = shared(rows, ranges)
    parts, targets = redone(con, 2, 3)
    assert targets == {2, 3} and parts == alone(rows, ranges, 2, 3)
    assert [p["gemm_ns"] for p in parts] == [0, 0] and [p["other_compute_ns"] for p in parts] == [10, 10]
    parts, targets = redone(con, 1, 3)
    assert targets == set() and parts == alone(rows, ranges, 1, 3)
    assert [p["gemm_ns"] + p["mixed_compute_ns"] for p in parts] == [90, 50, 50]
