"""Issue #11 §5: the precision matrix kernels ran in, read from their names, against the declared one.

Expected shares are computed here from the trace file with sqlite3 and a hand-written
name -> precision table, never from the code under test."""

from __future__ import annotations

import re
import sqlite3

import pytest

from pipeline.analysis import precision
from pipeline.hardware.catalog import load_catalog
from pipeline.hardware.detect import fp16_accumulate_at, peak_at, resolve_peak
from pipeline.job.config import load_job
from pipeline.report.render import render_all
from pipeline.run import run_job
from tests.nsys_export import Export, gpid, gtid
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


# ---------------------------------------------------------------- FP16 accumulate on a GeForce card (docs/figures.md §8)

ACC16 = "sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwckrsc_nhwc_kernel_trt"    # C and accumulator f16
ACC32 = "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_kernel"              # accumulator f32


def _geforce_trace(path):
    """One RTX 3090, one `step` range 0..2000 ns; two fp16 matrix kernels launched inside it:
    600 ns that accumulate in FP16 (300..900), 400 ns that accumulate in FP32 (900..1300)."""
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    e.range(0, 2000, main, "step")
    for corr, launch, (start, end, name) in ((1, 100, (300, 900, ACC16)), (2, 200, (900, 1300, ACC32))):
        e.launch(launch, main, corr)
        e.kernel(start, end, key, corr, name=name)
    e.gpus.append({"id": 0, "name": "NVIDIA GeForce RTX 3090", "totalMemory": 25_769_803_776,
                   "memoryBandwidth": 936_192_000_000, "clockRate": 1_695_000_000, "smCount": 82,
                   "chipName": "GA102", "cuDevice": 0})
    return e.write(path)


def test_fp16_accumulate_kernels_on_a_geforce_card_warn_with_both_peaks(tmp_path):
    """By hand: 600 of the 1000 ns of matrix-kernel time accumulate in FP16 (60.0 %); the RTX 3090's fp16
    peak is 71 TFLOP/s with FP32 accumulate and 142 with FP16 accumulate (GA102 whitepaper), so the
    MFU (1e9 FLOP over the 2000 ns wall at 71 TFLOP/s = 0.704 %) would be half against 142."""
    trace = _geforce_trace(tmp_path / "geforce.sqlite")
    job = write_job(tmp_path, trace, region={"name": "step"},
                    hardware={"gpu": "auto", "num_gpus": 1, "precision": "fp16"},
                    model={"flops_per_step": 1.0e9}, workload={"mode": "inference"})
    res = run_job(load_job(job))
    assert res["hardware"]["peak_tflops"] == 71
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 1.0e9 / (2000e-9 * 71e12))
    acc = res["gemm_precision"]["fp16_accumulate"]
    assert (acc["count"], acc["sum_s"], acc["share"], acc["kernels"]) == (1, 600e-9, 0.6, [ACC16])
    [warning] = [w for w in res["warnings"] if w["code"] == "fp16_accumulate"]
    assert warning["message"].startswith("60.0 % of matrix-kernel time")
    assert ACC16 in warning["message"] and ACC32 not in warning["message"]
    assert "at 142 TFLOP/s dense, 2x the peak 71 TFLOP/s used for MFU" in warning["message"]
    assert warning["message"].endswith("set hardware.peak_tflops: 142")
    assert "`fp16_accumulate`" in render_all(res)["report.md"]


@pytest.mark.parametrize("hardware, warned", [
    ({"gpu": "rtx-3090", "precision": "fp16"}, True),
    ({"gpu": "rtx-3090", "precision": "fp16", "peak_tflops": 142}, False),    # the job already took that peak
    ({"gpu": "rtx-3090", "precision": "bf16"}, False),                        # precision_mismatch's business
    ({"gpu": "h100-sxm", "precision": "fp16"}, False),                        # no faster FP16-accumulate rate
])
def test_fp16_accumulate_warns_only_where_the_gpu_runs_it_faster_than_the_peak_used(hardware, warned):
    catalog = load_catalog()
    hardware = {"num_gpus": 1, **hardware}
    peak = resolve_peak(catalog, hardware, None)
    section = {**_section({"fp16": 1.0}),
               "fp16_accumulate": {"count": 1, "sum_s": 0.5, "share": 0.5, "kernels": [ACC16]}}
    _, warnings = precision.judge(section, hardware, peak.peak_tflops, peak.gpu,
                                  {"fp16": peak_at(catalog, peak, "fp16")}, fp16_accumulate_at(catalog, peak))
    assert [w["code"] for w in warnings if w["code"] == "fp16_accumulate"] == (["fp16_accumulate"] if warned else [])


@pytest.mark.parametrize("share, warned", [(0.10, False), (0.11, True), (None, False)])
def test_fp16_accumulate_warns_above_ten_percent_of_matrix_time(share, warned):
    catalog = load_catalog()
    hardware = {"gpu": "rtx-3090", "num_gpus": 1, "precision": "fp16"}
    peak = resolve_peak(catalog, hardware, None)
    section = {**_section({"fp16": 1.0}),
               "fp16_accumulate": {"count": 1, "sum_s": share or 0.0, "share": share, "kernels": [ACC16]}}
    _, warnings = precision.judge(section, hardware, peak.peak_tflops, peak.gpu, {"fp16": 71.0},
                                  fp16_accumulate_at(catalog, peak))
    assert bool(warnings) is warned


def test_real_tensorrt_fp16_convolutions_on_an_rtx_3090_warn(real_trace, tmp_path):
    """memfusion: TensorRT on an RTX 3090: its convolutions xmma …f16f16_f16f16_f16… and one
    trt_ampere_h16816gemm, all FP16 accumulate. The expected time is derived here with sqlite3 from the
    kernel names (all kernels of the trace run inside the one range)."""
    path = real_trace("LeiWang1999__memfusion_artifact__report1.sqlite")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT s.value, k.\"end\" - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                           "JOIN StringIds s ON s.id = k.shortName").fetchall()
    finally:
        con.close()
    matrix = [(n, ns) for n, ns in rows if "fprop" in n or "gemm" in n.lower()]
    acc16 = sum(ns for n, ns in matrix if "f16f16_f16f16" in n or re.search(r"_h\d{3,5}gemm", n))
    assert any(n.startswith("trt_ampere_h16816gemm") for n, _ in matrix)
    assert acc16 > 0.1 * sum(ns for _, ns in matrix)
    job = write_job(tmp_path, path, region={"name": "ExecutionContext::execute"},
                    hardware={"gpu": "auto", "num_gpus": 1, "precision": "fp16"},
                    model={"flops_per_step": 1.0e9}, workload={"mode": "inference"})
    res = run_job(load_job(job))
    acc = res["gemm_precision"]["fp16_accumulate"]
    assert round(acc["sum_s"] * 1e9) == acc16
    assert acc["share"] == pytest.approx(acc16 / sum(ns for _, ns in matrix), rel=1e-12)
    [warning] = [w for w in res["warnings"] if w["code"] == "fp16_accumulate"]
    assert "NVIDIA GeForce RTX 3090 runs FP16-accumulate tensor math at 142 TFLOP/s dense" in warning["message"]
