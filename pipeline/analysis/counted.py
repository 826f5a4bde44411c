"""FLOPs counted from the shapes PyTorch records in its operator ranges (issue #31), as the window holds them.

operator_ranges.sql and operator_work.sql count them while the window is built (measure.build_window:
the launch table is read there only); counted_flops.sql sums the window's rows by operator, kind, named
range and in total. This module reads those sums and says whether the trace has operator ranges at all;
model/counted.py sets them beside the declared numerator, the peak and the job's components.
"""

from __future__ import annotations

from typing import Any

from pipeline.trace import queries
from pipeline.trace.open import Trace

LEVELS = ("operator", "kind", "label", "total")


def measure(trace: Trace) -> dict[str, list[dict[str, Any]]]:
    """counted_flops.sql's rows by level ('operator', 'kind', 'label'; 'total' is one row)."""
    rows = queries.run(trace.con, "counted_flops")
    return {level: [{k: v for k, v in r.items() if k != "level"} for r in rows if r["level"] == level]
            for level in LEVELS}
