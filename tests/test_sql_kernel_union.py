"""kernel_union.sql: union, sum and count of attributed kernels, over all devices and per device."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pipeline.trace import chain
from pipeline.trace.open import connect

Kernel = tuple[int, int, int, int]      # occurrence, device, start, end


def _union_rows(kernels: list[Kernel]) -> dict[tuple[int, int | None], tuple[int, int, int, int]]:
    """(occurrence, device or None) -> (union, sum, count, last end), from an `attributed` table planted by hand."""
    con = connect()
    con.execute("CREATE TEMP TABLE attributed (occurrence BIGINT, global_pid BIGINT, device_id BIGINT, "
                "stream_id BIGINT, name_id BIGINT, start_ns BIGINT, end_ns BIGINT)")
    planted = {name: np.array(col, dtype=np.int64).reshape(-1)          # one insert, not one per row
               for name, col in zip(("occurrence", "device_id", "start_ns", "end_ns"), zip(*kernels))}
    con.execute("INSERT INTO attributed SELECT occurrence, 1, device_id, 7, 1, start_ns, end_ns FROM planted")
    chain.run(con, {"attributed_unions", "kernel_union"})
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


def _merge(intervals: list[tuple[int, int]]) -> int:
    """Reference union: sort, extend the current island while the next starts at or before its end."""
    islands: list[list[int]] = []
    for s, e in sorted(intervals):
        if islands and s <= islands[-1][1]:
            islands[-1][1] = max(islands[-1][1], e)
        else:
            islands.append([s, e])
    return sum(e - s for s, e in islands)


def test_random_intervals_against_sort_and_merge() -> None:
    rng = random.Random(20240611)
    kernels: list[Kernel] = []
    for _ in range(3000):
        s = rng.randrange(0, 200_000)
        kernels.append((rng.randint(1, 3), rng.randint(0, 3), s, s + rng.choice([0, 1, 50, 400, 3000])))
    rows = _union_rows(kernels)
    for occ in (1, 2, 3):
        mine = [(s, e) for o, _, s, e in kernels if o == occ]
        assert rows[(occ, None)][:3] == (_merge(mine), sum(e - s for s, e in mine), len(mine))
        for dev in range(4):
            on_dev = [(s, e) for o, d, s, e in kernels if o == occ and d == dev]
            assert rows[(occ, dev)][0] == _merge(on_dev), (occ, dev)
