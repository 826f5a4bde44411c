"""Phone-width drawings of the report's and history page's charts: the HTML page shows them instead of the
desktop ones on a narrow screen (_style.html.j2's media queries), so their labels keep their size.

On a 390-px phone the 1016-px desktop timeline was scaled to 0.38, its 13-px labels to 5 px; the 620-px
charts' to 8.2 px (their 11-px run labels to 6.9 px). These are WIDTH px wide at the same font sizes, so
they are drawn at full size on a screen of WIDTH px or more (the page's charts span the whole screen on a
phone) and at 320 / WIDTH of it on the narrowest phones. The timeline's lanes are named above their bars
instead of in a left margin and its legend wraps (drawn here), as are the compare page's waterfall bars (their
labels at 8.2 px on a 390-px phone); the devices, steps, roofline and history charts are their own modules' at
this width. Only the pages carry these: a Markdown view shows the sidecar files, the
desktop drawings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipeline.report import charts
from pipeline.report.charts import TIMELINE_LANES, gpu_name, timeline_lanes, timeline_range, timeline_step
from pipeline.report.drawing import (CHAR_W, COLORS, PHONE_W, DeviceLabel, chart_svg, esc, fit_text, legend_rows,
                                     nice_ticks, pixel_scale, svg_line, svg_rect, svg_text, tick_labels)
from pipeline.report.fmt import column, fmt_seconds
from pipeline.report.roofline_chart import roofline

WIDTH = PHONE_W
PAD = 16               # margin left and right, the page's own padding: bars line up with the text above
NAME_H = 16            # a lane group's name above its bars: baseline at 12, bars from 16
GAP = 8                # below each group


def timeline(r: dict[str, Any], label: DeviceLabel) -> str | None:
    """charts.timeline at phone width: the NVTX range and per device its four lanes, each named above
    its bars, across WIDTH - 2 * PAD px for the step's wall."""
    t = r.get("timeline")
    if not t or not t["devices"]:
        return None
    sx = pixel_scale(0.0, t["wall_s"], PAD, WIDTH - PAD)
    body, last = legend_rows(PAD, 16, tuple((k, k) for k, _ in TIMELINE_LANES), WIDTH - PAD)
    top = last + 12
    lanes_h = sum(h + 1 for _, h in TIMELINE_LANES)
    bottom = top + NAME_H + 12 + GAP + len(t["devices"]) * (NAME_H + lanes_h + GAP)
    ticks = [v for v in nice_ticks(0.0, t["wall_s"], 5) if v <= t["wall_s"] * 1.0001]
    body += [svg_line(sx(v), top, sx(v), bottom, COLORS["grid"]) for v in ticks]
    body.append(svg_text(PAD, top + 12, charts.range_label(r)))
    body.append(timeline_range(r, sx, top + NAME_H))
    body.append(svg_line(sx(t["wall_s"]), top, sx(t["wall_s"]), bottom, COLORS["ink"], ' stroke-dasharray="3 2"'))
    y = top + NAME_H + 12 + GAP
    for d in t["devices"]:
        full = label(r, d["device_id"])
        body.append(f'<g><title>GPU {esc(full)}</title>{svg_text(PAD, y + 12, gpu_name(full, WIDTH - 2 * PAD))}</g>')
        body += timeline_lanes(f"GPU {full}", d, t["wall_s"], sx, y + NAME_H)
        y += NAME_H + lanes_h + GAP
    body += _time_axis(t, ticks, sx, bottom)
    title = f"timeline of occurrence {t['occurrence']}, {timeline_step(r)} by wall time"
    return chart_svg("timeline-phone", WIDTH, bottom + 42, title, body)


def _time_axis(t: dict[str, Any], ticks: list[float], sx: Callable[[float], float], bottom: float) -> list[str]:
    """Tick labels under the lanes, each moved in where it would pass the drawing's edge, and the axis
    name, cut to the width ('…', whole in its tooltip) for a long occurrence number."""
    col = column([t["wall_s"]], "s")
    body = _ticks(ticks, col.scale, sx, bottom)
    name = col.head(f"time from the start of occurrence {t['occurrence']}")
    shown = svg_text(WIDTH / 2, bottom + 34, fit_text(name, WIDTH - 8), "middle")
    body.append(f"<g><title>{esc(name)}</title>{shown}</g>")
    return body


def waterfall(c: dict[str, Any]) -> str:
    """charts.waterfall at phone width: the desktop drawing's 210-px margin of names left 134 px for the bars, so
    each bar is named above it, its change after the name, and spans WIDTH - 2 * PAD px."""
    rows = charts.waterfall_rows(c)
    ticks = charts.waterfall_ticks(rows)
    sx = pixel_scale(0.0, ticks[-1], PAD, WIDTH - PAD)
    col, top, bar_h = column(ticks, "s"), 8, 12
    row_h = NAME_H + bar_h + GAP
    bottom = top + row_h * len(rows)
    body = [svg_line(sx(v), top, sx(v), bottom, COLORS["grid"]) for v in ticks]
    for i, (label, a, b, color, said) in enumerate(rows):
        y = top + i * row_h
        lo, hi = sorted((a / 1e9, b / 1e9))
        name = f"{label} {said}" if said else label
        body.append(f"<g><title>{esc(name)}</title>{svg_text(PAD, y + 12, fit_text(name, WIDTH - 2 * PAD))}</g>")
        body.append(f'<g>{svg_rect(sx(lo), y + NAME_H, sx(hi) - sx(lo), bar_h, color)}'
                    f'<title>{esc(label)}: {esc(said or fmt_seconds(b / 1e9))}</title></g>')
    body += _ticks(ticks, col.scale, sx, bottom)
    body.append(svg_text(WIDTH / 2, bottom + 34, col.head("step time"), "middle"))
    return chart_svg("waterfall-phone", WIDTH, bottom + 42, "what changed in the median step time", body)


def _ticks(ticks: list[float], scale: float, sx: Callable[[float], float], bottom: float) -> list[str]:
    """Tick labels under a drawing, each moved in where it would pass the drawing's edge."""
    body = []
    for v, text in zip(ticks, tick_labels(ticks, scale)):
        half = (CHAR_W * len(text) + 2) / 2
        body.append(svg_text(min(max(sx(v), half), WIDTH - half), bottom + 16, text, "middle"))
    return body


def compare_charts(doc: dict[str, Any]) -> dict[str, str]:
    """The compare page's waterfalls at phone width, by the sidecar names of the desktop ones."""
    return {c["waterfall_svg"]: waterfall(c) for c in doc.get("changes", []) if c.get("waterfall_svg")}


def history_charts(doc: dict[str, Any]) -> dict[str, str]:
    """The history page's charts at phone width, by their sidecar names."""
    return charts.history_charts(doc, phone=True)


def report_charts(r: dict[str, Any], label: DeviceLabel) -> dict[str, str]:
    """The phone drawings by the sidecar file name of the desktop chart they stand in for."""
    made = {"timeline.svg": timeline(r, label), "devices.svg": charts.devices(r, label, phone=True),
            "steps.svg": charts.steps(r, phone=True), "roofline.svg": roofline(r, phone=True)}
    return {name: svg for name, svg in made.items() if svg}
