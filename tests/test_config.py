"""Job files: every problem reported at once, located by file:line:col and JSON pointer."""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.job.config import Region, load_job
from pipeline.run import load_checked
from pipeline.job.parsing import parse_yaml
from pipeline.errors import ConfigError

GOOD = """\
name: ok-job
trace: t.sqlite
region:
  name: train_step
  occurrences: {first: 2, last: 4}
hardware:
  num_gpus: 8
  precision: bf16
model:
  flops_per_step: 3.9e+15
workload:
  mode: training
  seq_len: 4096
  global_batch: 64
  micro_batch: 2
  grad_accum: 4
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def problems(tmp_path: Path, text: str) -> list:
    with pytest.raises(ConfigError) as info:
        load_job(write(tmp_path, text))
    return info.value.problems


def test_good_job_loads_with_defaults(tmp_path):
    job = load_job(write(tmp_path, GOOD))
    assert job.region.first == 2 and job.region.last == 4
    assert job.region.match == "exact" and job.region.attribution == "process"
    assert job.hardware["gpu"] == "auto" and job.hardware["peak_tflops"] is None
    assert job.model["flops_per_step"] == 3.9e15
    assert job.trace_files() == [tmp_path / "t.sqlite"]
    assert len(job.sha256) == 64


@pytest.mark.parametrize("text, value", [("x: 989e12", 989e12), ("x: 8.0e9", 8.0e9), ("x: 8.0e+9", 8.0e9),
                                         ("x: -1.5E3", -1500.0), ("x: 12", 12), ("x: '989e12'", "989e12")])
def test_exponent_numbers_are_numbers(text, value):
    data, _, _ = parse_yaml(text, "f.yaml")
    assert data["x"] == value and type(data["x"]) is type(value)


def test_broken_yaml_names_line_and_column(tmp_path):
    (p,) = problems(tmp_path, "name: x\nregion: [a, b\nhardware: {}\n")
    assert p.file.endswith("job.yaml") and p.line == 3
    assert "invalid YAML" in p.message


def test_all_schema_errors_at_once_with_positions(tmp_path):
    text = GOOD.replace("precision: bf16", "precision: bf17").replace("seq_len: 4096", "seq_len: -1") \
        .replace("  mode: training", "  mode: training\n  colour: red")
    found = problems(tmp_path, text)
    by_pointer = {p.pointer: p for p in found}
    assert set(by_pointer) == {"/hardware/precision", "/workload/seq_len", "/workload/colour"}
    assert by_pointer["/hardware/precision"].line == 8      # line of `precision: bf17`
    assert by_pointer["/hardware/precision"].col == 14
    assert by_pointer["/workload/colour"].line == 13 and "unknown key" in by_pointer["/workload/colour"].message
    assert "bf16" in by_pointer["/hardware/precision"].message          # says what to write instead
    text_form = str(by_pointer["/workload/seq_len"])
    assert text_form.startswith(f"{tmp_path / 'job.yaml'}:14:12: /workload/seq_len:")


def test_missing_required_key_points_at_parent(tmp_path):
    found = problems(tmp_path, GOOD.replace("  num_gpus: 8\n", ""))
    assert [(p.pointer, p.line) for p in found] == [("/hardware", 7)]
    assert "num_gpus" in found[0].message


def test_region_kinds_require_their_keys_and_load_as_one_occurrence(tmp_path):
    """name is required for kind nvtx only (also when kind is left out); time_window needs both ends. A window
    loads as occurrence 1..1 with window attribution, its ends in integer ns of the capture's clock."""
    region = "  name: train_step\n  occurrences: {first: 2, last: 4}\n"
    for kind in ("", "  kind: nvtx\n"):
        [p] = problems(tmp_path, GOOD.replace(region, kind + "  occurrences: {first: 2}\n"))
        assert (p.pointer, p.line, p.message) == ("/region", 4, "'name' is required here")
        assert p.hint == ("add the key; the NVTX range name to match (case-sensitive); for a trace without NVTX "
                          "ranges, set kind: gpu_active (the capture's GPU-active window) or time_window instead")
    found = problems(tmp_path, GOOD.replace(region, "  kind: time_window\n  start_s: 1\n"))
    assert [(p.pointer, p.message) for p in found] == [("/region", "'end_s' is required here")]
    [p] = problems(tmp_path, GOOD.replace(region, "  kind: gpu_activ\n"))
    assert p.message == "'gpu_activ' is not one of nvtx, gpu_active, time_window"
    job = load_job(write(tmp_path, GOOD.replace(region, "  kind: time_window\n  start_s: 0.1\n  end_s: 3\n")))
    assert job.region == Region(None, None, None, 1, 1, "window", "step", "time_window", 0.1, 3)
    assert (job.region.start_ns, job.region.end_ns) == (100_000_000, 3_000_000_000)
    job = load_job(write(tmp_path, GOOD.replace(region, "  kind: gpu_active\n  covers: 10\n")))
    assert job.region == Region(None, None, None, 1, 1, "window", 10, "gpu_active", None, None)


def test_duplicate_keys_are_reported(tmp_path):
    found = problems(tmp_path, GOOD + "name: again\n")
    assert any(p.pointer == "/name" and "duplicate" in p.message and p.line == 17 for p in found)


def test_not_a_mapping(tmp_path):
    (p,) = problems(tmp_path, "- just\n- a list\n")
    assert "mapping" in p.message


def test_missing_job_file(tmp_path):
    with pytest.raises(ConfigError, match="no such job file"):
        load_job(tmp_path / "nope.yaml")


def test_every_job_schema_property_is_described():
    import json
    schema = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "job.schema.json").read_text())
    missing = []

    def walk(node, path):
        for key, sub in node.get("properties", {}).items():
            if "description" not in sub:
                missing.append(f"{path}/{key}")
            walk(sub, f"{path}/{key}")
    walk(schema, "")
    assert missing == []


def test_readme_job_example_is_valid(tmp_path):
    """The job file docs/guide.md shows must pass every check (its batch arithmetic included)."""
    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    example = readme.split("## The job file", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    job = load_checked(write(tmp_path, example))           # schema and every job-file rule of checks/job_file.py
    wl = job.workload
    assert wl["global_batch"] == wl["micro_batch"] * wl["grad_accum"] * job.hardware["num_gpus"]


def test_readme_job_example_runs_on_the_trace_readme_says(tmp_path, monkeypatch, capsys):
    """Copied as written, the README's job had no trace (exit 4), and on a trace of `mfu synth`'s default 50-ms
    steps its 64 x 8192-token step was MFU 6800 % (invalid). The README now gives the trace to generate and the
    MFU it reports; the figure is computed here by hand: Llama-3-8B's Megatron FLOPs over the union of the
    selected occurrences' envelopes from the generator's truth."""
    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    section = readme.split("## The job file", 1)[1].split("\n## ", 1)[0]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    synth = shlex.split(re.search(r"`(mfu synth runs/step\.sqlite [^`]*)`", section).group(1))
    shown = float(re.search(r"reports\s+MFU ([\d.]+) %", section).group(1))
    monkeypatch.chdir(tmp_path)
    Path("runs").mkdir()
    Path("job.yaml").write_text(example)
    assert main(synth[1:]) == 0
    assert main(["run", "job.yaml"]) == 0                     # ok, and its threshold (35 %) passed
    capsys.readouterr()
    res = json.loads(Path("reports/llama3-8b-bf16-8xh100/result.json").read_text())
    # forward FLOPs per token, per layer: q and out 2h^2 each, kv 2h(2 x 8 x 128), scores and context s*h each
    # (causal: half of 2sh), SwiGLU 3 x 2h x ffn; then the LM head 2h x vocab; training is 3x forward
    h, s, ffn, vocab = 4096, 8192, 14336, 128256
    layer = 2 * h * h * 2 + 2 * h * 2 * 8 * 128 + 2 * s * h + 3 * 2 * h * ffn
    flops_per_step = 3 * (32 * layer + 2 * h * vocab) * s * 64
    truth = json.loads(Path("runs/step.sqlite.truth.json").read_text())
    occ = [o for o in truth["occurrences"] if 3 <= o["index"] <= 7]
    assert all(a["start_ns"] + a["wall_ns"] >= b["start_ns"] for a, b in zip(occ, occ[1:]))   # one span
    wall_s = (max(o["start_ns"] + o["wall_ns"] for o in occ) - min(o["start_ns"] for o in occ)) / 1e9
    mfu = 100 * 5 * flops_per_step / (wall_s * 8 * 989.4e12)   # H100 SXM dense bf16 (catalog, whitepaper)
    assert res["status"] == "ok" and res["metrics"]["mfu_pct_wall"] == pytest.approx(mfu, rel=1e-9)
    assert f"{mfu:.2f}" == f"{shown:.2f}"


def test_an_hfu_minimum_above_100_is_refused_as_the_mfu_one_is(tmp_path):
    """`hfu_pct_wall_min: 150` validated 'ok', though HFU above 100 % marks a result invalid: the gate could
    never be met. mfu_pct_wall_min already had the maximum of 100."""
    found = problems(tmp_path, GOOD + "thresholds:\n  hfu_pct_wall_min: 150\n")
    assert [(p.pointer, p.line, p.col) for p in found] == [("/thresholds/hfu_pct_wall_min", 18, 21)]       # GOOD is 16 lines
    assert "150 is greater than the maximum of 100" in found[0].message
    assert load_job(write(tmp_path, GOOD + "thresholds:\n  hfu_pct_wall_min: 100\n")).thresholds == \
        {"hfu_pct_wall_min": 100}


ORDER_JOB = """\
name: ordered
trace: t.sqlite
region:
  name: train_step
hardware:
  num_gpus: 8
  precision: bf16
model:
  preset: {preset}
  {extra}
workload:
  mode: training
  seq_len: {seq_len}
  global_batch: 8
  micro_batch: 3
"""


@pytest.mark.parametrize("preset, extra, seq_len, expected", [
    # the parser's absurd number (line 13) was listed before the schema's unknown key (line 10)
    ("llama-3-8b", "colour: red", "1e400", ["ordered.yaml:10:3: /model/colour:", "ordered.yaml:13:12: /workload/seq_len:"]),
    # the scope rule's batch arithmetic (line 14) was listed before the model's unknown preset (line 9)
    ("llama-9z", "", "2048", ["ordered.yaml:9:11: /model/preset:", "ordered.yaml:14:17: /workload/global_batch:"]),
])
def test_validate_and_run_list_problems_in_file_order(tmp_path, monkeypatch, capsys, preset, extra, seq_len, expected):
    """A user fixing the file top to bottom reads its problems by line, whichever check found them."""
    monkeypatch.chdir(tmp_path)
    Path("ordered.yaml").write_text(ORDER_JOB.format(preset=preset, extra=extra, seq_len=seq_len))
    assert main(["validate", "ordered.yaml"]) == 3
    lines = capsys.readouterr().err.splitlines()
    assert [ln[:len(want)] for ln, want in zip(lines, expected)] == expected and len(lines) == 2
    assert main(["run", "ordered.yaml", "--format", "json", "--out", "out"]) == 3
    [row] = json.loads(capsys.readouterr().out)
    assert [ln[:len(want)] for ln, want in zip(row["reason"].splitlines(), expected)] == expected


def test_problems_sort_by_file_line_column_with_unplaced_ones_last_in_their_file():
    from pipeline.errors import Problem
    given = [Problem("e", "/e", "b.yaml", 2, 1), Problem("unplaced", "/u", "a.yaml"), Problem("d", "/d", "a.yaml", 3, 9),
             Problem("c", "/c", "a.yaml", 3, 2), Problem("tie1", "/t1", "a.yaml", 1, 5), Problem("tie2", "/t2", "a.yaml", 1, 5)]
    assert [p.message for p in ConfigError(given).problems] == ["tie1", "tie2", "c", "d", "unplaced", "e"]
    assert str(ConfigError(given)).splitlines()[0] == "a.yaml:1:5: /t1: tie1"
