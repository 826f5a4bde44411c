"""CI output of mfu compare: GitHub annotations and step summary, JUnit XML (one case per gated figure per job)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from pipeline.cli import main
from tests import fake_results as fake

STEADY = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0]


def inputs(tmp_path):
    """base; slow (+20 %, a clear regression); few (+20 %, 3 samples: undecided); big (another model)."""
    docs = {"base": fake.result("base", STEADY), "slow": fake.result("slow", [1.2 * v for v in STEADY]),
            "few": fake.result("few", [1.2, 1.21, 1.19]),
            "big": fake.result("big", STEADY, {"flops.model_flops_per_step": 12 * 10**15})}
    for name, doc in docs.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    return [str(tmp_path / f"{n}.json") for n in docs]


def test_github_annotations_and_step_summary(tmp_path, capsys, monkeypatch):
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code = main(["compare", *inputs(tmp_path), "--max-regression", "5%", "--format", "github",
                 "--out", str(tmp_path / "c")])
    assert code == 1
    out = capsys.readouterr().out.splitlines()
    errors = [line for line in out if line.startswith("::error ")]
    warnings = [line for line in out if line.startswith("::warning ")]
    # slow: MFU and step time regress; big: step time not comparable (its MFU is comparable and equal)
    assert len(errors) == 3 and len(warnings) == 2                     # few: both figures undecided
    slow_step = next(line for line in errors if "slow step time" in line)
    # properties escape ':' and ','; the message escapes '%' (actions/toolkit command.ts)
    assert slow_step.startswith("::error file=slow.yaml,title=mfu compare%3A slow step time (median) failed::+")
    assert "(worse), limit 5 %25 worse: statistically clear" in slow_step
    assert any(line.startswith("::error file=big.yaml,") and "not comparable with the baseline%3A" not in line
               and "not comparable with the baseline: model FLOPs per step" in line for line in errors)
    assert all("file=few.yaml" in line and "cannot decide" in line for line in warnings)
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "### mfu compare: gate FAILED (3 against base)" in text
    assert "❌ **FAIL**" in text and "⚠️ cannot decide" in text
    assert "- ⚠️ big: tokens/s, step time (median)" in text
    # values carry their unit (the table mixes figures): medians of STEADY and 1.2 x STEADY, MFU / 1.2
    assert "| slow | step time (median) | 1.000\xa0s | 1.200\xa0s | +20.00 % worse |" in text
    mfu = 100 * 4e15 / (8 * 989.4e12)               # fake.result: 4 PFLOP per 1 s step, 8 GPUs, 989.4 TFLOP/s
    assert f"| slow | MFU (wall) | {mfu:.2f}\xa0% | {mfu / 1.2:.2f}\xa0% |" in text and f"{mfu:.2f}" == "50.54"
    assert (tmp_path / "c" / "summary.md").read_text() == text.removeprefix("earlier step\n")


def test_job_file_option_points_annotations_at_the_repository_path(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    base, slow = inputs(tmp_path)[:2]
    assert main(["compare", base, slow, "--max-regression", "5", "--format", "github", "--job-file",
                 "configs/slow.yaml", "--out", str(tmp_path / "c")]) == 1
    assert capsys.readouterr().out.count("::error file=configs/slow.yaml,") == 2


def test_junit_one_case_per_gated_figure_per_job(tmp_path, capsys):
    assert main(["compare", *inputs(tmp_path), "--max-regression", "5%", "--junit", str(tmp_path / "j" / "mfu.xml"),
                 "--out", str(tmp_path / "c")]) == 1
    root = ET.parse(tmp_path / "j" / "mfu.xml").getroot()
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        (f"mfu.{job}", f"{figure} within 5 % of baseline")
        for figure in ("MFU (wall)", "step time (median)") for job in ("slow", "few", "big")]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("6", "3", "2")
    outcome = {(c.get("classname"), c.get("name").split(" within")[0]):
               ("failure" if c.find("failure") is not None else "skipped" if c.find("skipped") is not None
                else "pass") for c in cases}
    assert outcome == {("mfu.slow", "MFU (wall)"): "failure", ("mfu.slow", "step time (median)"): "failure",
                       ("mfu.few", "MFU (wall)"): "skipped", ("mfu.few", "step time (median)"): "skipped",
                       ("mfu.big", "MFU (wall)"): "pass", ("mfu.big", "step time (median)"): "failure"}
    big = next(c for c in cases if c.get("classname") == "mfu.big" and c.find("failure") is not None)
    assert big.find("failure").get("type") == "not comparable" and big.get("file") == "big.yaml"
    slow = next(c for c in cases if c.get("classname") == "mfu.slow")
    assert slow.find("failure").get("type") == "regression" and "p = " in slow.find("failure").get("message")


def test_junit_needs_a_gate(tmp_path, capsys):
    base, slow = inputs(tmp_path)[:2]
    assert main(["compare", base, slow, "--junit", str(tmp_path / "j.xml"), "--out", str(tmp_path / "c")]) == 2
    assert "--junit lists the gated figures" in capsys.readouterr().err and not (tmp_path / "j.xml").exists()
