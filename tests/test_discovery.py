"""Region discovery (`mfu inspect`) on traces whose step is known: the generator's truth, or a real
trace that has no step range at all (discovery must then say it is guessing)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.demo import DEMO_SPEC
from pipeline.trace.inspect import inspect_trace
from pipeline.trace.synth import generate


@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    return path, generate(DEMO_SPEC, path)


def _check_step(found: dict, truth: dict) -> dict:
    want = truth["discovery"]
    assert found["step_like"] == [want["step_region"]] and not found["guessing"]
    step = found["regions"][0]
    assert step["name_group"] == want["step_region"]
    assert step["occurrences_per_process_min"] == step["occurrences_per_process_max"] == truth["spec"]["steps"]
    assert step["processes"] == want["processes"] and step["min_depth"] == 0
    assert step["warmup_occurrences"] == want["warmup_occurrences"]
    # one device per rank: the per-(occurrence, rank) union is the truth's per-device union
    unions = [ns for occ in truth["occurrences"] for ns in occ["device_union_ns"].values()]
    assert abs(step["median_kernel_union_ns"] - statistics.median(unions)) <= 0.5    # DuckDB rounds a .5 median
    assert found["message"].startswith(f"'{want['step_region']}' looks like one step: top-level; repeats")
    return step


def test_demo_trace_names_its_step(demo_trace):
    path, truth = demo_trace
    _check_step(inspect_trace(path)["region_discovery"], truth)


def test_nested_layers_and_warmup(synth_trace):
    path, truth = synth_trace(steps=8, layers=6, warmup_steps=2, kernels_per_step=60)
    found = inspect_trace(path)["region_discovery"]
    _check_step(found, truth)
    layer = next(r for r in found["regions"] if r["name_group"] == truth["discovery"]["nested_region"])
    assert layer["min_depth"] == 1 and not layer["step_like"]
    assert layer["occurrences_per_process_min"] == 8 * 6
    assert "nested (depth 1), not top-level" in layer["reasons"]


def test_json_carries_the_same(synth_trace, capsys):
    path, truth = synth_trace()
    assert main(["inspect", str(path), "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["region_discovery"]
    _check_step(found, truth)
    assert found["regions"][0]["step_like"] is True
    assert "match: prefix" in found["suffix_note"]                # the synthetic aten::mm ranges carry op_id


def test_text_names_the_step_and_the_suffix_note(synth_trace, capsys):
    path, _ = synth_trace()
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "verdict: 'train_step' looks like one step" in out
    assert "(periods after occurrence 1)" in out             # 5 steps per rank: step 1's period left out
    assert "aten::mm …" in out and "`match: prefix`" in out


def test_real_trace_without_a_step_says_it_is_guessing(real_trace):
    found = inspect_trace(real_trace("nsysai__h100_2gpu_1s.sqlite"))["region_discovery"]
    assert found["guessing"] and found["step_like"] == []
    assert found["message"].startswith("guessing: this trace has no NVTX range that covers one step; mark your "
                                       "step with `nvtx.range('train_step')` or use `covers: N` on a wider range")
    assert found["regions"] and all(not r["step_like"] for r in found["regions"])
