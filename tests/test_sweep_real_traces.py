"""Every shared trace with kernels, through two jobs: a plausible numerator and the same one x1000 (#11 §2).

For each trace the region is the one `mfu inspect` ranks first by the GPU work it encloses.
The plausible numerator is derived from the trace itself: half of what the kernel union could
do at the peak, so the union diagnostic is 50 % and MFU on the wall at most that — a run must
come out ok (warnings allowed), every ratio at most 100 %. The same job with the numerator
x1000 puts the union diagnostic at 50,000 %: it must come out `invalid`, never a figure.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pipeline.job.config import load_job
from pipeline.run import run_job
from pipeline.trace.inspect import inspect_trace

from test_real_traces import ALL_TRACES
from tiers import sweep

PEAK_TFLOPS = 100.0             # any peak: the numerator is scaled to it
PLAUSIBLE_SHARE = 0.5           # the union diagnostic the plausible numerator aims at
IMPOSSIBLE_FACTOR = 1000


def has_kernels(path: Path) -> bool:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return "CUPTI_ACTIVITY_KIND_KERNEL" in tables and \
            con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] > 0
    finally:
        con.close()


def write_job(folder: Path, trace: Path, region: dict, gpus: int, flops: float) -> Path:
    path = folder / "job.yaml"
    path.write_text(json.dumps({
        "name": "sweep", "trace": str(trace), "region": region,
        "hardware": {"num_gpus": gpus, "precision": "bf16", "peak_tflops": PEAK_TFLOPS},
        "model": {"flops_per_step": flops}, "workload": {"mode": "training", "seq_len": 1, "global_batch": 1}}))
    return path


@pytest.mark.parametrize("name", sweep(ALL_TRACES))
def test_plausible_is_ok_and_x1000_is_invalid(real_trace, tmp_path, name):
    path = real_trace(name)
    if not has_kernels(path):
        pytest.skip(f"{name} holds no kernels: there is no utilization to judge")
    info = inspect_trace(path)
    regions = [r for r in info["region_discovery"]["regions"] if r["kernel_sum_ns"] > 0]
    if not regions:
        pytest.skip(f"{name}: no NVTX range encloses kernels, so no job can select work in it")
    top = regions[0]
    region = {**top["select"], "domain": top["domain"]}
    gpus = max(1, len(info["devices_used"]))
    probe = run_job(load_job(write_job(tmp_path, path, region, gpus, 1.0)))
    union_s, n = probe["totals"]["gpu_kernel_union_s"], probe["totals"]["occurrences"]
    assert union_s > 0, f"{name}: region {region} selects no kernel time"
    flops = round(PLAUSIBLE_SHARE * union_s / n * gpus * PEAK_TFLOPS * 1e12)

    plausible = run_job(load_job(write_job(tmp_path, path, region, gpus, flops)))
    m = plausible["metrics"]
    assert plausible["status"] == "ok", plausible["status_reason"]
    assert m["active_ratio_pct_union"] == pytest.approx(100 * PLAUSIBLE_SHARE, rel=1e-6)
    assert all(v is None or 0 <= v <= 100 for v in (m["mfu_pct_wall"], m["hfu_pct_wall"], m["active_ratio_pct_union"]))

    impossible = run_job(load_job(write_job(tmp_path, path, region, gpus, flops * IMPOSSIBLE_FACTOR)))
    assert impossible["status"] == "invalid" and "physically impossible" in impossible["status_reason"]
