"""Time per CUDA stream: which streams of each device carried the attributed kernels (issue #35's example).

Registered in analysis/registry.py (the entry names its result.json key, `stream_times`, and the
table the report draws of it); the interval arithmetic is window_unions.sql's `stream` grouping (the
window's one union pass) and stream_times.sql over the window's `classified` table, whose `stream_id` is the
export's streamId. On one stream kernels run one after another, so a union below the sum says the stream's
kernels overlapped (several streams of one process captured as one, or clipped ranges): union is what the
stream held the device busy, sum what its kernels lasted.
"""

from __future__ import annotations

from typing import Any

from pipeline.analysis.measure import NS
from pipeline.trace import chain
from pipeline.trace.open import Trace


def stream_times(trace: Trace) -> list[dict[str, Any]]:
    """Per device and stream, busiest first: kernel count, summed duration and union, in seconds, from the
    window's unions (measure.analyse made them, or a shared or kept window did)."""
    rows = chain.run(trace.con, {"stream_times"})["stream_times"]
    return [{"device_id": r["device_id"], "stream_id": r["stream_id"], "count": r["kernel_count"],
             "sum_s": r["sum_ns"] / NS, "union_s": r["union_ns"] / NS} for r in rows]
