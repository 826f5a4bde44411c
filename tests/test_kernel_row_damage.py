"""Kernel rows no GPU can have produced, end to end on hand-built traces: every figure worked out by hand here.

Exact duplicate rows (one kernel recorded twice: same device, stream, start, end, correlationId,
process) are one execution: counted once, with a warning saying how many and how much of the kernel
sum as recorded they made.
"""

from __future__ import annotations

import json

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.job.config import load_job
from pipeline.run import run_job, run_to_folder
from tests.test_run_synth import write_job

NS = 1e9
FLOPS = 300.0           # per step: 30 % of the 1e3 FLOPs one GPU at PEAK supplies in a 1000 ns step
PEAK = 1e-3             # TFLOP/s


def _job(tmp_path, export: Export, **region):
    trace = export.write(tmp_path / "trace.sqlite")
    return load_job(write_job(tmp_path, trace, region={"name": "step", **region},
                              hardware={"gpu": "auto", "num_gpus": 1, "peak_tflops": PEAK},
                              model={"flops_per_step": FLOPS}, workload={"seq_len": 4, "global_batch": 1}))


def duplicated() -> Export:
    """pid 100, one `step` range 1000..2000, kernels on device 0:
      corr 1, stream 7: 1200..1500, recorded twice (the duplicate: 300 ns)
      corr 2, stream 8: 1400..1800
      corr 3, streams 7 and 9: 1600..1900 each (one graph launch, two nodes on two streams: two kernels)
    Counted once: sum 300 + 400 + 300 + 300 = 1300 ns, union 1200..1900 = 700 ns, 4 kernels.
    As recorded the sum was 1600 ns, of which the copy makes 300 ns = 18.75 %.
    """
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    e.range(1000, 2000, main, "step")
    for corr, launch in ((1, 1100), (2, 1150), (3, 1300)):
        e.launch(launch, main, corr)
    e.kernel(1200, 1500, key, 1)
    e.kernel(1200, 1500, key, 1)
    e.kernel(1400, 1800, key, 2, stream=8)
    e.kernel(1600, 1900, key, 3, stream=7)
    e.kernel(1600, 1900, key, 3, stream=9)
    return e


@pytest.mark.parametrize("attribution", ["process", "window"])
def test_an_exact_duplicate_kernel_row_counts_once_with_a_warning(tmp_path, attribution):
    res = run_job(_job(tmp_path, duplicated(), attribution=attribution))
    t = res["totals"]
    assert round(t["gpu_kernel_sum_s"] * NS) == 300 + 400 + 300 + 300
    assert round(t["gpu_kernel_union_s"] * NS) == 700
    assert res["occurrences"][0]["kernel_count"] == 4
    (w,) = [w for w in res["warnings"] if w["code"] == "duplicate_kernels"]
    assert w["message"].startswith("1 attributed kernel row(s) are exact copies of another (same device, stream, "
                                   "start, end, correlationId and process; occurrence 1: 1)")
    assert "They made 300 ns, 18.75 % of the kernel sum as recorded" in w["message"]
    assert "each is counted once" in w["message"]


def test_a_kept_window_keeps_the_duplicates(tmp_path):
    """A warm run reads the window from the cache (kept_window.py): same figures, same warning."""
    job = _job(tmp_path, duplicated())
    cold = run_job(job, cache_dir=tmp_path / "cache")
    assert list((tmp_path / "cache").glob("*/windows/*"))
    warm = run_job(job, cache_dir=tmp_path / "cache")
    assert warm["warnings"] == cold["warnings"] and "duplicate_kernels" in {w["code"] for w in warm["warnings"]}
    assert round(warm["totals"]["gpu_kernel_sum_s"] * NS) == 1300


def test_a_warm_run_still_warns_of_rows_ending_before_they_start(tmp_path):
    """Backwards rows are counted by the analysis (measure.analyse), whose rows a kept window replays: the warm
    run warns as the cold one did. By hand: the copy of corr 1 now ends at 1100, 100 ns before it starts."""
    e = duplicated()
    e.kernels[1]["end"] = 1100
    job = _job(tmp_path, e)
    cold = run_job(job, cache_dir=tmp_path / "cache")
    warm = run_job(job, cache_dir=tmp_path / "cache")
    (w,) = [w for w in warm["warnings"] if w["code"] == "kernels_end_before_start"]
    assert w["message"].startswith("1 attributed kernel or memory row(s) end before they start (occurrence 1: 1; "
                                   "100 ns backwards in all)")
    assert warm["warnings"] == cold["warnings"]


def test_the_duplicate_warning_reaches_every_report_format(tmp_path):
    _, folder = run_to_folder(_job(tmp_path, duplicated()), tmp_path / "out")
    result = json.loads((folder / "result.json").read_text())
    (w,) = [w for w in result["warnings"] if w["code"] == "duplicate_kernels"]
    assert "18.75 %" in w["message"]
    assert "`duplicate_kernels`" in (folder / "report.md").read_text()
    assert "18.75 %" in (folder / "report.md").read_text()
    html = (folder / "report.html").read_text()
    assert "duplicate_kernels" in html and "18.75 %" in html


def test_no_duplicate_warning_for_kernels_of_one_launch_on_two_streams(tmp_path):
    e = duplicated()
    del e.kernels[1]                                       # the copy of corr 1 gone: nothing is duplicated
    res = run_job(_job(tmp_path, e))
    assert round(res["totals"]["gpu_kernel_sum_s"] * NS) == 1300
    assert "duplicate_kernels" not in {w["code"] for w in res["warnings"]}


def test_duplicates_of_several_files_add_up(tmp_path):
    """One job over two rank files (a glob): rank 100's file as above (one 300 ns copy), rank 200's with a
    kernel 1200..1300 recorded twice (one 100 ns copy). Counted once: 1300 + 100 = 1400 ns; as recorded
    1800 ns, of which the copies make 400 ns = 22.22 %."""
    duplicated().write(tmp_path / "r0.sqlite")
    e = Export()
    e.range(1000, 2000, gtid(200, 200), "step")
    e.launch(1100, gtid(200, 200), 1)
    e.kernel(1200, 1300, gpid(200), 1)
    e.kernel(1200, 1300, gpid(200), 1)
    e.write(tmp_path / "r1.sqlite")
    job = write_job(tmp_path, tmp_path / "r*.sqlite", region={"name": "step"},
                    hardware={"gpu": "auto", "num_gpus": 2, "peak_tflops": PEAK},
                    model={"flops_per_step": FLOPS}, workload={"seq_len": 4, "global_batch": 1})
    res = run_job(load_job(job))
    assert round(res["totals"]["gpu_kernel_sum_s"] * NS) == 1400
    (w,) = [w for w in res["warnings"] if w["code"] == "duplicate_kernels"]
    assert w["message"].startswith("2 attributed kernel row(s) are exact copies")
    assert "(same device, stream, start, end, correlationId and process; occurrence 1: 2)" in w["message"]
    assert "They made 400 ns, 22.22 % of the kernel sum as recorded" in w["message"]


def early(start: int, *, range_start: int = 1000, kind: str = "kernel") -> Export:
    """pid 100, one `step` range range_start..2000; launch corr 1 at range_start + 100 of a kernel (or a memory
    operation) start..1500, launch corr 2 at range_start + 200 of a kernel 1600..1800."""
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    e.range(range_start, 2000, main, "step")
    e.launch(range_start + 100, main, 1)
    if kind == "kernel":
        e.kernel(start, 1500, key, 1)
    else:
        e.memory(start, 1500, key, 1, kind=kind)
    e.launch(range_start + 200, main, 2)
    e.kernel(1600, 1800, key, 2)
    return e


@pytest.mark.parametrize(("start", "kind", "table"), [
    (-5000, "kernel", "CUPTI_ACTIVITY_KIND_KERNEL"),      # a negative start: 6,000 ns before the range
    (400, "kernel", "CUPTI_ACTIVITY_KIND_KERNEL"),        # positive, but 600 ns before the range, 700 before its launch
    (-5000, "memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY"),
    (-5000, "memset", "CUPTI_ACTIVITY_KIND_MEMSET")])
def test_an_attributed_row_starting_before_its_range_is_a_trace_problem(tmp_path, capsys, start, kind, table):
    """Launched at 1100 inside the range 1000..2000, the row cannot start before 1100. Measured, it stretched the
    union to 1500 - start + 200 ns (6,700 ns at -5000) against a wall of 1000 ns, 670 % of the wall, and lowered
    the active-time ratio 6.7-fold, with exit 0 and no word. Refused: exit 4, naming table and occurrence."""
    from pipeline.cli import main
    job = _job(tmp_path, early(start, kind=kind))
    code = main(["run", str(job.path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 4
    assert err.startswith(f"error: {tmp_path / 'trace.sqlite'}: {table}: 1 attributed row(s) start before the "
                          f"selected range of their process (occurrence 1: 1; up to {1000 - start:,} ns before it)")
    assert "no GPU work starts before the CUDA call that launched it" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "synthetic").exists()


def test_negative_times_inside_the_range_are_measured(tmp_path):
    """Negative times are no damage by themselves (real exports hold events before the session's time zero): a
    range -3000..2000 launching at -2900 a kernel -2500..1500 is measured. By hand: wall 5000 ns, union
    -2500..1500 and 1600..1800 = 4200 ns, sum the same."""
    res = run_job(_job(tmp_path, early(-2500, range_start=-3000)))
    t = res["totals"]
    assert (round(t["wall_time_s"] * NS), round(t["gpu_kernel_union_s"] * NS)) == (5000, 4000 + 200)
    assert round(t["gpu_kernel_sum_s"] * NS) == 4200


def memory_duplicated() -> Export:
    """pid 100, one `step` range 1000..2000, on device 0:
      corr 1 kernel 1100..1400 (300 ns)
      corr 2 memcpy 1500..1700 (200 ns), recorded twice (the duplicate: 200 ns)
      corr 3 memset 1750..1850 (100 ns)
    Counted once: memory time 300 ns, summed GPU time (kernels and memory) 600 ns; as recorded the memory
    operations summed 500 ns, of which the copy makes 200 ns = 40 %."""
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    e.range(1000, 2000, main, "step")
    for corr in (1, 2, 3):
        e.launch(1000 + 10 * corr, main, corr)
    e.kernel(1100, 1400, key, 1)
    e.memory(1500, 1700, key, 2)
    e.memory(1500, 1700, key, 2)
    e.memory(1750, 1850, key, 3, kind="memset")
    return e


@pytest.mark.parametrize("attribution", ["process", "window"])
def test_an_exact_duplicate_memory_row_counts_once_with_a_warning(tmp_path, attribution):
    res = run_job(_job(tmp_path, memory_duplicated(), attribution=attribution))
    memory = {k["name"]: (k["count"], round(k["sum_s"] * NS), k["share_of_kernel_sum"])
              for k in res["top_kernels"] if k["class"] == "memory"}
    assert memory == {"[CUDA memcpy]": (1, 200, pytest.approx(200 / 600, rel=1e-12)),
                      "[CUDA memset]": (1, 100, pytest.approx(100 / 600, rel=1e-12))}
    assert round(res["totals"]["gpu_kernel_sum_s"] * NS) == 300
    assert "duplicate_kernels" not in {w["code"] for w in res["warnings"]}
    (w,) = [w for w in res["warnings"] if w["code"] == "duplicate_memory_operations"]
    assert w["message"].startswith("1 attributed memory copy or set row(s) are exact copies of another (same "
                                   "device, stream, start, end, correlationId and process; occurrence 1: 1)")
    assert "They made 200 ns, 40 % of the memory operations' summed time as recorded" in w["message"]
    assert "each is counted once" in w["message"]


def test_a_kept_window_keeps_the_duplicate_memory_rows(tmp_path):
    """A warm run reads the window, and the copies it dropped, from the cache: same figures, same warning."""
    job = _job(tmp_path, memory_duplicated())
    cold = run_job(job, cache_dir=tmp_path / "cache")
    warm = run_job(job, cache_dir=tmp_path / "cache")
    assert warm["warnings"] == cold["warnings"]
    assert "duplicate_memory_operations" in {w["code"] for w in warm["warnings"]}
    assert [(k["name"], k["count"], round(k["sum_s"] * NS)) for k in warm["top_kernels"] if k["class"] == "memory"] \
        == [("[CUDA memcpy]", 1, 200), ("[CUDA memset]", 1, 100)]


def test_copies_in_many_occurrences_are_said_in_runs_not_one_by_one():
    """A merged export copies rows in every occurrence: the warning listed 'occurrence k: n' for each, 20,000
    of them (400 kB of message). Beyond ten occurrences it names them as runs. By hand: 12 occurrences of
    100 ns kernel sum each, one 10 ns copy in each but the 5th: 11 rows, 110 ns of 1200 + 110 = 8.397 %."""
    from pipeline.analysis.trace_warnings import duplicate_warning
    occurrences = [{"occurrence": k, "kernel_sum_ns": 100} for k in range(1, 13)]
    copies = {k: {"rows": 1, "duplicate_ns": 10} for k in range(1, 13) if k != 5}
    (w,) = duplicate_warning(copies, occurrences)
    assert w["message"].startswith("11 attributed kernel row(s) are exact copies of another (same device, stream, "
                                   "start, end, correlationId and process; 11 occurrences: 1-4, 6-12): ")
    assert "They made 110 ns, 8.397 % of the kernel sum as recorded" in w["message"]
    few = {k: d for k, d in copies.items() if k <= 11}                       # ten occurrences: each named
    assert "process; occurrence 1: 1, occurrence 2: 1, occurrence 3: 1, occurrence 4: 1, occurrence 6: 1, " \
           "occurrence 7: 1, occurrence 8: 1, occurrence 9: 1, occurrence 10: 1, occurrence 11: 1): " in \
           duplicate_warning(few, occurrences)[0]["message"]


def test_early_rows_in_many_occurrences_are_said_in_runs_not_one_by_one():
    """A broken clock moves rows in every occurrence: the refusal named 'occurrence k: n' for each. Beyond ten
    occurrences it names them as runs. By hand: one early row in occurrences 1-12 but 5, two in the 12th."""
    from types import SimpleNamespace
    from pipeline.analysis.trace_warnings import refuse_early_rows
    from pipeline.errors import TraceError
    trace = SimpleNamespace(path="t.sqlite", tables={"raw_kernel": "CUPTI_ACTIVITY_KIND_KERNEL"})
    rows = [{"occurrence": k, "source": "raw_kernel", "rows": 2 if k == 12 else 1, "most_early_ns": 10 * k}
            for k in range(1, 13) if k != 5]
    with pytest.raises(TraceError) as err:
        refuse_early_rows(trace, rows)
    assert str(err.value).startswith("t.sqlite: CUPTI_ACTIVITY_KIND_KERNEL: 12 attributed row(s) start before the "
                                     "selected range of their process (11 occurrences: 1-4, 6-12; up to 120 ns "
                                     "before it): ")


def test_backwards_rows_in_many_occurrences_are_said_in_runs_not_one_by_one():
    """A broken clock turns rows backwards in every occurrence: the warning named 'occurrence k: n' for each, as
    the copy warnings did. Beyond ten occurrences it names them as runs. By hand: one backwards row of 7 ns in
    occurrences 1-12 but 5, two (14 ns) in the 12th: 12 rows, 84 ns."""
    from pipeline.analysis.trace_warnings import backwards_warning
    rows = [{"occurrence": k, "rows": 2 if k == 12 else 1, "negative_ns": 14 if k == 12 else 7}
            for k in range(1, 13) if k != 5]
    (w,) = backwards_warning(rows)
    assert w["message"].startswith("12 attributed kernel or memory row(s) end before they start (11 occurrences: "
                                   "1-4, 6-12; 84 ns backwards in all): ")
    (few,) = backwards_warning(rows[:2])
    assert few["message"].startswith("2 attributed kernel or memory row(s) end before they start (occurrence 1: 1, "
                                     "occurrence 2: 1; 14 ns backwards in all): ")
