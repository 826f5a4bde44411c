"""timeline_busy.sql: each timeline lane's exact time in one step, no gap joined (by hand)."""

from __future__ import annotations

from pipeline.trace import chain
from tests.sqlfixtures import with_ranges

ROWS = [
    # occurrence 2 starts at 1000 (its earliest range start). Device 0: gemm [1000,1030) and [1032,1050)
    # 2 ns apart, a gemm inside the first [1005,1010), NCCL [1040,1070), a copy [1080,1090).
    (2, 0, "gemm", "gemm", 1000, 1030), (2, 0, "gemm", "gemm", 1032, 1050), (2, 0, "gemm", "gemm", 1005, 1010),
    (2, 0, "nccl", "communication", 1040, 1070), (2, 0, "[CUDA memcpy]", "memory", 1080, 1090),
    # device 1: a kernel that began before the step (attributed by overlap) counts from 1000; one ends at 1120
    (2, 1, "gemm", "gemm", 980, 1010), (2, 1, "gemm", "gemm", 1100, 1120),
    # another occurrence is not in the step
    (3, 0, "gemm", "gemm", 5000, 6000),
]
RANGES = [(2, 10, 1000, 1095), (2, 11, 1005, 1110), (3, 10, 4990, 7000)]


def busy(con, **params) -> dict[tuple[int, int], int]:
    chain.run(con, {"timeline_islands", "timeline_busy"}, occurrence=2, comm_class="communication", **params)
    return {(d, lane): ns for d, lane, ns in con.execute(       # lane 3: scope busy with kernel = 1 (any kernel)
        "SELECT k1, CASE scope WHEN 'lane' THEN k2 ELSE 3 END, union_ns FROM timeline_busy "
        "WHERE scope = 'lane' OR k2 = 1").fetchall()}


def test_each_lane_exactly_whatever_the_drawn_gap():
    want = {(0, 0): 10,                   # the copy
            (0, 1): 30,                   # NCCL
            (0, 2): 30 + 18,              # the gemms: the 2 ns gap is not busy; the one inside adds nothing
            (0, 3): 30 + (1070 - 1032),   # any kernel: the gemms and NCCL, overlapping from 1040
            (1, 2): 10 + 20, (1, 3): 10 + 20}
    assert busy(with_ranges(ROWS, RANGES), devices=[0, 1, 2], min_gap_ns=0) == want
    assert busy(with_ranges(ROWS, RANGES), devices=[0, 1, 2], min_gap_ns=5) == want     # the drawn islands join the gap
    assert busy(with_ranges(ROWS, RANGES), devices=[1], min_gap_ns=5) == {(1, 2): 30, (1, 3): 30}


def test_a_copy_running_past_the_wall_counts_only_inside_it():
    """The wall ends at the later of the last range end and the last kernel end (1120 here); memory
    operations do not move it, so a copy [1100, 1200) adds 20 ns, not 100, and no lane outlasts the wall."""
    got = busy(with_ranges(ROWS + [(2, 0, "[CUDA memcpy]", "memory", 1100, 1200)], RANGES), devices=[0], min_gap_ns=0)
    assert got[(0, 0)] == 10 + 20
    assert got[(0, 3)] == 68                       # kernels only: the copy is not busy time
