"""One step drawn to scale: the data behind the report's timeline chart (issue 14).

The median occurrence by wall time, among those where kernels ran, is the representative step. Its per-device lanes come
from pipeline/trace/sql/timeline.sql, with intervals closer than one pixel of the chart
joined, so result.json stays small whatever the kernel count.
"""

from __future__ import annotations

from typing import Any

from pipeline.analysis.measure import NS, Measurement
from pipeline.trace import chain
from pipeline.trace.open import Trace

PLOT_PX = 900          # timeline plot width in pixels (report/charts.py draws it); gaps under one pixel are joined

MAX_DEVICES = 16       # lanes beyond these would make the chart taller than a screen
LANES = ("compute", "communication", "memory", "idle")


def median_occurrence(occurrences: list[dict[str, Any]]) -> tuple[dict[str, Any], int]:
    """The step whose wall time is the median (the lower one of an even count), and how many it is the
    median of: the occurrences where kernels ran, when any did. On op-level regions most occurrences
    can be kernel-less (their work ran under another range); drawing one would show an empty chart."""
    ran = [o for o in occurrences if o["kernel_count"] > 0] or occurrences
    ranked = sorted(ran, key=lambda o: (o["wall_ns"], o["occurrence"]))
    return ranked[(len(ranked) - 1) // 2], len(ranked)


def one_step(trace: Trace, m: Measurement, comm_class: str) -> dict[str, Any] | None:
    if not m.occurrences:
        return None
    step, median_of = median_occurrence(m.occurrences)
    devices = sorted(m.devices_used)[:MAX_DEVICES]
    gap_ns = max(1, step["wall_ns"] // PLOT_PX)
    found = chain.run(trace.con, {"timeline_islands", "timeline_busy", "timeline", "timeline_shares"},
                      occurrence=step["occurrence"], devices=devices, min_gap_ns=gap_ns, comm_class=comm_class)
    spans: dict[tuple[str, int | None], list[list[float]]] = {(r["lane"], r["device_id"]): []
                                                              for r in found["timeline"]}
    for r in found["timeline"]:        # islands, at most a few per pixel: not kernel rows
        spans[(r["lane"], r["device_id"])].append([r["start_ns"] / NS, r["end_ns"] / NS])
    lane_s = {(r["lane"], r["device_id"]): r["lane_ns"] / NS for r in found["timeline_shares"]}
    return {"occurrence": step["occurrence"], "median_of": median_of, "wall_s": spans[("wall", None)][0][1],
            "range_s": spans[("nvtx", None)][0], "joined_below_s": gap_ns / NS,
            "devices_total": len(m.devices_used),
            "devices": [{"device_id": d, **{lane: spans.get((lane, d), []) for lane in LANES},
                         "lane_time_s": {lane: lane_s[(lane, d)] for lane in LANES}} for d in devices]}
