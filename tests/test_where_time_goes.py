"""Issue #5 end to end on synthetic traces: classes, overlap, roofline rows and their sources."""

from __future__ import annotations

import json

import pytest

from pipeline.config import load_job, validator
from pipeline.run import run_job
from tests.test_run_synth import write_job

LLAMA = {"preset": "llama-3-8b"}
WORK = {"seq_len": 8192, "global_batch": 1}
BIG_PEAK = {"peak_tflops": 50000}      # a 50 ms synthetic step needs a large peak to stay < 100 % MFU


def _run(synth_trace, tmp_path, spec=None, **over):
    trace, truth = synth_trace(**(spec or {}))
    return run_job(load_job(write_job(tmp_path, trace, **over))), truth


def test_classes_and_schema(synth_trace, tmp_path):
    res, truth = _run(synth_trace, tmp_path, model=LLAMA, workload=WORK, hardware=BIG_PEAK)
    classes = {c["class"]: c for c in res["kernel_classes"]}
    # default spec: 2 ranks x 5 steps x 40 kernels, every 8th is NCCL -> 50 communication kernels
    assert classes["communication"]["count"] == 2 * 5 * 40 // 8
    assert sum(c["count"] for c in classes.values()) == res["totals"]["kernel_count"]
    assert res["hardware"]["ridge_flop_per_byte"] == pytest.approx(50000e12 / 3350e9)
    assert [e.message for e in validator("result.schema.json").iter_errors(json.loads(json.dumps(res)))] == []
    dev0 = res["communication"]["devices"][0]
    want = sum(o["device_comm_ns"]["0"]["exposed_ns"] for o in truth["occurrences"])
    assert round(dev0["exposed_s"] * 1e9) == want


def test_analytic_rows_and_unambiguous_matching(synth_trace, tmp_path):
    res, _ = _run(synth_trace, tmp_path, model=LLAMA, workload=WORK, hardware=BIG_PEAK)
    rows = {r["operator"]: r for r in res["roofline"]}
    assert rows["QKV projection"]["measured_s"] is None          # shares the gemm class
    assert rows["all gemm operators"]["measured_s"] is not None
    assert rows["attention core"]["measured_s"] is not None      # alone in its class
    assert {r["source"] for r in rows.values()} == {"analytic"}
    assert not any("heuristic" in r["bound"] for r in rows.values())


def test_explicit_numerator_without_bytes_is_heuristic(synth_trace, tmp_path):
    res, _ = _run(synth_trace, tmp_path)          # flops_per_step only: no architecture, no bytes
    assert [r["operator"] for r in res["roofline"]] == ["whole region (model FLOPs)"]
    only = res["roofline"][0]
    assert only["source"] == "heuristic" and only["bound"].endswith("(heuristic)") and only["bytes"] is None


def test_job_figures_with_and_without_bytes(synth_trace, tmp_path):
    figures = [{"name": "gemms (ncu)", "kernels": "(?i)gemm|nvjet", "flops": 1e12, "bytes": 1e9},
               {"name": "flash (flops only)", "kernels": "^flash_", "flops": 1e12},
               {"name": "step (ncu)", "flops": 4e14, "bytes": 2e11}]
    res, _ = _run(synth_trace, tmp_path, analysis={"figures": figures})
    rows = {r["operator"]: r for r in res["roofline"]}
    assert rows["gemms (ncu)"]["source"] == "job" and rows["gemms (ncu)"]["arithmetic_intensity"] == 1000
    assert rows["flash (flops only)"]["source"] == "heuristic"
    assert rows["flash (flops only)"]["bound"].endswith("(heuristic)")
    assert rows["step (ncu)"]["source"] == "job"
    assert "whole region (model FLOPs)" not in rows          # the job's region figure replaces it
    assert rows["gemms (ncu)"]["flops"] == 5 * 10**12          # per occurrence x 5 occurrences


def test_job_kernel_class_rules_move_kernels(synth_trace, tmp_path):
    res, _ = _run(synth_trace, tmp_path, analysis={"kernel_classes": [{"class": "my_flash", "pattern": "^flash_"}]})
    classes = {c["class"] for c in res["kernel_classes"]}
    assert "my_flash" in classes and "attention" not in classes
