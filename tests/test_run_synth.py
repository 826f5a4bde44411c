"""End to end on synthetic traces: every figure equals the generator's ground truth.

The ground truth is computed by pipeline/trace/synth.py at generation time from the
planted intervals (sort-and-merge in Python), independently of the SQL under test.
MFU is then recomputed here by hand from that truth, the job's numbers and the
datasheet peak typed into this file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.job.config import load_job
from pipeline.job.documents import validator
from pipeline.run import run_job

H100_SXM_BF16 = 989.4           # TFLOP/s dense, NVIDIA H100 datasheet (1,979 with sparsity)
NS = 1e9


def write_job(folder: Path, trace: Path, **over) -> Path:
    region = {"name": "train_step", "occurrences": {"first": 1}, **over.pop("region", {})}
    body = {
        "name": "synthetic",
        "trace": str(trace),
        "region": region,
        "hardware": {"gpu": "auto", "num_gpus": 2, "precision": "bf16", **over.pop("hardware", {})},
        "model": over.pop("model", {"flops_per_step": 4.0e+14}),
        "workload": {"mode": "training", "seq_len": 4096, "global_batch": 16, **over.pop("workload", {})},
        **over,
    }
    path = folder / "job.yaml"
    path.write_text(json.dumps(body))     # JSON is YAML
    return path


@pytest.fixture
def truth_run(synth_trace, tmp_path):
    def go(spec: dict | None = None, **job_over):
        trace, truth = synth_trace(**(spec or {}))
        return run_job(load_job(write_job(tmp_path, trace, **job_over))), truth
    return go


def test_times_match_ground_truth(truth_run):
    res, truth = truth_run()
    assert len(res["occurrences"]) == len(truth["occurrences"]) == 5
    assert len(res["occurrences"]) == len(truth["occurrences"]) == truth["spec"]["steps"]
    for got, want in zip(res["occurrences"], truth["occurrences"]):
        assert got["index"] == want["index"]
        assert got["start_ns"] == want["start_ns"]
        assert round(got["cpu_range_s"] * NS) == want["cpu_range_ns"]
        assert round(got["wall_time_s"] * NS) == want["wall_ns"]
        assert round(got["gpu_kernel_sum_s"] * NS) == want["kernel_sum_ns"]
        assert round(got["gpu_kernel_union_s"] * NS) == want["kernel_union_ns"]
        assert got["kernel_count"] == want["kernel_count"]
        assert {d: round(s * NS) for d, s in got["device_union_s"].items()} == want["device_union_ns"]


def test_sum_exceeds_union_because_nccl_overlaps(truth_run):
    res, truth = truth_run()
    for want in truth["occurrences"]:
        assert want["kernel_sum_ns"] > want["kernel_union_ns"]    # the plant really overlaps
    assert res["totals"]["gpu_kernel_sum_s"] > res["totals"]["gpu_kernel_union_s"]


def test_mfu_by_hand(truth_run):
    res, truth = truth_run(region={"occurrences": {"first": 2, "last": 4}})
    picked = [o for o in truth["occurrences"] if 2 <= o["index"] <= 4]
    wall_s = sum(o["wall_ns"] for o in picked) / NS
    union_s = sum(o["kernel_union_ns"] for o in picked) / NS
    flops = 3 * 4.0e14          # three occurrences of one step each; flops_per_step is the whole step
    assert res["totals"]["model_flops"] == 1_200_000_000_000_000
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * flops / (wall_s * 2 * H100_SXM_BF16 * 1e12), rel=1e-12)
    assert res["metrics"]["active_ratio_pct_union"] == pytest.approx(
        100 * flops / (union_s * 2 * H100_SXM_BF16 * 1e12), rel=1e-12)
    assert res["metrics"]["tokens_per_s"] == pytest.approx(3 * 16 * 4096 / wall_s, rel=1e-12)
    assert res["hardware"]["peak_tflops"] == H100_SXM_BF16
    # identity of docs/figures.md §1: MFU = active ratio x union / wall
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(
        res["metrics"]["active_ratio_pct_union"] * union_s / wall_s, rel=1e-12)


def test_thread_attribution_misses_the_autograd_thread(truth_run):
    res, truth = truth_run(region={"attribution": "thread"})
    assert len(res["occurrences"]) == len(truth["occurrences"]) == truth["spec"]["steps"]
    for got, want in zip(res["occurrences"], truth["occurrences"]):
        assert got["kernel_count"] == want["thread_kernel_count"] < want["kernel_count"]
        assert round(got["gpu_kernel_union_s"] * NS) == want["thread_kernel_union_ns"]


def test_kernels_without_launch_rows_are_counted_apart(truth_run):
    res, truth = truth_run({"drop_launch_every": 7})
    assert len(res["occurrences"]) == len(truth["occurrences"]) == truth["spec"]["steps"]
    for got, want in zip(res["occurrences"], truth["occurrences"]):
        assert got["kernel_count"] == want["kernel_count"]
        assert got["unattributed_kernel_count"] == want["unattributed_kernel_count"] > 0
    (w,) = [w for w in res["warnings"] if w["code"] == "unattributed_kernels"]
    missed = sum(o["unattributed_kernel_count"] for o in truth["occurrences"])
    assert w["message"].startswith(f"{missed} kernels of the ranges' processes ran, wholly or partly, inside")
    assert res["totals"]["unattributed_kernel_count"] == missed          # all occurrences', not the largest one


def test_covers_scales_the_numerator(truth_run):
    micro, _ = truth_run(region={"covers": "microbatch"},
                         workload={"micro_batch": 2, "grad_accum": 4}, parallelism={"data": 2})
    five, _ = truth_run(region={"covers": 5})
    assert micro["flops"]["model_flops_per_occurrence"] == 100_000_000_000_000     # 4e14 / grad_accum 4
    assert five["flops"]["model_flops_per_occurrence"] == 2_000_000_000_000_000    # 5 steps x 4e14


def test_straggler_rank_widens_the_wall(truth_run):
    res, truth = truth_run({"straggler_rank": 1, "straggler_ns": 3_000_000})
    assert len(res["occurrences"]) == len(truth["occurrences"]) == truth["spec"]["steps"]
    for got, want in zip(res["occurrences"], truth["occurrences"]):
        assert round(got["wall_time_s"] * NS) == want["wall_ns"]
        assert got["rank_spread_s"] == pytest.approx(
            (max(want["rank_wall_ns"].values()) - min(want["rank_wall_ns"].values())) / NS, abs=1e-12)


def test_mfu_above_100_is_invalid_not_a_measurement(truth_run):
    res, _ = truth_run(model={"flops_per_step": 4.0e+17})
    assert res["status"] == "invalid"
    assert "physically impossible" in res["status_reason"]


def test_result_matches_its_schema(truth_run):
    res, _ = truth_run()
    errors = [e.message for e in validator("result.schema.json").iter_errors(json.loads(json.dumps(res)))]
    assert errors == []


def test_window_attribution_clips_to_the_range(truth_run):
    res, truth = truth_run(region={"attribution": "window"})
    skew = truth["spec"]["rank_skew_ns"] * (truth["spec"]["ranks"] - 1)
    assert len(res["occurrences"]) == len(truth["occurrences"]) == truth["spec"]["steps"]
    for got, want in zip(res["occurrences"], truth["occurrences"]):
        # clipped kernels never reach past their range: wall is the envelope of the ranges alone
        assert round(got["wall_time_s"] * NS) == want["cpu_range_ns"] + skew < want["wall_ns"]
    assert res["region"]["attribution"] == "window"


def test_forward_only_numerator_is_flagged_not_printed(truth_run):
    """docs/figures.md §11: one forward pass (131.94 TFLOP) as the numerator of a training step is a scope error.

    131.94e12 = 2 x 8.03e9 params x 8192 tokens, roughly one forward of Llama-3-8B at seq 8192, batch 1:
    the megatron training figure is 51.47 GFLOP/token x 8192 = 4.216e14, about 3.2x more.
    """
    res, _ = truth_run(model={"preset": "llama-3-8b", "flops_per_step": 1.3194e+14},
                       workload={"seq_len": 8192, "global_batch": 1})
    assert res["status"] == "invalid"
    assert "one forward pass" in res["status_reason"]


def test_matching_explicit_numerator_passes(truth_run):
    # Llama-3-8B, seq 8192, batch 1, megatron: 51.47 GFLOP/token x 8192 tokens ~= 4.2165e14 (docs/figures.md §11)
    res, _ = truth_run(model={"preset": "llama-3-8b", "flops_per_step": 4.2165e+14},
                       workload={"seq_len": 8192, "global_batch": 1},
                       hardware={"peak_tflops": 50000})   # a 50 ms synthetic step needs a large peak to stay < 100 %
    assert res["status"] == "ok"
    assert not [w for w in res["warnings"] if w["code"] in ("scope_mismatch", "numerator_differs")]


def test_prefix_match_with_regex_characters_in_the_name(tmp_path):
    """A prefix such as 'aten::mm(' must be plain text: DuckDB would fail compiling it as a regex."""
    from pipeline.trace.synth import SynthSpec, generate
    trace = tmp_path / "paren.sqlite"
    generate(SynthSpec(region="step(fwd+bwd)", steps=3), trace)
    res = run_job(load_job(write_job(tmp_path, trace, region={"name": "step(", "match": "prefix"})))
    assert res["totals"]["occurrences"] == 3


def test_every_headline_figure_by_hand(truth_run):
    """The report's other figures, recomputed here from the ground truth and the job's numbers."""
    res, truth = truth_run(model={"flops_per_step": 4.0e+12, "hardware_flops_per_step": 5.0e+12},
                           hardware={"achievable_tflops": 600})
    occ = truth["occurrences"]
    walls = [o["wall_ns"] / NS for o in occ]
    wall_s, union_s = sum(walls), sum(o["kernel_union_ns"] for o in occ) / NS
    m = res["metrics"]
    assert m["hfu_pct_wall"] == pytest.approx(100 * 5 * 5.0e12 / (wall_s * 2 * H100_SXM_BF16 * 1e12), rel=1e-12)
    assert m["achieved_tflops_per_gpu"] == pytest.approx(5 * 4.0e12 / (wall_s * 2) / 1e12, rel=1e-12)
    assert m["mfu_pct_achievable"] == pytest.approx(100 * 5 * 4.0e12 / (wall_s * 2 * 600e12), rel=1e-12)
    assert m["union_over_wall_pct"] == pytest.approx(100 * union_s / wall_s, rel=1e-12)
    for got, o, w in zip(res["occurrences"], occ, walls):
        assert got["mfu_pct_wall"] == pytest.approx(100 * 4.0e12 / (w * 2 * H100_SXM_BF16 * 1e12), rel=1e-12)
        assert got["hfu_pct_wall"] == pytest.approx(100 * 5.0e12 / (w * 2 * H100_SXM_BF16 * 1e12), rel=1e-12)
    st = res["step_time"]
    assert (st["median_s"], st["min_s"], st["max_s"]) == (sorted(walls)[2], min(walls), max(walls))
    for dev in res["devices"]:
        busy = sum(o["device_union_ns"][str(dev["device_id"])] for o in occ) / NS
        assert dev["busy_pct_of_wall"] == pytest.approx(100 * busy / wall_s, rel=1e-12)


def test_roofline_rows_above_their_roof_are_warned(truth_run):
    """At a 0.5 TFLOP/s peak, Llama-3-8B's attention core (analytic FLOPs of a 4096-token step) cannot have run
    in the synthetic trace's attention kernels' time: its roofline row is above the roof, and the result says so."""
    res, _ = truth_run(model={"preset": "llama-3-8b"}, hardware={"peak_tflops": 0.5})
    above = [w["message"] for w in res["warnings"] if w["code"] == "above_roof"]
    assert any(m.startswith("roofline row 'attention core'") for m in above)


def test_an_impossible_mfu_from_a_declared_precision_the_kernels_did_not_run_in_says_so(truth_run):
    """fp64 declared (H100 SXM fp64 peak 33.5 TFLOP/s, from the catalog) on the synthetic trace, whose gemm
    kernels' names say bf16 (989.4): the MFU is far above 100 % and the verdict named scope errors and 'the
    peak may be too low' before anything the trace shows. It now names bf16 first."""
    res, _ = truth_run(hardware={"gpu": "h100-sxm", "num_gpus": 2, "precision": "fp64"})
    shares = {r["precision"]: r["share"] for r in res["gemm_precision"]["precisions"]}
    assert shares["bf16"] > 0.10 and res["metrics"]["mfu_pct_wall"] > 100
    assert res["status"] == "invalid"
    assert res["status_reason"].startswith("MFU above 100 % is physically impossible; likely: the matrix kernels ran "
                                           "in bf16 (warning precision_mismatch), whose peak is above the declared "
                                           "fp64's: check hardware.precision")
