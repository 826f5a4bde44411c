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


def test_last_occurrence_step_is_its_envelope_and_the_warning_says_so(memfusion):
    """Step times by hand (docs/figures.md §6): occurrences 2-9 start before the previous envelope ends, so
    theirs are periods (25207, 21297, 18338, 20957, 18220, 25463, 18747, 31220 ns); occurrence 10 has
    no next selected start, so its step time is its envelope, 3763408 ns = 176.71x the median 21297 ns.
    The warning may not present that as a slow step without saying how it was measured."""
    _, res, md = memfusion
    steps = [round(o["step_time_s"] * 1e9) for o in res["occurrences"]]
    assert steps == [25207, 21297, 18338, 20957, 18220, 25463, 18747, 31220, 3763408]
    assert round(res["occurrences"][-1]["wall_time_s"] * 1e9) == 3763408
    (warning,) = [w["message"] for w in res["warnings"] if w["code"] == "unsteady_steps"]
    assert "occurrence 10 takes 0.00376341 s, 176.71x the median 2.1297e-05 s" in warning
    assert ("Occurrence 10 is the last selected: with no next start its step time is its envelope "
            "(range start to last kernel end)") in warning
    assert "Occurrence 10 is the last selected" in md


def test_a_longest_step_that_is_a_period_gets_no_envelope_note(real_trace, tmp_path):
    """Fuser, KernelExecutor::runFusion 1-6: occurrence 4's step (6774026 ns) is its own envelope
    because occurrence 5 starts 288 ms later, not because it is the last: no note."""
    path = real_trace("NVIDIA__Fuser__a0498920_report1.sqlite")
    res = run_job(load_job(write_job(
        tmp_path, path, region={"name": "KernelExecutor::runFusion", "occurrences": {"first": 1, "last": 6}},
        hardware={"gpu": "auto", "num_gpus": 1, "precision": "bf16"}, model={"flops_per_step": 1.0e11},
        workload={"mode": "inference"})))
    assert [round(o["step_time_s"] * 1e9) for o in res["occurrences"]] == [
        1012929, 697293, 125699, 6774026, 1009899, 1273057]
    (warning,) = [w["message"] for w in res["warnings"] if w["code"] == "unsteady_steps"]
    assert "occurrence 4 takes 0.00677403 s" in warning and "is the last selected" not in warning


def test_the_step_drawn_for_an_even_count_is_not_called_the_median(real_trace, tmp_path):
    """DLProf, aten::conv2d (prefix) 1-2: walls 2481282 and 819251 ns by hand (the kernels end inside
    the ranges). Their median is 1.650 ms, which the headline prints; the timeline draws occurrence 2
    (819.3 µs), so it may not call that 'the median step'."""
    path = real_trace("MohanadOdema__DLProf__nsys_profile.sqlite")
    res = run_job(load_job(write_job(
        tmp_path, path, region={"name": "aten::conv2d", "match": "prefix", "occurrences": {"first": 1, "last": 2}},
        hardware={"gpu": "auto", "num_gpus": 1, "precision": "fp32"}, model={"flops_per_step": 1.0e9},
        workload={"mode": "inference"})))
    assert [round(o["wall_time_s"] * 1e9) for o in res["occurrences"]] == [2481282, 819251]
    assert round(res["step_time"]["median_s"] * 1e9) == 1650266
    files = render_all(res)
    for page in ("report.md", "report.html"):
        assert "Occurrence 2, the shorter of the two middle steps by wall time (819.3" in files[page]
        assert "the median step by wall time" not in files[page]
