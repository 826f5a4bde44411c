"""The committed example report (reports/demo) is exactly what `mfu demo` produces now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.demo import run_demo

REPO = Path(__file__).resolve().parents[1]
H100_SXM_BF16 = 989.4     # dense TFLOP/s, NVIDIA H100 datasheet


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    run_demo(out)
    return out / "demo"


@pytest.mark.parametrize("name", ["report.md", "report.html", "result.json", "timeline.svg", "devices.svg",
                                  "steps.svg", "roofline.svg"])
def test_demo_report_is_regenerated_byte_for_byte(fresh, name):
    committed = REPO / "reports" / "demo" / name
    assert committed.is_file(), "reports/demo is missing: run `mfu demo` and commit it"
    assert fresh.joinpath(name).read_bytes() == committed.read_bytes(), (
        f"reports/demo/{name} is stale: run `mfu demo` and commit the result")


def test_demo_numbers_check_out_by_hand(fresh):
    """The golden files are compared byte for byte above; their numbers are checked here, independently."""
    r = json.loads(fresh.joinpath("result.json").read_text())
    # Llama-3-8B, seq 8192, training, megatron: 51.47 GFLOP/token (docs/figures.md §11); 8 sequences per step
    assert r["flops"]["flops_per_token"] == pytest.approx(51.47e9, rel=1e-4)
    assert r["flops"]["model_flops_per_step"] == r["flops"]["flops_per_token"] * 8 * 8192
    wall = sum(o["wall_time_s"] for o in r["occurrences"])
    expected = 100 * 5 * r["flops"]["model_flops_per_step"] / (wall * 8 * H100_SXM_BF16 * 1e12)
    assert r["metrics"]["mfu_pct_wall"] == pytest.approx(expected, rel=1e-12)
    assert r["hardware"]["key"] == "h100-sxm" and r["totals"]["occurrences"] == 5
    assert 30 < r["metrics"]["mfu_pct_wall"] < 45
    # the timeline draws the median occurrence by wall time, and its axis is that occurrence's wall
    walls = sorted((o["wall_time_s"], o["index"]) for o in r["occurrences"])
    median_wall, median_index = walls[len(walls) // 2]                  # 5 occurrences: the 3rd of 5
    assert r["timeline"]["occurrence"] == median_index
    assert r["timeline"]["wall_s"] == pytest.approx(median_wall, abs=1e-9)
    for d in r["timeline"]["devices"]:                                  # idle + busy tile the step per GPU
        busy = r["occurrences"][[o["index"] for o in r["occurrences"]].index(median_index)]["device_union_s"]
        idle = sum(e - s for s, e in d["idle"])
        assert idle + busy[str(d["device_id"])] == pytest.approx(median_wall, abs=40 * r["timeline"]["joined_below_s"])
    md = fresh.joinpath("report.md").read_text()
    assert f"**{r['metrics']['mfu_pct_wall']:.2f}\u00a0%**" in md        # number and unit never wrap apart
    # the demo job declares no recomputation: HFU multiplies each forward by 3, as MFU does, so the FLOPs table's
    # hardware column repeats the model column, and HFU = MFU (docs/figures.md §7)
    table = md.split("| component | forward FLOPs (TFLOP) | MFU × | model FLOPs per step (TFLOP) | HFU × | hardware "
                     "FLOPs per step (TFLOP) |\n|---|---:|---:|---:|---:|---:|\n", 1)[1].split("\n\n", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()]
    assert [row[0] for row in rows] == ["q_proj", "kv_proj", "attn_scores", "attn_context", "out_proj", "mlp",
                                        "lm_head", "**total**"]
    for name, forward, mfu_x, model, hfu_x, hardware in rows[:-1]:
        assert (mfu_x, hfu_x) == ("3", "3") and hardware == model
        assert float(model.replace(",", "")) == pytest.approx(3 * float(forward), rel=2e-3)   # 4 digits each
    assert rows[-1][3] == rows[-1][5] == "**3,373**"                 # 3.373 PFLOP per step, as the formula
    assert r["metrics"]["hfu_pct_wall"] == r["metrics"]["mfu_pct_wall"]
    assert "HFU = hardware FLOPs / (wall time × GPUs × dense peak per GPU)\n    = 16.87\u00a0PFLOP / " in md


def test_demo_walls_and_unions_are_the_generated_truth(tmp_path):
    """The walls the MFU above divides by, and the per-device unions, against the generator's ground truth
    (written while planting the kernels, not read back through the pipeline)."""
    from pipeline.demo import DEMO_SPEC
    from pipeline.trace.synth import generate
    truth = {o["index"]: o for o in generate(DEMO_SPEC, tmp_path / "demo.sqlite")["occurrences"]}
    r = json.loads((REPO / "reports" / "demo" / "result.json").read_text())
    assert [o["index"] for o in r["occurrences"]] == [2, 3, 4, 5, 6]          # demo.yaml: first 2, last 6
    for o in r["occurrences"]:
        want = truth[o["index"]]
        assert round(o["wall_time_s"] * 1e9) == want["wall_ns"]
        assert round(o["gpu_kernel_union_s"] * 1e9) == want["kernel_union_ns"]
        assert {d: round(s * 1e9) for d, s in o["device_union_s"].items()} == want["device_union_ns"]


def test_html_is_self_contained(fresh):
    html = fresh.joinpath("report.html").read_text()
    assert "<script" not in html and "http://" not in html and "<link" not in html


def test_readme_excerpt_is_the_committed_demo():
    """The README shows figures from reports/demo; a stale excerpt would show numbers no run gives."""
    readme = (REPO / "README.md").read_text()
    excerpt = readme.split("## What a report shows", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in excerpt.splitlines() if line.startswith("| ") and "figure" not in line]
    demo = (REPO / "reports" / "demo" / "report.md").read_text()
    assert len(rows) >= 4 and all(row in demo for row in rows)
