"""The roofline chart: operators' arithmetic intensity against their TFLOP/s on log-log axes, under the
GPU's bandwidth and compute roofs (model/roofline.py's table), drawn with drawing.py's elements as
charts.py draws the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pipeline.report.drawing import (CHAR_W, CHART_W, COLORS, FONT, PHONE_W, chart_svg, esc, label_box, log_grid,
                                     overlaps, pixel_scale, place_label, svg_line, svg_text, wrap_text)
from pipeline.report.fmt import NBSP, fmt_num, fmt_pct


def roofline(r: dict[str, Any], phone: bool = False) -> str | None:
    """Log-log roofline: labelled roofs, numbered operators (legend below), measured ones filled. `phone`: PHONE_W
    wide (phone_charts.py), a lower plot, the legend from the drawing's left edge and wrapped."""
    hw = r["hardware"]
    peak, bw, ridge = hw["peak_tflops"], hw["hbm_gbps"], hw["ridge_flop_per_byte"]
    rows = [x for x in r["roofline"] if x["arithmetic_intensity"]]
    if not bw or not ridge or not rows:
        return None
    w, left, top, plot_h, right = PHONE_W if phone else CHART_W, 60, 18, 260 if phone else 300, 16
    ys = [x["achieved_tflops"] or x["attainable_tflops"] for x in rows]
    ais = [x["arithmetic_intensity"] for x in rows] + [ridge]
    x_lo, x_hi = min(ais) / 4, max(ais) * 4
    y_lo, y_hi = max(min(ys + [x_lo * bw / 1000]) / 4, 1e-6), peak * 4
    sx, sy = pixel_scale(x_lo, x_hi, left, w - right, log=True), pixel_scale(y_lo, y_hi, top + plot_h, top, log=True)
    body = log_grid(sx, sy, (x_lo, x_hi), (y_lo, y_hi), (left, top, w - right, top + plot_h))
    points = [(sx(x["arithmetic_intensity"]), sy(x["achieved_tflops"] or x["attainable_tflops"])) for x in rows]
    taken: list[tuple[float, ...]] = [(cx - 6, cy - 6, cx + 6, cy + 6) for cx, cy in points]
    body += _roofs(hw, sx, sy, max(x_lo, y_lo * 1000 / bw), x_hi, w - right, taken)
    bounds = (left + 2, top, w - right, top + plot_h - 2)
    for i, (x, (cx, cy)) in enumerate(zip(rows, points), 1):
        body.append(f"<g><title>{esc(_roof_tip(i, x))}</title>{_marker(cx, cy, x['achieved_tflops'] is not None)}</g>")
        lx, ly, anchor, dist = place_label(cx, cy, str(i), taken, bounds)
        if dist > 9:
            body.append(svg_line(cx, cy, lx, ly - FONT * 0.35, COLORS["axis"], ' stroke-width="0.7"'))
        body.append(svg_text(lx, ly, str(i), anchor, "lbl"))
    body.append(svg_text((left + w - right) / 2, top + plot_h + 34, "arithmetic intensity (FLOP/byte, log)", "middle"))
    cy = top + plot_h / 2
    body.append(svg_text(16, cy, "TFLOP/s per GPU (log)", "middle", "", f' transform="rotate(-90 16 {cy:.1f})"'))
    key, bottom = _key(rows, top + plot_h + 58, 16 if phone else left, w - right if phone else math.inf)
    return chart_svg("roofline-phone" if phone else "roofline", w, bottom + 8, "roofline, log-log", body + key)


def _key(rows: list[dict[str, Any]], y: float, x0: float, right: float) -> tuple[list[str], float]:
    """The two markers' meaning and the numbered operators, one a line from baseline `y` at `x0`; with a finite
    `right` (a phone drawing) the markers on two lines and each text wrapped at spaces before `right`, its
    further lines indented. Returns the elements and the last baseline."""
    ax, ay = (x0 + 236, y) if right == math.inf else (x0 + 6, y + 18)
    analytic = wrap_text("analytic only: drawn on its roof, no measured time", right - ax - 10)
    body = [_marker(x0 + 6, y - 4, True) + svg_text(x0 + 16, y, "measured: achieved TFLOP/s"),
            _marker(ax, ay - 4, False) + "".join(svg_text(ax + 10, ay + 18 * k, t) for k, t in enumerate(analytic))]
    y = ay + 18 * (len(analytic) - 1)
    indent = 3 * CHAR_W
    for i, x in enumerate(rows, 1):
        for k, line in enumerate(wrap_text(f"{i}  {_roof_tip(i, x, short=True)}", right - x0 - indent)):
            y += 18
            body.append(svg_text(x0 + (indent if k else 0), y, line))
    return body, y


def _roofs(hw: dict[str, Any], sx: Callable[[float], float], sy: Callable[[float], float], x_start: float,
           x_hi: float, x_right: float, taken: list[tuple[float, ...]]) -> list[str]:
    """The bandwidth and compute roofs from x_start to x_hi, the ridge point, and their labels: the peak's
    label where it covers no operator (`taken`, which gets its box)."""
    peak, bw, ridge = hw["peak_tflops"], hw["hbm_gbps"], hw["ridge_flop_per_byte"]
    pts = [(x_start, x_start * bw / 1000), (ridge, peak), (x_hi, peak)]
    body = ['<polyline fill="none" stroke="#222" stroke-width="2" points="'
            + " ".join(f"{sx(a):.1f},{sy(t):.1f}" for a, t in pts) + '"/>']
    peak_label = f"peak {fmt_num(peak)}{NBSP}TFLOP/s ({hw['precision']})"
    spots = [(px, py, anchor) for px, py, anchor in (
        (x_right - 4, sy(peak) - 6, "end"), (sx(ridge) - 8, sy(peak) - 6, "end"),   # left of the ridge: above
        (sx(ridge) + 6, sy(peak) - 6, "start"), (x_right - 4, sy(peak) + 16, "end"),   # the slope, nothing drawn
        (sx(ridge) + 6, sy(peak) + 16, "start"))
        if label_box(px, py, peak_label, anchor)[2] <= x_right]            # never cut off at the right edge
    px, py, anchor = next((s for s in spots if not any(overlaps(label_box(s[0], s[1], peak_label, s[2]), t)
                                                       for t in taken)), spots[0])
    body.append(svg_text(px, py, peak_label, anchor, "lbl roof-label"))
    taken.append(label_box(px, py, peak_label, anchor))
    mid = math.sqrt(x_start * ridge)
    angle = math.degrees(math.atan2(sy(mid * 10) - sy(mid), sx(mid * 10) - sx(mid)))
    bw_label = f"HBM {fmt_num(bw, 0)}{NBSP}GB/s"
    mx, my = sx(mid), sy(mid * bw / 1000) - 6
    body.append(svg_text(mx, my, bw_label, "middle", "roof-label",
                         f' transform="rotate({angle:.1f} {mx:.1f} {my:.1f})"'))
    body.append(f'<circle cx="{sx(ridge):.1f}" cy="{sy(peak):.1f}" r="3.5" fill="#222"><title>ridge '
                f'{esc(fmt_num(ridge))} FLOP/byte</title></circle>')
    return body



def _marker(cx: float, cy: float, measured: bool) -> str:
    if measured:
        return f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{COLORS["compute"]}"/>'
    return (f'<rect x="{cx - 4.5:.1f}" y="{cy - 4.5:.1f}" width="9" height="9" fill="#fff" stroke="#888" '
            f'stroke-width="1.5" stroke-dasharray="2 1.5"/>')


def _roof_tip(i: int, x: dict[str, Any], short: bool = False) -> str:
    name = x["operator"] if len(x["operator"]) <= 34 or not short else x["operator"][:33] + "…"
    if x["achieved_tflops"] is not None:
        what = f"{fmt_num(x['achieved_tflops'])} TFLOP/s measured, {fmt_pct(x['pct_of_roof'], 1)} of roof"
    else:
        what = f"analytic only, roof {fmt_num(x['attainable_tflops'])} TFLOP/s"
    if short:
        return f"{name}: {what}"
    return f"{i} {name}: AI {fmt_num(x['arithmetic_intensity'])} FLOP/byte, {what} ({x['bound']})"
