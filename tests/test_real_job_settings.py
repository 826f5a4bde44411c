"""Job settings no other real-trace test runs end to end, on NVIDIA__Fuser__8fa9ec29 (H100, nsys 2024.6.2).

Every expected figure is derived here by hand from the trace with sqlite3 (docs/figures.md), never taken
from the tool's own output. The trace's one range with GPU work, `KernelExecutor::runFusion`, opens at
1723198526 ns and closes at 1727696555 ns; it launches two kernels on device 0 (correlationIds 1101:
4160 ns, and 1107: 135999 ns, the latter ending at 1727830386 ns, after the range closes).
"""

from __future__ import annotations

import sqlite3

import pytest

from pipeline.job.config import load_job
from pipeline.report.render import render_all
from pipeline.run import run_job
from tests.test_run_synth import write_job

FUSER_H100 = "NVIDIA__Fuser__8fa9ec29_report1.sqlite"
RUN_FUSION = {"name": "KernelExecutor::runFusion"}


def _run(real_trace, tmp_path, **over):
    job = write_job(tmp_path, real_trace(FUSER_H100), **over)
    res = run_job(load_job(job))
    return res, render_all(res)["report.md"]


def _runfusion_wall_ns(path) -> int:
    """Envelope of the range and the kernels its process launched inside it (docs/figures.md §5)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    (lo, hi, pid), = con.execute(
        "SELECT n.start, n.\"end\", n.globalTid & ~16777215 FROM NVTX_EVENTS n "
        "WHERE n.eventType = 59 AND n.text = 'KernelExecutor::runFusion'").fetchall()
    (last,) = con.execute(
        "SELECT max(k.\"end\") FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.globalPid = ? AND EXISTS (SELECT 1 FROM "
        "CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId AND r.globalTid & ~16777215 = ? "
        "AND r.start BETWEEN ? AND ?)", (pid, pid, lo, hi)).fetchone()
    return max(hi, last) - lo


def test_decode_cross_check_names_the_factor_it_used(real_trace, tmp_path):
    """Decode is a forward pass: its quick check is 2·N·tokens. The report printed that number under
    the label "6 · N · tokens", so a reader checking it by hand got 3x the printed figure.
    N by hand (h 1024, 4 layers, 16 heads of 64, 4 KV heads, SwiGLU 4096, vocab 32000, RMSNorm, untied):
    per layer q 1024², k+v 2·1024·256, o 1024², MLP 3·1024·4096, 2 norms of 1024 = 15,206,400;
    x 4 = 60,825,600; embedding and LM head 2·32000·1024; final norm 1024 -> N = 126,362,624.
    Tokens: 8 sequences x 3 generated = 24."""
    n, tokens = 4 * (1024 * 1024 * 2 + 2 * 1024 * 256 + 3 * 1024 * 4096 + 2 * 1024) + 2 * 32000 * 1024 + 1024, 24
    assert n == 126_362_624
    res, md = _run(real_trace, tmp_path, region=RUN_FUSION,
                   hardware={"num_gpus": 1},
                   model={"hidden": 1024, "layers": 4, "heads": 16, "kv_heads": 4, "ffn": 4096, "mlp": "swiglu",
                          "vocab": 32000},
                   workload={"mode": "decode", "seq_len": 512, "global_batch": 8, "context_len": 1000,
                             "generated_tokens": 3})
    assert res["flops"]["six_n_flops_per_step"] == 2 * n * tokens == 6_065_405_952
    assert "Cross-check 2 · N · tokens: 6.065\xa0GFLOP per step" in md
    assert "6 · N · tokens" not in md
    html = render_all(res)["report.html"]
    assert "Cross-check 2·N·tokens:" in html and "6·N·tokens" not in html
    # the wall the figures divide by is this trace's envelope: 1727830386 - 1723198526
    assert _runfusion_wall_ns(real_trace(FUSER_H100)) == 4_631_860
    assert res["occurrences"][0]["wall_time_s"] == pytest.approx(4_631_860e-9, abs=1e-12)


def _evaluate_ranges(path) -> list[tuple[int, int]]:
    """Outermost 'ExpressionEvaluator::evaluate' ranges of the one process, by start (ties: longer first);
    a range ending no later than an earlier-starting one is nested in it and not an occurrence."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT start, \"end\" FROM NVTX_EVENTS WHERE eventType = 59 AND "
                       "text = 'ExpressionEvaluator::evaluate' ORDER BY start, start - \"end\"").fetchall()
    out, reach = [], None
    for lo, hi in rows:
        if reach is None or hi > reach:
            out.append((lo, hi))
        reach = hi if reach is None else max(reach, hi)
    return out


def test_occurrences_without_kernels_say_so(real_trace, tmp_path):
    """'ExpressionEvaluator::evaluate' is CPU-only: 410 ranges, nested recursively, 297 outermost, no kernel
    launched in any. Over occurrences 5-10 any FLOPs give an impossible MFU; the verdict must name the
    cause (no GPU work), and the GPU note may not claim kernels ran on the 8 GPUs the trace lists: no kernel
    ran in these occurrences at all (the trace's 19 kernels all ran on device 0)."""
    path = real_trace(FUSER_H100)
    occ = _evaluate_ranges(path)
    assert len(occ) == 297
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    launches = [t for (t,) in con.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE EXISTS "
                                          "(SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.correlationId = r.correlationId)")]
    assert not any(lo <= t <= hi for lo, hi in occ[4:10] for t in launches)
    assert con.execute("SELECT count(*), count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone() == (19, 1)
    assert con.execute("SELECT count(*) FROM TARGET_INFO_GPU").fetchone() == (8,)
    wall_ns = sum(hi - lo for lo, hi in occ[4:10])          # disjoint, no kernels: the ranges themselves
    assert wall_ns == 3515
    res, md = _run(real_trace, tmp_path, region={"name": "ExpressionEvaluator::evaluate",
                                                 "occurrences": {"first": 5, "last": 10}},
                   hardware={"num_gpus": 1, "precision": "fp16"}, model={"flops_per_step": 5.0e10},
                   workload={"mode": "inference"})
    assert res["totals"]["wall_time_s"] == pytest.approx(wall_ns * 1e-9, abs=1e-15)
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 6 * 5.0e10 / (wall_ns * 1e-9 * 989.4e12))
    assert res["status"] == "invalid"
    assert res["status_reason"].startswith("MFU above 100 % is physically impossible; likely: no attributed "
                                           "kernel ran in the selected occurrences")
    notes = res["hardware"]["warnings"] + [w["message"] for w in res["warnings"]]
    assert not any("kernels ran on" in n or "kernel deviceIds []" in n for n in notes), notes
    assert res["hardware"]["devices_in_trace"] == []
    assert "no kernel was attributed, so all 8 listed GPU(s) were identified" in res["hardware"]["detection_reason"]
    assert "kernels ran on 8 GPUs" not in md


def test_job_figures_above_the_peak_are_refused_as_results(real_trace, tmp_path):
    """analysis.figures on runFusion's two kernels. By hand: 'nvfuser' matches one kernel of 135999 ns,
    'vectorized' one of 4160 ns (1 GPU, 1 device). 2e11 FLOPs in 135999 ns = 1470.6 TFLOP/s; 1e10 in
    4160 ns = 2403.8 TFLOP/s: both beyond the H100's dense 989.4. The first has bytes (a roof); the second
    none, and was labelled "likely compute-bound (heuristic)" with no warning. A 4e10-FLOP figure on the
    nvfuser kernel (294.1 TFLOP/s) is plausible and stays silent."""
    con = sqlite3.connect(f"file:{real_trace(FUSER_H100)}?mode=ro", uri=True)
    ns = dict(con.execute("SELECT s.value, sum(k.\"end\" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                          "ON s.id = k.shortName WHERE k.correlationId IN (1101, 1107) GROUP BY 1"))
    assert ns == {"nvfuser_none_f0_c0_r0_g0": 135999, "vectorized_elementwise_kernel": 4160}
    tflops = {"big": 2.0e11 / (135999e-9) / 1e12, "nobytes": 1.0e10 / (4160e-9) / 1e12,
              "fine": 4.0e10 / (135999e-9) / 1e12}
    assert tflops["big"] > 989.4 and tflops["nobytes"] > 989.4 and tflops["fine"] < 989.4
    res, md = _run(real_trace, tmp_path, region=RUN_FUSION, hardware={"num_gpus": 1, "precision": "fp16"},
                   model={"flops_per_step": 5.0e10}, workload={"mode": "inference"},
                   analysis={"figures": [{"name": "big", "kernels": "nvfuser", "flops": 2.0e11, "bytes": 1.0e6},
                                         {"name": "nobytes", "kernels": "vectorized", "flops": 1.0e10},
                                         {"name": "fine", "kernels": "nvfuser", "flops": 4.0e10}]})
    rows = {r["operator"]: r for r in res["roofline"]}
    for name, want in tflops.items():
        assert rows[name]["achieved_tflops"] == pytest.approx(want, rel=1e-12)
    assert rows["nobytes"]["bound"] == "impossible: above the peak (heuristic)"
    above = [w["message"] for w in res["warnings"] if w["code"] == "above_roof"]
    assert [m.split("'")[1] for m in above] == ["big", "nobytes"]
    assert "2403.8 TFLOP/s achieved exceeds the 989.4 TFLOP/s dense peak" in above[1]
    assert all("analysis.figures" in m and "analytic FLOPs" not in m for m in above)
    assert "compute-bound" not in md.split("### Roofline")[1].split("## Warnings")[0]


def test_a_ceiling_the_job_beat_is_no_ceiling(real_trace, tmp_path):
    """achievable_tflops 5 against runFusion: 5e10 FLOPs over its 4631860 ns wall is 10.795 TFLOP/s per GPU,
    215.9 % of that 'ceiling'. It was printed as a plain headline figure with no warning; the peak-based MFU
    (1.091 %) stays the official one. A 700 TFLOP/s ceiling (1.542 %) is plausible and stays silent."""
    wall_s = _runfusion_wall_ns(real_trace(FUSER_H100)) * 1e-9
    achieved = 5.0e10 / wall_s / 1e12
    assert achieved == pytest.approx(10.7948, rel=1e-5)
    for ceiling, warned in ((5.0, True), (700.0, False)):
        folder = tmp_path / str(ceiling)
        folder.mkdir()
        res, md = _run(real_trace, folder, region=RUN_FUSION,
                       hardware={"num_gpus": 1, "precision": "fp16", "achievable_tflops": ceiling},
                       model={"flops_per_step": 5.0e10}, workload={"mode": "inference"})
        assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * achieved / 989.4, rel=1e-12)
        assert res["metrics"]["mfu_pct_achievable"] == pytest.approx(100 * achieved / ceiling, rel=1e-12)
        assert ("above_achievable" in [w["code"] for w in res["warnings"]]) == warned
        row = next(line for line in md.splitlines() if line.startswith("| MFU against the measured ceiling"))
        assert ("no ceiling" in row) == warned
        assert row.endswith(f"| {100 * achieved / ceiling:.2f}\xa0% |")


def test_explicit_numerator_is_per_optimizer_step_under_covers_microbatch(real_trace, tmp_path):
    """flops_per_step 4e10 with covers: microbatch and grad_accum 4: the tool divides it by 4 (1e10 per
    occurrence), i.e. it reads the figure as one optimizer step's. The schema told users it was the FLOPs
    "of the unit of work the region covers", which would be the microbatch's: divided again, 4x too low.
    By hand: 1e10 / (4631860 ns x 1 x 989.4 TFLOP/s) = 0.21821 %."""
    import json
    from pathlib import Path
    res, md = _run(real_trace, tmp_path, region={**RUN_FUSION, "covers": "microbatch"},
                   hardware={"num_gpus": 1, "precision": "fp16"}, model={"flops_per_step": 4.0e10},
                   workload={"mode": "training", "grad_accum": 4, "micro_batch": 1, "global_batch": 4})
    wall_s = _runfusion_wall_ns(real_trace(FUSER_H100)) * 1e-9
    assert res["flops"]["model_flops_per_occurrence"] == 10**10
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 1e10 / (wall_s * 989.4e12), rel=1e-12)
    assert f"{100 * 1e10 / (wall_s * 989.4e12):.2f}" == "0.22"
    assert "| optimizer steps per occurrence | 1/4 | `region.covers: microbatch` |" in md
    schema = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "model.schema.json").read_text())
    text = schema["properties"]["flops_per_step"]["description"]
    assert "of one optimizer step" in text and "microbatch: divided by grad_accum" in text
    assert "unit of work the region covers" not in text


def test_region_row_of_a_mostly_idle_wall_says_idle(real_trace, tmp_path):
    """runFusion's kernels run 140159 ns of its 4631860 ns wall (3.03 %). The region's roofline row, timed over
    the wall with no bytes figure, was labelled "likely memory-bound": the trace shows idle GPUs, not memory."""
    con = sqlite3.connect(f"file:{real_trace(FUSER_H100)}?mode=ro", uri=True)
    (busy,) = con.execute("SELECT sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL "
                          "WHERE correlationId IN (1101, 1107)").fetchone()    # disjoint: sum = union
    share = busy / _runfusion_wall_ns(real_trace(FUSER_H100))
    assert busy == 140159 and round(100 * share) == 3
    res, md = _run(real_trace, tmp_path, region=RUN_FUSION, hardware={"num_gpus": 1, "precision": "fp16"},
                   model={"flops_per_step": 5.0e10}, workload={"mode": "inference"})
    (region,) = [r for r in res["roofline"] if r["operator"] == "whole region (model FLOPs)"]
    assert region["bound"] == "mostly idle: kernels ran in 3 % of the wall (heuristic)"
    assert "likely memory-bound" not in md


def test_roofline_says_what_each_row_is_timed_over(real_trace, tmp_path):
    """A figure from analysis.figures is timed over the kernels its pattern names (nvfuser: 135999 ns, so
    4e10 FLOPs are 294.1 TFLOP/s), the region row over the wall (4631860 ns: 10.79 TFLOP/s). The note under
    the table said every row was timed over 'the matched kernel class'; neither of these is."""
    res, md = _run(real_trace, tmp_path, region=RUN_FUSION, hardware={"num_gpus": 1, "precision": "fp16"},
                   model={"flops_per_step": 5.0e10}, workload={"mode": "inference"},
                   analysis={"figures": [{"name": "mm", "kernels": "nvfuser", "flops": 4.0e10, "bytes": 2.0e8}]})
    rows = {r["operator"]: r for r in res["roofline"]}
    assert rows["mm"]["measured_s"] == pytest.approx(135999e-9, abs=1e-15)
    assert rows["mm"]["achieved_tflops"] == pytest.approx(4.0e10 / 135999e-9 / 1e12, rel=1e-12)
    assert rows["whole region (model FLOPs)"]["measured_s"] == pytest.approx(4631860e-9, abs=1e-15)
    assert "per-GPU time of the matched kernel class." not in md
    assert "for a row of `analysis.figures`, the kernels its pattern names) or, for a region row, over the wall." in md
    html = render_all(res)["report.html"]                       # the HTML page said nothing of what rows are timed over
    assert ("for a row of <code>analysis.figures</code>, the kernels its pattern names) or, for a region row, "
            "over the wall.") in html


def test_a_figure_whose_pattern_names_no_kernel_says_so(real_trace, tmp_path):
    """README's own example figure, `kernels: "fused_mlp"`, on a trace without such a kernel: its row showed
    "—" for the measured time with no word why, as if not measured yet. By hand: no kernel name in the trace
    holds 'fused_mlp'; 'nvfuser' names one kernel (135999 ns) and stays silent."""
    con = sqlite3.connect(f"file:{real_trace(FUSER_H100)}?mode=ro", uri=True)
    names = [n for (n,) in con.execute("SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                                       "ON s.id IN (k.shortName, k.demangledName)")]
    assert names and not any("fused_mlp" in n for n in names) and any("nvfuser" in n for n in names)
    res, md = _run(real_trace, tmp_path, region=RUN_FUSION, hardware={"num_gpus": 1, "precision": "fp16"},
                   model={"flops_per_step": 5.0e10}, workload={"mode": "inference"},
                   analysis={"figures": [{"name": "fused MLP", "kernels": "fused_mlp", "flops": 1.0e10},
                                         {"name": "mm", "kernels": "nvfuser", "flops": 4.0e10}]})
    rows = {r["operator"]: r for r in res["roofline"]}
    assert rows["fused MLP"]["measured_s"] is None and rows["mm"]["measured_s"] == pytest.approx(135999e-9, abs=1e-15)
    (w,) = [w for w in res["warnings"] if w["code"] == "figure_no_kernels"]
    assert w["message"].startswith("analysis.figures 'fused MLP': no attributed kernel of the selected occurrences "
                                   "with a name matching `fused_mlp`")
    assert "`figure_no_kernels`" in md
