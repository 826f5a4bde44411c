"""Overlapping occurrences are counted once (docs/figures.md §6, issue #11 §1), end to end on hand-built traces.

Every expected figure is worked out by hand from the planted ranges and kernels
(tests/nsys_export.overlapping_steps), or by a plain sort-and-merge here.
"""

from __future__ import annotations

import copy
import json

import pytest

from nsys_export import Export, gpid, gtid, overlapping_steps
from pipeline.job.config import load_job
from pipeline.run import run_job
from tests.test_run_synth import write_job

NS = 1e9
FLOPS = 3.0e6           # per occurrence (one step per occurrence); 2 GPUs at a 1e-3 TFLOP/s peak
PEAK = 1e-3


def _run(tmp_path, export: Export, **region):
    trace = export.write(tmp_path / "trace.sqlite")
    job = write_job(tmp_path, trace, region={"name": "step", **region},
                    hardware={"gpu": "auto", "num_gpus": 2, "peak_tflops": PEAK},
                    model={"flops_per_step": FLOPS}, workload={"seq_len": 4, "global_batch": 1})
    return run_job(load_job(job))


@pytest.fixture(scope="module")
def overlapping(tmp_path_factory):
    """The result of the job on overlapping_steps(), by region settings, run once per module: most tests here read
    the same run (issue #35)."""
    seen: dict[str, dict] = {}

    def get(**region) -> dict:
        key = json.dumps(region, sort_keys=True)
        if key not in seen:
            seen[key] = _run(tmp_path_factory.mktemp("overlapping"), overlapping_steps(), **region)
        return copy.deepcopy(seen[key])
    return get


def test_totals_are_unions_and_mfu_uses_the_span(overlapping):
    res = overlapping()
    t = res["totals"]
    assert round(t["wall_time_s"] * NS) == 3500                 # envelopes 0..1800, 1000..2600, 2000..3500
    assert round(t["wall_time_sum_s"] * NS) == 1800 + 1600 + 1500
    assert round(t["cpu_range_s"] * NS) == 3000
    assert round(t["gpu_kernel_union_s"] * NS) == 3300          # 200..2600 and 2600..3500
    assert round(t["gpu_kernel_sum_s"] * NS) == 1600 + 1100 + 900
    assert {d["device_id"]: round(d["union_s"] * NS) for d in res["devices"]} == {0: 2500, 1: 1100}
    # each device's busy share is of the span too, not of the 4900 ns the envelopes sum to
    assert [d["busy_pct_of_wall"] for d in res["devices"]] == pytest.approx([100 * 2500 / 3500, 100 * 1100 / 3500])
    # MFU = 3 occurrences x FLOPS / (3500 ns x 2 GPUs x PEAK)
    mfu = 100 * 3 * FLOPS / (3500e-9 * 2 * PEAK * 1e12)
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(mfu, rel=1e-12)
    m = res["metrics"]
    assert m["mfu_pct_wall"] == pytest.approx(m["active_ratio_pct_union"] * m["union_over_wall_pct"] / 100, rel=1e-12)
    assert m["union_over_wall_pct"] == pytest.approx(100 * 3300 / 3500, rel=1e-12)
    # per class: the three gemm kernels' union across devices and occurrences is the kernel union
    gemm = {c["class"]: c for c in res["kernel_classes"]}["gemm"]
    assert round(gemm["union_s"] * NS) == 3300 and round(gemm["device_union_s"] * NS) == 2500 + 1100
    assert gemm["share_of_wall"] == pytest.approx(3300 / 3500)


def test_overlap_warning_gives_both_figures_and_the_share(overlapping):
    res = overlapping()
    (w,) = [w for w in res["warnings"] if w["code"] == "occurrences_overlap"]
    assert "4.9e-06 s" in w["message"] and "3.5e-06 s" in w["message"]
    assert f"{100 * (1 - 3500 / 4900):.1f} %" in w["message"]


def test_step_time_is_the_period_under_overlap(overlapping):
    res = overlapping()
    assert [round(o["step_time_s"] * NS) for o in res["occurrences"]] == [1000, 1000, 1500]
    assert [round(o["wall_time_s"] * NS) for o in res["occurrences"]] == [1800, 1600, 1500]   # unchanged
    assert round(res["step_time"]["median_s"] * NS) == 1000


def test_disjoint_occurrences_have_no_overlap_warning(overlapping):
    res = overlapping(occurrences={"first": 3, "last": 3})
    assert res["totals"]["wall_time_s"] == res["totals"]["wall_time_sum_s"]
    assert not [w for w in res["warnings"] if w["code"] == "occurrences_overlap"]


def test_nested_same_name_ranges_fold_into_the_outermost(tmp_path):
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    e.range(0, 1000, main, "step")
    e.range(100, 400, main, "step")             # inside step 1: its kernel is step 1's work already
    e.range(2000, 3000, main, "step")
    for corr, (launch, start, end) in enumerate(((150, 200, 300), (2100, 2200, 2500)), start=1):
        e.launch(launch, main, corr)
        e.kernel(start, end, key, corr)
    res = _run(tmp_path, e)
    assert [(o["start_ns"], round(o["wall_time_s"] * NS), o["kernel_count"]) for o in res["occurrences"]] == [
        (0, 1000, 1), (2000, 1000, 1)]
    (w,) = [w for w in res["warnings"] if w["code"] == "nested_occurrences"]
    assert "pid 100: 1" in w["message"]


@pytest.mark.parametrize("step, over, warned", [
    (1000, 20, False),                 # envelopes 0..1020 and 1000..2000: sum 2020 = union 2000 + exactly 1 %
    (1000, 21, True),                  # sum 2021: 1 % + 1 ns
    (500_000_000, 10_000_000, False),  # one second of union, 10 ms counted twice: exactly 1 %
    (500_000_000, 10_000_001, True),
])
def test_overlap_warning_boundary(tmp_path, step: int, over: int, warned: bool) -> None:
    """docs/figures.md §6 warns `occurrences_overlap` when the sum of the envelopes exceeds their union by more than
    1 % (of the union, the wall the totals use): exactly 1 % is no warning, 1 % + 1 ns is. Two back-to-back
    steps of `step` ns; step 1's kernel runs `over` ns into step 2, whose kernel stays inside its own range.
    The tail is at most 2 % of the range, so no other warning is involved."""
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    e.range(0, step, main, "step")
    e.range(step, 2 * step, main, "step")
    e.launch(10, main, 1)
    e.kernel(20, step + over, key, 1)
    e.launch(step + 10, main, 2)
    e.kernel(step + 20, 2 * step - 10, key, 2)
    trace = e.write(tmp_path / "trace.sqlite")
    job = write_job(tmp_path, trace, region={"name": "step"}, hardware={"num_gpus": 1, "peak_tflops": 1.0},
                    model={"flops_per_step": 1.0e3}, workload={"seq_len": 4, "global_batch": 1})
    res = run_job(load_job(job))
    t = res["totals"]
    assert round(t["wall_time_s"] * NS) == 2 * step                   # union 0..2*step
    assert round(t["wall_time_sum_s"] * NS) == 2 * step + over        # (step + over) + step
    assert bool([w for w in res["warnings"] if w["code"] == "occurrences_overlap"]) is warned


def test_report_says_why_overlapping_rows_sit_below_the_total(overlapping):
    """Each row divides by its own envelope (1800, 1600, 1500 ns), the total by their union (3500 ns): the
    rows' MFUs are each below the total's, and the report says why, under the table, in both formats."""
    from pipeline.report.render import render_all
    res = overlapping()
    rows = [100 * FLOPS / (wall * 1e-9 * 2 * PEAK * 1e12) for wall in (1800, 1600, 1500)]
    assert [o["mfu_pct_wall"] for o in res["occurrences"]] == pytest.approx(rows, rel=1e-12)
    assert max(rows) < res["metrics"]["mfu_pct_wall"]
    files = render_all(res)
    note = "a row's MFU divides by that occurrence's own envelope"
    assert note in files["report.md"] and note in files["report.html"]
    alone = render_all(overlapping(occurrences={"first": 3, "last": 3}))
    assert note not in alone["report.md"] and note not in alone["report.html"]


def test_report_defines_the_occurrence_columns_and_gives_the_sum_of_the_walls(overlapping):
    """docs/figures.md §5 defines each column of the occurrences table, §6 the total row (unions, not sums) and the step
    time, and asks for the sum of the envelopes beside their union: the report says so under the table, in both
    formats. Envelopes 1800, 1600 and 1500 ns add up to 4900 ns (4.900 µs), while the total wall is 3500 ns."""
    from pipeline.report.render import render_all
    files = render_all(overlapping())
    for page in (files["report.md"], files["report.html"]):
        assert "CPU range: the longest of the occurrence's ranges (one per process)" in page.replace("&#39;", "'")
        assert ("Wall: from the earliest range start to the later of the last range end and the last attributed "
                "kernel's end") in page.replace("&#39;", "'")
        assert "Kernel union: the time at least one attributed kernel ran, on any device" in page
        assert ("the wall, or the time to the next selected occurrence's start when that one starts before this "
                "wall ends") in page.replace("&#39;", "'")
        assert ("CPU range, wall and kernel union are unions over the occurrences, time they share counted once "
                "(the walls add up to 4.900\u00a0µs); kernel sum and kernels add up") in page
    alone = render_all(overlapping(occurrences={"first": 3, "last": 3}))
    assert "Kernel union: the time at least one attributed kernel ran" in alone["report.md"]
    # one occurrence: no sum of walls to give (the step-parts table's own "add up to the step" is another sentence)
    assert "the walls add up to" not in alone["report.md"] and "the walls add up to" not in alone["report.html"]


def test_communication_table_walls_are_the_span_and_say_so(overlapping):
    """docs/figures.md §6: totals are unions over the occurrences, so the overlap table's per-device wall is the span
    (3500 ns), not the envelopes' 4900 ns sum, and compute + exposed + idle adds up to it: idle is 3500 - 2500 on
    device 0 and 3500 - 1100 on device 1. result.schema.json describes the field as what it holds."""
    import json
    from pathlib import Path
    comm = overlapping()["communication"]
    assert [(round(d["wall_s"] * NS), round(d["idle_s"] * NS)) for d in comm["devices"]] == [(3500, 1000), (3500, 2400)]
    assert round(comm["totals"]["wall_s"] * NS) == 2 * 3500
    schema = json.loads((Path(__file__).resolve().parent.parent / "schemas" / "result.schema.json").read_text())
    props = schema["properties"]["communication"]["properties"]
    for described in (props["devices"]["items"]["properties"]["wall_s"], props["totals"]["properties"]["wall_s"]):
        assert "Sum of the occurrence walls" not in described["description"]
        assert "totals.wall_time_s" in described["description"]


def test_a_single_process_report_gives_the_step_period(tmp_path):
    """docs/figures.md §5: "also report ... the step period (start of occurrence k+1 minus start of k, per process)". With
    several ranks the ranks section gives each rank's median period; a one-process report has no ranks section, so
    the occurrences section says it. Ranges start at 0, 4000, 10000 and 12000 ns; occurrences 1-3 are selected, so
    their periods are 4000, 6000 and 2000 ns (the last to the fourth, unselected range): median 4000 ns."""
    from pipeline.report.render import render_all
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    for corr, start in enumerate((0, 4000, 10000, 12000), start=1):
        e.range(start, start + 1000, main, "step")
        e.launch(start + 10, main, corr)
        e.kernel(start + 20, start + 900, key, corr)
    files = render_all(_run(tmp_path, e, occurrences={"first": 1, "last": 3}))
    said = "Step period (an occurrence's range start to the next matching range's start): median 4.000\u00a0µs."
    assert said in files["report.md"] and said in files["report.html"].replace("&#39;", "'")
    two = Export()                                                      # two ranks: the ranks table has it
    for pid in (100, 200):
        for corr, start in enumerate((0, 4000), start=1):
            two.range(start, start + 1000, gtid(pid, pid), "step")
            two.launch(start + 10, gtid(pid, pid), corr)
            two.kernel(start + 20, start + 900, gpid(pid), corr, device=pid // 100 - 1)
    (tmp_path / "two").mkdir()
    pages = render_all(_run(tmp_path / "two", two))
    assert "Step period (" not in pages["report.md"] and "period to next step, median" in pages["report.md"]
