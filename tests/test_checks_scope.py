"""Every rule of pipeline/checks/scope.py, one test each (named test_<rule>), plus proof that run applies them,
and the trace warnings saying whether the selected ranges hold the work measured.

The boundaries are written here by hand from the rules' definitions (docs/figures.md §5, §7, §11).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.checks import scope
from pipeline.errors import ConfigError, TraceError
from pipeline.report.render import render_all
from pipeline.job.config import load_job
from pipeline.run import run_job
from test_checks_job_file import job_of, untested_rules
from test_config import GOOD
from test_run_synth import write_job


def step_job(tmp_path: Path, e: Export, gpus: int = 1, flops: float = 1.0e3) -> Path:
    """A job over region `step` of the export `e` (written to t.sqlite): `flops` per step, 1 TFLOP/s per GPU."""
    trace = e.write(tmp_path / "t.sqlite")
    return write_job(tmp_path, trace, region={"name": "step"}, hardware={"num_gpus": gpus, "peak_tflops": 1.0},
                     model={"flops_per_step": flops}, workload={"seq_len": 4, "global_batch": 1})


# --------------------------------------------------------------------------- numerator vs architecture

@pytest.mark.parametrize("ratio, code", [(1.0, None), (1.099, None), (0.901, None), (1.101, "numerator_differs"),
                                         (0.899, "numerator_differs"), (2.0, "numerator_differs"),
                                         (0.5, "numerator_differs"), (2.01, "scope_mismatch"),
                                         (0.49, "scope_mismatch")])
def test_numerator_agrees(ratio, code):
    """Within 10 % of the architecture's figure: a convention difference; beyond 0.5x-2x: other work."""
    reference = 10**15
    found = scope.numerator_agrees(round(ratio * reference), reference, "megatron")
    assert [w["code"] for w in found] == ([code] if code else [])
    assert scope.numerator_agrees(5 * reference, None, "explicit") == []


@pytest.mark.parametrize("flops, code", [(1100, None), (900, None), (1101, "numerator_differs"),
                                         (899, "numerator_differs"), (1100.0, None), (900.0, None)])
def test_numerator_agrees_at_exactly_the_tolerance(flops, code):
    """Exactly 10 % above or below the architecture's 1000 FLOPs is still "within 10 %" (the rule is inclusive),
    on both sides: in floats 1100 / 1000 - 1 = 0.10000000000000009 > 0.1 warned while 900 agreed. One FLOP
    further out is beyond it."""
    assert [w["code"] for w in scope.numerator_agrees(flops, 1000, "megatron")] == ([code] if code else [])


def test_numerator_agrees_names_a_forward_pass():
    (w,) = scope.numerator_agrees(33, 100, "megatron")
    assert w["code"] == "scope_mismatch" and "one forward pass" in w["message"]
    (w,) = scope.numerator_agrees(45, 100, "megatron")
    assert "forward pass" not in w["message"]


@pytest.mark.parametrize("flops, forward", [(279, False), (280, True), (380, True), (381, False)])
def test_numerator_agrees_forward_pass_band(flops, forward):
    """The 'one forward pass' hint covers ratios 0.28 to 0.38 inclusive (1/3 +- convention spread)."""
    (w,) = scope.numerator_agrees(flops, 1000, "megatron")
    assert w["code"] == "scope_mismatch" and ("one forward pass" in w["message"]) is forward


def _counted(share: float | None, ratio: float | None) -> dict:
    """A counted_flops section as model/counted.py writes it: coverage share, ratio to the declared hardware FLOPs."""
    declared = None if ratio is None else {"ratio_to_hardware": ratio, "counted_per_gpu": 1e12 * ratio,
                                            "hardware_per_gpu": 1e12}
    return {"coverage": {"share": share}, "declared": declared}


@pytest.mark.parametrize("share, ratio, warned", [(0.9, 1.101, True), (0.9, 0.899, True), (0.9, 1.099, False),
                                                  (0.9, 0.901, False), (0.899, 2.0, False), (None, 2.0, False),
                                                  (1.0, None, False)])
def test_counted_agrees(share, ratio, warned):
    """From 90 % coverage on, beyond the 10 % convention tolerance: the declared work differs from what ran."""
    found = scope.counted_agrees(_counted(share, ratio), "none", 0.25)
    assert [w["code"] for w in found] == (["counted_flops_differ"] if warned else [])


def test_counted_agrees_names_the_likely_causes():
    more = scope.counted_agrees(_counted(0.95, 4 / 3), "none", 0.25)[0]["message"]
    assert "batch or sequence wrong" in more and "recomputation not declared" in more and "attention is 25%" in more
    less = scope.counted_agrees(_counted(0.95, 0.5), "full", None)[0]["message"]      # less than declared
    assert "batch or sequence wrong" in less and "recomputation" not in less and "convention" not in less
    assert "0.500x the declared hardware FLOPs (1e+12)" in less and "covering 95%" in less


def test_numerator_checkable():
    (w,) = scope.numerator_checkable(True, None)
    assert w["code"] == "numerator_unchecked"
    assert scope.numerator_checkable(True, 8192) == [] and scope.numerator_checkable(False, None) == []


# --------------------------------------------------------------------------- trace rules

def test_gpu_scope(tmp_path):
    job = job_of(tmp_path, GOOD.replace("num_gpus: 8", "num_gpus: 2").replace("global_batch: 64", "global_batch: 16"))
    (p,) = scope.gpu_scope(job, [0, 1, 2])
    assert p.pointer == "/hardware/num_gpus" and p.line == 7 and "at least 3" in p.hint
    assert scope.gpu_scope(job, [0, 1]) == []


def test_gpu_scope_is_applied_by_run(synth_trace, tmp_path):
    """Two ranks on two devices measured against one GPU would double the MFU: exit 3, not a figure."""
    trace, _ = synth_trace()
    path = tmp_path / "job.yaml"
    path.write_text(json.dumps({
        "name": "one-gpu", "trace": str(trace), "region": {"name": "train_step"},
        "hardware": {"num_gpus": 1, "precision": "bf16", "peak_tflops": 50000},
        "model": {"flops_per_step": 1e12}, "workload": {"mode": "training", "seq_len": 8, "global_batch": 1}}))
    with pytest.raises(ConfigError) as err:
        run_job(load_job(path))
    assert err.value.problems[0].pointer == "/hardware/num_gpus"


def test_gpus_unseen(tmp_path):
    """Fewer devices than num_gpus: a warning naming both counts, what the MFU assumes and the fix (8 / 2 = 4x)."""
    job = job_of(tmp_path, GOOD)                                  # num_gpus: 8
    (w,) = scope.gpus_unseen(job, ["0", "1"], False)
    assert w["code"] == "gpus_unseen"
    assert w["message"] == (
        "kernels of the selected occurrences ran on 2 device(s) (0, 1), but hardware.num_gpus is 8: the MFU "
        "divides by 8 GPUs, so it assumes the 6 GPU(s) not in the trace ran the same steps in the same wall time, "
        "and that the FLOPs are those of the whole job on all 8 GPUs. Tracing one node or rank of a larger job is "
        "fine if so; if the job ran on only 2 GPU(s), set hardware.num_gpus: 2 (the MFU is then 4x this one)")
    assert "(the MFU is then 2.67x this one)" in scope.gpus_unseen(job, ["0", "1", "2"], False)[0]["message"]
    assert scope.gpus_unseen(job, [str(d) for d in range(8)], False) == []
    assert scope.gpus_unseen(job, [], False) == []               # no kernel at all: no_kernels says so
    assert scope.gpus_unseen(job, ["0"], True) == []              # ids shared by hosts do not count the GPUs


def _two_devices(num_gpus: int, tmp_path: Path) -> dict:
    """Ranks 100 and 200, one range 1000..2000 ns each, a kernel each on devices 0 and 1; 1e6 FLOPs at 1 TFLOP/s."""
    e = Export()
    for pid, dev in ((100, 0), (200, 1)):
        e.range(1000, 2000, gtid(pid, pid), "step")
        e.launch(1100, gtid(pid, pid), 1)
        e.kernel(1200, 1800, gpid(pid), 1, device=dev)
    return run_job(load_job(step_job(tmp_path, e, gpus=num_gpus, flops=1.0e6)))


@pytest.mark.parametrize("num_gpus, mfu_pct, warned", [(8, 12.5, True), (2, 50.0, False)])
def test_gpus_unseen_is_applied_by_run(tmp_path, num_gpus, mfu_pct, warned):
    """Kernels on 2 devices: num_gpus 8 is warned of, in every format, and the figures still divide by 8 GPUs
    (1e6 FLOPs / (1000 ns x 8 x 1e12) = 12.5 %; status ok); num_gpus 2 gives 50 % and no warning."""
    res = _two_devices(num_gpus, tmp_path)
    assert res["status"] == "ok" and res["metrics"]["mfu_pct_wall"] == pytest.approx(mfu_pct)
    found = [w for w in res["warnings"] if w["code"] == "gpus_unseen"]
    assert len(found) == warned
    if warned:
        assert "ran on 2 device(s) (0, 1), but hardware.num_gpus is 8" in found[0]["message"]
        files = render_all(res)
        assert "`gpus_unseen`: kernels of the selected occurrences ran on 2 device(s)" in files["report.md"]
        assert "gpus_unseen" in files["report.html"] and "the 6 GPU(s) not in the trace" in files["report.html"]
        assert json.loads(files["result.json"])["warnings"] == res["warnings"]


def _one_file_per_rank(tmp_path: Path, num_gpus: int) -> Path:
    """A job over rank100.sqlite and rank200.sqlite: one range 1000..2000 ns each, a kernel on each file's device 0;
    1e6 FLOPs at 1 TFLOP/s."""
    traces = []
    for pid in (100, 200):
        e = Export()
        e.range(1000, 2000, gtid(pid, pid), "step")
        e.launch(1100, gtid(pid, pid), 1)
        e.kernel(1200, 1800, gpid(pid), 1)
        traces.append(str(e.write(tmp_path / f"rank{pid}.sqlite")))
    job = write_job(tmp_path, tmp_path / "x", region={"name": "step"},
                    hardware={"num_gpus": num_gpus, "peak_tflops": 1.0}, model={"flops_per_step": 1.0e6},
                    workload={"seq_len": 4, "global_batch": 1})
    job.write_text(json.dumps({**json.loads(job.read_text()), "trace": traces}))
    return job


def test_gpus_unseen_counts_the_devices_of_every_file(tmp_path):
    """One file per rank, each with kernels on its device 0: the job saw 2 devices, named by file, not 1."""
    for gpus, warned in ((2, False), (4, True)):
        (tmp_path / str(gpus)).mkdir()
        res = run_job(load_job(_one_file_per_rank(tmp_path / str(gpus), gpus)))
        found = [w["message"] for w in res["warnings"] if w["code"] == "gpus_unseen"]
        assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 1.0e6 / (1000e-9 * gpus * 1.0e12))
        assert found == ([f"kernels of the selected occurrences ran on 2 device(s) (rank100.sqlite:0, "
                          f"rank200.sqlite:0), but hardware.num_gpus is 4: the MFU divides by 4 GPUs, so it "
                          f"assumes the 2 GPU(s) not in the trace ran the same steps in the same wall time, and "
                          f"that the FLOPs are those of the whole job on all 4 GPUs. Tracing one node or rank of "
                          f"a larger job is fine if so; if the job ran on only 2 GPU(s), set hardware.num_gpus: 2 "
                          f"(the MFU is then 2x this one)"] if warned else [])


def test_gpu_scope_names_devices_by_file(tmp_path):
    """One file per rank, each with kernels on its device 0, num_gpus 1: the refusal named the devices by the
    numbers the job's files are combined under internally; it names them as the report does."""
    with pytest.raises(ConfigError) as err:
        run_job(load_job(_one_file_per_rank(tmp_path, 1)))
    (p,) = err.value.problems
    assert p.pointer == "/hardware/num_gpus" and p.message == (
        "kernels of the selected occurrences ran on 2 devices (rank100.sqlite:0, rank200.sqlite:0), but num_gpus is 1")


def test_gpus_unseen_says_nothing_when_hosts_share_device_ids(tmp_path):
    """Two hosts' ranks in one file, both on device id 0, num_gpus 2: one id, but two GPUs; nothing claimed."""
    from test_ranks import _two_hosts_one_pid
    _, res = _two_hosts_one_pid(tmp_path, one_device=True)
    codes = [w["code"] for w in res["warnings"]]
    assert "devices_of_several_hosts" in codes and "gpus_unseen" not in codes


def test_ranges_have_length():
    rows = [{"occurrence": 1, "rank": "100", "pid": 100, "cpu_range_ns": 1000},
            {"occurrence": 2, "rank": "100", "pid": 100, "cpu_range_ns": 0},
            {"occurrence": 3, "rank": "200", "pid": 200, "cpu_range_ns": -5}]
    assert scope.ranges_have_length(rows[:1]) is None
    reason = scope.ranges_have_length(rows)
    assert "2 selected range(s) of NVTX_EVENTS" in reason and "occurrence 2 rank 100: zero length" in reason
    assert "occurrence 3 rank 200: ends before it starts (-5 ns)" in reason
    many = [{"occurrence": i, "rank": "100", "pid": 100, "cpu_range_ns": 0} for i in range(1, 13)]
    reason = scope.ranges_have_length(many)
    assert reason.startswith("12 selected range(s)") and "occurrence 10 rank 100: zero length (0 ns) and 2 more." in reason
    assert "occurrence 11 " not in reason


@pytest.mark.parametrize("end, words", [(900, "ends before it starts"), (1000, "zero length")])
def test_ranges_have_length_is_a_trace_problem(tmp_path, end, words):
    """A selected range ending before its start (today a negative step time, ok) is exit 4, naming it."""
    e = Export()
    main = gtid(100, 100)
    e.range(1000, end, main, "step")
    e.range(2000, 2800, main, "step")
    e.launch(2100, main, 1)
    e.kernel(2200, 2500, gpid(100), 1)
    job = step_job(tmp_path, e)
    with pytest.raises(TraceError) as err:
        run_job(load_job(job))
    assert err.value.code == 4 and f"occurrence 1 rank 100: {words}" in str(err.value)


def test_ranges_have_length_inside_another_range_is_a_trace_problem(tmp_path):
    """A range ending before its start that starts inside another range of the name (same process) is no nested
    range to fold (docs/figures.md §6): it is a selected range with end < start, so exit 4, naming it, like any other."""
    e = Export()
    main = gtid(100, 100)
    e.range(1000, 3000, main, "step")
    e.range(1500, 1400, main, "step")                    # inside 1000..3000, ends 100 ns before it starts
    e.launch(1100, main, 1)
    e.kernel(1200, 2500, gpid(100), 1)
    job = step_job(tmp_path, e)
    with pytest.raises(TraceError) as err:
        run_job(load_job(job))
    assert err.value.code == 4
    assert "1 selected range(s)" in str(err.value)
    assert "occurrence 2 rank 100: ends before it starts (-100 ns)" in str(err.value)


def test_kernels_have_length():
    """A rank whose kernels in an occurrence have no union (every end at or before its start) is named with those
    occurrences and its kernel count; a rank with time, or without kernels, is not. Devices: only those that ran
    kernels and have no busy time."""
    rows = [{"occurrence": 1, "rank": "100", "pid": 100, "kernel_count": 2, "union_ns": 500},
            {"occurrence": 1, "rank": "200", "pid": 200, "kernel_count": 3, "union_ns": 0},
            {"occurrence": 2, "rank": "200", "pid": 200, "kernel_count": 1, "union_ns": 0},
            {"occurrence": 4, "rank": "200", "pid": 200, "kernel_count": 2, "union_ns": 0},
            {"occurrence": 2, "rank": "100", "pid": 100, "kernel_count": 0, "union_ns": 0}]
    devices = [{"label": "0", "union_s": 5e-7, "kernel_count": 2}, {"label": "1", "union_s": 0.0, "kernel_count": 6},
               {"label": "2", "union_s": 0.0, "kernel_count": 0}]
    assert scope.kernels_have_length(rows[:1] + rows[4:], devices[:1]) == []
    (w,) = scope.kernels_have_length(rows, devices)
    assert w["code"] == "kernels_without_length"
    assert w["message"].startswith("the attributed kernels of rank 200 (occurrence(s) 1-2, 4: 6 kernels) all have no "
                                   "length (each ends at or before its start); device(s) 1 ran only such kernels: "
                                   "the trace lost their GPU timestamps")
    assert "rank 100" not in w["message"] and "The wall MFU rests on the NVTX ranges" in w["message"]
    (one,) = scope.kernels_have_length(rows[2:3], devices[:1])           # one kernel: not "1 kernels"
    assert "rank 200 (occurrence(s) 2: 1 kernel) all have no length" in one["message"]


def _two_ranks(second_kernel_end: int) -> Export:
    """Ranks 100 (device 0) and 200 (device 1), one range 1000..3000 each launching one gemm kernel: rank 100's
    runs 1200..2200 (1000 ns), rank 200's starts at 1300 and ends at `second_kernel_end`."""
    e = Export()
    for pid, end, device in ((100, 2200, 0), (200, second_kernel_end, 1)):
        e.range(1000, 3000, gtid(pid, pid), "step")
        e.launch(1100, gtid(pid, pid), 1)
        e.kernel(1200 if pid == 100 else 1300, end, gpid(pid), 1, device=device)
    return e


def test_kernels_have_length_is_applied_by_run(tmp_path):
    """Rank 200's only kernel has no length (1300..1300): the report is a measurement over rank 100's, with warning
    kernels_without_length naming rank 200 and device 1, and the roofline's per-GPU time of a figure matching
    `gemm` is rank 100's 1000 ns over the one device with time, 1e-6 s: 1.5e6 FLOPs on 2 GPUs in it is 0.75 TFLOP/s
    per GPU (over both devices it was 5e-7 s and 1.5 TFLOP/s, above the 1 TFLOP/s peak, warned as kernels 'too
    brief')."""
    job = step_job(tmp_path, _two_ranks(1300), gpus=2)
    doc = json.loads(job.read_text())
    job.write_text(json.dumps({**doc, "analysis": {"figures": [{"name": "g", "kernels": "gemm", "flops": 1.5e6}]}}))
    res = run_job(load_job(job))
    assert res["status"] == "ok"
    (w,) = [w["message"] for w in res["warnings"] if w["code"] == "kernels_without_length"]
    assert w.startswith("the attributed kernels of rank 200 (occurrence(s) 1: 1 kernel) all have no length") and \
        "device(s) 1 ran only such kernels" in w
    (g,) = [r for r in res["roofline"] if r["operator"] == "g"]
    assert g["measured_s"] == pytest.approx(1e-6) and g["achieved_tflops"] == pytest.approx(0.75)
    assert "above_roof" not in {w["code"] for w in res["warnings"]}
    (tmp_path / "timed").mkdir()
    res = run_job(load_job(step_job(tmp_path / "timed", _two_ranks(2300), gpus=2)))     # rank 200's kernel has time
    assert "kernels_without_length" not in {w["code"] for w in res["warnings"]}


def test_kernels_all_without_length_are_not_said_to_be_missing(tmp_path):
    """Both ranks' kernels without length: no kernel time at all, so the union diagnostic cannot be computed and
    the result is invalid (as it was), but because the kernels lost their timestamps, not because 'no attributed
    kernel ran' and other occurrences should be selected, which it said."""
    e = _two_ranks(1300)
    e.kernels[0]["end"] = e.kernels[0]["start"]
    res = run_job(load_job(step_job(tmp_path, e, gpus=2)))
    assert res["status"] == "invalid"
    assert res["status_reason"].startswith("the union diagnostic (model FLOPs / (kernel union x GPUs x peak)) cannot "
                                           "be computed: every attributed kernel of the selected occurrences has no "
                                           "length (warning kernels_without_length)")
    assert "no attributed kernel ran" not in res["status_reason"]
    (w,) = [w["message"] for w in res["warnings"] if w["code"] == "kernels_without_length"]
    assert "rank 100 (occurrence(s) 1: 1 kernel); rank 200 (occurrence(s) 1: 1 kernel)" in w
    assert "device(s) 0, 1 ran only such kernels" in w


def test_repeated_files(tmp_path):
    assert scope.repeated_files([]) == []
    (w,) = scope.repeated_files([("link.sqlite", "t.sqlite")])
    assert w["code"] == "trace_file_repeated" and "link.sqlite is t.sqlite" in w["message"]


@pytest.mark.parametrize("given", [["t.sqlite", "link.sqlite"], ["t*.sqlite", "t.sqlite"]])
def test_repeated_files_are_one_rank(synth_trace, tmp_path, given):
    """A symlink, or a glob and a path, naming one file: one set of ranks, not twice the ranks."""
    trace, truth = synth_trace()
    (tmp_path / "t.sqlite").symlink_to(trace)
    (tmp_path / "link.sqlite").symlink_to(trace)
    job = write_job(tmp_path, tmp_path / "x", hardware={"peak_tflops": 50000})
    data = json.loads(job.read_text())
    data["trace"] = given
    job.write_text(json.dumps(data))
    res = run_job(load_job(job))
    assert len(res["trace"]["files"]) == 1 and len({r["rank"] for r in res["ranks"]}) == truth["spec"]["ranks"]
    assert [w["code"] for w in res["warnings"]].count("trace_file_repeated") == 1


def test_identical_files():
    assert scope.identical_files([{"label": "a.sqlite", "sha256": "1"}, {"label": "b.sqlite", "sha256": "2"}]) == []
    (w,) = scope.identical_files([{"label": "a.sqlite", "sha256": "1"}, {"label": "b.sqlite", "sha256": "2"},
                                  {"label": "c.sqlite", "sha256": "1"}, {"label": "d.sqlite", "sha256": "1"}])
    assert w["code"] == "trace_files_identical"
    assert "(c.sqlite = a.sqlite; d.sqlite = a.sqlite)" in w["message"]


def test_identical_files_is_applied_by_run(tmp_path):
    """rank200.sqlite a byte copy of rank100.sqlite: both read as ranks with no word; a file written apart (another
    process id) is a rank of its own."""
    import shutil
    job = _one_file_per_rank(tmp_path, 2)
    res = run_job(load_job(job))
    assert "trace_files_identical" not in [w["code"] for w in res["warnings"]]
    shutil.copyfile(tmp_path / "rank100.sqlite", tmp_path / "rank200.sqlite")
    res = run_job(load_job(job))
    assert len({f["sha256"] for f in res["trace"]["files"]}) == 1 and len(res["trace"]["files"]) == 2
    (w,) = [w for w in res["warnings"] if w["code"] == "trace_files_identical"]
    assert w["message"] == ("trace files with the same contents (SHA-256) are read as different ranks "
                            "(rank200.sqlite = rank100.sqlite): one capture listed twice counts its kernels on "
                            "twice the devices and repeats its rows in the per-rank figures; list each rank's own "
                            "capture once")


def test_gpu_outlasts_range_needs_kernels(tmp_path):
    """Skew between two ranks' starts is not 'GPU work outlasting the range' when no kernel ran (#11 §2);
    the occurrence's MFU is then no number (null, '—' in the report)."""
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.range(1500, 2500, gtid(200, 200), "step")          # wall 1000..2500 = 1.5 x the longest range, no kernels
    e.range(3000, 4000, gtid(100, 100), "step")
    e.range(3000, 4000, gtid(200, 200), "step")
    e.launch(3100, gtid(100, 100), 1)
    e.kernel(3200, 4600, gpid(100), 1)                   # occurrence 2: its kernel outlasts the range by 60 %
    job = step_job(tmp_path, e, gpus=2)
    res = run_job(load_job(job))
    (late,) = [w for w in res["warnings"] if w["code"] == "gpu_outlasts_range"]
    assert "in 1 of 2 occurrences (2)" in late["message"]
    first, second = res["occurrences"]
    assert first["kernel_count"] == 0 and first["mfu_pct_wall"] is None and first["hfu_pct_wall"] is None
    assert second["mfu_pct_wall"] == pytest.approx(100 * 1.0e3 / (1600e-9 * 2 * 1.0e12))   # wall 3000..4600
    files = render_all(res)
    row = next(line for line in files["report.md"].splitlines() if line.startswith("| 1 |"))
    assert row.rstrip(" |").endswith("— | —")                        # MFU and HFU of occurrence 1
    assert "report.html" in files


def test_gpu_outlasts_range_is_per_rank(tmp_path):
    """docs/figures.md §5: the tail is each rank's last kernel end past its own range end, over the longest range.
    Start skew with every kernel inside its rank's range warns of nothing; a late kernel on the rank with the
    shorter range warns although the occurrence's wall equals its longest range."""
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.range(1500, 2500, gtid(200, 200), "step")          # skew: wall 1000..2500 = 1.5 x the longest range
    e.launch(1100, gtid(100, 100), 1)
    e.kernel(1200, 1900, gpid(100), 1)
    e.launch(1600, gtid(200, 200), 2)
    e.kernel(1700, 2400, gpid(200), 2, device=1)
    e.range(3000, 5000, gtid(100, 100), "step")
    e.range(3000, 3500, gtid(200, 200), "step")          # shorter range; its kernel ends 300 ns after it
    e.launch(3100, gtid(100, 100), 3)
    e.kernel(3200, 4900, gpid(100), 3)
    e.launch(3100, gtid(200, 200), 4)
    e.kernel(3200, 3800, gpid(200), 4, device=1)         # tail 300 = 15 % of the longest range (2000)
    job = step_job(tmp_path, e, gpus=2)
    res = run_job(load_job(job))
    first, second = res["occurrences"]
    assert first["wall_time_s"] == pytest.approx(1500e-9) and second["wall_time_s"] == pytest.approx(2000e-9)
    (late,) = [w for w in res["warnings"] if w["code"] == "gpu_outlasts_range"]
    assert "in 1 of 2 occurrences (2)" in late["message"] and "tail per occurrence: 15.0 % to 15.0 % of the CPU range" in late["message"]


def test_occurrence_lists_in_warnings_are_runs():
    """Warnings name occurrences as runs: [7, 1, 2, 3, 9, 10] -> '1-3, 7, 9-10'."""
    from pipeline.analysis.trace_warnings import occurrence_runs
    assert occurrence_runs([7, 1, 2, 3, 9, 10]) == "1-3, 7, 9-10"
    assert occurrence_runs([2, 4]) == "2, 4" and occurrence_runs([5]) == "5"


def _drop_kernel_pid(path: Path) -> Path:
    import sqlite3
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN globalPid")
    con.commit()
    con.close()
    return path


def test_kernels_without_process_id(tmp_path):
    """No globalPid column: window attribution. One process owns every kernel of its ranges (counted once);
    with two processes nothing says whose a kernel is, so the run is refused (exit 4), not counted per rank."""
    e = Export()
    e.range(1000, 2000, gtid(100, 100), "step")
    e.launch(1100, gtid(100, 100), 1)
    e.kernel(1200, 1800, gpid(100), 1)
    e.kernel(1500, 2500, gpid(100), 2)                   # no launch row: still the window's, clipped at 2000
    one = _drop_kernel_pid(e.write(tmp_path / "one.sqlite"))
    spec = dict(region={"name": "step"}, hardware={"num_gpus": 1, "peak_tflops": 1.0},
                model={"flops_per_step": 1.0e3}, workload={"seq_len": 4, "global_batch": 1})
    res = run_job(load_job(write_job(tmp_path, one, **spec)))
    assert "attribution_window" in {w["code"] for w in res["warnings"]}
    (occ,) = res["occurrences"]
    assert occ["kernel_count"] == 2 and round(occ["gpu_kernel_sum_s"] * 1e9) == 600 + 500
    (rank,) = res["ranks"]
    assert rank["kernel_count"] == 2
    e.range(1000, 2000, gtid(200, 200), "step")
    two = _drop_kernel_pid(e.write(tmp_path / "two.sqlite"))
    with pytest.raises(TraceError) as err:
        run_job(load_job(write_job(tmp_path, two, **{**spec, "hardware": {"num_gpus": 2, "peak_tflops": 1.0}})))
    assert err.value.code == 4 and "no globalPid column" in str(err.value) and "2 processes (100, 200)" in str(err.value)


@pytest.mark.parametrize("cpu_range, short_range, tail, warned", [
    # one rank: 5 % of a 2000 ns range is exactly 100 ns
    (2000, None, 100, False),
    (2000, None, 101, True),
    # a range of about one second, not a round number: 5 % of 987,654,320 ns is 49,382,716 ns
    (987_654_320, None, 49_382_716, False),
    (987_654_320, None, 49_382_717, True),
    # two ranks: the tail of the rank with the 1000 ns range is measured against the longest range
    # (2000 ns), not its own: 100 ns past it is 10 % of its own range but exactly 5 % of cpu_range_s
    (2000, 1000, 100, False),
    (2000, 1000, 101, True),
])
def test_gpu_outlasts_range_boundary(tmp_path: Path, cpu_range: int, short_range: int | None, tail: int,
                                     warned: bool) -> None:
    """docs/figures.md §5 warns when the last kernel ends *more than* 5 % of cpu_range_s after its rank's range end:
    a tail of exactly 5 % is no warning, one nanosecond more is. Integer ns, so the boundary is exact."""
    e = Export()
    long_tid, short_tid = gtid(100, 100), gtid(200, 200)
    start = 1000
    e.range(start, start + cpu_range, long_tid, "step")
    if short_range is None:                       # the one rank's kernel is the late one
        e.launch(start + 10, long_tid, 1)
        e.kernel(start + 20, start + cpu_range + tail, gpid(100), 1)
    else:                                         # the long rank's kernel stays inside; the short rank's is late
        e.launch(start + 10, long_tid, 1)
        e.kernel(start + 20, start + cpu_range, gpid(100), 1)
        e.range(start, start + short_range, short_tid, "step")
        e.launch(start + 10, short_tid, 2)
        e.kernel(start + 20, start + short_range + tail, gpid(200), 2, device=1)
    res = run_job(load_job(step_job(tmp_path, e, gpus=1 if short_range is None else 2)))
    (occ,) = res["occurrences"]
    assert round(occ["cpu_range_s"] * 1e9) == cpu_range
    late = [w for w in res["warnings"] if w["code"] == "gpu_outlasts_range"]
    assert bool(late) is warned
    if warned:
        assert "in 1 of 1 occurrences (1)" in late[0]["message"]


def test_every_rule_has_its_own_test():
    assert untested_rules(scope, __name__) == []
