"""Time per CUDA stream (analysis/streams.py, the registry's example analysis) against the synthetic ground truth.

The generator puts every compute kernel on stream 7 and every `nccl_every`-th launch, an NCCL kernel, on
stream 13, each stream's kernels one after another (synth._step_kernels: a kernel starts after the
stream's previous one ended), so on each stream the union equals the sum. With 40 kernels a step and
nccl_every 8, launches 7, 15, 23, 31 and 39 are NCCL: 5 a step on stream 13, 35 on stream 7. The NCCL
kernels' union per step is the truth's exposed + hidden communication; stream 7 holds the rest of the
step's kernel sum.
"""

from __future__ import annotations

from pipeline.job.config import load_job
from pipeline.report.render import render_all
from pipeline.run import run_job
from tests.test_run_synth import write_job

NS = 1e9


def test_stream_times_by_hand_on_a_synthetic_trace(synth_trace, tmp_path):
    trace, truth = synth_trace(ranks=1, steps=3, kernels_per_step=40, nccl_every=8)
    res = run_job(load_job(write_job(tmp_path, trace, hardware={"num_gpus": 1})))
    occ = truth["occurrences"]
    nccl_ns = sum(o["device_comm_ns"]["0"]["exposed_ns"] + o["device_comm_ns"]["0"]["hidden_ns"] for o in occ)
    compute_ns = sum(o["kernel_sum_ns"] for o in occ) - nccl_ns
    got = [(s["device_id"], s["stream_id"], s["count"], round(s["sum_s"] * NS), round(s["union_s"] * NS))
           for s in res["stream_times"]]
    assert got == [(0, 7, 3 * 35, compute_ns, compute_ns), (0, 13, 3 * 5, nccl_ns, nccl_ns)]
    assert compute_ns > nccl_ns > 0                                      # the order: busiest first


def test_both_pages_show_the_stream_table(synth_trace, tmp_path):
    trace, _ = synth_trace(ranks=1, steps=3, kernels_per_step=40, nccl_every=8)
    files = render_all(run_job(load_job(write_job(tmp_path, trace, hardware={"num_gpus": 1}))))
    md = files["report.md"].splitlines()
    at = md.index("### Time per CUDA stream")
    assert md[at + 4].startswith("| device | stream | kernels | sum (ms) | union (ms) |")
    assert md[at + 6].startswith("| 0 | 7 | 105 | ")
    assert md[at + 7].startswith("| 0 | 13 | 15 | ")
    assert '<h3 id="streams">Time per CUDA stream</h3>' in files["report.html"]
    assert '<tr><td class="n">0</td><td class="n">13</td><td class="n">15</td>' in files["report.html"]
