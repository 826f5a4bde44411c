"""The SVG every chart is drawn with: elements, scales, log axes, ticks, legends and label placement.

Knows no report field: charts.py turns result data into charts with these, so the geometry (where a
label fits, which ticks are round) is written once and tested apart from any one chart. Its public
names are what charts.py and phone_charts.py draw with: elements (`svg_text`, `svg_line`, `svg_rect`,
`chart_svg`), scales and axes, legends, and label placement (`label_box`, `overlaps`, `place_label`, `fit_text`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape
from typing import Any

# How a chart names a device: render.device_label (a rank file's devices by file and id).
DeviceLabel = Callable[[dict[str, Any], int], str]

COLORS = {"compute": "#3b6ea8", "communication": "#d0743c", "exposed": "#d0743c", "memory": "#5b9a4a",
          "idle": "#c8c8c8", "nvtx": "#7a5ca8", "axis": "#57606a", "grid": "#e4e4e4", "ink": "#1b1f24"}
PAPER = "#ffffff"                   # what a sidecar .svg is painted on, whatever the page around it
FONT = 13
CHAR_W = 0.6 * FONT                 # average glyph width of a sans-serif face, for label boxes
CHART_W = 620                       # a chart's width on a desktop page
PHONE_W = 360                       # a phone drawing's (phone_charts.py): at full size on a 360-px phone and wider


def esc(text: Any) -> str:
    return escape(str(text), quote=True)


def chart_svg(kind: str, w: float, h: float, label: str, body: list[str]) -> str:
    return (f'<svg class="chart chart-{kind}" viewBox="0 0 {w:.0f} {h:.0f}" width="{w:.0f}" height="{h:.0f}" '
            f'role="img" aria-label="{esc(label)}" font-family="Helvetica, Arial, sans-serif" font-size="{FONT}" '
            f'fill="{COLORS["ink"]}">\n<title>{esc(label)}</title>\n' + "\n".join(body) + "\n</svg>")


def standalone(svg: str) -> str:
    """The chart as a file of its own (a sidecar .svg, shown by report.md as an image): the same drawing
    with its XML namespace, painted on white. Its ink is dark and its background otherwise transparent,
    so on GitHub's dark theme the labels and axes were dark on near-black; the HTML pages draw the charts
    inline and recolour them for a dark theme instead."""
    head, _, rest = svg.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1).partition("</title>")
    return f'{head}</title>\n<rect width="100%" height="100%" fill="{PAPER}"/>{rest}\n'


def svg_text(x: float, y: float, text: str, anchor: str = "start", css: str = "", extra: str = "") -> str:
    cls = f' class="{css}"' if css else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{cls}{extra}>{esc(text)}</text>'


def svg_line(x1: float, y1: float, x2: float, y2: float, color: str, extra: str = "") -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}"{extra}/>'


def svg_rect(x: float, y: float, w: float, h: float, color: str) -> str:
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.5):.1f}" height="{h:.1f}" fill="{color}"/>'


def pixel_scale(lo: float, hi: float, a: float, b: float, log: bool = False) -> Callable[[float], float]:
    """Map [lo, hi] onto pixels [a, b], linearly or on log10."""
    f = math.log10 if log else (lambda v: v)
    flo, fhi = f(lo), f(hi)
    return lambda v: a + (f(v) - flo) / ((fhi - flo) or 1.0) * (b - a)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 5 × 10^k steps) covering [lo, hi]."""
    span = hi - lo or abs(hi) * 0.01 or 1.0
    raw = span / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    return [round(first + i * step, 12) for i in range(int(math.ceil((hi - first) / step)) + 1)]


def tick_labels(ticks: list[float], scale: float) -> list[str]:
    """Tick values in a column's unit with just the decimals their spacing needs (0.2, 0.4, not 0.2000)."""
    step = (ticks[1] - ticks[0]) / scale if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return [f"{t / scale:,.{decimals}f}" for t in ticks]


def label_box(x: float, y: float, text: str, anchor: str) -> tuple[float, float, float, float]:
    w = CHAR_W * len(text) + 2
    left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
    return (left, y - FONT * 0.95, left + w, y + FONT * 0.3)


def overlaps(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_label(px: float, py: float, text: str, taken: list[tuple[float, ...]],
                bounds: tuple[float, ...]) -> tuple[float, float, str, int]:
    """A label position near (px, py) that overlaps nothing placed so far and stays in bounds.

    Tries eight directions at growing distances, deterministic order; the caller draws a leader
    line when the label ended up away from its marker."""
    for dist in (9, 18, 30, 44, 60, 80):
        for dx, dy, anchor in ((1, -1, "start"), (1, 1, "start"), (-1, -1, "end"), (-1, 1, "end"),
                               (0, -1, "middle"), (0, 1, "middle"), (1, 0, "start"), (-1, 0, "end")):
            x, y = px + dx * dist, py + dy * dist + (FONT * 0.35 if dy >= 0 else 0)
            box = label_box(x, y, text, anchor)
            inside = bounds[0] <= box[0] and box[2] <= bounds[2] and bounds[1] <= box[1] and box[3] <= bounds[3]
            if inside and not any(overlaps(box, t) for t in taken):
                taken.append(box)
                return x, y, anchor, dist
    box = label_box(px + 9, py, text, "start")
    taken.append(box)
    return px + 9, py, "start", 9


def _decade_label(v: float) -> str:
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


def log_grid(sx: Callable[[float], float], sy: Callable[[float], float], xs: tuple[float, float],
             ys: tuple[float, float], box: tuple[float, float, float, float]) -> list[str]:
    """Grid lines and labels at each decade of both log axes, and the two axes, inside box (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    body = [svg_line(sx(v), y0, sx(v), y1, COLORS["grid"]) for v in _decades(*xs)]
    body += [svg_line(x0, sy(v), x1, sy(v), COLORS["grid"]) for v in _decades(*ys)]
    shown: list[tuple[float, ...]] = []           # a label that would touch the one before is left out (narrow)
    for v in _decades(*xs):
        box = label_box(sx(v), y1 + 16, _decade_label(v), "middle")
        if not shown or not overlaps(shown[-1], (box[0] - 4, box[1], box[2], box[3])):
            body.append(svg_text(sx(v), y1 + 16, _decade_label(v), "middle"))
            shown.append(box)
    body += [svg_text(x0 - 5, sy(v) + 4, _decade_label(v), "end") for v in _decades(*ys)]
    body.append(svg_line(x0, y1, x1, y1, COLORS["axis"]))
    body.append(svg_line(x0, y0, x0, y1, COLORS["axis"]))
    return body


def _decades(lo: float, hi: float) -> list[float]:
    return [10.0 ** e for e in range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1)]


def legend(x: float, y: float, items: tuple[tuple[str, str], ...]) -> list[str]:
    return legend_rows(x, y, items, math.inf)[0]


LEGEND_ROW = 18                     # baseline to baseline of a wrapped legend


def legend_rows(x0: float, y: float, items: tuple[tuple[str, str], ...], right: float) -> tuple[list[str], float]:
    """A colour swatch and its name per item, in a row that wraps before an entry would pass `right`;
    with the last row's baseline. A phone-width drawing has no room for four entries on one line."""
    out, x = [], x0
    for key, text in items:
        width = 15 + CHAR_W * len(text)
        if x > x0 and x + width > right:
            x, y = x0, y + LEGEND_ROW
        out.append(svg_rect(x, y - 10, 11, 11, COLORS[key]) + svg_text(x + 15, y, text))
        x += width + 18
    return out, y


def wrap_text(text: str, room_px: float) -> list[str]:
    """`text` broken at spaces into lines of at most `room_px` (a word longer than that has a line of its own):
    a phone-width drawing has no room for a legend line written for 620 px."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and CHAR_W * len(lines[-1] + " " + word) <= room_px:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def fit_text(text: str, room_px: float) -> str:
    """`text` within `room_px`, cut at the end with '…' (the full text goes in a tooltip): a legend cut
    at a fixed 22 characters ran past the chart's right edge and ended mid-word with no sign of the cut."""
    fits = max(4, int(room_px / CHAR_W))
    return text if len(text) <= fits else text[:fits - 1] + "…"
