"""Every rule of pipeline/checks/plausibility.py, one test each (named test_<rule>), plus proof that run applies
them: a figure that cannot be a measurement is never printed as one.

The boundaries are written here by hand from the rules' definitions (docs/figures.md §1, §11).
"""

from __future__ import annotations

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.checks import plausibility
from pipeline.report.render import render_all
from pipeline.job.config import load_job
from pipeline.run import run_job
from test_checks_job_file import job_of, rules_of, untested_rules
from test_checks_scope import step_job
from test_config import GOOD
from test_run_synth import write_job


def test_impossible_figures_name_the_rank_count_only_when_ranks_are_missing(tmp_path):
    """Two ranks on two GPUs, FLOPs far beyond the peak: invalid, but 'one rank's GPU count' is not among the
    likely causes (every GPU's process had the region); with num_gpus 4 it is."""
    e = Export()
    for pid in (100, 200):
        e.range(1000, 2000, gtid(pid, pid), "step")
        e.launch(1100, gtid(pid, pid), 1)
        e.kernel(1200, 1800, gpid(pid), 1, device=pid // 100 - 1)
    (tmp_path / "two").mkdir()
    (tmp_path / "four").mkdir()
    res = run_job(load_job(step_job(tmp_path / "two", e, gpus=2, flops=1.0e9)))
    assert res["status"] == "invalid" and "one rank's GPU count" not in res["status_reason"]
    res = run_job(load_job(step_job(tmp_path / "four", e, gpus=4, flops=1.0e9)))
    assert res["status"] == "invalid" and "one rank's GPU count" in res["status_reason"]


def test_unsteady_steps_suggests_only_occurrences_with_kernels(tmp_path):
    """Six steps 10 us apart: step 1 a 3000 ns warm-up, steps 2-6 1000 ns, only 1-3 launch a kernel. The median
    step is 1000 ns, step 1 is 3x it: the warning suggests the steady run 2-3, not 2-6 (steps 4-6 hold no GPU
    work for the FLOPs)."""
    e = Export()
    main = gtid(100, 100)
    for k in range(6):
        start, length = k * 10_000, 3000 if k == 0 else 1000
        e.range(start, start + length, main, "step")
        if k < 3:
            e.launch(start + 100, main, k + 1)
            e.kernel(start + 200, start + 900, gpid(100), k + 1)
    res = run_job(load_job(step_job(tmp_path, e)))
    (w,) = [w["message"] for w in res["warnings"] if w["code"] == "unsteady_steps"]
    assert "region.occurrences: {first: 2, last: 3}" in w


def test_impossible_occurrence_rows_are_marked_in_the_tables(tmp_path):
    """Occurrence 1 (wall 1 us) cannot hold FLOPs that give 150 % on its own wall; the total
    (2 x F over 11 us of wall: 27.27 %) is plausible, so the run is ok but row 1 is marked ⚠."""
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.range(3000, 13000, gtid(100, 100), "step")
    e.launch(1100, gtid(100, 100), 1)
    e.kernel(1100, 2000, gpid(100), 1)
    e.launch(3100, gtid(100, 100), 2)
    e.kernel(3100, 12100, gpid(100), 2)
    job = step_job(tmp_path, e, flops=1.5e6)
    res = run_job(load_job(job))
    assert res["status"] == "ok" and res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 3.0e6 / 11e-6 / 1e12)
    assert [o["mfu_pct_wall"] for o in res["occurrences"]] == pytest.approx([150.0, 15.0])
    md, page = render_all(res)["report.md"], render_all(res)["report.html"]
    rows: dict[str, str] = {}
    for line in md.splitlines():           # the Occurrences table's rows: the first that start with the occurrence
        if line.startswith(("| 1 |", "| 2 |")):
            rows.setdefault(line.split("|")[1].strip(), line)
    assert rows["1"].rstrip(" |").endswith("150.00\u00a0⚠ | 150.00\u00a0⚠")
    assert rows["2"].rstrip(" |").endswith("15.00 | 15.00")
    assert "⚠ above 100 %: physically impossible" in md and "(warning `occurrence_above_100`)" in md
    assert "150.00\u00a0⚠" in page and "<code>occurrence_above_100</code>" in page
    assert "devices with attributed kernels in this trace: 1 (device 0) |" in md     # a count, then the ids


def test_flops_over_occurrences_without_kernels_are_invalid(tmp_path):
    """Only the kernel-less occurrence selected: 1e3 FLOPs over the ranks' 1.5 us of skew would read as
    33 % MFU, but no GPU work holds them (union 0, diagnostic infinite): invalid, not a figure."""
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.range(1500, 2500, gtid(200, 200), "step")
    e.range(3000, 4000, gtid(100, 100), "step")
    e.launch(3100, gtid(100, 100), 1)
    e.kernel(3200, 3900, gpid(100), 1)
    trace = e.write(tmp_path / "t.sqlite")
    job = write_job(tmp_path, trace, region={"name": "step", "occurrences": {"first": 1, "last": 1}},
                    hardware={"num_gpus": 2, "peak_tflops": 1.0},
                    model={"flops_per_step": 1.0e3}, workload={"seq_len": 4, "global_batch": 1})
    res = run_job(load_job(job))
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 1.0e3 / (1500e-9 * 2 * 1.0e12))
    assert res["metrics"]["active_ratio_pct_union"] is None
    assert res["metrics"]["union_over_wall_pct"] == 0.0                     # no kernel covered any of the wall
    assert res["status"] == "invalid" and "no attributed kernel ran" in res["status_reason"]
    files = render_all(res)
    for card in ("HFU (wall time)", "Active-time ratio (union), diagnostic", "Model TFLOP/s per GPU"):
        assert f'<div class="card void"><div class="l">{card}</div>' in files["report.html"]   # struck out too
    assert "check region.attribution. The figures below are shown for diagnosis only" in files["report.html"]
    assert "check region.attribution.\n> The figures below" in files["report.md"]


# --------------------------------------------------------------------------- plausibility

def metrics(mfu: float | None = 40.0, hfu: float | None = 40.0, union: float | None = 45.0) -> dict:
    return {"mfu_pct_wall": mfu, "hfu_pct_wall": hfu, "active_ratio_pct_union": union}


def evidence(processes: int = 8, warnings: list | None = None, steps: list | None = None, **m) -> plausibility.Evidence:
    return plausibility.Evidence(metrics(**m), [1.0, 1.1] if steps is None else steps, processes, warnings or [])


def test_mfu_or_hfu_above_100(tmp_path):
    job = job_of(tmp_path, GOOD)
    rule = plausibility.mfu_or_hfu_above_100
    assert rule(job, evidence(mfu=100.0, hfu=100.0)) is None
    assert rule(job, evidence(mfu=None, hfu=None)) is None
    assert rule(job, evidence(mfu=100.001, hfu=90.0)).startswith("MFU above 100 % is physically impossible")
    assert rule(job, evidence(mfu=90.0, hfu=100.001)).startswith("HFU above 100 % is physically impossible")
    assert "one rank's GPU count" in rule(job, evidence(1, mfu=150.0, hfu=150.0))
    assert "one rank's GPU count" not in rule(job, evidence(8, mfu=150.0, hfu=150.0))
    # No kernel at all (union diagnostic None): that is the cause to name first, not a scope guess.
    assert "no attributed kernel ran" not in rule(job, evidence(8, mfu=150.0, hfu=150.0))
    why = rule(job, evidence(8, mfu=150.0, hfu=150.0, union=None))
    assert why.startswith("MFU above 100 % is physically impossible; likely: no attributed kernel ran in the "
                          "selected occurrences")
    # GOOD accumulates 4 microbatches per step: a region over one microbatch is the likeliest cause, unless
    # the job already says the region covers one microbatch
    assert "set region.covers: microbatch" in rule(job, evidence(mfu=150.0))
    micro = job_of(tmp_path, GOOD.replace("name: train_step", "name: train_step\n  covers: microbatch"))
    assert "set region.covers: microbatch" not in rule(micro, evidence(mfu=150.0))


def test_an_impossible_mfu_names_a_faster_precision_the_kernels_ran_in_first(tmp_path):
    """fp64 declared on a trace whose matrix kernels ran in bf16: MFU 955 % 'likely: the FLOPs may be for
    more work than one occurrence holds (check covers, global_batch, seq_len); the peak may be too low',
    while the trace said which peak: the precision the kernels ran in is named first."""
    job = job_of(tmp_path, GOOD.replace("precision: bf16", "precision: fp64"))
    why = plausibility.mfu_or_hfu_above_100(job, plausibility.Evidence(metrics(mfu=955.0), [1.0, 1.1], 8, [],
                                                                        ("bf16",)))
    assert why.startswith("MFU above 100 % is physically impossible; likely: the matrix kernels ran in bf16 "
                          "(warning precision_mismatch), whose peak is above the declared fp64's")
    assert "matrix kernels ran in" not in plausibility.mfu_or_hfu_above_100(job, evidence(mfu=955.0))


def test_occurrences_above_100():
    """A short occurrence can exceed 100 % while the total over longer ones stays below: warned, by index."""
    def occ(i, mfu, hfu):
        return {"index": i, "mfu_pct_wall": mfu, "hfu_pct_wall": hfu}
    assert plausibility.occurrences_above_100([occ(1, 100.0, 100.0), occ(2, None, None)]) == []
    (w,) = plausibility.occurrences_above_100([occ(3, 80.0, 80.0), occ(4, 100.5, 100.5), occ(5, 50.0, 101.0)])
    assert w["code"] == "occurrence_above_100" and w["message"].startswith("occurrence(s) 4, 5 have MFU or HFU")
    (w,) = plausibility.occurrences_above_100([occ(i, 200.0, 200.0) for i in range(12)])
    assert "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more" in w["message"]


def test_union_diagnostic_above_100(tmp_path):
    """Issue #11 §2: 108-462 % on the union was printed as ok while MFU on the wall looked plausible."""
    job = job_of(tmp_path, GOOD)
    rule = plausibility.union_diagnostic_above_100
    assert rule(job, evidence(mfu=40.0, union=100.0)) is None
    assert rule(job, evidence(mfu=None, union=None)) is None                # no wall either: nothing to judge
    assert rule(job, evidence(mfu=0.0, union=None)) is None                 # no FLOPs on no kernels
    empty = rule(job, evidence(mfu=98.5, union=None))                       # FLOPs over no kernel: infinite
    assert "no attributed kernel ran" in empty and "infinite" in empty
    reason = rule(job, evidence(mfu=40.0, union=108.0))
    assert "union diagnostic" in reason and "108.0 %" in reason and "peak" in reason


def test_step_times_finite(tmp_path):
    job = job_of(tmp_path, GOOD)
    assert plausibility.step_times_finite(job, evidence(steps=[0.5, 1e-9])) is None
    assert "not finite" in plausibility.step_times_finite(job, evidence(steps=[1.0, float("inf")]))
    assert "not finite" in plausibility.step_times_finite(job, evidence(steps=[float("nan")]))
    assert plausibility.step_times_finite(job, evidence(steps=[1.0, None])).startswith(
        "1 step time(s) are not finite (None)")


def test_numerator_describes_the_work(tmp_path):
    job = job_of(tmp_path, GOOD)
    rule = plausibility.numerator_describes_the_work
    assert rule(job, evidence(warnings=[{"code": "numerator_differs", "message": "x"}])) is None
    assert "does not describe the measured work: far" in rule(job, evidence(warnings=[{"code": "scope_mismatch",
                                                                                         "message": "far"}]))


def test_verdict(tmp_path):
    job = job_of(tmp_path, GOOD)
    assert plausibility.verdict(job, evidence()) == ("ok", None)
    status, reason = plausibility.verdict(job, evidence(warnings=[{"code": "scope_mismatch", "message": "m"}],
                                                  mfu=120.0, hfu=120.0))
    assert status == "invalid" and reason.startswith("the FLOPs numerator")     # the first rule's reason
    assert plausibility.verdict(job, evidence(union=101.0))[0] == "invalid"
    status, reason = plausibility.verdict(job, evidence(steps=[1.0, float("inf")]))       # every rule is in the tuple
    assert status == "invalid" and "not finite" in reason


def test_thresholds():
    limits = {"mfu_pct_wall_min": 40.0, "hfu_pct_wall_min": 50.0, "step_time_s_max": 1.0}
    got = {t["name"]: t["passed"]
           for t in plausibility.thresholds(limits, metrics(40.0, 49.9), {"median_s": 1.0}, "ok")}
    assert got == {"mfu_pct_wall_min": True, "hfu_pct_wall_min": False, "step_time_s_max": True}
    (t,) = plausibility.thresholds({"mfu_pct_wall_min": 0.0}, metrics(None), {"median_s": 1.0}, "ok")
    assert t["passed"] is False                                   # no figure never passes a gate
    exact = plausibility.thresholds({"hfu_pct_wall_min": 50.0, "mfu_pct_wall_min": 40.0}, metrics(40.0, 50.0),
                                    {"median_s": 1.0}, "ok")
    assert [t["passed"] for t in exact] == [True, True]           # a figure at its limit meets it
    # an invalid result's figures are no measurement: 250 % neither meets 40 % nor fails 1 s; not tested
    invalid = plausibility.thresholds(limits, metrics(250.0, 250.0), {"median_s": 2.0}, "invalid")
    assert [t["passed"] for t in invalid] == [None, None, None]


def test_ranks_above_100():
    """Per rank, over all occurrences or in single ones: a rank above 100 % overall is not named twice."""
    def row(rank, mfu):
        return {"rank": rank, "mfu_pct_wall": mfu}
    assert plausibility.ranks_above_100([row("a", 100.0), row("b", None)], [row("a", 99.0), row("b", None)]) == []
    (w,) = plausibility.ranks_above_100([row("a", 101.0), row("b", 90.0)],
                                        [row("a", 120.0), row("b", 100.1), row("b", 1.0)])
    assert w["code"] == "rank_above_100"
    assert w["message"].startswith("rank(s) a over the selected occurrences and rank(s) b in single occurrences have")
    (w,) = plausibility.ranks_above_100([], [row(f"r{i:02}", 150.0) for i in range(12)])
    assert "r00, r01, r02, r03, r04, r05, r06, r07, r08, r09 and 2 more in single" in w["message"]


def test_roofline_under_roof():
    """Rows built by roofline.row; roofs worked by hand: 1 GPU, 1000 TFLOP/s, 2000 GB/s (ridge 500 FLOP/B)."""
    from pipeline.model.operators import Operator
    from pipeline.model.roofline import row

    def at(flops, nbytes, seconds):
        return row(Operator("op", "gemm", flops, nbytes, ""), "analytic", seconds, 1000.0, 2000.0, 1)
    # AI 1000 FLOP/B: compute roof 1000 TFLOP/s. 1e15 FLOPs in 1 s is exactly the roof; in 0.5 s, 2000 (200 %).
    # AI 100 FLOP/B: memory roof 100 x 2000 GB/s = 200 TFLOP/s; 1e15 FLOPs in 4 s is 250 TFLOP/s (125 %).
    # No bytes: no attainable figure, so nothing to judge.
    fine = [at(1e15, 1e12, 1.0), at(1e15, 1e13, 5.0), at(1e15, 0, 0.001)]
    assert plausibility.roofline_under_roof(fine) == []
    warned = plausibility.roofline_under_roof(fine + [at(1e15, 1e12, 0.5), at(1e15, 1e13, 4.0)])
    assert [w["code"] for w in warned] == ["above_roof", "above_roof"]
    assert "2000.0 TFLOP/s achieved exceeds the 1000.0 TFLOP/s roof" in warned[0]["message"]
    assert "250.0 TFLOP/s achieved exceeds the 200.0 TFLOP/s roof" in warned[1]["message"]
    # AI 2 FLOP/B: memory roof 2 x 2000 GB/s = 4.0 TFLOP/s; 2e12 FLOPs in 0.4975 s is 4.0201 (100.5 %), which
    # one decimal printed as "4.0 TFLOP/s achieved exceeds the 4.0 TFLOP/s roof"
    [close] = plausibility.roofline_under_roof([at(2.0e12, 1.0e12, 0.4975)])
    assert "4.02 TFLOP/s achieved exceeds the 4.00 TFLOP/s roof" in close["message"]


def test_the_region_row_above_its_roof_is_not_blamed_on_kernels():
    """The region row is timed over the wall (docs/figures.md §1: model FLOPs / (wall x GPUs)). On a real trace whose
    FLOPs were for more work than a range held (6212 TFLOP/s on a 989.4 roof) its warning said 'the kernels
    matched to it ran too briefly for its analytic FLOPs (a synthetic trace, kernel-class patterns...)':
    no kernel is matched to it. 1 GPU, 1000 TFLOP/s, 2000 GB/s; 1e15 FLOPs, 1e12 bytes (AI 1000, compute
    roof 1000) in 0.5 s: 2000 TFLOP/s."""
    from pipeline.model.operators import Operator
    from pipeline.model.roofline import REGION_ROW, row
    region = row(Operator(REGION_ROW, None, 1e15, 1e12, "bytes: sum of the operators' minimum traffic"),
                 "analytic", 0.5, 1000.0, 2000.0, 1)
    (w,) = plausibility.roofline_under_roof([region])
    assert w["message"].startswith(f"roofline row '{REGION_ROW}': 2000.0 TFLOP/s achieved exceeds the 1000.0 "
                                   "TFLOP/s roof; this row is timed over the wall, not over kernels")
    assert "kernels matched to it" not in w["message"]


def test_achievable_is_a_ceiling():
    """10 TFLOP/s achieved against a 5 TFLOP/s 'ceiling' is 200 %: that figure is no ceiling."""
    def m(pct, achieved):
        return {"mfu_pct_achievable": pct, "achieved_tflops_per_gpu": achieved}
    assert plausibility.achievable_is_a_ceiling(m(None, 10.0), None) == []
    assert plausibility.achievable_is_a_ceiling(m(100.0, 5.0), 5.0) == []
    (w,) = plausibility.achievable_is_a_ceiling(m(200.0, 10.0), 5.0)
    assert w["code"] == "above_achievable"
    assert w["message"].startswith("MFU against the measured ceiling is 200.0 %: the job achieved 10 TFLOP/s per GPU, "
                                   "more than hardware.achievable_tflops (5)")


def test_a_point_exactly_on_its_roof_is_not_above_it():
    """docs/figures.md §9: attainable = min(peak, AI x bandwidth); only a point *above* it is impossible. Rows whose
    work is by hand exactly at their roof, for a time in ns as the trace gives it: on the compute roof 1.000000007 s
    x 1 GPU x 989.4 TFLOP/s = 989,400,006,925,800 FLOPs (AI 1000 FLOP/B, past the ridge 989.4 / 4.8 = 206); on the
    memory roof 0.987654321 s x 64 GPUs x 2039 GB/s = 128,884,938,273,216 bytes with as many FLOPs (AI 1 FLOP/B,
    roof 2.039 TFLOP/s); without bytes, the compute case again against the dense peak. Each is 100 % of its roof,
    so no warning (dividing the derived floats gave 100.00000000000001 and 100.00000000000003, and the row
    without bytes was labelled "impossible: above the peak"). A point one part in 10^8 above is still warned."""
    from pipeline.model.operators import Operator
    from pipeline.model.roofline import ABOVE_PEAK, row

    on_peak = 1_000_000_007 * 1 * 9894 * 100
    assert on_peak == 989_400_006_925_800
    on_bw = 987_654_321 * 64 * 2039
    assert on_bw == 128_884_938_273_216
    rows = [row(Operator("gemm", "gemm", on_peak, on_peak // 1000, ""), "analytic", 1.000000007, 989.4, 4800.0, 1),
            row(Operator("add", "elementwise", on_bw, on_bw, ""), "analytic", 0.987654321, 989.4, 2039.0, 64),
            row(Operator("region", None, on_peak, 0, ""), "analytic", 1.000000007, 989.4, 4800.0, 1)]
    assert [r["bound"] for r in rows[:2]] == ["compute", "memory"]
    assert [r["pct_of_roof"] for r in rows[:2]] == [100.0, 100.0]
    assert rows[2]["bound"] == "likely compute-bound (heuristic)"
    assert plausibility.roofline_under_roof(rows) == [] and plausibility.roofline_under_peak(rows, 989.4) == []
    above = [row(Operator("gemm", "gemm", on_peak + on_peak // 10**8, on_peak // 1000, ""), "analytic", 1.000000007,
                 989.4, 4800.0, 1),
             row(Operator("add", "elementwise", on_bw, on_bw + on_bw // 10**8, ""), "analytic", 0.987654321,
                 989.4, 2039.0, 64),
             row(Operator("region", None, on_peak + on_peak // 10**8, 0, ""), "analytic", 1.000000007, 989.4,
                 4800.0, 1)]
    assert len(plausibility.roofline_under_roof(above)) == 2 and above[2]["bound"] == ABOVE_PEAK


def test_roofline_under_peak():
    """Without bytes there is no attainable roof, but the dense peak still bounds a row: 1 GPU at 1000 TFLOP/s.
    1e15 FLOPs in 0.5 s is 2000 TFLOP/s (impossible); in 1 s, exactly the peak; with bytes the roof rule judges."""
    from pipeline.model.operators import Operator
    from pipeline.model.roofline import JOB_NOTE, row

    def at(flops, nbytes, seconds, note="analytic"):
        return row(Operator("op", None, flops, nbytes, note), "job", seconds, 1000.0, 2000.0, 1)
    assert plausibility.roofline_under_peak([at(1e15, 0, 1.0), at(1e15, 1e12, 0.5), at(1e15, 0, None)], 1000.0) == []
    (w,) = plausibility.roofline_under_peak([at(1e15, 0, 0.5, JOB_NOTE)], 1000.0)
    assert w["code"] == "above_roof"
    assert w["message"].startswith("roofline row 'op': 2000.0 TFLOP/s achieved exceeds the 1000.0 TFLOP/s dense peak; "
                                   "the FLOPs given for it in analysis.figures")
    (w,) = plausibility.roofline_under_peak([at(1e15, 0, 0.25)], 1000.0)
    assert "4000.0 TFLOP/s achieved exceeds the 1000.0 TFLOP/s dense peak; the kernels matched to it ran too " \
           "briefly for its analytic FLOPs" in w["message"]


# --------------------------------------------------------------------------- completeness

def test_figures_found_kernels():
    """A figure with a pattern and no kernel time (0 s) is named; one with time, or without a pattern (the
    region's, None by design), is not."""
    figures = [{"name": "a", "kernels": "x", "flops": 1}, {"name": "b", "kernels": "y", "flops": 1},
               {"name": "c", "flops": 1}]
    (w,) = plausibility.figures_found_kernels(figures, [0.0, 0.5, None])
    assert w["code"] == "figure_no_kernels" and w["message"].startswith("analysis.figures 'a': no attributed kernel")
    assert plausibility.figures_found_kernels(figures, [0.1, 0.5, None]) == []


def test_voided():
    """An invalid result's figures resting on FLOPs or tokens are no measurement; its times are measured and stand
    (docs/figures.md §6: the verdict judges MFU, HFU, the union diagnostic and the numerator's scope)."""
    on_flops = ["mfu_pct_wall", "hfu_pct_wall", "active_ratio_pct_union", "mfu_pct_achievable",
                "achieved_tflops_per_gpu", "tokens_per_s"]
    times = ["union_over_wall_pct", "step_time_median_s", "wall_time_s", "gpu_kernel_union_s", "straggler_s"]
    assert [f for f in on_flops + times if plausibility.voided("invalid", f)] == on_flops
    assert not any(plausibility.voided("ok", f) for f in on_flops + times)


def test_every_rule_has_its_own_test():
    assert untested_rules(plausibility, __name__) == []
    assert set(plausibility.VERDICT_RULES) <= set(rules_of(plausibility).values())


def test_occurrences_without_kernels_beside_ones_with_say_their_flops_still_count(tmp_path):
    """Steps 1-3 at 0, 10, 20 us, 1000 ns each; only step 1 launches a kernel (200..900). The totals count
    3 x 1e3 FLOP over the union of the envelopes (3 x 1000 ns) at 1 TFLOP/s: MFU 100 x 3e3 / (3000e-9 x 1e12)
    = 0.1 %, of which steps 2 and 3 hold no GPU work in the trace. The warning must say so, not only name them."""
    e = Export()
    main = gtid(100, 100)
    for k in range(3):
        e.range(k * 10_000, k * 10_000 + 1000, main, "step")
    e.launch(100, main, 1)
    e.kernel(200, 900, gpid(100), 1)
    res = run_job(load_job(step_job(tmp_path, e)))
    assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 3e3 / (3000e-9 * 1e12))
    (w,) = [w["message"] for w in res["warnings"] if w["code"] == "no_kernels"]
    assert w.startswith("no kernel was attributed in occurrence(s) 2-3: the totals still count their model FLOPs "
                        "(2 of 3 occurrences) but none of their GPU work is in the wall")


def test_occurrences_all_without_kernels_are_named_alone(tmp_path):
    """With no kernel in any occurrence (the trace's one kernel is launched between the steps) the run is invalid
    for that reason already; the warning only names them."""
    e = Export()
    for k in range(2):
        e.range(k * 10_000, k * 10_000 + 1000, gtid(100, 100), "step")
    e.launch(5000, gtid(100, 100), 1)
    e.kernel(5100, 5200, gpid(100), 1)
    res = run_job(load_job(step_job(tmp_path, e)))
    assert res["status"] == "invalid"
    (w,) = [w["message"] for w in res["warnings"] if w["code"] == "no_kernels"]
    assert w == "no kernel was attributed in occurrence(s) 1-2"


def _one_kernel_over_the_range(tmp_path, wall_ns: int, flops: int, num_gpus: int, peak_tflops: float) -> dict:
    """The result of a job over one rank's one range 0..wall_ns with one kernel over all of it, of `flops` FLOPs."""
    e = Export()
    e.range(0, wall_ns, gtid(100, 100), "step")
    e.launch(0, gtid(100, 100), 1)
    e.kernel(0, wall_ns, gpid(100), 1)
    trace = e.write(tmp_path / "t.sqlite")
    job = write_job(tmp_path, trace, region={"name": "step"},
                    hardware={"num_gpus": num_gpus, "peak_tflops": peak_tflops},
                    model={"flops_per_step": flops}, workload={"seq_len": 4, "global_batch": 1})
    return run_job(load_job(job))


def test_work_exactly_at_the_peak_is_a_measurement(tmp_path):
    """docs/figures.md §6 refuses MFU, HFU or the union diagnostic *above* 100 %. One rank, one range 0..2.231593033 s
    with one kernel over all of it, 8 GPUs at 312 TFLOP/s, and by hand exactly the FLOPs they supply:
    2.231593033 s x 8 x 312e12 = 5,570,056,210,368,000. MFU, HFU and the union diagnostic are all 100 %, no more:
    status ok, not invalid (computed in floats as written, the quotient came out 100.00000000000001)."""
    wall = 2_231_593_033
    flops = wall * 8 * 312 * 1000                              # ns x GPUs x TFLOP/s x 1e3 = FLOPs
    assert flops == 5_570_056_210_368_000
    res = _one_kernel_over_the_range(tmp_path, wall, flops, num_gpus=8, peak_tflops=312.0)
    m = res["metrics"]
    assert (m["mfu_pct_wall"], m["hfu_pct_wall"], m["active_ratio_pct_union"]) == (100.0, 100.0, 100.0)
    assert res["status"] == "ok" and res["status_reason"] is None
    assert res["occurrences"][0]["mfu_pct_wall"] == 100.0
    assert "occurrence_above_100" not in {w["code"] for w in res["warnings"]}


def test_work_exactly_at_the_peak_has_a_roofline_row_on_its_roof(tmp_path):
    """The roofline's region row is the model FLOPs over the wall: at exactly the peak it is on the dense peak,
    not above it. One rank, one range and kernel over 0..1.000000007 s, 1 GPU at 989.4 TFLOP/s, by hand
    1.000000007 s x 989.4e12 = 989,400,006,925,800 FLOPs: MFU 100 % (status ok), and the row without bytes is
    "likely compute-bound", with no above_roof warning (its achieved figure in floats came out a few ulp above
    989.4 and the row was called impossible while the MFU beside it was a valid 100 %)."""
    wall = 1_000_000_007
    flops = wall * 9894 * 100                                  # ns x (TFLOP/s x 10) x 1e2 = FLOPs
    assert flops == 989_400_006_925_800
    res = _one_kernel_over_the_range(tmp_path, wall, flops, num_gpus=1, peak_tflops=989.4)
    assert res["status"] == "ok" and res["metrics"]["mfu_pct_wall"] == 100.0
    (region,) = [r for r in res["roofline"] if r["operator"] == "whole region (model FLOPs)"]
    assert region["bound"] == "likely compute-bound (heuristic)"
    assert "above_roof" not in {w["code"] for w in res["warnings"]}


def test_percent_thresholds_below_one():
    """0.35 is a fraction written where percent is meant: asked whether 35 was meant. 1 and 0 are not
    fractions of one; the seconds threshold is no percentage at all."""
    (w,) = plausibility.percent_thresholds_below_one({"mfu_pct_wall_min": 0.35, "hfu_pct_wall_min": 1.0,
                                                      "step_time_s_max": 0.5})
    assert w["code"] == "threshold_below_one_percent"
    assert "thresholds.mfu_pct_wall_min is 0.35 %" in w["message"] and "did you mean 35 (35 %)?" in w["message"]
    assert plausibility.percent_thresholds_below_one({"mfu_pct_wall_min": 0.0, "hfu_pct_wall_min": 40}) == []


def test_percent_thresholds_below_one_is_applied_by_run(tmp_path):
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.launch(1100, gtid(100, 100), 1)
    e.kernel(1100, 1900, gpid(100), 1)
    job = step_job(tmp_path, e)
    doc = job.read_text().replace('"workload"', '"thresholds": {"mfu_pct_wall_min": 0.35}, "workload"')
    job.write_text(doc)
    res = run_job(load_job(job))
    (w,) = [w["message"] for w in res["warnings"] if w["code"] == "threshold_below_one_percent"]
    assert "did you mean 35" in w
