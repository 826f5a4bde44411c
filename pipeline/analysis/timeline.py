"""One step drawn to scale: the data behind the report's timeline chart (issue 14).

The median occurrence by wall time, among those where kernels ran, is the representative step. Its per-device lanes come
from pipeline/trace/sql/timeline.sql, with intervals closer than one pixel of the chart
joined, so result.json stays small whatever the kernel count.
"""

from __future__ import annotations

from typing import Any

import duckdb

from pipeline.analysis.measure import NS, Measurement, SortedRows
from pipeline.trace import chain, queries
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
    steps = {"timeline_islands", "timeline_busy", "timeline", "timeline_shares"}
    if m.rows is not None and min(devices, default=0) >= 0:    # no device -1: a NULL device in the sorted rows
        _step_from_sorted(trace.con, m.rows, step, devices, gap_ns)
        steps -= {"timeline_islands", "timeline_busy"}
    found = chain.run(trace.con, steps, occurrence=step["occurrence"], devices=devices, min_gap_ns=gap_ns,
                      comm_class=comm_class)
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


def _step_from_sorted(con: duckdb.DuckDBPyConnection, rows: SortedRows, step: dict[str, Any], devices: list[int],
                      gap_ns: int) -> None:
    """The tables timeline_islands.sql and timeline_busy.sql make, from a shared window's rows sorted once
    (window_unions.sql's: kernel and comm flags, device): the step's rows are taken there in start order, not
    scanned out of the window's 2 M into a timeline_step table, fetched twice and sorted twice (0.06 CPU s a job
    at bench/run_bench.py's 2 M kernels). The same rows, lanes and clipping as those files'."""
    import numpy as np
    from pipeline.trace import unions
    found = unions.occurrence_rows(rows.sorted, step["occurrence"], ("kernel", "comm", "device_id"))
    keep = np.isin(found["device_id"], devices)
    kernel = found["kernel"][keep]
    lane = np.where(kernel == 0, 0, np.where(found["comm"][keep] == 1, 1, 2))     # memory, communication, other
    start, end = found["start_ns"][keep], found["end_ns"][keep]
    keys = {"device_id": found["device_id"][keep], "lane": lane, "kernel": kernel}
    queries.store_given(con, "timeline_islands", {**keys, "start_ns": start, "end_ns": end + gap_ns})
    t0, t1 = step["start_ns"], step["start_ns"] + step["wall_ns"]
    inside = (end > t0) & (start < t1)
    queries.store_given(con, "timeline_busy", {**{k: v[inside] for k, v in keys.items()},
                                               "start_ns": np.maximum(start[inside], t0),
                                               "end_ns": np.minimum(end[inside], t1)})
