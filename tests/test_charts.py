"""Charts (pipeline/report/charts.py): well-formed SVG, the right marks, geometry that follows the numbers."""

from __future__ import annotations

import copy
import json
import statistics
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipeline.report import charts, drawing, render
from pipeline.report.charts import PLOT_PX, nice_ticks, tick_labels
from pipeline.job.config import load_job
from pipeline.report.render import device_label, render_all
from pipeline.run import run_job
from tests.test_run_synth import write_job

DEMO = json.loads((Path(__file__).resolve().parents[1] / "reports/demo/result.json").read_text())


def _svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", html, re.S)]


@pytest.mark.parametrize("model, names", [
    ({"preset": "llama-3-8b"}, ["timeline.svg", "devices.svg", "steps.svg", "roofline.svg"]),
    ({"flops_per_step": 4.0e+14}, ["timeline.svg", "devices.svg", "steps.svg"]),     # no bytes: no roofline
])
def test_report_charts_inline_and_as_sidecars(synth_trace, tmp_path, model, names):
    trace, _ = synth_trace()
    res = run_job(load_job(write_job(tmp_path, trace, model=model, hardware={"peak_tflops": 50000},
                                     workload={"seq_len": 8192, "global_batch": 1})))
    files = render_all(res)
    assert sorted(n for n in files if n.endswith(".svg")) == sorted(names)
    inline = _svgs(files["report.html"])
    # the page also carries a phone-width drawing of each chart, right after it (no sidecar: pages only)
    drawn = [k for n in names for k in ("chart-" + n[:-4], "chart-" + n[:-4] + "-phone")]
    assert [s.get("class").split()[1] for s in inline] == drawn
    for name in names:
        assert ET.fromstring(files[name]).tag == "{http://www.w3.org/2000/svg}svg"     # a file needs the namespace
        assert f"]({name})" in files["report.md"]                                   # GitHub shows ![..](x.svg)
    assert "<script" not in "".join(files.values()) and "href" not in "".join(files[n] for n in names)
    bars = inline[2]
    assert len(bars.findall(".//rect")) == 3 * len(res["communication"]["devices"]) + 3      # + 3 legend swatches


def test_roofline_marks_measured_and_analytic_points_differently():
    svg = ET.fromstring(charts.roofline(DEMO))
    rows = [x for x in DEMO["roofline"] if x["arithmetic_intensity"]]
    groups = [g for g in svg.iter("g") if g.find("title") is not None and g.find("title").text[0].isdigit()]
    assert len(groups) == len(rows)
    for g, x in zip(groups, rows):
        measured = x["achieved_tflops"] is not None
        assert (g.find("circle") is not None) == measured and (g.find("rect") is not None) != measured
        assert x["operator"] in g.find("title").text
    labels = [t.text for t in svg.iter("text") if "lbl" in (t.get("class") or "").split()]
    assert labels[0].startswith("peak 989.4") and labels[1:] == [str(i) for i in range(1, len(rows) + 1)]
    assert any(t.text.startswith("HBM 3,350") for t in svg.iter("text"))          # both roofs labelled


def test_roofline_labels_do_not_overlap():
    """Every operator at the same spot (the worst case): the placer still keeps the numbers apart."""
    r = copy.deepcopy(DEMO)
    for x in r["roofline"]:
        x.update(arithmetic_intensity=2000.0, achieved_tflops=None, attainable_tflops=989.4)
    svg = ET.fromstring(charts.roofline(r))
    boxes = [drawing.label_box(float(t.get("x")), float(t.get("y")), t.text, t.get("text-anchor"))
             for t in svg.iter("text") if "lbl" in (t.get("class") or "").split()]
    assert len(boxes) == len(r["roofline"]) + 1
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:] if drawing.overlaps(a, b)]


def test_step_chart_axis_and_median():
    svg = ET.fromstring(charts.steps(DEMO))
    steps = [o["step_time_s"] for o in DEMO["occurrences"]]
    dots = [c for c in svg.iter("circle")]
    assert len(dots) == len(steps)
    ys = [float(c.get("cy")) for c in dots]
    # a longer step is drawn higher up (smaller y); the slowest and fastest are the extremes
    assert ys.index(min(ys)) == steps.index(max(steps)) and ys.index(max(ys)) == steps.index(min(steps))
    ticks = [t.text for t in svg.iter("text") if t.get("text-anchor") == "end" and t.get("class") is None]
    assert len(set(ticks)) == len(ticks) >= 3                            # distinct, readable tick labels
    median = next(t.text for t in svg.iter("text") if t.get("class") == "lbl")
    assert median == f"median {statistics.median(steps):.3f}\u00a0s"


def test_step_chart_draws_step_times_where_they_differ_from_walls():
    """Overlapping occurrences: the step time is the period to the next start, shorter than the wall. The
    points are the quantity whose median the dashed line shows (walls were drawn under a step-time median)."""
    r = copy.deepcopy(DEMO)
    r["occurrences"] = [{"index": i, "wall_time_s": 0.098, "step_time_s": s} for i, s in ((1, 0.05), (2, 0.06),
                                                                                        (3, 0.052))]
    r["step_time"]["median_s"] = 0.052
    svg = ET.fromstring(charts.steps(r))
    titles = [c.find("title").text for c in svg.iter("circle")]
    assert titles == ["occurrence 1: 50.00\u00a0ms (wall 98.00\u00a0ms)", "occurrence 2: 60.00\u00a0ms (wall 98.00\u00a0ms)",
                      "occurrence 3: 52.00\u00a0ms (wall 98.00\u00a0ms)"]
    ticks = [float(t.text) for t in svg.iter("text") if t.get("text-anchor") == "end" and t.get("class") is None]
    assert min(ticks) <= 50 and max(ticks) <= 62                           # the axis spans the step times (ms)


def test_ticks():
    assert nice_ticks(1.1016, 1.1032, 4) == [1.1015, 1.102, 1.1025, 1.103, 1.1035]
    assert tick_labels([0.0, 0.2, 0.4], 1.0) == ["0.0", "0.2", "0.4"]
    assert tick_labels([0.0, 0.0005, 0.001], 1e-3) == ["0.0", "0.5", "1.0"]


def test_timeline_draws_the_spans_to_scale():
    svg = ET.fromstring(charts.timeline(DEMO, device_label))
    t = DEMO["timeline"]
    groups = {g.find("title").text: g for g in svg.iter("g") if g.find("title") is not None}
    gpu0 = next(v for k, v in groups.items() if k.startswith("GPU 0 compute"))
    spans = t["devices"][0]["compute"]
    xs = [(float(r.get("x")), float(r.get("width"))) for r in gpu0.findall("rect")]
    assert len(xs) == len(spans)
    for (x, w), (s, e) in zip(xs, spans):
        assert x == pytest.approx(100 + s / t["wall_s"] * PLOT_PX, abs=0.051)
        assert w == pytest.approx(max((e - s) / t["wall_s"] * PLOT_PX, 0.5), abs=0.11)
    # the hover text gives the lane's exact time (lane_time_s), not the drawn islands (gaps joined)
    share = 100 * t["devices"][0]["lane_time_s"]["compute"] / t["wall_s"]
    assert f"{share:.1f}\u00a0% of the step" in next(k for k in groups if k.startswith("GPU 0 compute"))
    assert len(t["devices"]) == 8 and all(f"GPU {d}" in {x.text for x in svg.iter("text")} for d in range(8))


@pytest.mark.parametrize("walls, kernels, drawn, words", [
    ([1.102, 1.101, 1.103, 1.100, 1.104], [9] * 5, 1, "the median step"),          # odd: 1.102 s, the third of five
    ([4.0, 1.0, 3.0, 2.0], [9] * 4, 4, "the shorter of the two middle steps"),      # 2.0 s and 3.0 s in the middle
    ([4.0, 2.0, 1.0, 2.0], [9] * 4, 2, "one of the two equal middle steps"),        # 2.0 s twice: not "shorter"
    ([4.0, 1.0, 3.0, 2.0, 0.5], [9, 9, 9, 9, 0], 4, "the shorter of the two middle steps"),  # no kernels: not counted
])
def test_timeline_title_and_caption_say_which_step_is_drawn(walls, kernels, drawn, words):
    """The chart's title said "(median step)" for an even count, where the caption said it is the shorter
    of the two middle steps; with two equal middle steps neither "shorter" nor "median step" alone is true."""
    r = copy.deepcopy(DEMO)
    base = r["occurrences"][0]
    r["occurrences"] = [{**base, "index": i, "wall_time_s": w, "kernel_count": k}
                        for i, (w, k) in enumerate(zip(walls, kernels), 1)]
    r["timeline"]["occurrence"], r["timeline"]["median_of"] = drawn, sum(k > 0 for k in kernels)
    svg = ET.fromstring(charts.timeline(r, device_label))
    assert svg.find("title").text == f"timeline of occurrence {drawn}, {words} by wall time"
    files = render_all(r)
    for page in ("report.md", "report.html"):
        assert f"Occurrence {drawn}, {words} by wall time (" in files[page]
    assert f"timeline of occurrence {drawn}, {words} by wall time" in files["timeline.svg"]


def test_charts_are_deterministic():
    assert render_all(DEMO) == render_all(copy.deepcopy(DEMO))


def test_history_overlays_jobs_on_labelled_axes():
    def run(n, label, mfu, step):
        return {"run": n, "label": label, "status": "ok", "mfu_pct_wall": mfu, "step_time_median_s": step}
    doc = {"jobs": [{"name": "a", "runs": [run(1, "v1", 40.0, 1.0), run(2, "abc1234", 38.0, 1.1)]},
                    {"name": "b", "runs": [run(2, "abc1234", 30.0, 0.5)]}]}
    made = charts.history_charts(doc)
    assert list(made) == ["history-mfu.svg", "history-step-1.svg", "history-step-2.svg"]
    svg = ET.fromstring(made["history-mfu.svg"])
    assert len(svg.findall("polyline")) == 2                       # both jobs on one chart
    texts = [t.text for t in svg.iter("text")]
    assert {"1", "2", "v1", "abc1234", "a", "b", "run (label)", "MFU, wall (%)"} <= set(texts)
    dots = {c.find("title").text: float(c.get("cy")) for c in svg.iter("circle")}
    assert dots["a, run 1 (v1): 40.00 %"] < dots["a, run 2 (abc1234): 38.00 %"] < dots["b, run 2 (abc1234): 30.00 %"]
    ticks = [float(t.text) for t in svg.iter("text") if t.get("text-anchor") == "end"]
    assert ticks == sorted(ticks) and ticks[0] <= 30.0 and ticks[-1] >= 40.0 and ticks[0] >= 0


def test_history_threshold_line_per_job_at_its_value():
    def run(n, mfu, limit=None):
        return {"run": n, "label": None, "status": "ok", "mfu_pct_wall": mfu, "step_time_median_s": 1.0,
                "mfu_pct_wall_min": limit}
    doc = {"jobs": [{"name": "a", "runs": [run(1, 40.0), run(2, 38.0, 45.0)]},
                    {"name": "b", "runs": [run(1, 31.0, 20.0), run(2, 30.0)]},     # threshold dropped: none now
                    {"name": "c", "runs": [run(2, 35.0, 33.0)]}]}
    svg = ET.fromstring(charts.history_charts(doc)["history-mfu.svg"])
    # y axis by hand: values 30..45 padded by 15 % of the span (2.25) -> ticks 25, 30, ..., 50 every 5;
    # plot top = 14 + 18 * 1 legend row = 32, height 170, so y(v) = 202 - (v - 25) / 25 * 170
    ticks = [t.text for t in svg.iter("text") if t.get("text-anchor") == "end" and t.text[0].isdigit()]
    assert ticks == ["25", "30", "35", "40", "45", "50"]
    y = {v: 202 - (v - 25) / 25 * 170 for v in (45.0, 33.0)}                       # 66.0 and 147.6
    grid = {float(t.text): float(line.get("y1")) for t, line in zip(
        [t for t in svg.iter("text") if t.get("text-anchor") == "end" and t.text[0].isdigit()],
        [ln for ln in svg.findall("line") if ln.get("stroke") == charts.COLORS["grid"]])}
    assert grid[25.0] == pytest.approx(202.0) and grid[50.0] == pytest.approx(32.0)
    lines = {g.find("title").text: g.find("line") for g in svg.iter("g") if g.get("class") == "threshold"}
    assert set(lines) == {"a threshold 45.00\u00a0%", "c threshold 33.00\u00a0%"}
    colors = [p.get("stroke") for p in svg.findall("polyline")]                   # a, b, c in order
    for (name, v), color in zip((("a", 45.0), ("c", 33.0)), (colors[0], colors[2])):
        line = lines[f"{name} threshold {v:.2f}\u00a0%"]
        assert float(line.get("y1")) == float(line.get("y2")) == pytest.approx(y[v], abs=0.05)
        assert line.get("stroke") == color and line.get("stroke-dasharray")


def test_history_threshold_labels_stay_inside_the_plot_and_apart():
    """Thresholds close together near the bottom of the axis: their labels were stacked downwards past
    the x axis, over the run numbers. Each must sit inside the plot, clear of the others."""
    def run(n, mfu, limit):
        return {"run": n, "label": None, "status": "ok", "mfu_pct_wall": mfu, "step_time_median_s": 1.0,
                "mfu_pct_wall_min": limit}
    doc = {"jobs": [{"name": name, "runs": [run(1, mfu, limit)]}
                    for name, mfu, limit in (("a", 40.0, 1.0), ("b", 45.0, 2.0), ("c", 50.0, 3.0))]}
    svg = ET.fromstring(charts.history_charts(doc)["history-mfu.svg"])
    # by hand: values 1..50 padded by 15 % of the span (7.35) from 0 -> ticks 0, 20, 40, 60; one legend row:
    # plot from y = 14 + 18 = 32 to 32 + 170 = 202, so y(v) = 202 - v / 60 * 170: the lines at 199.2, 196.3, 193.5
    ticks = [t.text for t in svg.iter("text") if t.get("text-anchor") == "end" and t.text[0].isdigit()]
    assert ticks == ["0", "20", "40", "60"]
    groups = [g for g in svg.iter("g") if g.get("class") == "threshold"]
    assert [round(float(g.find("line").get("y1")), 1) for g in groups] == [199.2, 196.3, 193.5]
    labels = [g.find("text") for g in groups]
    boxes = [(float(t.get("x")) - 7.8 * len(t.text) if t.get("text-anchor") == "end" else float(t.get("x")),
              float(t.get("y")) - 0.95 * 13, float(t.get("y")) + 0.3 * 13) for t in labels]   # FONT 13, glyph 7.8 px
    for left, upper, lower in boxes:
        assert 70 <= left and 32 <= upper and lower <= 202          # inside the plot (left margin 70), above the x axis
    assert {t.get("text-anchor") for t in labels} == {"end"}          # all at the right end: rows were free there
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a[2] <= b[1] or b[2] <= a[1], f"threshold labels overlap: {a} {b}"
    for g, (_, upper, lower) in zip(groups, boxes):             # each label within three rows (15 px) of its line
        assert abs((upper + lower) / 2 - float(g.find("line").get("y1"))) <= 3 * 15


def test_history_without_thresholds_draws_no_threshold_line():
    def run(n, mfu):
        return {"run": n, "label": None, "status": "ok", "mfu_pct_wall": mfu, "step_time_median_s": 1.0,
                "mfu_pct_wall_min": None}
    made = charts.history_charts({"jobs": [{"name": "a", "runs": [run(1, 40.0), run(2, 38.0)]}]})
    assert all("threshold" not in svg for svg in made.values())


def test_rank_file_devices_are_named_within_the_axis_margin():
    """'GPU ../traces/r0.sqlite:0' was right-aligned into a 90 px margin and showed as 'aces/r0.sqlite:0'."""
    assert charts.gpu_name("3", 82) == "GPU 3"
    assert charts.gpu_name("../traces/r0.sqlite:0", 82) == "GPU r0:0"              # the file's stem, the device
    # 82 px hold 10 characters of 7.8 px: the end (which file, which device) is kept
    assert charts.gpu_name("/runs/rank_0000_of_node_a.sqlite:3", 82) == "…_node_a:3"
    # 'GPU rank0:0' is 11 characters: the word GPU goes before a cut would make it '…U rank0:0'
    assert charts.gpu_name("runs/rank0.sqlite:0", 82) == "rank0:0"
    assert charts.gpu_name("runs/rank0.sqlite:0", 92) == "GPU rank0:0"
    r = copy.deepcopy(DEMO)
    r["devices"][0]["label"] = "../traces/r0.sqlite:0"
    svg = charts.devices(r, render.device_label)
    assert ">GPU r0:0</text>" in svg and "<title>GPU ../traces/r0.sqlite:0</title>" in svg


def test_history_legend_names_fit_the_chart():
    """Three long job names: the third legend entry ran past the chart's right edge ('warnings-everywhere-'
    cut by it) and names were cut at 22 characters with no sign of the cut. By hand: three slots of
    (620 - 70 - 16) / 3 = 178 px, a name gets 178 - 21 - 8 = 149 px, int(149 / 7.8) = 19 characters."""
    names = ["multi-rank-llama-3-8b-bf16", "warnings-everywhere-job", "files-4ranks-llama"]
    doc = {"jobs": [{"name": name, "runs": [{"run": 1, "label": None, "status": "ok", "mfu_pct_wall": 30.0 + i,
                                             "step_time_median_s": 1.0, "mfu_pct_wall_min": 90.0 if i == 1 else None}]}
                    for i, name in enumerate(names)]}
    svg = ET.fromstring(charts.history_charts(doc)["history-mfu.svg"])
    legend = [g for g in svg.iter("g") if g.find("title") is not None and g.find("title").text in names]
    assert [g.find("title").text for g in legend] == names                     # the full name on hover
    assert [g.find("text").text for g in legend] == ["multi-rank-llama-3…", "warnings-everywher…",
                                                     "files-4ranks-llama"]
    for g in legend:
        text = g.find("text")
        assert float(text.get("x")) + 7.8 * len(text.text) <= 620 - 16          # inside the chart (glyph 7.8 px)
    [limit] = [g.find("text").text for g in svg.iter("g") if g.get("class") == "threshold"]
    assert limit == "warnings-everywhere-j… threshold 90.00\u00a0%"              # 22 characters, the cut shown


def _luminance(hex_color: str) -> float:
    """WCAG 2.1 relative luminance of #rrggbb."""
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(int(hex_color[i:i + 2], 16) / 255) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_sidecar_charts_are_painted_on_white_for_a_dark_markdown_view():
    """report.md and history.md show the sidecar .svg files as images; on GitHub's dark theme (#0d1117) their
    dark ink (#1b1f24, 1.1:1) sat on near-black, since nothing was painted behind it. Each sidecar's first
    drawing is now a white rectangle over the whole chart, so the ink reads as on the light page either way."""
    doc = {"jobs": [{"name": "a", "runs": [{"run": 1, "label": "v1", "status": "ok", "mfu_pct_wall": 40.0,
                                            "step_time_median_s": 1.0}]}]}
    sidecars = {n: s for n, s in render_all(DEMO).items() if n.endswith(".svg")}
    assert sorted(sidecars) == ["devices.svg", "roofline.svg", "steps.svg", "timeline.svg"]
    sidecars.update({n: drawing.standalone(s) for n, s in charts.history_charts(doc).items()})
    assert len(sidecars) == 6
    for name, text in sidecars.items():
        svg = ET.fromstring(text)
        drawn = [e for e in svg if e.tag.split("}")[-1] != "title"]
        first = drawn[0]
        assert first.tag.endswith("rect") and first.get("fill") == "#ffffff", name
        assert (first.get("width"), first.get("height"), first.get("x"), first.get("y")) == ("100%", "100%", None, None)
        ink = svg.get("fill")
        assert 1.05 / (_luminance(ink) + 0.05) >= 7, (name, ink)         # on white (luminance 1): AAA
        assert (_luminance(ink) + 0.05) / (_luminance("#0d1117") + 0.05) < 1.5    # unreadable without it


def test_history_line_breaks_at_a_run_not_comparable_with_the_one_before():
    """Run 3 doubled the global batch: its step time is not comparable with run 2's (history not_comparable),
    its MFU is. A line from run 2 to run 3 on the step chart read as a +100 % change the history refuses to
    measure; the step line now stops at run 2 and starts again at run 3, the MFU line runs through. Invalid run
    5 is not drawn and does not break a line."""
    def run(n, mfu, step, refused=(), status="ok"):
        nc = [{"figures": ["step time (median)"], "metrics": list(refused), "reasons": ["tokens per step"]}]
        return {"run": n, "label": None, "status": status, "mfu_pct_wall": mfu, "step_time_median_s": step,
                "not_comparable": nc if refused else []}
    doc = {"jobs": [{"name": "a", "runs": [run(1, 40.0, 1.0), run(2, 40.0, 1.0),
                                           run(3, 40.0, 2.0, ["step_time_median_s"]), run(4, 36.0, 2.2),
                                           run(5, 400.0, 0.2, status="invalid"), run(6, 36.0, 2.2)]}]}
    made = charts.history_charts(doc)

    def lines(name):
        return [len(p.get("points").split()) for p in ET.fromstring(made[name]).findall("polyline")]
    assert lines("history-step-1.svg") == [2, 3]          # runs 1-2, then 3, 4 and 6
    assert lines("history-mfu.svg") == [5]                # 1, 2, 3, 4, 6
    assert len(ET.fromstring(made["history-step-1.svg"]).findall("circle")) == 5
