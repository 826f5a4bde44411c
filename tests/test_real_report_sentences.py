"""What report.md says about real traces, against figures derived by hand with sqlite3.

memfusion (TensorRT, RTX 3090): the ranges `^/layer…` of domain TensorRT, occurrences 2-10. Each
range launches one convolution kernel in ~20 µs of CPU time; the kernels queue behind each other,
so the envelopes overlap and every step time but the last is the period to the next start.
"""

from __future__ import annotations

import re
import sqlite3

import pytest

from pipeline.job.config import load_job
from pipeline.report.render import render_all
from pipeline.run import run_job
from tests.test_run_synth import write_job

MEMFUSION = "LeiWang1999__memfusion_artifact__report1.sqlite"


@pytest.fixture(scope="module")
def memfusion(real_trace, tmp_path_factory):
    path = real_trace(MEMFUSION)
    folder = tmp_path_factory.mktemp("memfusion")
    res = run_job(load_job(write_job(
        folder, path, region={"name": "^/layer", "match": "regex", "domain": "TensorRT",
                              "occurrences": {"first": 2, "last": 10}},
        hardware={"gpu": "auto", "num_gpus": 1, "precision": "fp16"}, model={"flops_per_step": 1.0e9},
        workload={"mode": "inference"})))
    return path, res, render_all(res)["report.md"]


def _top_kernels_by_hand(path) -> list[tuple[str, int, int]]:
    """(short name, count, summed ns) of the kernels the 2nd-10th '/layer…' range launched (launch
    call on the range's process inside the range), largest first."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ranges = con.execute(
        "SELECT n.start, n.\"end\", n.globalTid >> 24 FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId "
        "WHERE n.eventType IN (59, 60) AND n.\"end\" IS NOT NULL AND s.value LIKE '/layer%' "
        "AND n.domainId = (SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND text = 'TensorRT') "
        "ORDER BY n.start").fetchall()[1:10]
    per: dict[str, list[int]] = {}
    for lo, hi, pid in ranges:
        for name, ns in con.execute(
                "SELECT s.value, k.\"end\" - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                "ON s.id = k.shortName WHERE k.globalPid >> 24 = ? AND EXISTS (SELECT 1 FROM "
                "CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId AND r.globalTid >> 24 = ? "
                "AND r.start BETWEEN ? AND ?)", (pid, pid, lo, hi)):
            per.setdefault(name, []).append(ns)
    return sorted(((n, len(v), sum(v)) for n, v in per.items()), key=lambda t: -t[2])


def test_top_kernel_rows_name_different_kernels_differently(memfusion):
    """Five TensorRT kernels share their first 70 characters; cut at 48 they printed as five rows
    of one label. Each row must name its own kernel, so its count and time can be checked."""
    path, res, md = memfusion
    want = _top_kernels_by_hand(path)
    assert [(n, c, ns) for n, c, ns in want][:2] == [
        ("sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1"
         "_g1_tensor16x8x16_t1r3s3_aACCESS_execute_kernel_trt", 4, 990312),
        ("sm80_xmma_fprop_implicit_gemm_f16f16_f16f16_f16_nhwckrsc_nhwc_tilesize256x64x32_stage3_warpsize4x1x1"
         "_g1_tensor16x8x16_t1r3s3_aACCESS_execute_kernel_trt", 2, 800262)]
    section = md.split("Top kernels by summed time")[1].split("\n\n###")[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    labels = [re.match(r"\| `([^`]*)`", line).group(1) for line in rows]
    assert len(set(labels)) == len(labels) == len(want)
    total = sum(ns for *_, ns in want)
    for (name, count, ns), line in zip(want, rows):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == f"`{name}`"
        assert (cells[2], cells[3], cells[4]) == (str(count), f"{ns / 1e3:.4g}", f"{ns / total * 100:.1f}")
