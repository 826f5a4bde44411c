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

from pipeline import checks
from pipeline.errors import ConfigError
from pipeline.job.config import load_job
from pipeline.run import run_job, validate_file
from test_config import GOOD



def job_of(tmp_path: Path, text: str):
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(text))
    return load_job(path)


def problems(tmp_path: Path, text: str) -> list:
    return checks.job_problems(job_of(tmp_path, text))


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


def test_occurrences_ordered(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("{first: 2, last: 4}", "{first: 5, last: 4}"))
    assert p.pointer == "/region/occurrences/last" and p.line == 5
    assert problems(tmp_path, GOOD.replace("{first: 2, last: 4}", "{first: 4, last: 4}")) == []


def test_token_counts_given(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("  seq_len: 4096\n", "").replace("flops_per_step: 3.9e+15", "preset: llama-3-8b"))
    assert p.pointer == "/workload" and "counting the model's FLOPs needs seq_len" in p.message
    assert problems(tmp_path, GOOD.replace("  seq_len: 4096\n", "")) == []        # an explicit numerator needs none
    (p,) = problems(tmp_path, GOOD.replace("  seq_len: 4096\n", "  seq_lens: [100]\n"))
    assert "seq_lens needs seq_len" in p.message


def test_no_backward_without_training(tmp_path):
    text = GOOD.replace("mode: training", "mode: inference").replace("grad_accum: 4", "grad_accum: 4\n  recompute: full")
    assert {p.pointer for p in problems(tmp_path, text)} >= {"/workload/recompute", "/workload/grad_accum"}


def test_decode_has_context(tmp_path):
    text = GOOD.replace("mode: training", "mode: decode").replace("  grad_accum: 4\n", "")
    text = text.replace("global_batch: 64", "global_batch: 16")     # 16 = 2 x 1 x 8 replicas
    (p,) = problems(tmp_path, text)
    assert "KV-cache" in p.message
    assert problems(tmp_path, text.replace("seq_len: 4096", "seq_len: 4096\n  context_len: 1024")) == []


def test_microbatch_is_sized(tmp_path):
    text = GOOD.replace("  micro_batch: 2\n", "").replace("name: train_step", "name: train_step\n  covers: microbatch")
    assert any("micro_batch" in p.message for p in problems(tmp_path, text))
    no_accum = GOOD.replace("  grad_accum: 4\n", "").replace("global_batch: 64", "global_batch: 16") \
        .replace("name: train_step", "name: train_step\n  covers: microbatch")
    (p,) = problems(tmp_path, no_accum)
    assert "grad_accum to split the step" in p.message


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


def test_batch_arithmetic(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 60") + "parallelism: {data: 8}\n")
    assert p.pointer == "/workload/global_batch" and "64" in p.hint and p.line == 14    # 2 x 4 x 8 = 64
    (p,) = problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 24"))     # 3 replicas on 8 GPUs
    assert "3 data-parallel replicas" in p.message
    (p,) = problems(tmp_path, GOOD.replace("global_batch: 64", "global_batch: 63"))
    assert "not a multiple of micro_batch 2 x grad_accum 4" in p.message


def test_fp8_fraction_needs_fp8(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("precision: bf16", "precision: bf16\n  fp8_fraction: 0.5"))
    assert p.pointer == "/hardware/fp8_fraction"
    assert problems(tmp_path, GOOD.replace("precision: bf16", "precision: fp8\n  fp8_fraction: 0.5")) == []


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


# --------------------------------------------------------------------------- plausibility

def metrics(mfu: float | None = 40.0, hfu: float | None = 40.0) -> dict:
    return {"mfu_pct_wall": mfu, "hfu_pct_wall": hfu}


def test_mfu_or_hfu_above_100(tmp_path):
    job = job_of(tmp_path, GOOD)
    rule = checks.mfu_or_hfu_above_100
    assert rule(job, metrics(100.0, 100.0), 8, []) is None
    assert rule(job, metrics(None, None), 8, []) is None
    assert "physically impossible" in rule(job, metrics(100.001, 90.0), 8, [])
    assert "physically impossible" in rule(job, metrics(90.0, 100.001), 8, [])
    assert "one rank's GPU count" in rule(job, metrics(150.0, 150.0), 1, [])
    assert "one rank's GPU count" not in rule(job, metrics(150.0, 150.0), 8, [])


def test_numerator_describes_the_work(tmp_path):
    job = job_of(tmp_path, GOOD)
    rule = checks.numerator_describes_the_work
    assert rule(job, metrics(), 8, [{"code": "numerator_differs", "message": "x"}]) is None
    assert "does not describe the measured work: far" in rule(job, metrics(), 8, [{"code": "scope_mismatch",
                                                                                     "message": "far"}])


def test_verdict(tmp_path):
    job = job_of(tmp_path, GOOD)
    assert checks.verdict(job, metrics(), 8, []) == ("ok", None)
    status, reason = checks.verdict(job, metrics(120.0, 120.0), 8, [{"code": "scope_mismatch", "message": "m"}])
    assert status == "invalid" and reason.startswith("the FLOPs numerator")     # the first rule's reason


def test_thresholds():
    limits = {"mfu_pct_wall_min": 40.0, "hfu_pct_wall_min": 50.0, "step_time_s_max": 1.0}
    got = {t["name"]: t["passed"] for t in checks.thresholds(limits, metrics(40.0, 49.9), {"median_s": 1.0})}
    assert got == {"mfu_pct_wall_min": True, "hfu_pct_wall_min": False, "step_time_s_max": True}
    (t,) = checks.thresholds({"mfu_pct_wall_min": 0.0}, metrics(None), {"median_s": 1.0})
    assert t["passed"] is False                                   # no figure never passes a gate


# --------------------------------------------------------------------------- completeness

def test_every_rule_has_its_own_test():
    rules = [name for name, fn in inspect.getmembers(checks, inspect.isfunction)
             if fn.__module__ == checks.__name__ and not name.startswith("_")]
    tests = {name for name in dir(sys.modules[__name__]) if name.startswith("test_")}
    assert [r for r in rules if f"test_{r}" not in tests] == []
    assert set(checks.JOB_RULES) | set(checks.VERDICT_RULES) <= {getattr(checks, r) for r in rules}
