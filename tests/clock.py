"""Waiting for the file system's clock, for tests that rewrite a file and need its change time to move."""

from __future__ import annotations

import time
from pathlib import Path


def past_change_time(path: Path, within_s: float = 30) -> None:
    """Return once a write beside `path` is stamped later than `path`'s change time (ctime).

    File times come from a coarse clock (a few ms per tick): a rewrite in the same tick as the last one
    keeps the same ctime and cannot be told from no rewrite. A probe file is written until its ctime is
    later, rather than sleeping a guessed interval that a loaded machine may not honour.
    """
    probe = path.with_name(path.name + ".clock-probe")
    before, end = path.stat().st_ctime_ns, time.monotonic() + within_s
    try:
        while time.monotonic() < end:
            probe.write_bytes(b"")
            if probe.stat().st_ctime_ns > before:
                return
        raise AssertionError(f"the file system's clock did not move past {path}'s change time in {within_s} s")
    finally:
        probe.unlink(missing_ok=True)
