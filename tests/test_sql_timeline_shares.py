"""timeline_shares.sql: per device, each lane's time and the idle time of one step (by hand)."""

from __future__ import annotations

from pipeline.trace import chain
from tests.sqlfixtures import with_ranges
from tests.test_sql_timeline_busy import RANGES, ROWS


def test_lanes_and_idle_per_device():
    con = with_ranges(ROWS, RANGES)
    rows = chain.run(con, {"timeline_islands", "timeline_busy", "timeline_shares"}, occurrence=2, devices=[0, 1, 2],
                     min_gap_ns=5, comm_class="communication")["timeline_shares"]
    got = {(r["device_id"], r["lane"]): r["lane_ns"] for r in rows}
    # the wall: from the earliest range start (1000) to the later of the last range end (1110) and the
    # last kernel end (1120): 120 ns. Idle is the wall less the union of all the device's kernels.
    assert got == {(0, "compute"): 48, (0, "communication"): 30, (0, "memory"): 10, (0, "idle"): 120 - 68,
                   (1, "compute"): 30, (1, "communication"): 0, (1, "memory"): 0, (1, "idle"): 120 - 30,
                   (2, "compute"): 0, (2, "communication"): 0, (2, "memory"): 0, (2, "idle"): 120}
