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

from pipeline.report import charts, phone_charts
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
            lanes[title.text.split(":")[0]] = [
                ((float(r.get("x")) - left) / plot * wall, (float(r.get("x")) + float(r.get("width")) - left) / plot * wall)
                for r in g.findall("rect")]
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
    assert 13 * 390 / 1016 < 5.0                                          # the desktop drawing there


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
    assert "timeline-phone" not in files["report.md"] and "timeline-phone" not in files["timeline.svg"]
    assert files["report.html"].count('class="chart chart-timeline-phone"') == 1
    assert files["report.html"].count('class="chart chart-timeline"') == 1


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


def test_style_shows_one_timeline_drawing_on_a_screen_and_the_desktop_one_in_print():
    """The phone drawing is hidden unless a screen is 740 px or narrower, where the desktop one is hidden: exactly
    one of them at any width (Chromium checks 320 to 1280 px in test_browser). Print matches no `screen` query:
    only the desktop drawing is printed, also on paper narrower than 740 px."""
    html = render_all(DEMO)["report.html"]
    css = re.sub(r"\{#.*?#\}", "", html.split("<style>")[1].split("</style>")[0], flags=re.S)
    timeline = [(media, sel, decl) for media, sel, decl in _rules(css) if "chart-timeline" in sel]
    assert timeline == [("", "svg.chart.chart-timeline-phone", "display: none;"),
                        ("screen and (max-width: 740px)", "svg.chart.chart-timeline", "display: none;"),
                        ("screen and (max-width: 740px)", "svg.chart.chart-timeline-phone", "display: block;")]
