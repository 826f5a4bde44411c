"""One trace file measured as `mfu run` measures it, for tests that look at the Measurement."""

from __future__ import annotations

from pipeline.analysis import classes
from pipeline.analysis.measure import Measurement, analyse, build_window
from pipeline.job.config import Region
from pipeline.trace.open import Trace


def measure(trace: Trace, region: Region) -> Measurement:
    """Build the region's window with the shipped class rules, then analyse it (views already made)."""
    window = build_window(trace, region, classes.classify_params(classes.load_rules()))
    return analyse(trace.con, window, classes.COMM_CLASS)
