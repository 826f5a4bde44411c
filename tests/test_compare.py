"""mfu compare: side-by-side values, differences against a baseline, comparability, the CI gate.

The planted difference: config b's steps are 10 % longer (step_ns 55 ms vs 50 ms); the
expected change is computed from the two traces' ground truth, not from our output.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.compare import compare, load_input
from pipeline.job.documents import schema_registry, validator


def write(folder: Path, name: str, trace: Path, precision: str = "bf16") -> Path:
    body = {"name": name, "trace": str(trace), "region": {"name": "train_step"},
            "hardware": {"num_gpus": 2, "precision": precision}, "model": {"flops_per_step": 4.0e+13},
            "workload": {"mode": "training", "seq_len": 2048, "global_batch": 8}}
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps(body))
    return path


@pytest.fixture
def pair(synth_trace, tmp_path):
    (ta, truth_a), (tb, truth_b) = synth_trace(step_ns=50_000_000), synth_trace(step_ns=55_000_000)
    return write(tmp_path, "a", ta), write(tmp_path, "b", tb), truth_a, truth_b


def median_step_s(truth: dict) -> float:
    return statistics.median(o["wall_ns"] for o in truth["occurrences"]) / 1e9


def test_planted_step_time_difference(pair):
    a, b, truth_a, truth_b = pair
    doc = compare([load_input(str(a)), load_input(str(b))])
    row = next(r for r in doc["rows"] if r["metric"] == "step_time_median_s")
    want = 100 * (median_step_s(truth_b) - median_step_s(truth_a)) / median_step_s(truth_a)
    assert row["values"] == pytest.approx([median_step_s(truth_a), median_step_s(truth_b)], abs=1e-12)
    assert row["deltas"][0] is None and row["deltas"][1]["pct"] == pytest.approx(want, abs=1e-9)
    assert 9.9 < want < 10.1                                       # the plant really is 10 %
    mfu = next(r for r in doc["rows"] if r["metric"] == "mfu_pct_wall")
    # same FLOPs, longer wall: MFU falls by the wall ratio
    assert mfu["values"][1] / mfu["values"][0] == pytest.approx(median_step_s(truth_a) / median_step_s(truth_b),
                                                                rel=1e-3)
    assert all(c["comparable"] for c in doc["columns"])


def test_gate_fails_at_5_and_passes_at_15_percent(pair, tmp_path, capsys):
    a, b, _, _ = pair
    assert main(["compare", str(a), str(b), "--max-regression", "5%", "--out", str(tmp_path / "c5")]) == 1
    err = capsys.readouterr().err
    assert "regression: b step_time_median_s" in err and "limit 5 %" in err and "Traceback" not in err
    assert main(["compare", str(a), str(b), "--max-regression", "15%", "--out", str(tmp_path / "c15")]) == 0
    # the faster run against the slower baseline is an improvement, never a regression
    assert main(["compare", str(b), str(a), "--max-regression", "0", "--out", str(tmp_path / "c0")]) == 0
    assert sorted(p.name for p in (tmp_path / "c5").iterdir()) == ["compare.html", "compare.json", "compare.md"]


def test_non_comparable_pair_is_flagged_and_fails_the_gate(synth_trace, tmp_path, capsys):
    t, _ = synth_trace()
    a, b = write(tmp_path, "a", t), write(tmp_path, "b8", t, precision="fp8")
    assert main(["compare", str(a), str(b), "--max-regression", "50", "--out", str(tmp_path / "c")]) == 1
    assert "b8 is not comparable with the baseline: precision: fp8 vs baseline bf16" in capsys.readouterr().err
    md = (tmp_path / "c" / "compare.md").read_text()
    assert "⚠ **no**: precision: fp8 vs baseline bf16" in md


def test_inputs_may_be_results_or_report_folders(pair, tmp_path, capsys):
    a, b, _, _ = pair
    assert main(["run", str(a), str(b), "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "r" / "a"), str(tmp_path / "r" / "b" / "result.json"),
                 "--baseline", "b", "--out", str(tmp_path / "c")]) == 0
    doc = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert doc["baseline"] == "b" and [c["baseline"] for c in doc["columns"]] == [False, True]
    assert str(tmp_path) not in (tmp_path / "c" / "compare.md").read_text()


def test_bad_inputs_are_usage_errors(pair, tmp_path, capsys):
    a, _, _, _ = pair
    assert main(["compare", str(a), "--out", str(tmp_path / "c")]) == 2
    assert main(["compare", str(a), str(tmp_path / "nope.json"), "--out", str(tmp_path / "c")]) == 2
    assert main(["compare", str(a), str(a), "--baseline", "zzz", "--out", str(tmp_path / "c")]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def undocumented(node: object, pointer: str = "") -> list[str]:
    """JSON pointers of subschemas under properties/items/oneOf that have no description."""
    out: list[str] = []
    if isinstance(node, dict):
        for key, sub in (node.get("properties") or {}).items():
            out += [f"{pointer}/properties/{key}"] * ("description" not in sub)
            out += undocumented(sub, f"{pointer}/properties/{key}")
        if isinstance(node.get("items"), dict):
            out += [f"{pointer}/items"] * ("description" not in node["items"])
            out += undocumented(node["items"], f"{pointer}/items")
        for i, sub in enumerate(node.get("oneOf") or []):
            out += [f"{pointer}/oneOf/{i}"] * ("description" not in sub)
            out += undocumented(sub, f"{pointer}/oneOf/{i}")
    return out


def test_every_property_of_the_output_schemas_is_described():
    assert undocumented({"properties": {"x": {"type": "object", "properties": {"y": {}}}}}) == \
        ["/properties/x", "/properties/x/properties/y"]
    for name in ("compare.schema.json", "history.schema.json"):
        assert undocumented(schema_registry().contents(name)) == [], name


def test_compare_json_matches_its_schema(synth_trace, tmp_path, capsys):
    (ta, _), (tb, _) = synth_trace(step_ns=50_000_000), synth_trace(step_ns=55_000_000)
    a, b, c = write(tmp_path, "a", ta), write(tmp_path, "b", tb), write(tmp_path, "c8", tb, precision="fp8")
    assert main(["compare", str(a), str(b), str(c), "--max-regression", "5%", "--out", str(tmp_path / "g")]) == 1
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "n")]) == 0
    check = validator("compare.schema.json")
    gated = json.loads((tmp_path / "g" / "compare.json").read_text())
    plain = json.loads((tmp_path / "n" / "compare.json").read_text())
    assert len(gated["gates"]) == 4 and not gated["columns"][2]["comparable"]   # the schema sees every branch
    assert plain["gates"] == [] and plain["max_regression_pct"] is None
    for doc in (gated, plain):
        assert [e.message for e in check.iter_errors(doc)] == []
    gated["columns"][0]["extra"] = 1
    gated["rows"][0]["deltas"][1] = {"abs": 1.0}
    gated["gates"][0]["metric"] = "tokens_per_s"
    assert len(list(check.iter_errors(gated))) == 3
