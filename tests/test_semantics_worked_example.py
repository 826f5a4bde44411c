"""docs/figures.md §11's MFU worked number end to end: a hand-made trace in, the spec's figure out.

"3.9 PFLOP per step, 1.232 s wall, 8 GPUs at 989: supply 9.75 PFLOP, MFU ≈ 40 %". tests/test_metrics.py checks
the formula alone; here the wall comes from the trace: 8 ranks, one process and one GPU each, one `step` range of
1.232 s with one kernel inside it, so the envelope, and the wall, is 1.232 s.
"""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.job.config import load_job
from pipeline.run import run_job
from test_run_synth import write_job

WALL_NS = 1_232_000_000
GPUS, PEAK, FLOPS = 8, 989.0, 3.9e15


def test_forty_percent_from_a_trace(tmp_path):
    e = Export()
    for rank in range(GPUS):
        pid = 100 + rank
        e.range(0, WALL_NS, gtid(pid, pid), "step")
        e.launch(1_000, gtid(pid, pid), 1)
        e.kernel(2_000, WALL_NS - 1_000, gpid(pid), 1, device=rank)
    job = write_job(tmp_path, e.write(tmp_path / "t.sqlite"), region={"name": "step"},
                    hardware={"num_gpus": GPUS, "peak_tflops": PEAK}, model={"flops_per_step": FLOPS},
                    workload={"seq_len": 4, "global_batch": 8})
    res = run_job(load_job(job))
    assert res["status"] == "ok"
    assert res["totals"]["wall_time_s"] == 1.232
    supply = 1.232 * 8 * 989e12                               # FLOPs the 8 GPUs could do in the wall
    assert supply == pytest.approx(9.75e15, abs=0.005e15)     # "supply 9.75 PFLOP"
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(40.0, abs=0.05)     # "MFU ≈ 40 %"
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 3.9e15 / supply, rel=1e-12)
    assert res["metrics"]["achieved_tflops_per_gpu"] == pytest.approx(3.9e15 / (1.232 * 8) / 1e12, rel=1e-12)
