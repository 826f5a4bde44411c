"""Inline SVG charts: well-formed XML, the right marks, and geometry that follows the numbers."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from pipeline.report import charts
from pipeline.job.config import load_job
from pipeline.report.render import render_all
from pipeline.run import run_job
from tests.test_run_synth import write_job

SVG_NS = ""     # inline SVG in HTML5 needs no namespace (and the page must stay link-free)


def _svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", html, re.S)]


@pytest.mark.parametrize("model, charts_expected", [
    ({"preset": "llama-3-8b"}, 3),          # analytic bytes: roofline, device bars, step bars
    ({"flops_per_step": 4.0e+14}, 2),       # no bytes anywhere: no roofline chart, only the heuristic row
])
def test_report_svgs_are_well_formed(synth_trace, tmp_path, model, charts_expected):
    trace, _ = synth_trace()
    res = run_job(load_job(write_job(tmp_path, trace, model=model, hardware={"peak_tflops": 50000},
                                     workload={"seq_len": 8192, "global_batch": 1})))
    html = render_all(res)["report.html"]
    svgs = _svgs(html)
    assert len(svgs) == charts_expected
    bars = svgs[0]
    assert len(bars.findall(f"{SVG_NS}rect")) == 3 * len(res["communication"]["devices"])
    md = render_all(res)["report.md"]
    assert ("(heuristic) |" in md) == (model.get("preset") is None)     # a table cell, not the legend


def test_roofline_geometry():
    r = {"hardware": {"peak_tflops": 1000.0, "hbm_gbps": 5000.0, "ridge_flop_per_byte": 200.0},
         "roofline": [{"arithmetic_intensity": 1.0, "achieved_tflops": 2.0, "attainable_tflops": 5.0, "operator": "add"},
                      {"arithmetic_intensity": 2000.0, "achieved_tflops": None, "attainable_tflops": 1000.0,
                       "operator": "gemm"},
                      {"arithmetic_intensity": None, "achieved_tflops": 1.0, "attainable_tflops": None,
                       "operator": "no bytes"}]}
    c = charts.roofline(r)
    assert [p["label"] for p in c["points"]] == ["add", "gemm"]           # rows without AI are not plotted
    add, gemm = c["points"]
    assert add["measured"] and not gemm["measured"]
    assert add["x"] < c["ridge"]["x"] < gemm["x"]                          # memory side, compute side
    assert gemm["y"] == pytest.approx(c["ridge"]["y"])                      # on the flat compute roof
    assert charts.roofline({**r, "hardware": {**r["hardware"], "hbm_gbps": None}}) is None
