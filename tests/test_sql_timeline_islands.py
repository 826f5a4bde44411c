"""timeline_islands.sql: one step's activity per device and lane, joined into islands (by hand)."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified


def _islands(con, **params) -> dict[tuple[int, int], list[tuple[int, int]]]:
    queries.run(con, "timeline_islands", comm_class="communication", **params)
    out: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for device, lane, start, end in con.execute(
            "SELECT k1, CASE scope WHEN 'lane' THEN k2 ELSE 3 END, start_ns, end_ns FROM timeline_islands "
            "WHERE scope = 'lane' OR k2 = 1 ORDER BY 1, 2, 3").fetchall():       # lane 3: scope busy, kernels
        out.setdefault((device, lane), []).append((start, end))
    return out


def test_lanes_joined_below_the_gap_and_busy_over_all_kernels():
    con = classified([
        # device 0: gemm [0,30) and [31,50) 1 ns apart, a kernel inside the first [5,10), NCCL [40,70),
        # a copy [80,90) and one touching it [90,95); device 1 is not asked for; occurrence 3 is another step
        (2, 0, "gemm", "gemm", 0, 30), (2, 0, "gemm", "gemm", 31, 50), (2, 0, "gemm", "gemm", 5, 10),
        (2, 0, "nccl", "communication", 40, 70), (2, 0, "[CUDA memcpy]", "memory", 80, 90),
        (2, 0, "[CUDA memcpy]", "memory", 90, 95), (2, 1, "gemm", "gemm", 0, 100), (3, 0, "gemm", "gemm", 0, 500)])
    exact = _islands(con, occurrence=2, devices=[0], min_gap_ns=0)
    assert exact == {(0, 0): [(80, 95)],                    # touching copies join
                     (0, 1): [(40, 70)],
                     (0, 2): [(0, 30), (31, 50)],           # the kernel inside the first adds nothing
                     (0, 3): [(0, 30), (31, 70)]}           # busy: kernels only, NCCL bridges to 70
    joined = _islands(con, occurrence=2, devices=[0], min_gap_ns=2)      # ends lengthened by the gap
    assert joined[(0, 2)] == [(0, 52)] and joined[(0, 3)] == [(0, 72)] and joined[(0, 0)] == [(80, 97)]
