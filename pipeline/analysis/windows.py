"""Regions that are no NVTX range: the capture's GPU-active window and an explicit time window (job region.kind).

Many real captures have no NVTX range around their GPU work (HPC benchmarks, `torch.compile` CUDA-graph
captures, kernel tutorials), yet the user knows the FLOPs that work holds. Such a window is built as one
synthetic range per process (window_ranges.sql), occurrence 1, and measured from there on exactly as a
selected NVTX range is, by window attribution: every GPU row of the process inside the window, clipped
to it. The window spans the GPU's times, not the CPU's, so attribution by launch would miss the first
kernels (launched before the window opens); window attribution takes them all.

A time window is relative to the capture's start, which is 0 on the export's clock: Nsight Systems writes
every event time as ns since the session started (in every shared trace, events lie within 0 and
ANALYSIS_DETAILS.duration; its startTime and TARGET_INFO_SESSION_START_TIME are the same moment on other
clocks, the raw one and UTC). So no table anchors it, and exports lacking both (2021, trimmed) work alike.
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import TraceError
from pipeline.job.config import Region
from pipeline.trace import chain
from pipeline.trace.discovery import CAPTURE
from pipeline.trace.open import Trace

NS = 1_000_000_000
# The raw views holding GPU work a window counts: kernels, CUDA graph launch rows, memory copies and sets.
WINDOW_WORK = ("raw_kernel", "raw_graph_trace", "raw_memcpy", "raw_memset")


def select(trace: Trace, region: Region) -> list[dict[str, Any]]:
    """Build region_ranges for a window kind; its rows per process (region_counts.sql), or why there are none."""
    if lacking := trace.refusals(("raw_strings", *WINDOW_WORK)):
        raise TraceError(f"{trace.path}: " + "; ".join(lacking))
    if not any(trace.has(raw) for raw in WINDOW_WORK):
        raise TraceError(f"{trace.path}: the trace holds no GPU work (no kernel, CUDA graph launch, memory copy or "
                         f"memory set table), so it has no GPU-active window; capture with {CAPTURE}")
    found = chain.run(trace.con, {"window_ranges", "region_counts"}, start_ns=region.start_ns, end_ns=region.end_ns)
    counts = found["region_counts"]
    negative = [r["global_pid"] for r in counts if r["global_pid"] < 0]
    if negative:
        raise TraceError(f"{trace.path}: GPU work rows (kernel, CUDA graph launch or memory tables) have a negative "
                         f"globalPid ({negative[0]}): an id packs host and pid and is never negative, so no process "
                         "is known for them; re-export the report with `nsys export --type sqlite`, or remove those "
                         "rows on a copy")
    span = found["window_ranges"][0]
    if not counts:
        raise TraceError(_nothing_inside(trace, region, span))
    if span["without_length"]:
        raise TraceError(f"{trace.path}: the GPU work of {span['without_length']} of {len(counts)} process(es) has no "
                         "length: every row ends at or before the first one's start, so its GPU-active window is no "
                         "time interval (the trace lost the GPU timestamps); export the report again")
    return counts


def _nothing_inside(trace: Trace, region: Region, span: dict[str, Any]) -> str:
    """No process has GPU work in the window: none in the trace (tables present but empty), or none in the time
    window, which is said with where the trace's GPU work is, so the window can be moved onto it."""
    if not span["rows"]:
        return (f"{trace.path}: the trace's GPU work tables hold no row (no kernel, CUDA graph launch, memory copy or "
                f"set ran while it captured), so it has no GPU-active window; capture with {CAPTURE}")
    return (f"{trace.path}: no GPU work overlaps the time window {region.start_s:g} s to "
            f"{region.end_s:g} s after the capture's start; the trace's GPU work runs from "
            f"{span['first_ns'] / NS:.6g} s to {span['last_ns'] / NS:.6g} s after it. Fix region.start_s and "
            "region.end_s in the job")
