"""The small rules a new user tripped over (issue 12 "friction"): each checked the way a user meets it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import yaml

from pipeline.analysis.metrics import unsteady_steps
from pipeline.cli import build_parser, main
from pipeline.cli.parser import EPILOG
from pipeline.hardware import catalog

REPO = Path(__file__).resolve().parents[1]

JOB = """\
name: {name}
trace: {trace}
region: {{name: {region}, match: {match}}}
hardware: {{num_gpus: 2, precision: bf16}}
model: {model}
workload: {workload}
"""


def job(tmp_path: Path, trace: Path, name="j", region="train_step", match="exact",
        model="{flops_per_step: 2.0e+13}", workload="{mode: training, seq_len: 2048, global_batch: 8}") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(JOB.format(name=name, trace=trace, region=region, match=match, model=model, workload=workload))
    return path


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_region_not_found_suggests_prefix_match(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()          # the synthetic trace has 'aten::mm, seq = K, op_id = R' ranges
    code, _, err = cli(capsys, "run", job(tmp_path, trace, region="'aten::mm'"), "--out", tmp_path / "o")
    assert code == 4
    assert "With `match: prefix` it would match 'aten::mm, seq = 0, op_id = 0' (10 ranges)" in err


def test_region_not_found_suggests_near_misses(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    code, _, err = cli(capsys, "run", job(tmp_path, trace, region="train_stpe"), "--out", tmp_path / "o")
    assert code == 4
    assert "Close names: 'train_step' (10 ranges)" in err      # 2 ranks x 5 steps


def test_flops_per_step_needs_no_seq_len(synth_trace, tmp_path, capsys):
    trace, truth = synth_trace()
    path = job(tmp_path, trace, workload="{mode: training}")
    assert cli(capsys, "validate", path)[0] == 0
    code, _, _ = cli(capsys, "run", path, "--out", tmp_path / "o")
    assert code == 0
    res = json.loads((tmp_path / "o/j/result.json").read_text())
    assert res["metrics"]["tokens_per_s"] is None and res["totals"]["tokens"] is None
    assert res["flops"]["tokens_per_step"] is None
    # the numerator still works: 5 occurrences x 2e13 over the summed wall time, by hand from the truth
    wall_s = sum(o["wall_ns"] for o in truth["occurrences"]) / 1e9
    assert res["metrics"]["achieved_tflops_per_gpu"] == pytest.approx(5 * 2e13 / (wall_s * 2) / 1e12, rel=1e-9)
    assert "| Tokens per second | — |" in (tmp_path / "o/j/report.md").read_text()


def test_architecture_still_needs_seq_len(tmp_path, capsys):
    path = job(tmp_path, Path("t.sqlite"), model="{preset: llama-3-8b}", workload="{mode: training}")
    code, _, err = cli(capsys, "validate", path)
    assert code == 3
    assert "/workload: counting the model's FLOPs needs seq_len and global_batch" in err


def test_batch_checks_still_apply_when_given(tmp_path, capsys):
    path = job(tmp_path, Path("t.sqlite"), workload="{mode: training, global_batch: 7, micro_batch: 2}")
    code, _, err = cli(capsys, "validate", path)
    assert code == 3 and "global_batch 7 is not a multiple of micro_batch 2" in err


def test_base_files_are_skipped_by_batches(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    (tmp_path / "base.yaml").write_text(f"kind: base\ntrace: {trace}\nhardware: {{num_gpus: 2, precision: bf16}}\n"
                                        "model: {flops_per_step: 2.0e+13}\nworkload: {mode: training}\n")
    (tmp_path / "a.yaml").write_text("extends: base.yaml\nname: a\nregion: {name: train_step}\n")
    files = sorted(tmp_path.glob("*.yaml"))               # a.yaml, base.yaml: what configs/*.yaml expands to
    code, out, err = cli(capsys, "run", *files, "--out", tmp_path / "o", "--format", "json")
    rows = {Path(r["job"]).name: r for r in json.loads(out)}
    assert code == 0
    assert rows["a.yaml"]["status"] == "ok"
    assert rows["base.yaml"]["status"] == "skipped" and rows["base.yaml"]["exit_code"] == 0
    assert "note: " in err and "base.yaml: skipped: a base file (kind: base)" in err
    index = (tmp_path / "o" / "index.md").read_text()                # the base is no job: not listed, not failed
    assert "**1 job: 1 ok.**" in index and "base.yaml" not in index
    code, out, _ = cli(capsys, "validate", *files)
    assert code == 0 and "ok: " in out and "base.yaml: skipped" in out


def test_models_lists_presets_with_sources(capsys):
    shipped = yaml.safe_load((REPO / "configs/models.yaml").read_text())["presets"]
    code, out, _ = cli(capsys, "models", "--format", "json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and set(rows) == set(shipped)
    assert rows["llama-3-8b"]["source"] == shipped["llama-3-8b"]["source"]
    assert rows["llama-3-8b"]["published_params"] == 8030261248
    code, out, _ = cli(capsys, "models")
    assert code == 0 and "llama-3-8b" in out and shipped["llama-3-8b"]["source"] in out


def test_every_positional_and_format_has_help():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = [f"{name} {a.dest}" for name, p in sub.choices.items() for a in p._actions
               if (not a.option_strings or "--format" in a.option_strings) and not a.help]
    assert missing == []


def test_flops_unknown_preset_names_the_flag(capsys):
    code, _, err = cli(capsys, "flops", "--preset", "llama-3-8", "--seq-len", "8")
    assert code == 2
    assert err.startswith("error: --preset: unknown model preset 'llama-3-8'") and "<job>" not in err
    assert "did you mean" in err


def test_gpus_with_a_broken_catalog_exits_3_as_documented(tmp_path, capsys, monkeypatch):
    broken = tmp_path / "hardware.yaml"
    broken.write_text("gpus:\n  h100: [unclosed\n")
    monkeypatch.setattr(catalog, "DEFAULT_CATALOG", broken)
    code, _, err = cli(capsys, "gpus")
    assert code == 3 and "invalid YAML" in err
    row = EPILOG.split("\n  3 ", 1)[1].split("\n  4 ", 1)[0]     # exit 3 as `mfu --help` (docs/cli.md) says it
    assert "catalog" in row


def test_unsteady_steps_names_the_outlier_and_a_steady_run():
    # occurrence 1 takes 2.3 s, the others ~1 s: median 1.005, 2.3 / 1.005 = 2.29x
    w = unsteady_steps([1, 2, 3, 4, 5, 6], [2.3, 1.0, 1.02, 0.98, 1.01, 1.0], [True] * 6)
    assert w["code"] == "unsteady_steps"
    assert "occurrence 1 takes 2.3 s, 2.29x the median 1.005 s" in w["message"]
    assert "Outside ±10 % of the median: 1." in w["message"]
    assert "region.occurrences: {first: 2, last: 6}" in w["message"]


def test_unsteady_steps_suggests_no_run_without_kernels():
    """Steady but kernel-less occurrences (op-level ranges whose work ran elsewhere) are not suggested."""
    seconds = [2.3, 1.0, 1.02, 0.98, 1.01, 1.0, 1.0]
    w = unsteady_steps([1, 2, 3, 4, 5, 6, 7], seconds, [True, True, True, False, False, False, False])
    assert "Outside ±10 % of the median: 1." in w["message"]            # kernels or not, 4-7 are not outliers
    assert "region.occurrences: {first: 2, last: 3}" in w["message"]
    w = unsteady_steps([1, 2, 3], [2.3, 1.0, 1.0], [True, False, False])
    assert "region.occurrences" not in w["message"]


def test_unsteady_steps_by_cv_alone_and_steady_steps():
    # 1.0, 1.3, 1.0, 1.3: mean 1.15, pstdev 0.15 -> CV 13.0 %; no step is 2x the median (1.15)
    w = unsteady_steps([3, 4, 5, 6], [1.0, 1.3, 1.0, 1.3], [True] * 4)
    assert w is not None and "CV 13.0 %" in w["message"]
    assert unsteady_steps([1, 2, 3], [1.0, 1.05, 0.97], [True] * 3) is None
    # two steps a, b: CV = |a - b| / (a + b); neither is 2x the median (1.0)
    w = unsteady_steps([1, 2], [0.895, 1.105], [True] * 2)                   # 0.21 / 2 = 10.5 %
    assert w is not None and "CV 10.5 %" in w["message"]
    assert unsteady_steps([1, 2], [0.905, 1.095], [True] * 2) is None       # 9.5 %


@pytest.mark.parametrize("last, warned", [(2.1, True), (2.0, False), (1.99, False)])
def test_unsteady_steps_by_one_outlier_alone(last, warned):
    """150 steps of 1 s and one more: the CV stays below 10 % (2.1 s: mean 152.1 / 151 = 1.00728,
    pstdev 0.0892, CV 8.9 %), so only the 2x-the-median rule can warn, and only above 2x."""
    w = unsteady_steps(list(range(1, 152)), [1.0] * 150 + [last], [True] * 151)
    assert (w is not None) is warned
    if warned:
        assert "CV 8.9 %" in w["message"] and "occurrence 151 takes 2.1 s, 2.10x the median 1 s" in w["message"]


def test_unsteady_steps_outliers_are_beyond_10_percent():
    """Median 1.0: 1.09 is steady, 1.11 and 2.5 are outside ±10 %."""
    w = unsteady_steps([1, 2, 3, 4, 5, 6, 7], [1.0, 1.0, 1.0, 1.0, 1.09, 1.11, 2.5], [True] * 7)
    assert "Outside ±10 % of the median: 6, 7." in w["message"]
    assert "region.occurrences: {first: 1, last: 5}" in w["message"]


def test_unsteady_steps_names_an_envelope_last_step_only_under_overlap():
    """The last step's time is its envelope only when the occurrences overlap (last_is_envelope)."""
    seconds, ran = [1.0, 1.0, 3.0], [True] * 3
    assert "is the last selected" not in unsteady_steps([1, 2, 3], seconds, ran)["message"]
    assert "Occurrence 3 is the last selected" in unsteady_steps([1, 2, 3], seconds, ran, last_is_envelope=True)["message"]


def test_inference_is_not_labelled_optimizer_step(synth_trace, tmp_path, capsys):
    trace, _ = synth_trace()
    path = job(tmp_path, trace, workload="{mode: inference, seq_len: 2048, global_batch: 8}")
    assert cli(capsys, "run", path, "--out", tmp_path / "o")[0] == 0
    for name in ("report.md", "report.html"):
        body = (tmp_path / "o/j" / name).read_text()
        assert "optimizer step" not in body and "model FLOPs per batch (inference)" in body


def test_warmup_step_in_the_selection_is_warned_about(synth_trace, tmp_path, capsys):
    import jsonschema
    trace, truth = synth_trace(steps=6, warmup_steps=1)     # step 1 is planted twice as long
    assert cli(capsys, "run", job(tmp_path, trace), "--out", tmp_path / "o")[0] == 0
    res = json.loads((tmp_path / "o/j/result.json").read_text())
    jsonschema.validate(res, json.loads((REPO / "schemas/result.schema.json").read_text()))
    (w,) = [w for w in res["warnings"] if w["code"] == "unsteady_steps"]
    assert res["step_time"]["cv_pct"] > 10                   # what the warning is about, from the result
    assert "Outside ±10 % of the median: 1." in w["message"]
    assert "region.occurrences: {first: 2, last: 6}" in w["message"]
