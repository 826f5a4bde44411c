"""Every rule of pipeline/checks/job_file.py, one test each (named test_<rule>), plus proof that run applies them.

The boundaries are written here by hand from the rules' definitions (docs/figures.md §7);
`test_every_rule_has_its_own_test` keeps the list complete when a rule is added (likewise in
tests/test_checks_scope.py and tests/test_checks_plausibility.py, with `untested_rules` from here).
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from pipeline.checks import job_file
from pipeline.errors import ConfigError
from pipeline.job.config import load_job
from pipeline.run import load_checked, run_job
from test_config import GOOD


def job_of(tmp_path: Path, text: str):
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(text))
    return load_job(path)


def problems(tmp_path: Path, text: str) -> list:
    return job_file.job_problems(job_of(tmp_path, text))


# --------------------------------------------------------------------------- job-file rules

def test_job_problems(tmp_path):
    assert problems(tmp_path, GOOD) == []


def test_name_is_a_folder(tmp_path):
    (p,) = problems(tmp_path, GOOD.replace("name: ok-job", "name: Index.html"))
    assert p.pointer == "/name" and p.line == 1 and "output folder's own files" in p.message
    assert job_file.name_is_a_folder({"name": "two words"})[0].pointer == "/name"


def test_trace_paths_are_paths(tmp_path):
    """A NUL in a path made the trace stage raise ValueError (exit 5, a traceback); here it is the job file's
    problem, at the entry holding it (YAML's "\\0" escape writes one)."""
    (p,) = problems(tmp_path, GOOD.replace("trace: t.sqlite", 'trace: "t\\0.sqlite"'))
    assert (p.pointer, p.line, p.col) == ("/trace", 2, 8) and "NUL character" in p.message
    (p,) = problems(tmp_path, GOOD.replace("trace: t.sqlite", 'trace: [a.sqlite, "b\\0.sqlite"]'))
    assert p.pointer == "/trace/1" and p.line == 2
    assert problems(tmp_path, GOOD.replace("trace: t.sqlite", "trace: [a.sqlite, 'r*.sqlite']")) == []


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
    # the figures' kernel patterns too: an unbalanced one stopped the roofline query (exit 5)
    figures = "analysis:\n  figures:\n    - {name: a, kernels: 'gemm', flops: 1}\n    - {name: b, kernels: '(', flops: 1}\n"
    (p,) = problems(tmp_path, GOOD + figures)
    assert p.pointer == "/analysis/figures/1/kernels" and "invalid regular expression '(' (RE2)" in p.message
    assert problems(tmp_path, GOOD + figures.replace("'('", "'(?i)flash'")) == []
    # exact (the default) and contains compare plain text: RE2 never judges the name then
    assert problems(tmp_path, GOOD.replace("name: train_step", "name: 'step(('")) == []
    assert problems(tmp_path, GOOD.replace("name: train_step", "name: 'step(('\n  match: contains")) == []


ACTIVE = GOOD.replace("  name: train_step\n  occurrences: {first: 2, last: 4}\n", "  kind: gpu_active\n")
WINDOW = GOOD.replace("  name: train_step\n  occurrences: {first: 2, last: 4}\n",
                      "  kind: time_window\n  start_s: 1.5\n  end_s: 3.0\n")


def test_region_fits_kind(tmp_path):
    """A window kind refuses each key that picks NVTX ranges, located at the key; start_s/end_s are time_window's."""
    assert problems(tmp_path, ACTIVE) == [] and problems(tmp_path, WINDOW) == []
    found = problems(tmp_path, ACTIVE.replace("  kind: gpu_active\n", "  kind: gpu_active\n  name: step\n  match: prefix\n"
                                              "  domain: d\n  occurrences: {first: 1}\n  attribution: thread\n"))
    assert [(p.pointer, p.line) for p in found] == [("/region/name", 5), ("/region/match", 6), ("/region/domain", 7),
                                                    ("/region/occurrences", 8), ("/region/attribution", 9)]
    assert found[0].message == "name (the range's name) selects NVTX ranges; kind gpu_active selects none"
    assert found[0].hint == "remove name, or set region.kind: nvtx to measure NVTX ranges"
    (p,) = problems(tmp_path, ACTIVE.replace("  kind: gpu_active\n", "  kind: gpu_active\n  end_s: 2\n"))
    assert (p.pointer, p.message) == ("/region/end_s", "end_s is for kind time_window; gpu_active is the whole "
                                                       "GPU-active window")
    (p,) = problems(tmp_path, GOOD.replace("  name: train_step\n", "  name: train_step\n  start_s: 1\n"))
    assert (p.pointer, p.line) == ("/region/start_s", 5) and "kind nvtx selects NVTX ranges by name" in p.message
    (p,) = problems(tmp_path, WINDOW.replace("end_s: 3.0", "end_s: 1.5"))
    assert (p.pointer, p.message) == ("/region/end_s", "end_s (1.5) is not after start_s (1.5)")
    assert problems(tmp_path, WINDOW.replace("end_s: 3.0", "end_s: 1.500001")) == []


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


def test_components_need_architecture(tmp_path):
    mapped = GOOD + "analysis:\n  components: {attention: attention sublayer}\n"
    (p,) = problems(tmp_path, mapped)
    assert p.pointer == "/analysis/components" and "flops_per_step" in p.message
    assert problems(tmp_path, mapped.replace("flops_per_step: 3.9e+15", "preset: llama-3-8b")) == []


def test_gpu_in_catalog(tmp_path):
    """A named GPU is looked up without the trace; `auto` waits for the trace (GOOD names no GPU)."""
    def named(gpu: str) -> str:
        return GOOD.replace("num_gpus: 8", f"gpu: {gpu}\n  num_gpus: 8")

    (p,) = problems(tmp_path, named("h100-sxmm"))
    assert (p.pointer, p.line) == ("/hardware/gpu", 7) and "'h100-sxmm' is not in" in p.message
    assert problems(tmp_path, named("h100-sxm")) == []
    assert problems(tmp_path, named("auto")) == []
    # a V100 has no bf16 tensor-core peak (`mfu gpus` shows "—"): the precision is what to change
    (p,) = problems(tmp_path, named("v100-sxm2-16gb"))
    assert p.pointer == "/hardware/precision" and "no dense bf16 peak" in p.message
    # an explicit peak needs no catalog entry, as in `mfu run`
    assert problems(tmp_path, named("my-gpu").replace("precision: bf16", "precision: bf16\n  peak_tflops: 100")) == []
    # fp8_fraction on bf16 is reported once, by its own rule
    (p,) = problems(tmp_path, named("h100-sxm").replace("precision: bf16", "precision: bf16\n  fp8_fraction: 0.5"))
    assert p.pointer == "/hardware/fp8_fraction"
    path = tmp_path / "job.yaml"
    path.write_text(named("h100-sxmm"))
    with pytest.raises(ConfigError, match="h100-sxmm"):       # `mfu validate`, which reads no trace
        load_checked(path)


def test_job_rules_run_before_anything_else(tmp_path):
    """validate and run refuse a scope error with exit 3, before any trace is opened (t.sqlite does not exist)."""
    path = tmp_path / "job.yaml"
    path.write_text(GOOD.replace("{first: 2, last: 4}", "{first: 5, last: 4}"))
    with pytest.raises(ConfigError, match="last"):
        load_checked(path)
    with pytest.raises(ConfigError, match="last"):
        run_job(load_job(path))


# --------------------------------------------------------------------------- completeness

def rules_of(module: ModuleType) -> dict[str, object]:
    """The public functions a checks module defines: each a rule (or the function applying them)."""
    return {name: fn for name, fn in inspect.getmembers(module, inspect.isfunction)
            if fn.__module__ == module.__name__ and not name.startswith("_")}


def untested_rules(module: ModuleType, test_module: str) -> list[str]:
    """The module's rules that have no test_<rule> in the test module named."""
    tests = {name for name in dir(sys.modules[test_module]) if name.startswith("test_")}
    return [r for r in rules_of(module) if f"test_{r}" not in tests]


def test_every_rule_has_its_own_test():
    assert untested_rules(job_file, __name__) == []
    assert set(job_file.JOB_RULES) <= set(rules_of(job_file).values())
