"""Issue #11 §5: the precision matrix kernels ran in, read from their names, against the declared one.

Expected shares are computed here from the trace file with sqlite3 and a hand-written
name -> precision table, never from the code under test."""

from __future__ import annotations

import sqlite3

import pytest

from pipeline.analysis import precision
from pipeline.hardware.catalog import load_catalog
from pipeline.hardware.detect import peak_at, resolve_peak
from pipeline.job.config import load_job
from pipeline.report.render import render_all
from pipeline.run import run_job
from tests.test_run_synth import write_job

# The synthetic generator's matrix kernels (pipeline/trace/synth.py), by hand.
SYNTH_MATRIX = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel"
    "__5x_cublas": "bf16",
    "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>": "bf16",
    "nvjet_tst_192x192_64x4_2x1_v_bz_coopA_TNT": "unknown",
    "flash_fwd_kernel": "unknown",
    "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel": "unknown",
}
ALL_STEPS = {"occurrences": {"first": 1, "last": 5}}


def _time_by_precision(path) -> dict[str, int]:
    """Summed kernel durations per precision of the matrix kernels in the file (all in a step range)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT s.value, sum(k.\"end\" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                       "JOIN StringIds s ON s.id = k.shortName GROUP BY s.value").fetchall()
    out: dict[str, int] = {}
    for name, ns in rows:
        if name in SYNTH_MATRIX:
            out[SYNTH_MATRIX[name]] = out.get(SYNTH_MATRIX[name], 0) + ns
    return out


def _run(synth_trace, tmp_path, **hardware):
    path, _ = synth_trace()
    job = write_job(tmp_path, path, region=ALL_STEPS, hardware={"peak_tflops": 50000, **hardware})
    return path, run_job(load_job(job))


def test_declared_precision_matches_no_warning(synth_trace, tmp_path):
    path, res = _run(synth_trace, tmp_path, precision="bf16")
    want = _time_by_precision(path)
    gp = res["gemm_precision"]
    got = {p["precision"]: round(p["sum_s"] * 1e9) for p in gp["precisions"]}
    assert got == want
    assert gp["mismatch_share"] == 0
    assert {p["precision"]: p["matches_declared"] for p in gp["precisions"]} == {"bf16": True, "unknown": None}
    assert not [w for w in res["warnings"] if w["code"] == "precision_mismatch"]


def test_another_declared_precision_warns_with_the_kernels_and_their_peak(synth_trace, tmp_path):
    path, res = _run(synth_trace, tmp_path, precision="fp8", gpu="h100-sxm", peak_tflops=None)
    want = _time_by_precision(path)
    gp = res["gemm_precision"]
    assert gp["mismatch_share"] == pytest.approx(want["bf16"] / sum(want.values()), rel=1e-12)
    bf16 = next(p for p in gp["precisions"] if p["precision"] == "bf16")
    assert bf16["peak_tflops"] == 989.4                  # configs/hardware.yaml h100-sxm dense bf16
    [warning] = [w for w in res["warnings"] if w["code"] == "precision_mismatch"]
    assert "in bf16 (peak 989.4 TFLOP/s" in warning["message"] and "declared fp8" in warning["message"]
    # the declared fp8 peak (configs/hardware.yaml h100-sxm dense fp8), with the thousands separator the tables use
    assert "declared fp8 (peak 1,978.9 TFLOP/s on " in warning["message"]
    assert "sm90_xmma_gemm_bf16bf16_bf16f32_f32" in warning["message"]
    files = render_all(res)
    assert "### Precision the matrix kernels ran in" in files["report.md"]
    assert "| bf16 | " in files["report.md"] and "<strong>no</strong>" in files["report.html"]


def test_fp8_with_a_bf16_fraction_expects_bf16_kernels(synth_trace, tmp_path):
    _, res = _run(synth_trace, tmp_path, precision="fp8", fp8_fraction=0.5, gpu="h100-sxm", peak_tflops=None)
    assert res["gemm_precision"]["mismatch_share"] == 0
    assert not [w for w in res["warnings"] if w["code"] == "precision_mismatch"]


def _section(shares: dict[str, float]) -> dict:
    return {"classes": ["gemm"], "sum_s": 1.0, "precisions": [
        {"precision": p, "count": 1, "sum_s": s, "share": s, "kernels": [f"k_{p}"]} for p, s in shares.items()]}


@pytest.mark.parametrize("shares, warned", [
    ({"bf16": 0.90, "fp32": 0.10}, False),                   # exactly 10 %: not more than 10 %
    ({"bf16": 0.89, "fp32": 0.11}, True),
    ({"bf16": 0.20, "unknown": 0.80}, False),                # unknown is never a mismatch
    ({"unknown": 0.85, "fp32": 0.06, "fp8": 0.09}, True),    # 15 % in two other precisions
])
def test_more_than_ten_percent_in_known_other_precisions_warns(shares, warned):
    catalog = load_catalog()
    hardware = {"gpu": "h100-sxm", "num_gpus": 1, "precision": "bf16"}
    peak = resolve_peak(catalog, hardware, None)
    section = _section(shares)
    peaks = {p: peak_at(catalog, peak, p) for p in shares}
    section, warnings = precision.judge(section, hardware, peak.peak_tflops, peak.gpu, peaks)
    assert bool(warnings) is warned
    assert section["mismatch_share"] == pytest.approx(sum(s for p, s in shares.items() if p not in ("bf16", "unknown")))


def test_real_fp32_gemms_under_a_bf16_job_warn(real_trace, tmp_path):
    """nsysai__h100_2gpu_1s runs its linear layers as FP32 FFMA GEMMs (…f32f32…ffma…)."""
    path = real_trace("nsysai__h100_2gpu_1s.sqlite")
    job = write_job(tmp_path, path, region={"name": "aten::linear", "match": "prefix",
                                            "occurrences": {"first": 5, "last": 24}},
                    hardware={"gpu": "h100-sxm", "num_gpus": 2, "precision": "bf16"},
                    model={"flops_per_step": 1.0e+9})
    res = run_job(load_job(job))
    gp = res["gemm_precision"]
    assert [(p["precision"], p["share"], p["peak_tflops"]) for p in gp["precisions"]] == [("fp32", 1.0, 66.9)]
    [warning] = [w for w in res["warnings"] if w["code"] == "precision_mismatch"]
    assert "100.0 % in fp32 (peak 66.9 TFLOP/s: sm80_xmma_gemm_f32f32_f32f32_f32_tn_n" in warning["message"]


def test_fp64_names_match_either_fp64_peak():
    """A kernel name says fp64 (dgemm); whether it ran on the tensor cores the name does not say."""
    assert precision.matches("fp64", {"precision": "fp64"}) is True
    assert precision.matches("fp64", {"precision": "fp64_tensor"}) is True
    assert precision.matches("fp64", {"precision": "fp32"}) is False
    assert precision.matches("unknown", {"precision": "bf16"}) is None
