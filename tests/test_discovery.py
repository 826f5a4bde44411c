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
    """h100_2gpu_1s: PyTorch op ranges only ('aten::linear, op_id = N', ...): no range marks a step, so the
    GPU-active window is proposed, as a guess, with the operator groups as alternatives."""
    found = inspect_trace(real_trace("nsysai__h100_2gpu_1s.sqlite"))["region_discovery"]
    assert found["guessing"] and found["step_like"] == [] and found["proposal"]["kind"] == "gpu_active"
    assert found["message"].startswith("guessing: the ranges holding GPU work mark operators ('aten::linear', "
                                       "'aten::matmul', 'aten::mm'), none a step; proposed: the GPU-active window")
    assert found["regions"] and all(not r["step_like"] for r in found["regions"])


def _inspect_text(capsys, path: Path) -> str:
    assert main(["inspect", str(path)]) == 0
    return capsys.readouterr().out


def test_no_ranges_is_not_a_guess_and_says_what_to_capture(tmp_path, capsys):
    """Kernels but no NVTX range (a CUDA benchmark): no candidate to guess from; the GPU-active window, 200 to
    300 ns (the launch is no GPU row), is what can be measured."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    e.launch(100, gtid(7, 7), 1)
    e.kernel(200, 300, gpid(7), 1)
    path = e.write(tmp_path / "t.sqlite")
    found = inspect_trace(path)["region_discovery"]
    assert found["regions"] == [] and found["step_like"] == []
    assert found["message"].startswith("no NVTX range: the GPU-active window of each process (0.100 µs), from its "
                                       "first GPU row's start to its last one's end")
    assert "guessing" not in found["message"] and not found["guessing"]
    assert (found["proposal"]["kind"], found["proposal"]["window_ns"]) == ("gpu_active", [100])
    text = _inspect_text(capsys, path)
    assert "NVTX range names: none\n" in text and "  step  share" not in text


def test_ranges_without_kernels_have_no_share(tmp_path, capsys):
    """Ranges but no kernel table (an NVTX-only capture): a share of no kernel time at all is '—', not 0.0 %."""
    from nsys_export import Export, gtid
    e = Export()
    for start in (0, 100, 200):
        e.range(start, start + 90, gtid(7, 7), "step")
    path = e.write(tmp_path / "t.sqlite")
    found = inspect_trace(path)["region_discovery"]
    (step,) = found["regions"]
    assert step["kernel_share"] is None and step["reasons"][2] == "no GPU kernels in the trace"
    assert found["message"].startswith("this trace holds no GPU kernels") and "--trace=cuda" in found["message"]
    lines = _inspect_text(capsys, path).splitlines()
    row = lines[next(i for i, line in enumerate(lines) if line.startswith("  step  share")) + 1]
    assert row.split()[:2] == ["—", "3"] and row.endswith("  step")     # share, occurrences per process


def test_kernels_without_length_are_not_called_no_kernels_in_the_reasons(tmp_path, capsys):
    """Three ranges, each launching one kernel that ends where it starts (an export that lost the GPU end
    times): the verdict said the 3 kernels have no length, while each region's reasons, in
    `mfu inspect --format json`, still said 'no GPU kernels in the trace'. The reasons now say the same as
    the verdict: no kernel time, the kernels there without length."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    for i, start in enumerate((0, 100, 200), start=1):
        e.range(start, start + 90, gtid(7, 7), "step")
        e.launch(start + 10, gtid(7, 7), i)
        e.kernel(start + 20, start + 20, gpid(7), i)          # zero length
    path = e.write(tmp_path / "t.sqlite")
    assert main(["inspect", str(path), "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["region_discovery"]
    (step,) = found["regions"]
    assert step["kernel_share"] is None
    assert step["reasons"][2] == "no GPU kernel time in the trace (its 3 kernels have no length)"
    assert found["message"].startswith("this trace's 3 kernels all have no length")
    assert "no GPU kernels" not in json.dumps(found)


def test_one_period_is_not_called_steady(tmp_path):
    """Two occurrences: the reason gives the one period and says it cannot judge steadiness (no 'CV 0.0 %')."""
    from nsys_export import Export, gpid, gtid
    e = Export()
    for start in (0, 3_000_000):
        e.range(start, start + 1_000_000, gtid(7, 7), "step")
    e.launch(10, gtid(7, 7), 1)
    e.kernel(20, 60, gpid(7), 1)
    (step,) = inspect_trace(e.write(tmp_path / "t.sqlite"))["region_discovery"]["regions"]
    assert step["reasons"][3] == "one period, 3.000 ms: too few to judge its steadiness"


def test_a_numbered_groups_regex_selects_exactly_its_names():
    """discovery.selector's pattern, run by DuckDB's RE2 as region_ranges.sql runs it, matches the group's names
    (metacharacters in them included, PyTorch's suffix allowed when the group has it) and no other name."""
    import duckdb
    from pipeline.trace import queries
    from pipeline.trace.discovery import selector
    con = duckdb.connect()
    queries.run(con, "macros")
    names = ["a.b(x) Step [1]", "a.b(x) Step [22]", "a.b(x) Step [3], seq = 4, op_id = 5", "a.b(x) Step []",
             "a.b(x) Step [1a]", "Xa.b(x) Step [1]", "a.b(x) Step [1] ", "aXb(x) Step [1]", "warm a.b(x) Step [1]"]
    row = {"name_group": "a.b(x) Step [<n>]", "numbered": True, "has_suffix": True}
    sel = selector(row)
    assert sel["match"] == "regex"
    hit = [n for n in names if con.execute("SELECT name_matches(?, ?, 'regex')", [n, sel["name"]]).fetchone()[0]]
    assert hit == names[:3]
    same_key = [n for n in names
                if con.execute("SELECT numbered_key(?) = numbered_key(?)", [n, names[0]]).fetchone()[0]]
    assert same_key == hit
