"""`mfu init` on each shape of region real traces have, synthetic with a known truth: the job it writes,
filled in only where a trace cannot know (filling.py), measures the planted occurrences to the nanosecond."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from filling import fill, todo_keys
from pipeline.cli import main

NS = 1_000_000_000


def init_and_run(trace: Path, tmp_path: Path, capsys) -> tuple[dict, str, dict]:
    """The skeleton (parsed, and as text) and the result of running it filled in."""
    job = tmp_path / "job.yaml"
    assert main(["init", str(trace), "-o", str(job)]) == 0
    text = job.read_text()
    job.write_text(fill(text))
    code = main(["run", str(job), "--out", str(tmp_path / "out")])
    capsys.readouterr()
    assert code in (0, 1)
    data = yaml.safe_load(text)
    return data, text, json.loads((tmp_path / "out" / data["name"] / "result.json").read_text())


def assert_times(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g["start_ns"] == w["start_ns"]
        assert round(g["cpu_range_s"] * NS) == w["cpu_range_ns"]
        assert round(g["wall_time_s"] * NS) == w["wall_ns"]
        assert round(g["gpu_kernel_sum_s"] * NS) == w["kernel_sum_ns"]
        assert round(g["gpu_kernel_union_s"] * NS) == w["kernel_union_ns"]
        assert g["kernel_count"] == w["kernel_count"]


def test_numbered_steps_after_a_numbered_warm_up(synth_trace, tmp_path, capsys):
    """'Warm-up Step 1', '2' then 'ProfilerStep#3' ... '#8': the numbered steps are one group, selected by an
    anchored regex that the warm-up's names do not match; the warm-up group is never proposed."""
    trace, truth = synth_trace(steps=8, warmup_steps=2, region="ProfilerStep#{}", warmup_region="Warm-up Step {}")
    data, text, res = init_and_run(trace, tmp_path, capsys)
    assert data["region"]["name"] == "^ProfilerStep#[0-9]+$" and data["region"]["match"] == "regex"
    assert data["region"]["occurrences"] == {"first": 1}
    assert "the 6 names 'ProfilerStep#<n>' differ only in their number" in text
    assert "'Warm-up Step <n>' (name \"^Warm-up Step [0-9]+$\", match: regex): its name says warm-up" in text
    assert sorted(todo_keys(text)) == ["global_batch", "mode", "preset", "seq_len"]
    assert_times(res["occurrences"], truth["occurrences"][2:])


def test_one_step_is_one_occurrence(synth_trace, tmp_path, capsys):
    """One 'train_step' (the only top-level range with GPU work; the setup kernels ran outside it): proposed with
    occurrences 1-1, the comment saying no spread can be measured."""
    trace, truth = synth_trace(steps=1)
    data, text, res = init_and_run(trace, tmp_path, capsys)
    assert data["region"]["name"] == "train_step" and data["region"]["occurrences"] == {"first": 1, "last": 1}
    assert "one occurrence: no spread between steps can be measured" in text
    assert_times(res["occurrences"], truth["occurrences"])


def test_a_loop_of_steady_repeats_proposes_the_repeats(synth_trace, tmp_path, capsys):
    """'benchmark_loop' around five 'forward' ranges, evenly spaced: each repeat is one step (occurrences 1-5)."""
    trace, truth = synth_trace(region="forward", loop_region="benchmark_loop")
    data, text, res = init_and_run(trace, tmp_path, capsys)
    assert (data["region"]["name"], data["region"]["occurrences"]) == ("forward", {"first": 1, "last": 5})
    assert "'forward' repeats 5x inside 'benchmark_loop'" in text and "each repeat is proposed as one step" in text
    assert_times(res["occurrences"], truth["occurrences"])


def test_a_loop_of_unsteady_repeats_is_one_occurrence_covering_them(synth_trace, tmp_path, capsys):
    """The first two of five repeats last twice as long (periods 102, 102, 52, 52 ms: CV 32 %): the loop is one
    occurrence with covers: 5. Its truth, from the planted steps: the loop range starts 1 µs before the first and
    ends 1 µs after the last one's CPU range (both ranks alike); its kernels are the steps' (ranges of distinct
    steps are 2 ms apart, further than any kernel runs on, so the union adds up)."""
    trace, truth = synth_trace(steps=5, warmup_steps=2, region="forward", loop_region="benchmark_loop")
    data, text, res = init_and_run(trace, tmp_path, capsys)
    assert (data["region"]["name"], data["region"]["covers"]) == ("benchmark_loop", 5)
    assert data["region"]["occurrences"] == {"first": 1, "last": 1} and "period CV 32.5 %, not steady" in text
    steps = truth["occurrences"]
    start, last = steps[0]["start_ns"] - 1_000, steps[-1]
    want = {"start_ns": start, "cpu_range_ns": last["start_ns"] + last["cpu_range_ns"] + 1_000 - start,
            "wall_ns": last["start_ns"] + last["wall_ns"] - start,
            **{k: sum(o[k] for o in steps) for k in ("kernel_sum_ns", "kernel_union_ns", "kernel_count")}}
    assert_times(res["occurrences"], [want])


def test_op_level_ranges_only_propose_the_gpu_active_window(synth_trace, tmp_path, capsys):
    """No step range, each launch inside an 'aten::…' op range named at random: no range marks a step, so the
    GPU-active window is proposed (a guess), the op groups listed as alternatives. Measured, it is the planted
    window: the first GPU row's start (a setup kernel's) to the last one's end, every row of both ranks inside."""
    trace, truth = synth_trace(region=None)
    data, text, res = init_and_run(trace, tmp_path, capsys)
    assert data["region"] == {"kind": "gpu_active", "covers": "step"}
    assert "guessing: the ranges holding GPU work mark operators ('aten::" in text
    assert "  #   'aten::mm' (match: prefix): " in text
    (got,) = res["occurrences"]
    want = truth["active"]
    assert (got["start_ns"], round(got["wall_time_s"] * NS), got["kernel_count"]) == (
        want["start_ns"], want["wall_ns"], want["kernel_count"])
    assert (round(got["gpu_kernel_sum_s"] * NS), round(got["gpu_kernel_union_s"] * NS)) == (
        want["kernel_sum_ns"], want["kernel_union_ns"])


def test_no_nvtx_and_graph_launches_only_measure_the_gpu_active_window(synth_trace, tmp_path, capsys):
    """A capture without NVTX ranges, kernels as rows or as whole CUDA graph launches (--cuda-graph-trace=graph):
    the GPU-active window is what can be measured, not a guess; measured, it is the planted window."""
    for spec in ({"nvtx": False}, {"nvtx": False, "cuda_graph": "graph"}):
        trace, truth = synth_trace(**spec)
        data, text, res = init_and_run(trace, tmp_path / spec.get("cuda_graph", "kernels"), capsys)
        assert data["region"] == {"kind": "gpu_active", "covers": "step"}
        assert "# Region discovery: no NVTX range: the GPU-active window of each process (" in text
        assert "guessing" not in text
        (got,) = res["occurrences"]
        want = truth["active"]
        assert (got["start_ns"], round(got["wall_time_s"] * NS), got["kernel_count"]) == (
            want["start_ns"], want["wall_ns"], want["kernel_count"])
        assert (round(got["gpu_kernel_sum_s"] * NS), round(got["gpu_kernel_union_s"] * NS)) == (
            want["kernel_sum_ns"], want["kernel_union_ns"])
