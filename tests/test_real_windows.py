"""Every shared trace without NVTX ranges but with GPU work reaches a report with `region.kind: gpu_active`
(issue #30); traces with no GPU work at all are still refused (exit 4) saying what to capture.

The expected window is read here with the standard library's sqlite3: per GPU work table (kernels, CUDA graph
launches, memory copies and sets) the first start and last end, and the rows of the kernel and graph tables. Every
such trace holds one process, so its window is the first start to the last end over the tables.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pipeline.cli import main

NS = 1_000_000_000
# README.md of the trace folder: no NVTX ranges, GPU work (zx3xyy: CUDA graph launches recorded whole, 30 kernels)
NO_NVTX = [
    "nsysai__healthy_1pct.sqlite",
    "nsysai__mock.sqlite",
    "bwyogatama__Mordred-Deprecated__03527a5d_report1.sqlite",
    "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite",
    "mamedov-artem-rafaelevich__parallel_course_2__report4.sqlite",
    "cestwc__balinski-and-gomory-cuda__report19.sqlite",
    "zx3xyy__assignment2-systems__9359e384_result_2_7B_compile_ro.sqlite",
]
# no GPU work at all: a CPU-only capture, a nearly empty export, an NVTX-only one
NO_GPU_WORK = [
    "StellaWava__benchmarking-n-profiling-__report1.sqlite",
    "amir-ghz__DynamicViT__nsys_profile.sqlite",
    "YoonKyonghwan__EfficientCenterFormer__baseline.sqlite",
]
WORK = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET")


def expected(path: Path) -> dict:
    """The GPU-active window, the kernel rows (kernels and graph launches) and the devices they ran on."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        present = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "NVTX_EVENTS" not in present or not con.execute("SELECT count(*) FROM NVTX_EVENTS "
                                                               "WHERE eventType IN (59, 60, 70, 71)").fetchone()[0]
        spans = [con.execute(f'SELECT min(start), max("end"), count(*) FROM {t}').fetchone()
                 for t in WORK if t in present]
        devices = {d for t in WORK[:2] if t in present for (d,) in con.execute(f"SELECT DISTINCT deviceId FROM {t}")}
        kernels = sum(n for t, (_, _, n) in zip([t for t in WORK if t in present], spans) if t in WORK[:2])
    finally:
        con.close()
    first, last = min(s for s, _, n in spans if n), max(e for _, e, n in spans if n)
    return {"start_ns": first, "wall_ns": last - first, "kernel_count": kernels, "devices": len(devices)}


def write_job(folder: Path, trace: Path, gpus: int) -> Path:
    job = {"name": "active", "trace": str(trace), "region": {"kind": "gpu_active"},
           "hardware": {"num_gpus": gpus, "precision": "fp32", "peak_tflops": 100},
           "model": {"flops_per_step": 1.0e+9}, "workload": {"mode": "inference", "seq_len": 1, "global_batch": 1}}
    path = folder / "job.yaml"
    path.write_text(json.dumps(job))
    return path


@pytest.mark.parametrize("name", NO_NVTX)
def test_every_trace_without_nvtx_reaches_a_report_over_its_gpu_active_window(real_trace, tmp_path, capsys, name):
    trace = real_trace(name)
    want = expected(trace)
    code = main(["run", str(write_job(tmp_path, trace, max(want["devices"], 1))), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code in (0, 1) and "Traceback" not in err, err
    res = json.loads((tmp_path / "out/active/result.json").read_text())
    [o] = res["occurrences"]
    assert (o["start_ns"], round(o["wall_time_s"] * NS), o["kernel_count"]) == (
        want["start_ns"], want["wall_ns"], want["kernel_count"])
    assert "no NVTX range: the GPU-active window of the capture" in (tmp_path / "out/active/report.md").read_text()


def test_the_cuda_graph_capture_is_its_ten_graph_launches_window(real_trace, tmp_path, capsys):
    """The README's 7.81 s: the first GPU work (a kernel at 33,858,300 ns) to the last graph launch's end
    (7,845,465,551 ns); 10 graph launch rows and 30 kernels."""
    trace = real_trace("zx3xyy__assignment2-systems__9359e384_result_2_7B_compile_ro.sqlite")
    assert main(["run", str(write_job(tmp_path, trace, 1)), "--out", str(tmp_path / "out")]) in (0, 1)
    res = json.loads((tmp_path / "out/active/result.json").read_text())
    [o] = res["occurrences"]
    assert (o["start_ns"], round(o["wall_time_s"] * NS), o["kernel_count"]) == (33_858_300, 7_811_607_251, 40)
    assert [(c["class"], c["count"]) for c in res["kernel_classes"] if c["class"] == "cuda_graph"] == [("cuda_graph",
                                                                                                      10)]
    capsys.readouterr()


@pytest.mark.parametrize("name", NO_GPU_WORK)
def test_a_trace_without_gpu_work_is_refused_saying_what_to_capture(real_trace, tmp_path, capsys, name):
    trace = real_trace(name)
    code = main(["run", str(write_job(tmp_path, trace, 1)), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 4 and f"{trace}: the trace holds no GPU work (no kernel, CUDA graph launch, memory copy or " \
                         "memory set table), so it has no GPU-active window; capture with " \
                         "`nsys profile --trace=cuda,nvtx`" in err, err
    assert not (tmp_path / "out/active").exists()
