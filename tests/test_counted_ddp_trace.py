"""MFU per component without shapes on the real 2-rank DDP trace (issue #31): its 'attention sublayer' and
'feed-forward sublayer' ranges (12 of each per rank) get the time of the kernels launched inside them,
worked out here from the SQLite file with plain Python, sharing no code with the SQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pipeline.job.config import load_job
from pipeline.run import run_job
from test_run_synth import write_job

DDP = "lizhieffe__assignment2-systems__2f6fc30e_ddp53_profile.sqlite"
MODEL = {"hidden": 64, "layers": 1, "heads": 2, "ffn": 256, "mlp": "gelu", "attention": "full", "lm_head": False}


def _launched_inside(path: Path, name: str) -> tuple[int, int]:
    """(ranges, summed kernel ns) of the kernels whose launch call starts inside a range called `name` on its
    thread (launch and kernel matched by process and correlationId, the first launch row of a pair)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ranges = con.execute("SELECT e.start, e.end, e.globalTid FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s "
                         "ON s.id = e.textId WHERE coalesce(e.text, s.value) = ? AND e.eventType = 59", [name]).fetchall()
    launches: dict[tuple[int, int], tuple[int, int]] = {}
    for start, tid, corr in con.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        key = (tid & ~0xFFFFFF, corr)
        if key not in launches or start < launches[key][0]:
            launches[key] = (start, tid)
    total = 0
    for start, end, pid, corr in con.execute("SELECT start, end, globalPid, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        launch = launches.get((pid, corr))
        if launch and any(lo <= launch[0] <= hi and tid == launch[1] for lo, hi, tid in ranges):
            total += end - start
    con.close()
    return len(ranges), total


def test_sublayers_get_the_kernels_launched_inside_them(real_trace, tmp_path) -> None:
    path = real_trace(DDP)
    job = write_job(tmp_path, path, region={"name": "forward pass"}, model=MODEL,
                    hardware={"num_gpus": 2, "peak_tflops": 71.0},
                    workload={"seq_len": 8, "global_batch": 2, "mode": "inference"},
                    analysis={"components": {"attention": "attention sublayer", "mlp": "feed-forward sublayer"}})
    parts = {p["range"]: p for p in run_job(load_job(job))["counted_flops"]["components"]}
    for name in ("attention sublayer", "feed-forward sublayer"):
        ranges, ns = _launched_inside(path, name)
        assert ranges == 24 and ns > 0
        assert parts[name]["time_s"] == pytest.approx(ns / 1e9, abs=1e-9)
        assert parts[name]["mfu_pct"] == pytest.approx(100 * parts[name]["flops"] / (ns / 1e9 * 71.0e12))
