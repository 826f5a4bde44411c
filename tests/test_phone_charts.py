"""The timeline's phone-width drawing (pipeline/report/phone_charts.py): labels a phone can read, the
same marks as the desktop drawing, and a page that shows one of the two (tests/test_browser.py looks
at it in Chromium)."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipeline.report import charts, drawing, phone_charts, roofline_chart
from pipeline.report.render import device_label, render_all

REPO = Path(__file__).resolve().parents[1]
DEMO = json.loads((REPO / "reports/demo/result.json").read_text())
GLYPH = 0.6 * 13                   # average glyph width of a 13-px sans-serif face, as label boxes are measured


def _phone(r: dict = DEMO) -> ET.Element:
    return ET.fromstring(phone_charts.timeline(r, device_label))


def _lane_times(svg: ET.Element, left: float, plot: float, wall: float) -> dict[str, list[tuple[float, float]]]:
    """Each lane group's bars, by its tooltip's 'GPU n lane', as (start, end) seconds: x = left + s / wall * plot."""
    lanes = {}
    for g in svg.iter("g"):
        title = g.find("title")
        if title is not None and re.match(r"GPU .* (compute|communication|memory|idle): ", title.text):
            xs = [(float(r.get("x")), float(r.get("x")) + float(r.get("width"))) for r in g.findall("rect")]
            lanes[title.text.split(":")[0]] = [((a - left) / plot * wall, (b - left) / plot * wall) for a, b in xs]
    return lanes


@pytest.mark.parametrize("screen, container", [
    (390, 390),       # body padding 16 px a side, taken back by div.chart's -1rem margins below 600 px
    (320, 320),       # the narrowest phone: the drawing shrinks to the screen (max-width: 100%)
])
def test_phone_timeline_labels_are_11_px_or_more(screen, container):
    """At 390 px the 1016-px desktop drawing is scaled to 390 / 1016 = 0.38, its 13-px labels to 5 px. The phone
    drawing is 360 px at 13 px: shown at its own 360 px on a 390-px screen (scale 1, 13 px), at 320 / 360 on
    a 320-px one (11.6 px)."""
    svg = _phone()
    view_w = float(svg.get("viewBox").split()[2])
    assert view_w == float(svg.get("width")) == 360
    css_w = min(360, container)
    scale = css_w / view_w
    assert scale == {390: 1.0, 320: 320 / 360}[screen]
    sizes = {float(t.get("font-size") or svg.get("font-size")) for t in svg.iter("text")}
    assert sizes == {13.0}
    assert min(sizes) * scale >= 11


def test_phone_timeline_draws_the_same_intervals_as_the_desktop_one():
    """Per device and lane the same bars, to the same scale of the step: the desktop drawing maps the wall onto
    900 px from x = 100, the phone one onto 360 - 2 * 16 = 328 px from x = 16. Both read back to the data's
    spans within their rounding (x to 0.1 px; a bar is at least 0.5 px wide)."""
    t = DEMO["timeline"]
    wall = t["wall_s"]
    desk = _lane_times(ET.fromstring(charts.timeline(DEMO, device_label)), 100, 900, wall)
    phone = _lane_times(_phone(), 16, 328, wall)
    expected = {f"GPU {d['device_id']} {lane}": d[lane] for d in t["devices"]
                for lane in ("compute", "communication", "memory", "idle")}
    assert len(expected) == 8 * 4 and sum(len(v) for v in expected.values()) > 100
    assert list(desk) == list(phone) == list(expected)                  # the same lanes in the same order
    for drawing, plot in ((desk, 900), (phone, 328)):
        px = wall / plot                                                 # seconds per px of that drawing
        for lane, spans in expected.items():
            assert len(drawing[lane]) == len(spans), lane
            for (s, e), (ds, de) in zip(spans, drawing[lane]):
                assert ds == pytest.approx(s, abs=0.051 * px)
                assert de == pytest.approx(max(e, s + 0.5 * px), abs=0.11 * px)


def test_phone_timeline_names_lanes_above_their_bars_within_the_width():
    """Every label inside the 360 px (a label past the edge is cut there), each device's name left-aligned
    with its bars at x = 16 and above the first of them, the legend wrapped onto a second line: its four
    entries take 15 + 7.8 * len + 18 px each, 87.6 + 134.4 + 79.8 + 46.2 = 348 px, more than 328."""
    svg = _phone()
    for t in svg.iter("text"):
        w = GLYPH * len(t.text) + 2
        x = float(t.get("x")) - {"start": 0, "middle": w / 2, "end": w}[t.get("text-anchor")]
        assert 0 <= x and x + w <= 360, t.text
    texts = [t for t in svg.iter("text")]
    legend = {t.text: float(t.get("y")) for t in texts if t.text in ("compute", "communication", "memory", "idle")}
    assert legend == {"compute": 16, "communication": 16, "memory": 16, "idle": 34}
    groups = list(svg.iter("g"))
    for d in range(8):
        name = next(t for t in texts if t.text == f"GPU {d}")
        bars = next(g for g in groups if g.find("title").text.startswith(f"GPU {d} compute"))
        assert float(name.get("x")) == 16 and name.get("text-anchor") == "start"
        top = min(float(r.get("y")) for r in bars.findall("rect"))
        assert float(name.get("y")) + 13 * 0.3 <= top                     # its descenders above the bars


def _texts_inside(svg: ET.Element, width: float) -> list[str]:
    """The labels whose box passes the drawing's left or right edge (the rotated axis name is upright: skipped)."""
    out = []
    for t in svg.iter("text"):
        w = GLYPH * len(t.text) + 2
        x = float(t.get("x")) - {"start": 0, "middle": w / 2, "end": w}[t.get("text-anchor")]
        if t.get("transform") is None and not (0 <= x and x + w <= width):
            out.append(t.text)
    return out


def test_phone_device_bars_are_the_shares_of_wall_on_a_narrower_axis():
    """The devices chart at 360 px: bars from x = 90 to 360 - 16, so 254 px for the wall (desktop: 620 - 106 = 514),
    each part's width its share of the wall; every label inside, the legend wrapped (87.6 + 196.8 + 46.2 px of
    entries from x = 90 pass 344: 'exposed communication' starts the second line, 'idle' fits after it)."""
    desk = ET.fromstring(charts.devices(DEMO, device_label))
    phone = ET.fromstring(charts.devices(DEMO, device_label, phone=True))
    assert phone.get("viewBox").split()[2] == "360" and phone.get("class") == "chart chart-devices-phone"
    bars = [g for g in phone.iter("g") if g.find("rect") is not None]
    assert [g.find("title").text for g in bars] == [g.find("title").text for g in desk.iter("g")
                                                     if g.find("rect") is not None]
    expected = [(d[k] / d["wall_s"]) for d in DEMO["communication"]["devices"] for k in ("compute_s", "exposed_s",
                                                                                        "idle_s")]
    assert len(bars) == 8 * 3
    for g, share in zip(bars, expected):
        assert float(g.find("rect").get("width")) == pytest.approx(max(254 * share, 0.5), abs=0.051)
    assert _texts_inside(phone, 360) == []
    legend = {t.text: float(t.get("y")) for t in phone.iter("text") if t.text in ("compute", "idle",
                                                                                    "exposed communication")}
    assert legend["exposed communication"] == legend["idle"] == legend["compute"] + 18


def test_phone_step_chart_draws_the_same_points_on_a_narrower_axis():
    """The step chart at 360 px: the same points at the same heights, occurrence i of n at x = 70 + 274 / n *
    (i + 0.5) (360 - 70 - 16 = 274 px), and at most 6 occurrence numbers under the axis: 40 occurrences get every
    7th (ceil(40 / 6)), 6 numbers 48 px apart."""
    desk, phone = ET.fromstring(charts.steps(DEMO)), ET.fromstring(charts.steps(DEMO, phone=True))
    assert phone.get("viewBox").split()[2] == "360" and phone.get("class") == "chart chart-steps-phone"
    dots, desk_dots = list(phone.iter("circle")), list(desk.iter("circle"))
    assert [c.find("title").text for c in dots] == [c.find("title").text for c in desk_dots]
    assert [c.get("cy") for c in dots] == [c.get("cy") for c in desk_dots]
    n = len(DEMO["occurrences"])
    assert [float(c.get("cx")) for c in dots] == pytest.approx([70 + 274 / n * (i + 0.5) for i in range(n)], abs=0.051)
    assert _texts_inside(phone, 360) == []
    r = copy.deepcopy(DEMO)
    r["occurrences"] = [{**r["occurrences"][0], "index": i} for i in range(1, 41)]
    numbers = [t.text for t in ET.fromstring(charts.steps(r, phone=True)).iter("text")
               if t.get("text-anchor") == "middle" and t.text.isdigit()]
    assert numbers == ["1", "8", "15", "22", "29", "36"]


def test_phone_history_chart_draws_the_same_runs_on_a_narrower_axis():
    """The MFU trend at 360 px: the same points, run i of n at x = 70 + 274 / n * (i + 0.5), two legend entries a
    row in slots of 274 / 2 = 137 px (a name gets 137 - 21 - 8 = 108 px: 13 characters of 7.8 px), a threshold
    labelled with 10 characters of its job's name, at most 4 run numbers under the axis (10 runs: every
    ceil(10 / 4) = 3rd), and every label inside."""
    names = ["multi-rank-llama-3-8b-bf16", "warnings-everywhere-job", "files-4ranks-llama"]
    doc = {"jobs": [{"name": name, "runs": [{"run": n, "label": f"v{n}", "status": "ok", "mfu_pct_wall": 30.0 + i + n,
                                             "step_time_median_s": 1.0, "mfu_pct_wall_min": 35.0 if i == 1 else None}
                                            for n in range(1, 11)]}
                    for i, name in enumerate(names)]}
    desk = ET.fromstring(charts.history_charts(doc)["history-mfu.svg"])
    phone = ET.fromstring(phone_charts.history_charts(doc)["history-mfu.svg"])
    assert phone.get("viewBox").split()[2] == "360" and phone.get("class") == "chart chart-history-phone"
    dots = list(phone.iter("circle"))
    assert [c.find("title").text for c in dots] == [c.find("title").text for c in desk.iter("circle")]
    assert [float(c.get("cx")) for c in dots] == pytest.approx([70 + 274 / 10 * (i + 0.5) for i in range(10)] * 3,
                                                               abs=0.051)
    legend = [g for g in phone.iter("g") if g.find("title") is not None and g.find("title").text in names]
    assert [g.find("text").text for g in legend] == ["multi-rank-l…", "warnings-eve…", "files-4ranks…"]
    assert [float(g.find("text").get("y")) for g in legend] == [14, 14, 32]
    [limit] = [g.find("text").text for g in phone.iter("g") if g.get("class") == "threshold"]
    assert limit == "warnings-… threshold 35.00\u00a0%"
    numbers = [t.text for t in phone.iter("text") if t.get("text-anchor") == "middle" and t.text.isdigit()]
    assert numbers == ["1", "4", "7", "10"]
    assert _texts_inside(phone, 360) == []


def test_phone_waterfall_draws_the_same_bars_on_a_narrower_axis_each_named_above_it():
    """What changed's waterfall at 360 px: baseline 50 ms, GEMM +3 ms beyond noise, attention unchanged (no bar),
    communication -1 ms within noise, new 52 ms. Ticks 0 to 60 ms across x = 16 to 344 (328 px): by hand, the
    baseline bar 50 / 60 * 328 = 273.3 px long, each bar from x = 16 + from / 60 * 328, its name and change on
    the line above it (the desktop drawing's 210-px margin of names would leave 134 px for the bars)."""
    c = {"baseline_step_ns": 50e6, "value_step_ns": 52e6,
         "rows": [{"label": "GEMM / convolution only", "change_ns": 3e6, "noise": "beyond"},
                  {"label": "attention only", "change_ns": 0, "noise": "within"},
                  {"label": "communication, exposed", "change_ns": -1e6, "noise": "within"}]}
    desk, phone = ET.fromstring(charts.waterfall(c)), ET.fromstring(phone_charts.waterfall(c))
    assert phone.get("viewBox").split()[2] == "360" and phone.get("class") == "chart chart-waterfall-phone"
    bars = [g for g in phone.iter("g") if g.find("rect") is not None]
    assert [g.find("title").text for g in bars] == [g.find("title").text for g in desk.iter("g")
                                                    if g.find("rect") is not None]
    spans = [(0.0, 50.0), (50.0, 53.0), (52.0, 53.0), (0.0, 52.0)]             # ms, in the rows' order
    drawn = [float(g.find("rect").get(k)) for g in bars for k in ("x", "width")]
    assert drawn == pytest.approx([v for a, b in spans for v in (16 + a / 60 * 328, (b - a) / 60 * 328)], abs=0.051)
    assert [g.find("rect").get("fill") for g in bars] == ["#3b6ea8", "#d0743c", "#c8c8c8", "#3b6ea8"]
    names = [g.find("text") for g in phone.iter("g") if g.find("text") is not None]
    assert [t.text for t in names] == ["baseline step (median)", "GEMM / convolution only +3.000\u00a0ms",
                                       "communication, exposed −1.000\u00a0ms", "new step (median)"]
    assert all(float(t.get("y")) < float(g.find("rect").get("y")) for t, g in zip(names, bars))
    assert _texts_inside(phone, 360) == []


def test_phone_roofline_draws_the_same_operators_and_wraps_its_key():
    """The roofline at 360 px: the same markers with the same tooltips, and the key's lines (measured, analytic,
    one per operator at 620 px) wrapped at spaces within the width: joined again they are the desktop's lines."""
    desk = ET.fromstring(roofline_chart.roofline(DEMO))
    phone = ET.fromstring(roofline_chart.roofline(DEMO, phone=True))
    assert phone.get("viewBox").split()[2] == "360" and phone.get("class") == "chart chart-roofline-phone"
    tips = [g.find("title").text for g in phone.iter("g") if g.find("title") is not None]
    assert tips == [g.find("title").text for g in desk.iter("g") if g.find("title") is not None]
    assert len(tips) == len([x for x in DEMO["roofline"] if x["arithmetic_intensity"]]) == 16   # 4 counted operators
    desk_key = [t.text for t in desk.iter("text") if float(t.get("y")) >= 18 + 300 + 58]
    phone_key = [t.text for t in phone.iter("text") if float(t.get("y")) >= 18 + 260 + 58]
    assert len(desk_key) == 18 and " ".join(phone_key) == " ".join(desk_key)       # the same words in order
    starts = [t for t in phone_key if re.match(r"\d+  ", t)]                    # each operator starts a line
    assert [t.split()[0] for t in starts] == [str(i) for i in range(1, 17)]
    wrapped = [t for t in phone.iter("text") if float(t.get("y")) >= 18 + 260 + 58]
    assert len(wrapped) > 18                                             # some did wrap
    for t in wrapped:
        assert float(t.get("x")) + GLYPH * len(t.text) <= 360 - 16, t.text


def test_wrap_text_breaks_at_spaces_within_the_room():
    assert drawing.wrap_text("aa bb cc", 5 * 7.8) == ["aa bb", "cc"]                 # 'aa bb' is 5 glyphs of 7.8 px
    assert drawing.wrap_text("aa bb cc", 4.9 * 7.8) == ["aa", "bb", "cc"]
    assert drawing.wrap_text("1  QKV projection", float("inf")) == ["1  QKV projection"]   # two spaces kept
    assert drawing.wrap_text("averyveryverylongword x", 3 * 7.8) == ["averyveryverylongword", "x"]


def test_log_axis_leaves_out_a_decade_label_that_would_touch_the_one_before():
    """Decades 0.1 to 10,000 on 100 px, 20 px apart: labels 7.8 px a glyph + 2 wide, centred. Kept: 0.1 (-12.7 to
    12.7); 1 (15.1) is within 4 px of it, out; 10 (31.2 to 48.8) in; 100 (47.3) out; 1,000 (59.5 to 100.5) in;
    10,000 (75.6) out. On the desktop charts (544 px for the demo's decades) every label stays."""
    sx = drawing.pixel_scale(0.1, 10000, 0, 100, log=True)
    body = drawing.log_grid(sx, lambda v: 0.0, (0.1, 10000), (1, 1), (0, 0, 100, 100))
    labels = [ET.fromstring(e).text for e in body if e.startswith("<text") and 'text-anchor="middle"' in e]
    assert labels == ["0.1", "10", "1,000"]
    desk = ET.fromstring(roofline_chart.roofline(DEMO))
    assert [t.text for t in desk.iter("text") if t.get("text-anchor") == "middle" and t.get("y") == "334.0"] == [
        "0.1", "1", "10", "100", "1,000", "10,000"]


def test_phone_timeline_cuts_a_long_axis_name_and_keeps_it_whole_on_hover():
    r = copy.deepcopy(DEMO)
    r["timeline"]["occurrence"] = 12345678901234
    svg = _phone(r)
    name = "time from the start of occurrence 12345678901234 (s)"
    g = next(g for g in svg.iter("g") if g.find("title").text == name)
    shown = g.find("text").text
    assert shown.endswith("…") and len(shown) == int((360 - 8) / GLYPH)        # 45 characters of 7.8 px


def test_phone_drawing_is_in_the_page_only():
    """No sidecar file and no Markdown line for it: report.md shows timeline.svg, the desktop drawing."""
    files = render_all(DEMO)
    assert sorted(n for n in files if n.endswith(".svg")) == ["devices.svg", "roofline.svg", "steps.svg",
                                                               "timeline.svg"]
    for chart in ("timeline", "devices", "steps", "roofline"):
        assert f"{chart}-phone" not in files["report.md"] and f"{chart}-phone" not in files[f"{chart}.svg"]
        assert files["report.html"].count(f'class="chart chart-{chart}-phone"') == 1
        assert files["report.html"].count(f'class="chart chart-{chart}"') == 1


def _rules(css: str) -> list[tuple[str, str, str]]:
    """(media condition or '', selector, declarations) of a flat stylesheet with one level of @media."""
    out, media = [], ""
    for m in re.finditer(r"@media ([^{]+)\{|([^{}@]+)\{([^{}]*)\}|\}", css):
        if m.group(1):
            media = m.group(1).strip()
        elif m.group(2):
            out.append((media, m.group(2).strip(), m.group(3).strip()))
        else:
            media = ""
    return out


def _display(rules: list[tuple[str, str, str]], svg_class: str, medium: str, width: int) -> str:
    """The display of `svg.chart.<svg_class>` by the rules naming it (all of one specificity: the last that
    applies wins), block as svg.chart's otherwise. Media conditions here: '' or 'screen and (max-width: N px)'."""
    shown = "block"
    for media, selectors, decl in rules:
        found = re.fullmatch(r"screen and \(max-width: (\d+)px\)", media)
        applies = media == "" or (found is not None and medium == "screen" and width <= int(found.group(1)))
        if applies and f"svg.chart.{svg_class}" in [x.strip() for x in selectors.split(",")]:
            shown = re.fullmatch(r"display: (\w+);", decl).group(1)
    return shown


@pytest.mark.parametrize("chart, phone_below", [("chart-timeline", 741), ("chart-devices", 601), ("chart-steps", 601),
                                                ("chart-roofline", 601), ("chart-history", 601),
                                                ("chart-waterfall", 601)])
def test_style_shows_one_drawing_of_a_chart_on_a_screen_and_the_desktop_one_in_print(chart, phone_below):
    """The phone drawing shows on a screen narrower than `phone_below`, the desktop one from there on: exactly one
    of them at any width (Chromium checks it in test_browser). Print matches no `screen` query: only the desktop
    drawing is printed, also on paper narrower than the break. The breaks, by hand: the 1016-px timeline's
    13-px labels are 13 * (741 - 32) / 1016 = 9.07 px at 741 px; a 620-px chart's 13 * (601 - 32) / 620 = 11.9 px."""
    html = render_all(DEMO)["report.html"]               # the history page includes the same style
    rules = _rules(html.split("<style>")[1].split("</style>")[0])
    for width in (320, 390, 600, 601, 740, 741, 768, 1280):
        on_screen = (_display(rules, chart, "screen", width), _display(rules, f"{chart}-phone", "screen", width))
        assert on_screen == (("none", "block") if width < phone_below else ("block", "none")), (width, on_screen)
    for width in (390, 700, 1000):
        assert (_display(rules, chart, "print", width), _display(rules, f"{chart}-phone", "print", width)) == (
            "block", "none")
