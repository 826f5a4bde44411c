"""Every rule of pipeline/checks.py, one test each (named test_<rule>), plus proof that run applies them.

The boundaries are written here by hand from the rules' definitions (SEMANTICS §7, §11);
`test_every_rule_has_its_own_test` keeps the list complete when a rule is added.
"""

from __future__ import annotations

import inspect
import json
import sys
import textwrap
from pathlib import Path

import pytest

from nsys_export import Export, gpid, gtid
from pipeline import checks
from pipeline.errors import ConfigError, TraceError
from pipeline.report.render import render_all
from pipeline.job.config import load_job
from pipeline.run import run_job, validate_file
from test_config import GOOD
from test_run_synth import write_job



def job_of(tmp_path: Path, text: str):
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(text))
    return load_job(path)


def problems(tmp_path: Path, text: str) -> list:
    return checks.job_problems(job_of(tmp_path, text))


def step_job(tmp_path: Path, e: Export, gpus: int = 1, flops: float = 1.0e3) -> Path:
    """A job over region `step` of the export `e` (written to t.sqlite): `flops` per step, 1 TFLOP/s per GPU."""
    trace = e.write(tmp_path / "t.sqlite")
    return write_job(tmp_path, trace, region={"name": "step"}, hardware={"num_gpus": gpus, "peak_tflops": 1.0},
                     model={"flops_per_step": flops}, workload={"seq_len": 4, "global_batch": 1})


# --------------------------------------------------------------------------- job-file rules

def test_job_problems(tmp_path):
    assert problems(tmp_path, GOOD) == []


def test_name_is_a_folder(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("name: ok-job", "name: Index.html"))
    assert p.pointer == "/name" and p.line == 1 and "output folder's own files" in p.message
    assert checks.name_is_a_folder({"name": "two words"})[0].pointer == "/name"


def test_regex_compiles(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("name: train_step", "name: 'step(('\n  match: regex"))
    assert p.pointer == "/region/name" and "regular expression (RE2)" in p.message
    (p,) = problems(tmp_path, GOOD.replace("name: train_step", "name: '(?=step)'\n  match: regex"))
    assert "invalid perl operator" in p.message                     # Python's re would accept a lookahead
    assert problems(tmp_path, GOOD.replace("name: train_step", "name: 'step(('\n  match: prefix")) == []
    # the job's kernel-class patterns too, each located; valid ones pass
    classes = "analysis:\n  kernel_classes:\n    - {class: a, pattern: 'ok_.*'}\n    - {class: b, pattern: 'x(?<!y)'}\n"
    (p,) = problems(tmp_path, GOOD + classes)
    assert p.pointer == "/analysis/kernel_classes/1/pattern" and "(RE2)" in p.message
    assert problems(tmp_path, GOOD + classes.replace("x(?<!y)", "(?i)nccl")) == []
    # exact (the default) and contains compare plain text: RE2 never judges the name then
    assert problems(tmp_path, GOOD.replace("name: train_step", "name: 'step(('")) == []
    assert problems(tmp_path, GOOD.replace("name: train_step", "name: 'step(('\n  match: contains")) == []


def test_occurrences_ordered(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("{first: 2, last: 4}", "{first: 5, last: 4}"))
    assert p.pointer == "/region/occurrences/last" and p.line == 5
    assert problems(tmp_path, GOOD.replace("{first: 2, last: 4}", "{first: 4, last: 4}")) == []


def test_token_counts_given(tmp_path):
    preset = GOOD.replace("  seq_len: 4096\n", "").replace("flops_per_step: 3.9e+15", "preset: llama-3-8b")
    (p,) = problems(tmp_path, preset)
    assert p.pointer == "/workload" and "counting the model's FLOPs needs seq_len" in p.message
    assert problems(tmp_path, GOOD.replace("  seq_len: 4096\n", "")) == []        # an explicit numerator needs none
    (p,) = problems(tmp_path, GOOD.replace("  seq_len: 4096\n", "  seq_lens: [100]\n"))
    assert "seq_lens needs seq_len" in p.message


def test_no_backward_without_training(tmp_path):
    text = GOOD.replace("mode: training", "mode: inference")
    text = text.replace("grad_accum: 4", "grad_accum: 4\n  recompute: full")
    assert {p.pointer for p in problems(tmp_path, text)} >= {"/workload/recompute", "/workload/grad_accum"}
    # each cause alone: FlashAttention's recompute, and any accumulation (2 is already more than one microbatch)
    inference = GOOD.replace("mode: training", "mode: inference").replace("  grad_accum: 4\n", "") \
        .replace("global_batch: 64", "global_batch: 16")                           # 16 = 2 x 1 x 8 replicas
    assert problems(tmp_path, inference) == []
    (p,) = problems(tmp_path, inference.replace("micro_batch: 2", "micro_batch: 2\n  flash_recompute: true"))
    assert p.pointer == "/workload/recompute" and "inference has no backward pass" in p.message
    (p,) = problems(tmp_path, inference.replace("micro_batch: 2", "micro_batch: 2\n  grad_accum: 2")
                    .replace("global_batch: 16", "global_batch: 32"))              # 32 = 2 x 2 x 8 replicas
    assert p.pointer == "/workload/grad_accum" and "inference has no gradient accumulation" in p.message


def test_decode_has_context(tmp_path):
    text = GOOD.replace("mode: training", "mode: decode").replace("  grad_accum: 4\n", "")
    text = text.replace("global_batch: 64", "global_batch: 16")     # 16 = 2 x 1 x 8 replicas
    (p,) = problems(tmp_path, text)
    assert "KV-cache" in p.message
    assert problems(tmp_path, text.replace("seq_len: 4096", "seq_len: 4096\n  context_len: 1024")) == []
    assert problems(tmp_path, text.replace("mode: decode", "mode: inference")) == []      # prefill has no cache


def test_microbatch_is_sized(tmp_path):
    text = GOOD.replace("  micro_batch: 2\n", "").replace("name: train_step", "name: train_step\n  covers: microbatch")
    assert any("micro_batch" in p.message for p in problems(tmp_path, text))
    no_accum = GOOD.replace("  grad_accum: 4\n", "").replace("global_batch: 64", "global_batch: 16") \
        .replace("name: train_step", "name: train_step\n  covers: microbatch")
    (p,) = problems(tmp_path, no_accum)
    assert "grad_accum to split the step" in p.message
    # a declared architecture sizes the microbatch itself (global_batch / grad_accum, default 1): nothing to split
    counted = no_accum.replace("flops_per_step: 3.9e+15", "preset: llama-3-8b")
    assert problems(tmp_path, counted) == []


def test_packed_documents_fit(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("seq_len: 4096", "seq_len: 4096\n  seq_lens: [4000, 97]"))
    assert p.pointer == "/workload/seq_lens" and "4097" in p.message
    assert problems(tmp_path, GOOD.replace("seq_len: 4096", "seq_len: 4096\n  seq_lens: [4000, 96]")) == []


def test_gpu_product(tmp_path):
    found = problems(tmp_path, GOOD + "parallelism: {data: 2, tensor: 2}\n")
    assert any(p.pointer == "/parallelism" and "num_gpus is 8" in p.message for p in found)
    (p,) = problems(tmp_path, GOOD + "parallelism: {tensor: 3}\n")
    assert "not divisible by tensor x pipeline x context = 3" in p.message
    assert problems(tmp_path, GOOD + "parallelism: {data: 4, tensor: 2}\n") != []   # 2 x 4 x 4 = 32 != 64
    assert problems(tmp_path, GOOD + "parallelism: {data: 8}\n") == []
    # every model-parallel degree multiplies: 4 x 2 = 8 and 2 x 2 x 2 = 8 fit, 8 x 2 = 16 does not
    assert problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 32") + "parallelism: {data: 4, pipeline: 2}\n") == []
    assert problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 32") + "parallelism: {data: 4, context: 2}\n") == []
    (p,) = problems(tmp_path, GOOD + "parallelism: {data: 8, pipeline: 2}\n")
    assert "(2) = 16, but num_gpus is 8" in p.message
    (p,) = problems(tmp_path, GOOD + "parallelism: {data: 8, context: 2}\n")
    assert "(2) = 16, but num_gpus is 8" in p.message
    (p,) = problems(tmp_path, GOOD + "parallelism: {pipeline: 3}\n")
    assert "not divisible by tensor x pipeline x context = 3" in p.message


def test_batch_arithmetic(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 60") + "parallelism: {data: 8}\n")
    assert p.pointer == "/workload/global_batch" and "64" in p.hint and p.line == 14    # 2 x 4 x 8 = 64
    (p,) = problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 24"))     # 3 replicas on 8 GPUs
    assert "3 data-parallel replicas" in p.message
    (p,) = problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 63"))
    assert "not a multiple of micro_batch 2 x grad_accum 4" in p.message
    # no data degree given: it is num_gpus / (tensor x pipeline x context) = 8 / 2 = 4 replicas, so 2 x 4 x 4 = 32
    tensor2 = "parallelism: {tensor: 2}\n"
    assert problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 32") + tensor2) == []
    (p,) = problems(tmp_path, GOOD + tensor2)
    assert "global_batch 64 != micro_batch 2 x grad_accum 4 x data-parallel 4 = 32" in p.message


def test_fp8_fraction_needs_fp8(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("precision: bf16", "precision: bf16\n  fp8_fraction: 0.5"))
    assert p.pointer == "/hardware/fp8_fraction"
    assert problems(tmp_path, GOOD.replace("precision: bf16", "precision: fp8\n  fp8_fraction: 0.5")) == []
    (p,) = problems(tmp_path, GOOD.replace("precision: bf16", "precision: bf16\n  fp8_fraction: 0"))   # 0 is given too
    assert p.pointer == "/hardware/fp8_fraction"


def test_job_rules_run_before_anything_else(tmp_path):
    """validate and run refuse a scope error with exit 3, before any trace is opened (t.sqlite does not exist)."""
    path = tmp_path / "job.yaml"
    path.write_text(GOOD.replace("{first: 2, last: 4}", "{first: 5, last: 4}"))
    with pytest.raises(ConfigError, match="last"):
        validate_file(path)
    with pytest.raises(ConfigError, match="last"):
        run_job(load_job(path))


# --------------------------------------------------------------------------- numerator vs architecture

@pytest.mark.parametrize("ratio, code", [(1.0, None), (1.099, None), (0.901, None), (1.101, "numerator_differs"),
                                         (0.899, "numerator_differs"), (2.0, "numerator_differs"),
                                         (0.5, "numerator_differs"), (2.01, "scope_mismatch"),
                                         (0.49, "scope_mismatch")])
def test_numerator_agrees(ratio, code):
    """Within 10 % of the architecture's figure: a convention difference; beyond 0.5x-2x: other work."""
    reference = 10**15
    found = checks.numerator_agrees(round(ratio * reference), reference, "megatron")
    assert [w["code"] for w in found] == ([code] if code else [])
    assert checks.numerator_agrees(5 * reference, None, "explicit") == []


def test_numerator_agrees_names_a_forward_pass():
    (w,) = checks.numerator_agrees(33, 100, "megatron")
    assert w["code"] == "scope_mismatch" and "one forward pass" in w["message"]
    (w,) = checks.numerator_agrees(45, 100, "megatron")
    assert "forward pass" not in w["message"]


@pytest.mark.parametrize("flops, forward", [(279, False), (280, True), (380, True), (381, False)])
def test_numerator_agrees_forward_pass_band(flops, forward):
    """The 'one forward pass' hint covers ratios 0.28 to 0.38 inclusive (1/3 +- convention spread)."""
    (w,) = checks.numerator_agrees(flops, 1000, "megatron")
    assert w["code"] == "scope_mismatch" and ("one forward pass" in w["message"]) is forward


def test_numerator_checkable():
    (w,) = checks.numerator_checkable(True, None)
    assert w["code"] == "numerator_unchecked"
    assert checks.numerator_checkable(True, 8192) == [] and checks.numerator_checkable(False, None) == []


# --------------------------------------------------------------------------- trace rules

def test_gpu_scope(tmp_path):
    job = job_of(tmp_path, GOOD.replace("num_gpus: 8", "num_gpus: 2").replace("global_batch: 64", "global_batch: 16"))
    (p,) = checks.gpu_scope(job, [0, 1, 2])
    assert p.pointer == "/hardware/num_gpus" and p.line == 7 and "at least 3" in p.hint
    assert checks.gpu_scope(job, [0, 1]) == []


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


def test_ranges_have_length():
    rows = [{"occurrence": 1, "rank": "100", "pid": 100, "cpu_range_ns": 1000},
            {"occurrence": 2, "rank": "100", "pid": 100, "cpu_range_ns": 0},
            {"occurrence": 3, "rank": "200", "pid": 200, "cpu_range_ns": -5}]
    assert checks.ranges_have_length(rows[:1]) is None
    reason = checks.ranges_have_length(rows)
    assert "2 selected range(s) of NVTX_EVENTS" in reason and "occurrence 2 rank 100: zero length" in reason
    assert "occurrence 3 rank 200: ends before it starts (-5 ns)" in reason
    many = [{"occurrence": i, "rank": "100", "pid": 100, "cpu_range_ns": 0} for i in range(1, 13)]
    reason = checks.ranges_have_length(many)
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
    range to fold (SEMANTICS §6): it is a selected range with end < start, so exit 4, naming it, like any other."""
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


def test_repeated_files(tmp_path):
    assert checks.repeated_files([]) == []
    (w,) = checks.repeated_files([("link.sqlite", "t.sqlite")])
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
    rows = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith(("| 1 |", "| 2 |"))}
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


def evidence(processes: int = 8, warnings: list | None = None, steps: list | None = None, **m) -> checks.Evidence:
    return checks.Evidence(metrics(**m), [1.0, 1.1] if steps is None else steps, processes, warnings or [])


def test_mfu_or_hfu_above_100(tmp_path):
    job = job_of(tmp_path, GOOD)
    rule = checks.mfu_or_hfu_above_100
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


def test_occurrences_above_100():
    """A short occurrence can exceed 100 % while the total over longer ones stays below: warned, by index."""
    def occ(i, mfu, hfu):
        return {"index": i, "mfu_pct_wall": mfu, "hfu_pct_wall": hfu}
    assert checks.occurrences_above_100([occ(1, 100.0, 100.0), occ(2, None, None)]) == []
    (w,) = checks.occurrences_above_100([occ(3, 80.0, 80.0), occ(4, 100.5, 100.5), occ(5, 50.0, 101.0)])
    assert w["code"] == "occurrence_above_100" and w["message"].startswith("occurrence(s) 4, 5 have MFU or HFU")
    (w,) = checks.occurrences_above_100([occ(i, 200.0, 200.0) for i in range(12)])
    assert "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more" in w["message"]


def test_union_diagnostic_above_100(tmp_path):
    """Issue #11 §2: 108-462 % on the union was printed as ok while MFU on the wall looked plausible."""
    job = job_of(tmp_path, GOOD)
    rule = checks.union_diagnostic_above_100
    assert rule(job, evidence(mfu=40.0, union=100.0)) is None
    assert rule(job, evidence(mfu=None, union=None)) is None                # no wall either: nothing to judge
    assert rule(job, evidence(mfu=0.0, union=None)) is None                 # no FLOPs on no kernels
    empty = rule(job, evidence(mfu=98.5, union=None))                       # FLOPs over no kernel: infinite
    assert "no attributed kernel ran" in empty and "infinite" in empty
    reason = rule(job, evidence(mfu=40.0, union=108.0))
    assert "union diagnostic" in reason and "108.0 %" in reason and "peak" in reason


def test_step_times_finite(tmp_path):
    job = job_of(tmp_path, GOOD)
    assert checks.step_times_finite(job, evidence(steps=[0.5, 1e-9])) is None
    assert "not finite" in checks.step_times_finite(job, evidence(steps=[1.0, float("inf")]))
    assert "not finite" in checks.step_times_finite(job, evidence(steps=[float("nan")]))
    assert checks.step_times_finite(job, evidence(steps=[1.0, None])).startswith("1 step time(s) are not finite (None)")


def test_numerator_describes_the_work(tmp_path):
    job = job_of(tmp_path, GOOD)
    rule = checks.numerator_describes_the_work
    assert rule(job, evidence(warnings=[{"code": "numerator_differs", "message": "x"}])) is None
    assert "does not describe the measured work: far" in rule(job, evidence(warnings=[{"code": "scope_mismatch",
                                                                                         "message": "far"}]))


def test_verdict(tmp_path):
    job = job_of(tmp_path, GOOD)
    assert checks.verdict(job, evidence()) == ("ok", None)
    status, reason = checks.verdict(job, evidence(warnings=[{"code": "scope_mismatch", "message": "m"}],
                                                  mfu=120.0, hfu=120.0))
    assert status == "invalid" and reason.startswith("the FLOPs numerator")     # the first rule's reason
    assert checks.verdict(job, evidence(union=101.0))[0] == "invalid"
    status, reason = checks.verdict(job, evidence(steps=[1.0, float("inf")]))       # every rule is in the tuple
    assert status == "invalid" and "not finite" in reason


def test_thresholds():
    limits = {"mfu_pct_wall_min": 40.0, "hfu_pct_wall_min": 50.0, "step_time_s_max": 1.0}
    got = {t["name"]: t["passed"] for t in checks.thresholds(limits, metrics(40.0, 49.9), {"median_s": 1.0}, "ok")}
    assert got == {"mfu_pct_wall_min": True, "hfu_pct_wall_min": False, "step_time_s_max": True}
    (t,) = checks.thresholds({"mfu_pct_wall_min": 0.0}, metrics(None), {"median_s": 1.0}, "ok")
    assert t["passed"] is False                                   # no figure never passes a gate
    exact = checks.thresholds({"hfu_pct_wall_min": 50.0, "mfu_pct_wall_min": 40.0}, metrics(40.0, 50.0), {"median_s": 1.0},
                              "ok")
    assert [t["passed"] for t in exact] == [True, True]           # a figure at its limit meets it
    # an invalid result's figures are no measurement: 250 % neither meets 40 % nor fails 1 s; not tested
    invalid = checks.thresholds(limits, metrics(250.0, 250.0), {"median_s": 2.0}, "invalid")
    assert [t["passed"] for t in invalid] == [None, None, None]


# --------------------------------------------------------------------------- completeness

def test_every_rule_has_its_own_test():
    rules = [name for name, fn in inspect.getmembers(checks, inspect.isfunction)
             if fn.__module__ == checks.__name__ and not name.startswith("_")]
    tests = {name for name in dir(sys.modules[__name__]) if name.startswith("test_")}
    assert [r for r in rules if f"test_{r}" not in tests] == []
    assert set(checks.JOB_RULES) | set(checks.VERDICT_RULES) <= {getattr(checks, r) for r in rules}


def test_ranks_above_100():
    """Per rank, over all occurrences or in single ones: a rank above 100 % overall is not named twice."""
    def row(rank, mfu):
        return {"rank": rank, "mfu_pct_wall": mfu}
    assert checks.ranks_above_100([row("a", 100.0), row("b", None)], [row("a", 99.0), row("b", None)]) == []
    (w,) = checks.ranks_above_100([row("a", 101.0), row("b", 90.0)], [row("a", 120.0), row("b", 100.1), row("b", 1.0)])
    assert w["code"] == "rank_above_100"
    assert w["message"].startswith("rank(s) a over the selected occurrences and rank(s) b in single occurrences have")
    (w,) = checks.ranks_above_100([], [row(f"r{i:02}", 150.0) for i in range(12)])
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
    assert checks.roofline_under_roof(fine) == []
    warned = checks.roofline_under_roof(fine + [at(1e15, 1e12, 0.5), at(1e15, 1e13, 4.0)])
    assert [w["code"] for w in warned] == ["above_roof", "above_roof"]
    assert "2000.0 TFLOP/s achieved exceeds the 1000.0 TFLOP/s roof" in warned[0]["message"]
    assert "250.0 TFLOP/s achieved exceeds the 200.0 TFLOP/s roof" in warned[1]["message"]
    # AI 2 FLOP/B: memory roof 2 x 2000 GB/s = 4.0 TFLOP/s; 2e12 FLOPs in 0.4975 s is 4.0201 (100.5 %), which
    # one decimal printed as "4.0 TFLOP/s achieved exceeds the 4.0 TFLOP/s roof"
    [close] = checks.roofline_under_roof([at(2.0e12, 1.0e12, 0.4975)])
    assert "4.02 TFLOP/s achieved exceeds the 4.00 TFLOP/s roof" in close["message"]


def test_achievable_is_a_ceiling():
    """10 TFLOP/s achieved against a 5 TFLOP/s 'ceiling' is 200 %: that figure is no ceiling."""
    def m(pct, achieved):
        return {"mfu_pct_achievable": pct, "achieved_tflops_per_gpu": achieved}
    assert checks.achievable_is_a_ceiling(m(None, 10.0), None) == []
    assert checks.achievable_is_a_ceiling(m(100.0, 5.0), 5.0) == []
    (w,) = checks.achievable_is_a_ceiling(m(200.0, 10.0), 5.0)
    assert w["code"] == "above_achievable"
    assert w["message"].startswith("MFU against the measured ceiling is 200.0 %: the job achieved 10 TFLOP/s per GPU, "
                                   "more than hardware.achievable_tflops (5)")


def test_roofline_under_peak():
    """Without bytes there is no attainable roof, but the dense peak still bounds a row: 1 GPU at 1000 TFLOP/s.
    1e15 FLOPs in 0.5 s is 2000 TFLOP/s (impossible); in 1 s, exactly the peak; with bytes the roof rule judges."""
    from pipeline.model.operators import Operator
    from pipeline.model.roofline import JOB_NOTE, row

    def at(flops, nbytes, seconds, note="analytic"):
        return row(Operator("op", None, flops, nbytes, note), "job", seconds, 1000.0, 2000.0, 1)
    assert checks.roofline_under_peak([at(1e15, 0, 1.0), at(1e15, 1e12, 0.5), at(1e15, 0, None)], 1000.0) == []
    (w,) = checks.roofline_under_peak([at(1e15, 0, 0.5, JOB_NOTE)], 1000.0)
    assert w["code"] == "above_roof"
    assert w["message"].startswith("roofline row 'op': 2000.0 TFLOP/s achieved exceeds the 1000.0 TFLOP/s dense peak; "
                                   "the FLOPs given for it in analysis.figures")
    (w,) = checks.roofline_under_peak([at(1e15, 0, 0.25)], 1000.0)
    assert "4000.0 TFLOP/s achieved exceeds the 1000.0 TFLOP/s dense peak; the kernels matched to it ran too " \
           "briefly for its analytic FLOPs" in w["message"]


def test_gpu_outlasts_range_is_per_rank(tmp_path):
    """SEMANTICS §5: the tail is each rank's last kernel end past its own range end, over the longest range.
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
    """SEMANTICS §5 warns when the last kernel ends *more than* 5 % of cpu_range_s after its rank's range end:
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
