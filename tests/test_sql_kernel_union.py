"""kernel_union.sql: union, sum and count of attributed kernels, over all devices and per device
(computed in window_unions.sql, memory operations left out)."""

from __future__ import annotations

import random

import pytest

from pipeline.trace import chain
from pipeline.trace.synth import union_ns
from tests.sqlfixtures import plant

Kernel = tuple[int, int, int, int]      # occurrence, device, start, end


def _union_rows(kernels: list[Kernel]) -> dict[tuple[int, int | None], tuple[int, int, int, int]]:
    """(occurrence, device or None) -> (union, sum, count, last end), from a `classified` table planted by hand.

    A memory copy beside every kernel (same occurrence, device and time) must change nothing: kernels only.
    """
    con = plant([(o, 1, d, "k", "gemm", s, e) for o, d, s, e in kernels]
                + [(o, 1, d, "[CUDA memcpy]", "memory", s, e + 7) for o, d, s, e in kernels])
    chain.run(con, {"kernel_union"})
    rows = con.execute("SELECT occurrence, device_id, union_ns, sum_ns, kernel_count, last_end_ns "
                       "FROM kernel_union").fetchall()
    con.close()
    return {(o, d): (u, s, n, e) for o, d, u, s, n, e in rows}


@pytest.mark.parametrize(("intervals", "union", "total"), [
    ([(0, 10), (5, 15), (20, 30)], 25, 30),                  # one overlap, one gap
    ([(0, 10), (10, 20)], 20, 20),                           # touching intervals merge
    ([(0, 10), (11, 20)], 19, 19),                           # a 1 ns gap does not
    ([(0, 100), (10, 20), (30, 40), (150, 160)], 110, 130),  # running max, not the previous end
    ([(0, 5), (0, 10)], 10, 15),                             # equal starts
    ([(7, 7), (3, 9)], 6, 6),                                # zero-length kernel inside another
    ([(40, 50)], 10, 10),
])
def test_union_by_hand(intervals: list[tuple[int, int]], union: int, total: int) -> None:
    rows = _union_rows([(1, 0, s, e) for s, e in reversed(intervals)])
    last = max(e for _, e in intervals)
    assert rows[(1, None)] == (union, total, len(intervals), last)
    assert rows[(1, 0)] == (union, total, len(intervals), last)


def test_devices_and_occurrences_are_separate() -> None:
    rows = _union_rows([
        (1, 0, 0, 10), (1, 0, 20, 30), (1, 1, 5, 25),   # all devices: 0..30; device 0: 20; device 1: 20
        (2, 0, 5, 15),                                  # another occurrence, overlapping in time: not merged
    ])
    assert rows == {
        (1, None): (30, 40, 3, 30), (1, 0): (20, 20, 2, 30), (1, 1): (20, 20, 1, 25),
        (2, None): (10, 10, 1, 15), (2, 0): (10, 10, 1, 15),
    }


@pytest.mark.slow  # a random oracle: 3,000 intervals, 15 groupings
def test_random_intervals_against_sort_andmerge() -> None:
    rng = random.Random(20240611)
    kernels: list[Kernel] = []
    for _ in range(3000):
        s = rng.randrange(0, 200_000)
        kernels.append((rng.randint(1, 3), rng.randint(0, 3), s, s + rng.choice([0, 1, 50, 400, 3000])))
    rows = _union_rows(kernels)
    for occ in (1, 2, 3):
        mine = [(s, e) for o, _, s, e in kernels if o == occ]
        assert rows[(occ, None)][:3] == (union_ns(mine), sum(e - s for s, e in mine), len(mine))
        for dev in range(4):
            on_dev = [(s, e) for o, d, s, e in kernels if o == occ and d == dev]
            assert rows[(occ, dev)][0] == union_ns(on_dev), (occ, dev)
