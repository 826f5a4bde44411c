"""Exposed communication per NCCL communicator: which communicator's collectives the step waited for.

The window's `classified` table carries each kernel's communicator where the export says it (comm_key:
the "NCCL communicator ID" of the NCCL NVTX range whose call launched the kernel, nccl_ranges.sql and
attribute_launch.sql; NULL otherwise). Per device and communicator, comm_unions.sql and comm_times.sql
split the communicator's kernel time as comm_overlap.sql splits a device's (docs/figures.md §6): exposed
where no compute kernel ran on the device, hidden under one. An export without NCCL's NVTX payloads (no
NCCL domain, or ranges without a communicator ID) gives no row: the section says so.
"""

from __future__ import annotations

from typing import Any

from pipeline.analysis.measure import NS
from pipeline.trace import chain
from pipeline.trace.open import Trace


def communicator_times(trace: Trace, comm_class: str, made: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Per device and communicator, most exposed first: kernels, their union, exposed and hidden, in seconds.
    The communicator is written as the export writes its ID (a decimal unsigned 64-bit integer), as text.
    `made` (Measurement.made): a shared window already cut the job's comm_unions (analysis/sharing.py)."""
    rows = chain.run(trace.con, {"comm_unions", "comm_times"} - made, comm_class=comm_class)["comm_times"]
    return [{"device_id": r["device_id"], "communicator": str(r["comm_key"]), "count": r["kernel_count"],
             "comm_s": r["comm_ns"] / NS, "exposed_s": r["exposed_ns"] / NS, "hidden_s": r["hidden_ns"] / NS}
            for r in rows]
